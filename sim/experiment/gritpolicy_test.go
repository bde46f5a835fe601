package experiment

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/grit"
	"github.com/uvmmu/uvmmu/sim/multigpu"
)

// TestGritStudyPointsConfigure: every point of every study sets a
// configuration that validates, the ablation and threshold points through
// GRIT's keys.
func TestGritStudyPointsConfigure(t *testing.T) {
	for _, name := range GritStudyNames {
		gpus := []int{4}
		if name == GritGPUsName {
			gpus = []int{2, 4, 8, 16}
		}
		st, err := NewGritStudy(name, gpus)
		require.NoError(t, err, name)
		require.NotEmpty(t, st.Points, name)
		for _, p := range st.Points {
			cfg := config.Default()
			require.NoError(t, cfg.ApplyPreset("grit"))
			require.NoError(t, p.apply(&cfg), "%s: %s", name, p.Name)
			require.NoError(t, cfg.Validate(), "%s: %s", name, p.Name)
		}
	}
	st, err := NewGritStudy(GritAblationName, []int{4})
	require.NoError(t, err)
	cfg := config.Default()
	require.NoError(t, st.Points[1].apply(&cfg))
	assert.Equal(t, grit.AblationTableOnly, st.Points[1].Name)
	assert.Equal(t, multigpu.GritPolicy, cfg.MultiGPU.Policy)
	assert.False(t, cfg.Grit.PACache)
	assert.False(t, cfg.Grit.Prediction)
	v, err := NewGritStudy(GritValidateName, []int{4})
	require.NoError(t, err)
	assert.Len(t, v.Rows, len(grit.ValidationRows), "every row")
	pf, err := NewGritStudy(GritPrefetchName, []int{4})
	require.NoError(t, err)
	require.Len(t, pf.Rows, 1)
	assert.Equal(t, grit.SchemeGRITPrefetch, pf.Rows[0].Scheme)
	for _, p := range pf.Points[1:] {
		require.NoError(t, p.apply(&cfg))
		assert.Contains(t, []string{"ot-prefetch", multigpu.GritPrefetchPolicy}, cfg.MultiGPU.Policy)
	}
}

// TestGritValidationsArithmetic: two workloads, GRIT 2x and 8x faster
// than on-touch, with 1/2 and 1/8 of its faults: the geomean speedup is
// 4, "300% better", and the faults 75% fewer; a missing run leaves its
// workload out.
func TestGritValidationsArithmetic(t *testing.T) {
	rec := func(wl, point string, cycles, faults uint64) GritPointRecord {
		var r GritPointRecord
		r.Point = GritPoint{Name: point, GPUs: 4}
		r.Result.Workload, r.Result.Cycles = wl, cycles
		r.Result.Total.LocalFaults = faults
		return r
	}
	recs := []GritPointRecord{
		rec("a", "ot", 800, 80), rec("b", "ot", 800, 80),
		rec("a", "grit", 400, 40), rec("b", "grit", 100, 10),
		rec("a", "ac", 200, 20),
	}
	st, err := NewGritStudy(GritName, []int{4})
	require.NoError(t, err)
	rows := GritValidations(st, recs, []string{"a", "b"}, 4)
	require.Len(t, rows, 6)
	assert.InDelta(t, 3.0, rows[0].Model, 1e-12, "grit vs ot: sqrt(2 x 8) - 1")
	assert.Equal(t, 2, rows[0].Workloads)
	assert.InDelta(t, -0.5, rows[1].Model, 1e-12, "grit vs ac on workload a only: 200/400 - 1")
	assert.Equal(t, 1, rows[1].Workloads)
	assert.True(t, math.IsNaN(rows[2].Model), "no dup run")
	assert.InDelta(t, 0.75, rows[3].Model, 1e-12, "faults: 1 - sqrt(1/2 x 1/8)")
	fig := GritStudyFigure(st, recs, []string{"a", "b"})
	require.Len(t, fig.Panels, 1)
	assert.InDelta(t, 4.0, fig.Panels[0].Value("grit", GeomeanGroup), 1e-12)
}
