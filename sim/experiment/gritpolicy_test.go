package experiment

import (
	"encoding/json"
	"math"
	"slices"
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
		r.Result.FootprintBytes = 40 * 4096
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
	data, err := json.Marshal(rows[2:4])
	require.NoError(t, err)
	assert.Contains(t, string(data), `"model":null`, "a missing figure is null")
	assert.Contains(t, string(data), `"model":0.75`)
	assert.Contains(t, string(data), `"Scheme":"grit"`, "the row's fields stay")
	assert.InDelta(t, 0.75, rows[3].Model, 1e-12, "faults: 1 - sqrt(1/2 x 1/8)")
	assert.Equal(t, "grit has x0.25 the GPU page faults of ot and runs 10 cycles per fault against ot's 10 (geomeans); "+
		"furthest: b 8.00x (faults 80 -> 10, 2.0 -> 0.2 per page of the 40-page footprint, protection 0 -> 0; remote accesses 0% -> 0%; NVLink MB 0.0 -> 0.0; migrations 0 -> 0; replicas 0 -> 0); "+
		"without b, +100% over the remaining 1", rows[0].Explanation, "b's 8x carries the geomean above the paper's +60%; a alone is 2x")
	assert.Contains(t, rows[1].Explanation, "furthest: a 0.50x", "grit vs ac, below the paper: the one workload")
	assert.NotContains(t, rows[1].Explanation, "without", "nothing left without the one workload")
	assert.Contains(t, rows[3].Explanation, "furthest: b faults x0.12", "the fewest faults carry the reduction above the paper's 39%")
	fig := GritStudyFigure(st, recs, []string{"a", "b"})
	require.Len(t, fig.Panels, 1)
	assert.InDelta(t, 4.0, fig.Panels[0].Value("grit", GeomeanGroup), 1e-12)
}

// TestGritThresholdOrderingExplained: threshold 2 faster than 4 and 8 on
// workload a breaks GRIT's ordering, and the explanation names a with both
// thresholds' cycles and faults; the paper's own figures hold it.
func TestGritThresholdOrderingExplained(t *testing.T) {
	rec := func(point string, cycles, faults uint64) GritPointRecord {
		var r GritPointRecord
		r.Point = GritPoint{Name: point, GPUs: 4}
		r.Result.Workload, r.Result.Cycles = "a", cycles
		r.Result.Total.LocalFaults = faults
		return r
	}
	// Speedups over ot (1000 cycles): 2 -> 2.0, 4 -> 1.6, 8 -> 1.25, 16 -> 1.0.
	recs := []GritPointRecord{rec("ot", 1000, 100), rec(grit.ThresholdScheme(2), 500, 50), rec(grit.ThresholdScheme(4), 625, 60),
		rec(grit.ThresholdScheme(8), 800, 70), rec(grit.ThresholdScheme(16), 1000, 100)}
	st, err := NewGritStudy(GritThresholdName, []int{4})
	require.NoError(t, err)
	rows := GritValidations(st, recs, []string{"a"}, 4)
	ord := GritThresholdOrdering(rows, recs, []string{"a"}, 4)
	require.NotNil(t, ord)
	assert.False(t, ord.Holds)
	assert.Equal(t, "threshold 4 (+60.0%) is not above 2 (+100.0%): speedup of 4 over 2 geomean 0.800x, lowest a 0.800x (cycles 625 at 4, 500 at 2; faults 60, 50); "+
		"threshold 8 (+25.0%) is not above 2 (+100.0%): speedup of 8 over 2 geomean 0.625x, lowest a 0.625x (cycles 800 at 8, 500 at 2; faults 70, 50)", ord.Explanation,
		"500/625 = 0.8 and 500/800 = 0.625; 2 > 16 holds (+100% > 0%)")
	assert.Nil(t, GritThresholdOrdering(rows[:2], recs, []string{"a"}, 4), "the ordering needs all four thresholds")
}

// TestGritStudyStoredOnly: grit-first-touch stores ot, first-touch and
// grit on one small workload; grit (ot, ac, dup, grit) read back with
// StoredOnly returns the two runs the studies share and simulates
// nothing; grit-validate lists its 4-GPU points before the others.
func TestGritStudyStoredOnly(t *testing.T) {
	cfg := config.Default()
	require.NoError(t, cfg.ApplyPreset("grit"))
	for _, s := range []string{"gpu.sms=2", "gpu.warps_per_sm=8", "run.scale=0.002"} {
		require.NoError(t, cfg.Set(s))
	}
	dir := t.TempDir()
	o := GritOptions{Base: cfg, Workloads: []string{"grit-gemm"}, Jobs: 2, Dir: dir}
	ft, err := NewGritStudy(GritFirstTouchName, []int{4})
	require.NoError(t, err)
	recs, err := RunGritStudy(ft, o)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	st, err := NewGritStudy(GritName, []int{4})
	require.NoError(t, err)
	o.StoredOnly = true
	got, err := RunGritStudy(st, o)
	require.NoError(t, err)
	var names []string
	for _, r := range got {
		names = append(names, r.Point.Name)
	}
	assert.Equal(t, []string{grit.SchemeOnTouch, grit.SchemeGRIT}, names, "ac and dup are not stored; the points in the study's order")
	assert.Equal(t, recs[0].Result.Cycles, gritValue(got, GritPoint{grit.SchemeOnTouch, 4}, "grit-gemm", false))

	v, err := NewGritStudy(GritValidateName, []int{4})
	require.NoError(t, err)
	i := slices.IndexFunc(v.Points, func(p GritPoint) bool { return p.GPUs != 4 })
	require.Positive(t, i)
	assert.True(t, slices.ContainsFunc(v.Points[:i], func(p GritPoint) bool { return p.Name == grit.SchemeFirstTouch }))
	for _, p := range v.Points[i:] {
		assert.NotEqual(t, 4, p.GPUs, "%s", p.Name)
	}
}
