package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
)

// TestExplanationsQuoteTheRuns builds the validation over hand-made runs of
// one workload at a 1000 MHz clock (1 cycle = 1 ns) whose UM faults cost
// far more than its work, and checks that each explanation quotes the
// numbers worked out here from those runs, each methodology from its own.
//
//   - UM at 0 us, every ratio: 2,000 cycles. UM at 50 us: F far faults,
//     2,000 + F x 50,000 cycles, F = 10 in-loop and 20 under the reference
//     timing. GPU time per far fault: 2,000 / F / 1000 = 0.2 and 0.1 us.
//     The paper's 1.82x (50 -> 0 us) implies (50 - 0) / 0.82 = 61 us.
//   - UM at its default latency: 452,000 cycles, 3,000 pages migrated at
//     125%. UVMMU: 1,000 cycles, 1,000 pages, 8 MB of GPU memory for a
//     12 MB footprint. UM at 0 us over UVMMU: 2.00x, more than the paper's
//     1.59x alone; fault share 1 - 2,000/452,000 = 99.6%, printed 100%.
//   - UVMSmart: 904,000 cycles (2.00x UM's), 1,500 pages (0.50x), 70
//     zero-copy accesses.
func TestExplanationsQuoteTheRuns(t *testing.T) {
	require.Equal(t, []string{config.FaultTimingReference, config.FaultTimingCycle}, []string{Methodologies[0].Timing, Methodologies[1].Timing})
	const ref, loop = 0, 1
	p := testParams()
	p.Workloads = []string{"ra"}
	var outs []Outcome
	for _, s := range ValidationSpecs(p) {
		faults := uint64(10)
		if slices.Contains(s.Sets, s.Policy+"."+FaultTimingKey+"="+config.FaultTimingReference) {
			faults = 20
		}
		sweepsLatency := slices.ContainsFunc(s.Sets, func(set string) bool { return strings.HasPrefix(set, FaultLatencyKey+"=") })
		r := system.Result{Workload: s.Workload, Policy: s.Policy, OversubPct: s.OversubPct, ClockMHz: 1000, Cycles: 1000}
		switch {
		case s.Policy == PolicyUM && slices.Contains(s.Sets, faultSet(0)):
			r.Cycles = 2000
		case s.Policy == PolicyUM && slices.Contains(s.Sets, faultSet(50)):
			r.Cycles, r.FarFaults = 2000+faults*50_000, faults
		case s.Policy == PolicyUM && sweepsLatency:
			r.Cycles = 100_000
		case s.Policy == PolicyUM:
			r.Cycles, r.Migrations = 452_000, 3000
		case s.Policy == PolicyUVMSmart:
			r.Cycles, r.Migrations, r.RemoteAccesses = 904_000, 1500, 70
		default:
			r.Migrations, r.GPUMemoryBytes, r.FootprintBytes = 1000, 8<<20, 12<<20
		}
		outs = append(outs, Outcome{Spec: s, Result: r})
	}
	checks := Validate(p, NewLookup(outs))
	row := func(quantity string) Check {
		for _, c := range checks {
			if c.Quantity == quantity {
				return c
			}
		}
		require.FailNow(t, "no row", quantity)
		return Check{}
	}

	f1 := row("UM speedup, fault latency 50 us -> 0 us, 100%, geomean")
	assert.Equal(t, "fail", f1.Status(loop))
	assert.Contains(t, f1.Explanation(loop), "is 0.2 us (ra) against 61 us implied by the paper's 1.82x")
	assert.Contains(t, f1.Explanation(ref), "is 0.1 us (ra) against 61 us implied by the paper's 1.82x")
	assert.Contains(t, f1.Explanation(ref), "far faults 20 (ra); UM at 0 us 2 us (ra)")
	assert.Contains(t, f1.Explanation(ref), "less GPU time per fault here")

	f4a := row("UVMMU speedup over UM, 100%, geomean")
	assert.Contains(t, f4a.Explanation(loop), "(UM at 0 us over UVMMU: 2.00x (ra)) / (1 - UM's fault share: 100% (ra))")
	assert.Contains(t, f4a.Explanation(loop), "the first factor alone exceeds the paper's 1.59x")

	f4b := row("UVMMU speedup over UM, 125%, geomean")
	assert.Contains(t, f4b.Explanation(loop), "UM migrates 3.0x (ra) the 4 KB pages UVMMU does")

	smart := row("UVMSmart speedup over UM, 125%, geomean")
	assert.Contains(t, smart.Explanation(loop), "UVMSmart serves 70 (ra) loads zero-copy, migrates 0.50x (ra) the 4 KB pages UM does")
	assert.Contains(t, smart.Explanation(loop), "its run time 2.00x (ra) of UM's")

	ra := row("UVMMU speedup over UM, 150%, ra")
	assert.Contains(t, ra.Explanation(loop), "UM migrates 3.0x (ra) the 4 KB pages UVMMU does")
	assert.Contains(t, ra.Explanation(loop), "ra's GPU memory is 8.00 MB for a 12.00 MB footprint")
	assert.Contains(t, ra.Explanations(), "paper's methodology: ")
	assert.Contains(t, ra.Explanations(), " — in-loop: ")

	for _, c := range checks {
		for i := range Methodologies {
			if c.Status(i) == "fail" {
				assert.NotEqual(t, "difference not explained", c.Explanation(i), c.Quantity)
			}
		}
	}
}

// TestFaultShareFromReferenceTiming: without a 0 us run, a UM run under
// the reference timing gives its time without faults itself: its timeline,
// the fault time being added after it. UM 5,000 cycles, 3,000 of them
// fault time: 60% fault share, and 2,000 over UVMMU's 1,000 is 2.00x.
func TestFaultShareFromReferenceTiming(t *testing.T) {
	p := testParams()
	p.Workloads = []string{"ra"}
	um := Methodologies[0].Spec(p.spec("ra", PolicyUM, 125))
	outs := []Outcome{
		{Spec: um, Result: system.Result{Cycles: 5000, TimelineCycles: 2000, FaultCycles: 3000}},
		{Spec: p.spec("ra", PolicyUVMMU, 125), Result: system.Result{Cycles: 1000}},
	}
	v := NewView(p, Methodologies[0], NewLookup(outs))
	assert.Equal(t, "60% (ra)", v.faultShare(125).format("%", 0))
	assert.Equal(t, "2.00x (ra)", v.umWithoutFaultsOverUVMMU(125).format("x", 2))
}
