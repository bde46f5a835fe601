package experiment

import (
	"bytes"
	"encoding/csv"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
)

func TestCheckStatusAndExplanation(t *testing.T) {
	c := Check{ID: "F-test", Paper: 2.0, Tolerance: 0.25, Models: []Measured{
		{Value: 2.2},
		{Value: 3.0},
	}}
	assert.Equal(t, "pass", c.Status(0))
	assert.Empty(t, c.Explanation(0))
	assert.Equal(t, "fail", c.Status(1))
	assert.Equal(t, "difference not explained", c.Explanation(1))
	c.Models[1].Why = "the model's RA table is smaller"
	assert.Equal(t, "the model's RA table is smaller", c.Explanation(1))
	assert.Equal(t, "in-loop: the model's RA table is smaller", c.Explanations())

	missing := Check{ID: "M1", Paper: 1.3, Tolerance: 0.25, Models: []Measured{{Value: math.NaN(), Missing: "no samples"}, {Value: 1.3}}}
	assert.Equal(t, "not measured", missing.Status(0))
	assert.Equal(t, "not measured: no samples", missing.Explanation(0))
	assert.Equal(t, "paper's methodology: not measured: no samples", missing.Explanations())
}

// TestMethodologySpecs: a fault-based policy's run gets its own section's
// fault_timing in each methodology; UVMMU's runs are shared, so the
// validation holds each of them once.
func TestMethodologySpecs(t *testing.T) {
	s := Spec{Workload: "ra", Policy: PolicyUVMSmart, OversubPct: 125, Scale: 1, Seed: 1}
	assert.Equal(t, []string{"uvmsmart.fault_timing=reference"}, Methodologies[0].Spec(s).Sets)
	assert.Equal(t, []string{"uvmsmart.fault_timing=cycle"}, Methodologies[1].Spec(s).Sets)
	u := Spec{Workload: "ra", Policy: PolicyUVMMU, OversubPct: 125, Scale: 1, Seed: 1}
	assert.Equal(t, u, Methodologies[0].Spec(u))

	p := testParams()
	specs := ValidationSpecs(p)
	count := map[string]int{}
	for _, s := range specs {
		count[s.Policy]++
		if s.Policy == PolicyUVMMU {
			assert.False(t, slices.ContainsFunc(s.Sets, func(set string) bool { return strings.Contains(set, FaultTimingKey) }), s)
		}
	}
	// Per workload: fig1 3 ratios x 6 latencies of um, fig4 3 ratios of um
	// and uvmsmart, fig6 5 ratios of uvmsmart, U1 adaptive at 125%, in
	// each of two methodologies; uvmmu: fig4 3, fig5 2 ratios x 4
	// variants (the random ones name their key, so they are specs of their
	// own that share fig4's runs), fig6 175% and 200%.
	assert.Equal(t, map[string]int{PolicyUM: 2 * 2 * (18 + 3), PolicyUVMSmart: 2 * 2 * 5, PolicyAdaptive: 2 * 2, PolicyUVMMU: 2 * (3 + 8 + 2)}, count)
	for _, c := range []string{config.FaultTimingCycle, config.FaultTimingReference} {
		assert.True(t, slices.ContainsFunc(specs, func(s Spec) bool { return slices.Contains(s.Sets, "um.fault_timing="+c) }), c)
	}
}

// TestValidateFromHandMadeRuns feeds the validation with runs whose UVMMU
// speedup at 100% is exactly the paper's 1.59 in the in-loop model and 1.1
// in the paper's methodology (UM 1,100 cycles there), and whose adaptive
// speedup at 125% (U1) is 1.5 on ra (irregular) and 1.0 on hotspot
// (regular).
func TestValidateFromHandMadeRuns(t *testing.T) {
	p := testParams()
	cycles := func(s Spec) uint64 {
		ref := slices.Contains(s.Sets, s.Policy+"."+FaultTimingKey+"="+config.FaultTimingReference)
		sweeps := slices.ContainsFunc(s.Sets, func(set string) bool { return !strings.Contains(set, FaultTimingKey) })
		switch {
		case s.Policy == PolicyUVMMU && s.OversubPct == 100 && !sweeps:
			return 1000
		case s.Policy == PolicyUM && !sweeps && ref:
			return 1100
		case s.Policy == PolicyUM && !sweeps:
			return 1590
		case s.Policy == PolicyAdaptive && s.OversubPct == 125 && s.Workload == "ra":
			return 1060
		case s.Policy == PolicyUVMSmart, s.Policy == PolicyAdaptive:
			return 1590
		}
		return 500
	}
	specs := ValidationSpecs(p)
	assert.Equal(t, specs, Dedupe(specs))
	for _, s := range specs {
		wantSamples := s.Policy == PolicyUVMMU && len(s.Sets) == 0 && (s.OversubPct == 100 || s.OversubPct == 150)
		assert.Equal(t, wantSamples, s.Latencies, s)
	}
	lookup := NewLookup(outcomes(specs, cycles))
	checks := Validate(p, lookup)
	ids := map[string]bool{}
	for _, c := range checks {
		ids[c.ID] = true
		assert.Len(t, c.Models, len(Methodologies))
	}
	for _, id := range []string{"F1", "F4a", "F4b", "F4c", "F5", "F6", "M1", "U1"} {
		assert.True(t, ids[id], id)
	}
	find := func(quantity string) Check {
		for _, c := range checks {
			if strings.Contains(c.Quantity, quantity) {
				return c
			}
		}
		t.Fatalf("no check %q", quantity)
		return Check{}
	}
	f4a := find("UVMMU speedup over UM, 100%, geomean")
	assert.InDelta(t, 1.1, f4a.Models[0].Value, 1e-12)
	assert.InDelta(t, 1.59, f4a.Models[1].Value, 1e-12)
	assert.Equal(t, "fail", f4a.Status(0))
	assert.Equal(t, "pass", f4a.Status(1))
	u1 := find("slowest irregular")
	assert.InDelta(t, 1.5, u1.Models[1].Value, 1e-12)
	assert.InDelta(t, 1.0, find("regular workloads, geomean").Models[1].Value, 1e-12)
	m1 := find("migration latency")
	assert.Equal(t, "not measured", m1.Status(0))
	assert.Contains(t, m1.Explanation(0), "MigrationLatencyRecorder")

	findings := []string{"a finding"}
	var md bytes.Buffer
	require.NoError(t, WriteValidationMarkdown(&md, p, checks, findings))
	lines := strings.Split(strings.TrimSpace(md.String()), "\n")
	assert.Contains(t, lines[0], "uvmsim experiment validate")
	assert.Equal(t, "| id | result | paper | paper's methodology | in-loop | tolerance | status | explanation |", lines[2])
	assert.Equal(t, "|---|---|---:|---:|---:|---:|---|---|", lines[3])
	assert.Len(t, lines, 4+len(checks)+4)
	assert.Contains(t, md.String(), "| F4a | UVMMU speedup over UM, 100%, geomean | 1.59 | 1.10 | 1.59 | ±25% | fail / pass | ")
	assert.Equal(t, "- a finding", lines[len(lines)-1])

	var c bytes.Buffer
	require.NoError(t, WriteValidationCSV(&c, checks))
	rows, err := csv.NewReader(&c).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"id", "result", "paper", "tolerance", "model_reference", "status_reference", "explanation_reference",
		"model_cycle", "status_cycle", "explanation_cycle"}, rows[0])
	assert.Len(t, rows, 1+len(checks))
}

// TestFindingsFromHandMadeRuns: the findings count the rows that pass and
// state Fig. 4's orderings from the runs (UVMMU 1,000 cycles, UM 1,590,
// UVMSmart 1,590: UVMMU wins all 6 workload-ratio pairs, UVMSmart = UM).
func TestFindingsFromHandMadeRuns(t *testing.T) {
	p := testParams()
	specs := ValidationSpecs(p)
	lookup := NewLookup(outcomes(specs, func(s Spec) uint64 {
		switch s.Policy {
		case PolicyUVMMU:
			return 1000
		case PolicyAdaptive:
			return 500
		}
		return 1590
	}))
	views := []*View{NewView(p, Methodologies[0], lookup), NewView(p, Methodologies[1], lookup)}
	f := Findings(p, validateViews(p, views), views)
	require.Len(t, f, 4)
	assert.Contains(t, f[0], "**paper's methodology**: ")
	assert.Contains(t, f[2], "**Fig. 4, paper's methodology**: UVMMU is faster than UM on 6 of 6 workload-ratio pairs; UVMSmart's time over UM's at 100% is 1.00x geomean")
	assert.Contains(t, f[3], "UVMSmart's speedup over UM at 150% is 1.00x (ra) on the irregular workloads and 1.00x (hotspot) on the regular ones")
}
