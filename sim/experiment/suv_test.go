package experiment

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// The SUV experiments run SUV Table I's workloads by default: Fig. 5 needs
// UVM without oversubscription and UVM and SUV at 115, 130, 150%.
func TestSUVSpecs(t *testing.T) {
	p := DefaultParams(false)
	require.Equal(t, workload.Names(), p.Workloads)
	assert.Len(t, suvSpecs(p), len(SUVWorkloads)*(1+2*len(SUVLevels)))
	assert.Len(t, suvBaselinesSpecs(p), len(SUVWorkloads)*3)
	p.Workloads = []string{"hotspot"}
	assert.Len(t, suvNoOversubSpecs(p), 2)
}

// With UVM at 100 cycles without oversubscription and 300 at every level,
// SUV at 120, SC at 200 and AC at 240 cycles, the rows are computed by
// hand: SUV's reduction over UVM is 1 - 120/300 = 0.6 at every level (at
// 30% it equals the paper's 0.60 and passes; as the largest, 0.6 against
// 0.74 is 19% off, inside the 25% tolerance; as the smallest, 0.6 against
// 0.44 is 36% off and fails); over SC 1 - 120/200 = 0.4, over AC
// 1 - 120/240 = 0.5.
func TestSUVChecks(t *testing.T) {
	p := DefaultParams(false)
	p.Workloads = []string{"mvt", "fdtd"}
	var outs []Outcome
	add := func(w, pol string, r int, cycles uint64) {
		outs = append(outs, Outcome{Spec: p.spec(w, pol, r), Result: system.Result{Cycles: cycles, PCIeH2DBytes: cycles}})
	}
	for _, w := range p.Workloads {
		add(w, PolicyUM, SUVNoOversub, 100)
		for _, r := range SUVLevels {
			add(w, PolicyUM, r, 300)
			add(w, PolicySUV, r, 120)
		}
		add(w, PolicySC, SUVBaselineLevel, 200)
		add(w, PolicyAC, SUVBaselineLevel, 240)
	}
	l := NewLookup(outs)
	got := map[string]float64{}
	status := map[string]string{}
	for _, exp := range []string{"suv", "suv-baselines", "suv-nooversub"} {
		for _, c := range SUVChecks(p, l, exp) {
			got[c.ID], status[c.ID] = c.Models[0].Value, c.Status(0)
		}
	}
	assert.InDelta(t, 0.6, got["suv-30"], 1e-9)
	assert.InDelta(t, 0.6, got["suv-max"], 1e-9)
	assert.Equal(t, "pass", status["suv-30"])
	assert.Equal(t, "fail", status["suv-min"])
	assert.InDelta(t, 0.4, got["suv-sc"], 1e-9)
	assert.InDelta(t, 0.5, got["suv-ac"], 1e-9)
	assert.InDelta(t, 0.4, got["suv-sc-pcie"], 1e-9)
	assert.Equal(t, 1.0, got["suv-thrash-mvt"], "300/100 >= 2 at every level")
	assert.True(t, math.IsNaN(got["suv-0"]), "no SUV run without oversubscription")
}
