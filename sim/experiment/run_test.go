package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

func TestProgressLinesForALog(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f))

	var log bytes.Buffer
	specs := Grid([]string{"ra"}, []string{"ideal"}, []int{100, 125, 150}, 0.01, 1, nil)
	_, err = Run(specs, Options{Jobs: 1, Base: config.Default(), Progress: &log})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	require.Len(t, lines, 4, log.String())
	assert.Equal(t, "uvmsim: simulating 3 of 3 runs, 1 at a time", lines[0])
	for i, l := range lines[1:] {
		assert.Contains(t, l, fmt.Sprintf("[%d/3] ra/ideal/", i+1))
		assert.Contains(t, l, "0 failed, ETA")
	}
}

func TestProgressBarOnATerminal(t *testing.T) {
	var bar bytes.Buffer
	specs := Grid([]string{"ra"}, []string{"ideal"}, []int{100, 125}, 0.01, 1, nil)
	_, err := Run(specs, Options{Jobs: 1, Base: config.Default(), Progress: &bar, Bar: true})
	require.NoError(t, err)
	assert.Contains(t, bar.String(), "simulating, 0 failed")
}

func TestRunResumesFromStoredRecords(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, PrepareDir(dir, false))
	specs := Grid([]string{"hotspot", "ra"}, []string{"ideal"}, []int{100, 125}, 0.01, 1, nil)
	first, err := Run(specs[:2], Options{Jobs: 1, Base: config.Default(), Dir: dir})
	require.NoError(t, err)
	var log bytes.Buffer
	all, err := Run(specs, Options{Jobs: 2, Base: config.Default(), Dir: dir, Progress: &log})
	require.NoError(t, err)
	assert.Contains(t, log.String(), "uvmsim: 2 of 4 runs already have a result in "+dir+", skipped")
	assert.Contains(t, log.String(), "simulating 2 of 4 runs")
	for i := range all {
		assert.Equal(t, i < 2, all[i].Stored, i)
	}
	// A stored result is the simulated one, wall time included.
	assert.Equal(t, Succeeded(first), Succeeded(all[:2]))
	fresh, err := Run(specs, Options{Jobs: 2, Base: config.Default()})
	require.NoError(t, err)
	if d := cmp.Diff(Succeeded(fresh), Succeeded(all), ignoreWall); d != "" {
		t.Errorf("resumed results differ from a fresh batch (-fresh +resumed):\n%s", d)
	}
	require.NoError(t, PrepareDir(dir, true))
	left, err := filepath.Glob(filepath.Join(dir, RunsDir, "*.json"))
	require.NoError(t, err)
	assert.Empty(t, left, "--fresh removes the stored runs")
}

func TestRunStopsStartingRunsWhenStopped(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	specs := Grid([]string{"ra"}, []string{"ideal"}, []int{100, 125, 150}, 0.01, 1, nil)
	out, err := Run(specs, Options{Jobs: 1, Base: config.Default(), Stop: stop})
	require.ErrorIs(t, err, ErrInterrupted)
	require.Len(t, out, 3)
	interrupted := 0
	for _, o := range out {
		if errors.Is(o.Err, ErrInterrupted) {
			interrupted++
		}
	}
	// The dispatcher may hand out one run before it sees the closed stop.
	assert.GreaterOrEqual(t, interrupted, 2)
}

func TestSpecsOfOneConfigurationShareARun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, PrepareDir(dir, false))
	// The default eviction variant spelled out is the default run.
	plain := Spec{Workload: "ra", Policy: "uvmmu", OversubPct: 150, Scale: 0.02, Seed: 1}
	spelled := plain
	spelled.Sets = []string{EvictionKey + "=" + EvictionVariants[0]}
	withSamples := plain
	withSamples.Latencies = true
	var log bytes.Buffer
	out, err := Run([]Spec{plain, spelled, withSamples}, Options{Jobs: 2, Base: config.Default(), Dir: dir, Progress: &log})
	require.NoError(t, err)
	assert.Contains(t, log.String(), "simulating 1 of 1 runs")
	for i, o := range out {
		assert.Equal(t, out[0].Result, o.Result, i)
		assert.NotNil(t, o.Latencies, "the shared run keeps the samples one of its specs asks for")
	}
	assert.Equal(t, spelled, out[1].Spec)
	assert.Len(t, Records(out), 1)
	cfg, err := spelled.Config(config.Default())
	require.NoError(t, err)
	rec, err := ReadRecord(dir, &cfg)
	require.NoError(t, err)
	assert.NotNil(t, rec.Latencies)
}
