package experiment

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
)

// ignoreWall leaves the host-dependent fields out of a comparison.
var ignoreWall = cmpopts.IgnoreFields(system.Result{}, "WallSeconds", "SimCyclesPerSecond", "WarpInstrPerSecond")

func TestRunSameOutcomesForAnyJobs(t *testing.T) {
	specs := Grid([]string{"hotspot", "ra"}, []string{"ideal"}, []int{100, 125}, 0.01, 1, nil)
	one, err := Run(specs, Options{Jobs: 1, Base: config.Default()})
	require.NoError(t, err)
	three, err := Run(specs, Options{Jobs: 3, Base: config.Default()})
	require.NoError(t, err)
	require.NoError(t, Failures(one))
	for i, s := range specs {
		assert.Equal(t, s, one[i].Spec)
		assert.Equal(t, s.Workload, one[i].Result.Workload)
		assert.Equal(t, s.OversubPct, one[i].Result.OversubPct)
		assert.NotZero(t, one[i].Result.Cycles)
	}
	if d := cmp.Diff(Succeeded(one), Succeeded(three), ignoreWall); d != "" {
		t.Errorf("results differ between 1 and 3 workers (-1 +3):\n%s", d)
	}
}

func TestRunRejectsBadSpecsBeforeRunning(t *testing.T) {
	cases := []struct {
		spec Spec
		want []string
	}{
		{Spec{Workload: "hotspot", Policy: "nosuch", OversubPct: 100, Scale: 1, Seed: 1}, []string{"run 2", `policy "nosuch"`, "allowed: ideal"}},
		{Spec{Workload: "nosuch", Policy: "ideal", OversubPct: 100, Scale: 1, Seed: 1}, []string{`workload "nosuch"`, "allowed:", "hotspot"}},
		{Spec{Workload: "hotspot", Policy: "ideal", OversubPct: 50, Scale: 1, Seed: 1}, []string{"run.oversub_pct", "100..1000"}},
		{Spec{Workload: "hotspot", Policy: "ideal", OversubPct: 100, Scale: 1, Seed: 1, Sets: []string{"pcie.nosuch=1"}}, []string{"pcie.nosuch"}},
	}
	for _, c := range cases {
		good := Spec{Workload: "ra", Policy: "ideal", OversubPct: 100, Scale: 1, Seed: 1}
		out, err := Run([]Spec{good, c.spec}, Options{Jobs: 1, Base: config.Default()})
		require.Error(t, err, c.spec)
		assert.Nil(t, out)
		var se *SpecError
		require.ErrorAs(t, err, &se)
		for _, w := range c.want {
			assert.Contains(t, err.Error(), w)
		}
	}
}

func TestCheckJobs(t *testing.T) {
	n, err := CheckJobs(0)
	require.NoError(t, err)
	assert.Positive(t, n)
	n, err = CheckJobs(4)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	_, err = CheckJobs(-1)
	assert.ErrorContains(t, err, "jobs = -1 out of range")
}

func TestDedupeKeepsFirstInOrder(t *testing.T) {
	a := Spec{Workload: "ra", Policy: "um", OversubPct: 100, Scale: 1, Seed: 1}
	b := Spec{Workload: "ra", Policy: "um", OversubPct: 100, Scale: 1, Seed: 1, Sets: []string{FaultLatencyKey + "=0"}}
	assert.Equal(t, []Spec{a, b}, Dedupe([]Spec{a, b, a, b}))
	withSamples := b
	withSamples.Latencies = true
	assert.Equal(t, []Spec{a, withSamples}, Dedupe([]Spec{a, b, withSamples}))
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	require.NoError(t, err)
	defer f.Close()
	assert.Nil(t, TerminalProgress(f))

	var bar bytes.Buffer
	specs := Grid([]string{"ra"}, []string{"ideal"}, []int{100, 125, 150}, 0.01, 1, nil)
	_, err = Run(specs, Options{Jobs: 1, Base: config.Default(), Progress: &bar})
	require.NoError(t, err)
	assert.Contains(t, bar.String(), "simulating")
}
