package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodesAndMessages(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, exitUsage, "no command"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"run", "--bogus"}, exitUsage, "unknown flag: --bogus"},
		{[]string{"run", "--workload", "nope"}, exitUsage, `run.workload: workload "nope" unknown; allowed: 2dconv, backprop`},
		{[]string{"run", "--policy", "magic"}, exitUsage, `run.policy = "magic" out of range; allowed: one of ideal`},
		{[]string{"run", "--oversub", "50"}, exitUsage, "run.oversub_pct = 50 out of range; allowed: 100..1000"},
		{[]string{"run", "--set", "gpu.smz=3"}, exitUsage, `unknown key "gpu.smz"`},
		{[]string{"run", "--set", "pcie.bandwidth_gbs=fast"}, exitUsage, `pcie.bandwidth_gbs = "fast" is not a valid float`},
		{[]string{"run", "--config", "/nonexistent.toml"}, exitUsage, "no such file"},
		{[]string{"run", "--vcd", "x.vcd"}, exitUsage, "--vcd needs at least one --vcd-signals"},
		{[]string{"run", "extra"}, exitUsage, "run takes no arguments"},
		{[]string{"report"}, exitUsage, "report needs result JSON files"},
	}
	for _, tc := range cases {
		code, _, stderr := run(tc.args...)
		assert.Equal(t, tc.code, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.msg, "%v", tc.args)
	}
}

func TestList(t *testing.T) {
	code, out, _ := run("list")
	require.Equal(t, exitOK, code)
	for _, want := range []string{"hotspot", "uvmmu", "um.fault_latency_us", "pcie.bandwidth_gbs"} {
		assert.Contains(t, out, want)
	}
}

func TestRunWritesJSONAndReport(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "small.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[gpu]\nsms = 4\n"), 0o644))
	var files []string
	for _, p := range []string{"um", "uvmmu"} {
		js := filepath.Join(dir, p+".json")
		code, out, stderr := run("run", "--workload", "ra", "--policy", p, "--scale", "0.02", "--config", cfg, "--set", "run.seed=7", "--json", js, "--check")
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, out, "simulated cycles")
		data, err := os.ReadFile(js)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		for _, k := range []string{"workload", "policy", "oversub_pct", "seed", "cycles", "wall_seconds", "sim_cycles_per_second",
			"warp_instructions", "far_faults", "migrations", "evictions", "pcie_h2d_bytes", "pcie_d2h_bytes", "tlb_misses"} {
			assert.Contains(t, m, k)
		}
		assert.Equal(t, float64(7), m["seed"])
		files = append(files, js)
	}
	csvFile := filepath.Join(dir, "r.csv")
	code, out, stderr := run(append([]string{"report", "--csv", csvFile}, files...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "geomean")
	_, err := os.Stat(csvFile)
	assert.NoError(t, err)

	// The same two results as one array, as sweep and experiment write
	// them, give the same table.
	var arr []json.RawMessage
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		arr = append(arr, data)
	}
	joined, err := json.Marshal(arr)
	require.NoError(t, err)
	all := filepath.Join(dir, "results.json")
	require.NoError(t, os.WriteFile(all, joined, 0o644))
	code, fromArray, stderr := run("report", all)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, out, fromArray)
}

// Errors map to the documented exit statuses: 2 for what the user can fix,
// 1 for a simulation failure (the watchdog, an invariant), 3 for a failed
// read or write.
func TestExitStatus(t *testing.T) {
	assert.Equal(t, exitOK, exitStatus(nil))
	assert.Equal(t, exitUsage, exitStatus(usage("bad flag")))
	assert.Equal(t, exitUsage, exitStatus(fmt.Errorf("run: %w", &system.MemoryError{})))
	assert.Equal(t, exitFailure, exitStatus(errors.New("system: watchdog: at cycle 5 nothing retired")))
	assert.Equal(t, exitIO, exitStatus(fmt.Errorf("system: vcd: %w", ioError{errors.New("no space left on device")})))
	assert.Equal(t, exitIO, exitStatus(&workload.ReadError{File: "x.trace", Err: errors.New("input/output error")}))
}
