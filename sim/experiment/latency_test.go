package experiment

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
)

func TestSummarize(t *testing.T) {
	var s []uint64
	for c := uint64(100); c >= 1; c-- {
		s = append(s, c*2) // 2..200 cycles at 2 MHz: 1..100 us
	}
	sum := Summarize(s, 2)
	assert.Equal(t, Summary{Count: 100, Min: 1, P10: 10, P50: 50, Mean: 50.5, P90: 90, P99: 99, Max: 100}, sum)
	assert.Equal(t, uint64(200), s[0], "the samples are not reordered")
	assert.True(t, math.IsNaN(Summarize(nil, 2).P50))
}

func TestHistogram(t *testing.T) {
	assert.Equal(t, []float64{2, 1, 2}, Histogram([]uint64{0, 9, 10, 29, 500}, 10, 1, 3))
}

func TestMigrationLatencyFigure(t *testing.T) {
	p := testParams()
	var out []Outcome
	for _, s := range latencySpecs(p) {
		o := Outcome{Spec: s, Result: system.Result{Cycles: 1}}
		if s.OversubPct == 100 {
			o.Latencies = &Latencies{ClockMHz: 1000, Free: []uint64{1300, 1300, 1400}}
		} else {
			o.Latencies = &Latencies{ClockMHz: 1000, Free: []uint64{1200}, Swap: []uint64{2000, 2600}}
		}
		out = append(out, o)
	}
	fig := latencyBuild(p, NewLookup(out))
	require.Len(t, fig.Panels, 4)
	free := fig.Panels[0]
	assert.Equal(t, LatencyFree+" (us)", free.Title)
	assert.InDelta(t, 1.3, free.Value("median", LatencyPooled), 1e-12)
	assert.InDelta(t, 2.0, fig.Panels[1].Value("median", "ra"), 1e-12)
	assert.InDelta(t, 8, fig.Panels[2].Value(LatencyFree, LatencyPooled), 0)
	assert.InDelta(t, 4, fig.Panels[2].Value(LatencySwap, LatencyPooled), 0)
	dist := fig.Panels[3]
	assert.Len(t, dist.Groups, LatencyBins)
	for _, s := range dist.Series {
		total := 0.0
		for _, v := range s.Values {
			total += v
		}
		assert.InDelta(t, 1, total, 1e-12, s.Name)
	}
}

func TestMigrationLatencyWithoutRecorderSaysWhatIsNeeded(t *testing.T) {
	p := testParams()
	fig := latencyBuild(p, NewLookup(outcomes(latencySpecs(p), func(Spec) uint64 { return 10 })))
	assert.Empty(t, fig.Panels)
	require.NotEmpty(t, fig.Notes)
	assert.Contains(t, fig.Notes[0], "MigrationLatencyRecorder")
}

// TestMigrationLatencyFromUVMMURuns runs the experiment's own specs (uvmmu
// at 100% and 150%) on ra at scale 0.5, where 150% leaves two of its three
// regions: the policy reports samples, both series are filled, and
// validation row M1 is the pooled median free-destination latency in
// microseconds at the 1481 MHz clock (65,205 cycles: ra's first touches
// come in bursts that queue in the PME behind other page-groups).
func TestMigrationLatencyFromUVMMURuns(t *testing.T) {
	p := Params{Workloads: []string{"ra"}, Scale: 0.5, Seed: 1, Policies: []string{PolicyUVMMU}}
	base := config.Default()
	base.GPU.KernelLaunchUs, base.Cache.L2 = 0, false
	out, err := Run(latencySpecs(p), Options{Base: base})
	require.NoError(t, err)
	require.NoError(t, Failures(out))
	for _, o := range out {
		require.NotNil(t, o.Latencies, o.Spec)
		assert.Equal(t, 1481, o.Latencies.ClockMHz)
	}
	fig := latencyBuild(p, NewLookup(out))
	require.Empty(t, fig.Notes)
	require.Len(t, fig.Panels, 4)
	counts := fig.Panels[2]
	assert.InDelta(t, 160, counts.Value(LatencyFree, LatencyPooled), 0)
	assert.InDelta(t, 139, counts.Value(LatencySwap, LatencyPooled), 0)
	free := fig.Panels[0].Value("median", LatencyPooled)
	assert.InDelta(t, 65205.0/1481, free, 1e-12)
	assert.InDelta(t, 25017.0/1481, fig.Panels[1].Value("median", LatencyPooled), 1e-12)

	var m1 []Check
	for _, c := range Validate(p, NewLookup(out)) {
		if c.ID == "M1" {
			m1 = append(m1, c)
		}
	}
	require.Len(t, m1, 2)
	assert.Contains(t, m1[0].Quantity, "idle link")
	for i := range Methodologies {
		assert.InDelta(t, fig.Panels[0].Value("min", LatencyPooled), m1[0].Models[i].Value, 0)
		assert.Contains(t, m1[1].Quantity, "median")
		assert.InDelta(t, free, m1[1].Models[i].Value, 0)
		assert.Equal(t, "fail", m1[1].Status(i))
		assert.Contains(t, m1[1].Explanation(i), fmt.Sprintf("median %.2f", free))
	}
}
