package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/experiment"
)

// fig4Small is fig4 over one workload at a tiny size: 9 runs, about 2 s.
func fig4Small(out string, extra ...string) []string {
	return append([]string{"experiment", "fig4", "--workloads", "ra", "--scale", "0.02", "--seed", "3", "--jobs", "2", "--out", out}, extra...)
}

// figureFiles reads the deterministic files an experiment writes.
func figureFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, name := range []string{"fig4.csv", "fig4.json", "fig4.svg", experiment.ManifestFile} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		m[name] = string(data)
	}
	return m
}

func TestExperimentTakesSweepFlagsResumesAndPlots(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := run(fig4Small(dir, "--set", "pcie.bandwidth_gbs=32")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "uvmsim: simulating 9 of 9 runs, 2 at a time")
	assert.Contains(t, stdout, "fig4: Speedup over NVIDIA UM")
	first := figureFiles(t, dir)
	var plan experiment.Plan
	plan, err := experiment.ReadPlan(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"ra"}, plan.Params.Workloads)
	assert.Equal(t, 0.02, plan.Params.Scale)
	assert.Equal(t, uint64(3), plan.Params.Seed)
	assert.Equal(t, map[string]string{"pcie.bandwidth_gbs": "32"}, plan.Base)
	runs, err := filepath.Glob(filepath.Join(dir, experiment.RunsDir, "ra-*.json"))
	require.NoError(t, err)
	assert.Len(t, runs, 9)
	results, err := os.ReadFile(filepath.Join(dir, experiment.ResultsJSON))
	require.NoError(t, err)
	assert.Contains(t, string(results), `"pcie.bandwidth_gbs": "32"`)

	// The same command again simulates nothing and writes the same bytes.
	code, again, stderr := run(fig4Small(dir, "--set", "pcie.bandwidth_gbs=32")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "uvmsim: 9 of 9 runs already have a result in "+dir+", skipped (--fresh starts over)")
	assert.NotContains(t, stderr, "simulating")
	assert.Equal(t, stdout, again)
	assert.Equal(t, first, figureFiles(t, dir))

	// plot rebuilds every table and figure from the stored runs alone.
	for _, name := range []string{"fig4.csv", "fig4.json", "fig4.svg", experiment.ResultsCSV} {
		require.NoError(t, os.Remove(filepath.Join(dir, name)))
	}
	code, plotted, stderr := run("plot", dir)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, stdout, plotted)
	assert.Equal(t, first, figureFiles(t, dir))
	assert.Contains(t, stderr, "rebuilt from 9 stored runs of 9")

	// A different configuration in the same directory is a different set
	// of runs, not a resume; --fresh first removes the stored ones.
	code, _, stderr = run(fig4Small(dir, "--fresh")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "simulating 9 of 9 runs")
	runs, err = filepath.Glob(filepath.Join(dir, experiment.RunsDir, "ra-*.json"))
	require.NoError(t, err)
	assert.Len(t, runs, 9)

	// plot warns about runs without a record and leaves their values out.
	missing, err := filepath.Glob(filepath.Join(dir, experiment.RunsDir, "ra-uvmmu-*.json"))
	require.NoError(t, err)
	require.Len(t, missing, 3)
	for _, r := range missing {
		require.NoError(t, os.Remove(r))
	}
	code, plotted, stderr = run("plot", dir)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "warning: 3 of 9 runs of "+dir+" have no stored result")
	assert.Contains(t, plotted, "n/a")
}
