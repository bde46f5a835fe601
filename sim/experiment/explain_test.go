package experiment

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/system"
)

// TestExplanationsQuoteTheRuns builds the validation over hand-made runs of
// one workload at a 1000 MHz clock (1 cycle = 1 ns) whose UM faults cost
// far more than its work, and checks that each explanation quotes the
// numbers worked out here from those runs.
//
//   - UM at 0 us, every ratio: 2,000 cycles. UM at 50 us: 10 far faults,
//     2,000 + 10 x 50,000 = 502,000 cycles. GPU time per far fault:
//     2,000 / 10 / 1000 = 0.2 us. The paper's 1.82x (50 -> 0 us) implies
//     (50 - 0) / 0.82 = 61 us.
//   - UM at its default latency: 452,000 cycles, 3,000 pages migrated at
//     125%. UVMMU: 1,000 cycles, 1,000 pages. UM without fault time over
//     UVMMU: 2.00x; fault share 1 - 2,000/452,000 = 99.6%, printed 100%;
//     the paper's 1.59x implies 1 - 1/1.59 = 37%.
//   - UVMSmart: 904,000 cycles (2.00x UM's), 1,500 pages (0.50x), 70
//     zero-copy accesses.
func TestExplanationsQuoteTheRuns(t *testing.T) {
	p := testParams()
	p.Workloads = []string{"ra"}
	specs := ValidationSpecs(p)
	var outs []Outcome
	for _, s := range specs {
		r := system.Result{Workload: s.Workload, Policy: s.Policy, OversubPct: s.OversubPct, ClockMHz: 1000, Cycles: 1000}
		switch {
		case s.Policy == PolicyUM && len(s.Sets) == 1 && s.Sets[0] == faultSet(0):
			r.Cycles = 2000
		case s.Policy == PolicyUM && len(s.Sets) == 1 && s.Sets[0] == faultSet(50):
			r.Cycles, r.FarFaults = 502_000, 10
		case s.Policy == PolicyUM && len(s.Sets) == 1:
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
	l := NewLookup(outs)
	checks := Validate(p, BuildFigures(p, l), l)
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
	assert.Equal(t, "fail", f1.Status())
	assert.Contains(t, f1.Explanation(), "is 0.2 us (ra) here against 61 us implied by the paper's 1.82x")

	f4a := row("UVMMU speedup over UM, 100%, geomean")
	assert.Contains(t, f4a.Explanation(), "UM without fault time (0 us) runs 2.00x (ra) of UVMMU's time")
	assert.Contains(t, f4a.Explanation(), "100% (ra) of UM's time, against 37% implied by the paper's 1.59x")

	f4b := row("UVMMU speedup over UM, 125%, geomean")
	assert.Contains(t, f4b.Explanation(), "UM migrates 3.0x (ra) the 4 KB pages UVMMU does")

	smart := row("UVMSmart speedup over UM, 125%, geomean")
	assert.Contains(t, smart.Explanation(), "UVMSmart serves 70 (ra) loads zero-copy, migrates 0.50x (ra) the 4 KB pages UM does")
	assert.Contains(t, smart.Explanation(), "its run time is 2.00x (ra) of UM's")

	ra := row("UVMMU speedup over UM, 150%, ra")
	assert.Contains(t, ra.Explanation(), "UM migrates 3.0x (ra) the 4 KB pages UVMMU does")
	assert.Contains(t, ra.Explanation(), "ra's GPU memory is 4 2 MB regions for a 12.0 MB footprint")

	for _, c := range checks {
		if c.Status() == "fail" {
			assert.NotEqual(t, "difference not explained", c.Explanation(), c.Quantity)
		}
	}
}
