package grit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImprovement: two workloads, speedups 2 (100 -> 50 cycles) and 1.125
// (90 -> 80): the geometric mean is sqrt(2 x 1.125) = sqrt(2.25) = 1.5,
// so 50% better. Faults 100 -> 25 and 10 -> 10: ratios 0.25 and 1, mean
// sqrt(0.25) = 0.5, a 50% reduction.
func TestImprovement(t *testing.T) {
	x, err := Improvement([]float64{100, 90}, []float64{50, 80})
	require.NoError(t, err)
	assert.InDelta(t, 0.5, x, 1e-12)
	r, err := Reduction([]float64{100, 10}, []float64{25, 10})
	require.NoError(t, err)
	assert.InDelta(t, 0.5, r, 1e-12)
	_, err = Improvement([]float64{1}, []float64{1, 2})
	assert.EqualError(t, err, "grit: 1 and 2 values: need one per workload on each side")
	_, err = Improvement([]float64{1, 0}, []float64{1, 2})
	assert.EqualError(t, err, "grit: workload 1: values 0 and 2 must be positive")
}

func TestValidationRows(t *testing.T) {
	counts := map[string]int{}
	for _, r := range ValidationRows {
		counts[r.Experiment]++
		assert.Positive(t, r.Paper, r.Source)
		assert.Contains(t, []int{2, 4, 8, 16}, r.GPUs)
	}
	assert.Equal(t, map[string]int{"grit": 3, "grit-faults": 3, "grit-ablation": 3, "grit-threshold": 4,
		"grit-gpus": 18, "grit-first-touch": 1, "grit-prefetch": 1}, counts)
	paper := map[int]float64{}
	for _, r := range Rows("grit-threshold") {
		for _, th := range ThresholdStudy {
			if r.Scheme == ThresholdScheme(th) {
				paper[th] = r.Paper
			}
		}
	}
	assert.True(t, ThresholdOrderingHolds(paper), "the paper's own figures hold its ordering")
	assert.False(t, ThresholdOrderingHolds(map[int]float64{2: 0.6, 4: 0.5, 8: 0.59, 16: 0.4}))
	row := ValidationRows[0]
	assert.True(t, row.Within(0.46), "0.60 +- 25%: 0.45..0.75")
	assert.False(t, row.Within(0.44))
	for _, a := range Ablation() {
		require.NoError(t, a.Config.Validate(), a.Name)
	}
}
