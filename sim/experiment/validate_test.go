package experiment

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckStatusAndExplanation(t *testing.T) {
	pass := Check{ID: "F4a", Paper: 1.59, Tolerance: 0.25, Model: 1.70}
	assert.Equal(t, "pass", pass.Status())
	assert.Empty(t, pass.Explanation())

	far := Check{ID: "F-test", Paper: 2.0, Tolerance: 0.25, Model: 3.0}
	assert.Equal(t, "fail", far.Status())
	assert.Equal(t, "difference not explained", far.Explanation())
	far.Why = "the model's RA table is smaller"
	assert.Equal(t, "the model's RA table is smaller", far.Explanation())

	missing := Check{ID: "M1", Paper: 1.3, Tolerance: 0.25, Model: math.NaN(), Missing: "no samples"}
	assert.Equal(t, "not measured", missing.Status())
	assert.Equal(t, "not measured: no samples", missing.Explanation())
}

// TestValidateFromHandMadeRuns feeds the validation with runs whose UVMMU
// speedup at 100% is exactly the paper's 1.59 and whose adaptive speedup
// at 125% (U1) is 1.5 on ra (irregular) and 1.0 on hotspot (regular).
func TestValidateFromHandMadeRuns(t *testing.T) {
	p := testParams()
	cycles := func(s Spec) uint64 {
		switch {
		case s.Policy == PolicyUVMMU && s.OversubPct == 100 && len(s.Sets) == 0:
			return 1000
		case s.Policy == PolicyUM && len(s.Sets) == 0:
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
	figs := BuildFigures(p, lookup)
	checks := Validate(p, figs, lookup)
	ids := map[string]bool{}
	for _, c := range checks {
		ids[c.ID] = true
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
	assert.InDelta(t, 1.59, f4a.Model, 1e-12)
	assert.Equal(t, "pass", f4a.Status())
	u1 := find("slowest irregular")
	assert.InDelta(t, 1.5, u1.Model, 1e-12)
	assert.InDelta(t, 1.0, find("regular workloads, geomean").Model, 1e-12)
	m1 := find("migration latency")
	assert.Equal(t, "not measured", m1.Status())
	assert.Contains(t, m1.Explanation(), "MigrationLatencyRecorder")

	var md bytes.Buffer
	require.NoError(t, WriteValidationMarkdown(&md, p, checks))
	lines := strings.Split(strings.TrimSpace(md.String()), "\n")
	assert.Contains(t, lines[0], "uvmsim experiment validate")
	assert.Equal(t, "| id | result | paper | model | tolerance | status | explanation |", lines[2])
	assert.Len(t, lines, 4+len(checks))
	assert.Contains(t, md.String(), "| F4a | UVMMU speedup over UM, 100%, geomean | 1.59 | 1.59 | ±25% | pass |  |")

	var c bytes.Buffer
	require.NoError(t, WriteValidationCSV(&c, checks))
	rows, err := csv.NewReader(&c).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, ValidationCSVColumns, rows[0])
	assert.Len(t, rows, 1+len(checks))
}
