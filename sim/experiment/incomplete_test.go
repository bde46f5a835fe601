package experiment

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// The incomplete experiment runs the six ISPASS-2009 benchmarks before the
// nine, three policies at two bandwidths each, and its sweeps on the
// ISPASS benchmarks only; every spec is a valid 2 MB page configuration
// of the gtx480 preset.
func TestIncompleteSpecs(t *testing.T) {
	p := DefaultParams(false)
	specs := incompleteSpecs(p)
	ws := incompleteWorkloads(p)
	assert.Equal(t, append(workload.ISPASSNames(), workload.Names()...), ws)
	sweeps := len(IncompleteHandlingUs) + len(IncompleteGapBytes)
	assert.Len(t, specs, len(ws)*2*3+len(workload.ISPASSNames())*sweeps)
	for _, s := range specs[:3] {
		cfg, err := s.Config(config.Default())
		require.NoError(t, err, s)
		assert.True(t, cfg.Pages2M())
		assert.Equal(t, "gtx480", cfg.Run.Preset)
		assert.Equal(t, 15, cfg.GPU.SMs)
	}
	assert.Equal(t, []string{"ispass-cp"}, incompleteWorkloads(Params{Workloads: []string{"ispass-cp"}}))
	assert.Equal(t, QuickWorkloads, incompleteWorkloads(DefaultParams(true)), "--quick stays small")
	assert.Empty(t, sweepWorkloads(DefaultParams(true)))
}

// The figure normalises to copy+execute, and the I1 rows read its 16 GB/s
// geomeans: complete 80x copy+execute's time, incomplete 0.8x (1.25x
// faster).
func TestIncompleteFigureAndI1(t *testing.T) {
	p := Params{Workloads: []string{"ispass-cp", "ispass-ray"}, Scale: 1, Seed: 1, Policies: []string{PolicyIncomplete, PolicyComplete, PolicyCopyExecute}}
	specs := incompleteSpecs(p)
	cycles := func(s Spec) uint64 {
		switch {
		case s.Policy == PolicyCopyExecute:
			return 1000
		case s.Policy == PolicyComplete:
			return 80_000
		case slices.Contains(s.Sets, handlingSet(45)):
			return 3000
		}
		return 800
	}
	l := NewLookup(outcomes(specs, cycles))
	fig := incompleteBuild(p, l)
	require.Len(t, fig.Panels, 4)
	assert.Equal(t, "16 GB/s", fig.Panels[0].Title)
	assert.Equal(t, []string{"ispass-cp", "ispass-ray", GeomeanGroup}, fig.Panels[0].Groups)
	assert.InDeltaSlice(t, []float64{80, 80, 80}, series(fig.Panels[0])[PolicyComplete], 1e-9)
	assert.InDeltaSlice(t, []float64{0.8, 0.8, 0.8}, series(fig.Panels[0])[PolicyIncomplete], 1e-9)
	assert.Equal(t, handlingPanel, fig.Panels[2].Title)
	assert.InDelta(t, 3.0, series(fig.Panels[2])["45 us"][2], 1e-9)
	checks := validateViews(p, []*View{{p: p, figs: []Figure{fig}, l: l}})
	var i1 []Check
	for _, c := range checks {
		if c.ID == "I1" {
			i1 = append(i1, c)
		}
	}
	require.Len(t, i1, 2)
	assert.InDelta(t, 80, i1[0].Models[0].Value, 1e-9)
	assert.Equal(t, "pass", i1[0].Status(0))
	assert.InDelta(t, 1.25, i1[1].Models[0].Value, 1e-9)
	assert.Equal(t, "pass", i1[1].Status(0))
}
