package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/experiment"
)

// sweepCSV runs a tiny ideal-policy sweep with the given worker count and
// returns its results.csv without the wall-time columns.
func sweepCSV(t *testing.T, jobs string) [][]string {
	t.Helper()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"sweep", "--workloads", "hotspot,ra,nw", "--policies", "ideal", "--oversub", "100,150",
		"--scale", "0.01", "--seed", "2", "--jobs", jobs, "--out", dir}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	f, err := os.Open(filepath.Join(dir, experiment.ResultsCSV))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	var keep []int
	for i, c := range rows[0] {
		if !experiment.IsWallColumn(c) {
			keep = append(keep, i)
		}
	}
	var out [][]string
	for _, r := range rows {
		var cells []string
		for _, i := range keep {
			cells = append(cells, r[i])
		}
		out = append(out, cells)
	}
	return out
}

func TestSweepSameCSVForAnyJobs(t *testing.T) {
	one, two := sweepCSV(t, "1"), sweepCSV(t, "2")
	require.Len(t, one, 1+3*2)
	if d := cmp.Diff(one, two); d != "" {
		t.Errorf("results.csv differs between --jobs 1 and --jobs 2 (-1 +2):\n%s", d)
	}
	col := slices.Index(one[0], "workload")
	var order []string
	for _, r := range one[1:] {
		order = append(order, r[col])
	}
	assert.Equal(t, []string{"hotspot", "hotspot", "ra", "ra", "nw", "nw"}, order)
}

func TestSweepJSONHasTheRunKeys(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"sweep", "--workloads", "ra", "--policies", "ideal", "--scale", "0.01", "--out", dir}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	data, err := os.ReadFile(filepath.Join(dir, experiment.ResultsJSON))
	require.NoError(t, err)
	var objs []map[string]any
	require.NoError(t, json.Unmarshal(data, &objs))
	require.Len(t, objs, 1)
	var keys []string
	for k := range objs[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := slices.Sorted(slices.Values(experiment.RecordColumns()))
	assert.Equal(t, want, keys)
	assert.Contains(t, stdout.String(), "ra")
}

func TestSweepBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--policies", "nosuch"}, []string{"--policies", `"nosuch"`, "allowed: ideal"}},
		{[]string{}, []string{"--policies", "empty name", "allowed:"}},
		{[]string{"--policies", "ideal", "--workloads", "hotspot,nope"}, []string{"--workloads", `"nope"`, "all, or a comma-separated list of", "hotspot"}},
		{[]string{"--policies", "ideal", "--oversub", "50"}, []string{"--oversub", `"50"`, "100..1000"}},
		{[]string{"--policies", "ideal", "--oversub", "125,x"}, []string{"--oversub", `"x"`}},
		{[]string{"--policies", "ideal", "--jobs", "0"}, []string{"--jobs", "allowed: 1 to"}},
		{[]string{"--policies", "ideal", "--scale", "0"}, []string{"--scale", "run.scale"}},
		{[]string{"--policies", "ideal", "--set", "pcie.nosuch=1"}, []string{"--set", "pcie.nosuch"}},
		{[]string{"--policies", "ideal", "--set", "pcie.bandwidth_gbs=fast"}, []string{"--set", "pcie.bandwidth_gbs", "allowed"}},
		{[]string{"--policies", "ideal", "--config", "/nonexistent.toml"}, []string{"--config"}},
		{[]string{"--policies", "ideal", "--bogus"}, []string{"bogus"}},
		{[]string{"--policies", "ideal", "extra"}, []string{"no arguments"}},
		{[]string{"--policies", "ideal", "--out", "/etc/passwd/x"}, []string{"--out", "/etc/passwd", "not a directory"}},
		{[]string{"--policies", "ideal", "--no-wait"}, []string{"--no-wait need --slurm"}},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"sweep", "--out", t.TempDir()}, c.args...), &stdout, &stderr)
		assert.Equal(t, exitUsage, code, c.args)
		for _, w := range c.want {
			assert.Contains(t, stderr.String(), w, c.args)
		}
	}
}

func TestExperimentBadArguments(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"experiment"}, []string{"one NAME", "fig1", "validate"}},
		{[]string{"experiment", "fig9"}, []string{`"fig9"`, "allowed: fig1, fig4, fig5, fig6, migration-latency, incomplete, validate"}},
		{[]string{"experiment", "fig1", "fig4"}, []string{"one NAME, got 2"}},
		{[]string{"experiment", "fig1", "--jobs", "-3"}, []string{"--jobs", "allowed: 1 to"}},
		{[]string{"experiment", "fig4", "--workloads", "ra,nope"}, []string{"--workloads", `"nope"`}},
		{[]string{"experiment", "fig4", "--set", "uvmmu.eviction=lru"}, []string{"--set", "uvmmu.eviction", "allowed"}},
		{[]string{"experiment", "fig4", "--scale", "0"}, []string{"--scale", "run.scale"}},
		{[]string{"experiment", "fig4", "--config", "/nonexistent.toml"}, []string{"--config"}},
		{[]string{"experiment", "fig4", "--out", "/etc/passwd/x"}, []string{"--out", "not a directory"}},
		{[]string{"run", "--workload", "ra", "--json", "/nonexistent/dir/x.json"}, []string{"--json", "/nonexistent/dir/x.json"}},
		{[]string{"plot"}, []string{"plot takes one output directory"}},
		{[]string{"plot", "/nonexistent"}, []string{"/nonexistent", "experiment.json"}},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, exitUsage, Main(c.args, &stdout, &stderr), c.args)
		for _, w := range c.want {
			assert.Contains(t, stderr.String(), w, c.args)
		}
	}
}

// TestOutWriteFailuresAreIOErrors: sweep and experiment report a failure
// to write their --out directory as an I/O failure, status 3, as run's
// --json on a full disk: a result file that cannot be replaced after the
// runs (a directory stands in its place), a directory the system refuses
// to create (/sys) and, when not root, one without write permission. An
// --out that names a file stays a bad flag, status 2
// (TestExperimentBadArguments).
func TestOutWriteFailuresAreIOErrors(t *testing.T) {
	batch := map[string][]string{
		experiment.ResultsCSV: {"sweep", "--workloads", "ra", "--policies", "ideal", "--scale", "0.01", "--jobs", "1"},
		"fig4.csv":            {"experiment", "fig4", "--workloads", "ra", "--scale", "0.01", "--jobs", "1"},
	}
	for file, args := range batch {
		out := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(out, file), 0o755))
		code, _, stderr := run(append(args, "--out", out)...)
		assert.Equal(t, exitIO, code, stderr)
		assert.Contains(t, stderr, "--out: ", args[0])
		assert.Contains(t, stderr, file, args[0])
	}
	var unwritable []string
	if fi, err := os.Stat("/sys"); err == nil && fi.IsDir() {
		unwritable = append(unwritable, "/sys/uvmsim-out")
	}
	if os.Geteuid() != 0 {
		dir := filepath.Join(t.TempDir(), "read-only")
		require.NoError(t, os.Mkdir(dir, 0o555))
		unwritable = append(unwritable, dir)
	}
	for _, out := range unwritable {
		for _, args := range batch {
			code, _, stderr := run(append(args, "--out", out)...)
			assert.Equal(t, exitIO, code, stderr)
			assert.Contains(t, stderr, "--out: ")
		}
	}
}
