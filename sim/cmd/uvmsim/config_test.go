package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
)

// The printed defaults are a complete configuration: decoded over a zero
// Config they give exactly config.Default(), so no key is missing and every
// value keeps its type; --check accepts the file.
func TestConfigPrintDefaultsRoundTrips(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, Main([]string{"config", "--print-defaults"}, &stdout, &stderr), stderr.String())
	path := filepath.Join(t.TempDir(), "defaults.toml")
	require.NoError(t, os.WriteFile(path, stdout.Bytes(), 0o644))

	var got config.Config
	require.NoError(t, got.LoadFile(path))
	assert.Empty(t, cmp.Diff(config.Default(), got))

	stdout.Reset()
	require.Equal(t, exitOK, Main([]string{"config", "--check", path}, &stdout, &stderr), stderr.String())
	assert.Equal(t, path+": ok\n", stdout.String())
}

// A file read by run --config: the printed defaults with the menu changed
// pass --check, and run accepts them (a tiny ideal run).
func TestConfigFileLoadsIntoRun(t *testing.T) {
	var def, stderr bytes.Buffer
	require.Equal(t, exitOK, Main([]string{"config", "--print-defaults"}, &def, &stderr))
	text := bytes.Replace(def.Bytes(), []byte(`eviction = "lru2m"`), []byte(`eviction = "lru4k"`), 1)
	path := filepath.Join(t.TempDir(), "menu.toml")
	require.NoError(t, os.WriteFile(path, text, 0o644))
	var out bytes.Buffer
	code := Main([]string{"run", "--config", path, "--policy", "ideal", "--workload", "ra", "--scale", "0.01"}, &out, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, out.String(), "policy ideal")
}

// Unknown keys, out-of-range values and unknown names are usage errors
// (exit status 2) that name the key and its allowed values.
func TestConfigCheckNamesTheKey(t *testing.T) {
	cases := []struct{ file, want string }{
		{"[um]\nevictor = \"lru2m\"\n", `unknown key "um.evictor"`},
		{"[um]\nremote = \"sometimes\"\n", `um.remote = "sometimes" out of range; allowed: one of off, adaptive, always, oversub`},
		{"[uvmsmart]\npenalty = 0\n", "uvmsmart.penalty = 0 out of range; allowed: 1..1048576"},
		{"[uvmsmart]\nfree_buffer_pct = 100.0\n", "uvmsmart.free_buffer_pct = 100 out of range; allowed: 0..99"},
		{"[run]\nworkload = \"doom\"\n", `run.workload: workload "doom" unknown`},
	}
	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), "bad.toml")
		require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o644))
		var stdout, stderr bytes.Buffer
		assert.Equal(t, exitUsage, Main([]string{"config", "--check", path}, &stdout, &stderr), tc.file)
		assert.Contains(t, stderr.String(), tc.want, tc.file)
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitUsage, Main([]string{"config"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--print-defaults or --check FILE")
}

// With multigpu.gpus above 1, in the file or from --gpus, --check builds
// the multi-GPU system: a GRIT workload passes, a trace (one GPU only) and
// a GPU count out of range are usage errors naming the key.
func TestConfigCheckMultiGPU(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	grit := write("grit.toml", "[multigpu]\ngpus = 4\npolicy = \"ot-prefetch\"\n[run]\nworkload = \"grit-st\"\nscale = 0.002\n[gpu]\nsms = 2\nwarps_per_sm = 8\n")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, Main([]string{"config", "--check", grit}, &stdout, &stderr), stderr.String())
	assert.Equal(t, grit+": ok (4 GPUs)\n", stdout.String())

	trace := write("trace.toml", "[run]\nworkload = \"trace:"+filepath.Join(dir, "grit.toml")+"\"\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--check", trace, "--gpus", "4"}, "a trace runs on one GPU"},
		{[]string{"--check", grit, "--gpus", "17"}, "multigpu.gpus = 17 out of range"},
		{[]string{"--gpus", "4"}, "--gpus goes with --check FILE"},
	}
	for _, tc := range cases {
		stdout.Reset()
		stderr.Reset()
		assert.Equal(t, exitUsage, Main(append([]string{"config"}, tc.args...), &stdout, &stderr), tc.args)
		assert.Contains(t, stderr.String(), tc.want, tc.args)
	}
}
