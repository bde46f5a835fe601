package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
)

// boundCompanions are the other keys a key's bound needs to satisfy the
// rules that join keys (config.Validate); every other key keeps its
// default.
var boundCompanions = map[string][]string{
	// 1 MHz: the 1 us round trip is one cycle, below the two a link needs,
	// and 484 GB/s is 484,000 bytes a cycle, above the data path's 131,072.
	"gpu.clock_mhz=1": {"pcie.rtt_us=2.0", "memory.bandwidth_gbs=100.0"},
	// The threshold must not exceed the depth.
	"uvmmu.dcq_depth=2":         {"uvmmu.dcq_threshold=2"},
	"uvmmu.dcq_threshold=65536": {"uvmmu.dcq_depth=65536"},
}

// boundWorkload runs a bound on another tiny workload than ra: every
// built-in workload but nw and sssp launches thread blocks of 8 or 16
// warps, which one warp per SM cannot hold.
var boundWorkload = map[string]string{"gpu.warps_per_sm=1": "nw"}

// checkedOnlyBounds are bounds whose run is not tiny under a policy, with
// the reason; the test checks that config --check accepts them and runs
// them under the other policies only.
var checkedOnlyBounds = map[string]string{
	// At 1 MB/s a 4 KB page holds the link for 6 million cycles; the
	// hardware path evaluates 16 million of the run's 212 million cycles
	// there (the fault path 774), seconds of wall time.
	"pcie.bandwidth_gbs=0.001 uvmmu": "a slow link keeps the hardware path evaluating",
}

// unrunnableBounds are bounds no tiny run can take, with the reason; the
// test checks that config --check and run refuse them alike, naming the
// key, before the first cycle.
var unrunnableBounds = map[string]string{
	// Every built-in workload at 10,000x needs more GPU memory than the
	// GMMU's 64 GB page table covers (ra: 120 GB; srad, the smallest,
	// 240 GB); here memory.capacity_gb's 11 GB refuses it first.
	"run.scale=10000": "workload ra at run.scale = 10000 needs more than 113998 MB of GPU memory at run.oversub_pct = 100, more than memory.capacity_gb = 11",
}

// boundPolicies are the policies a key's bounds run under: its section's
// policy; the link's under the fault path and the hardware path; the
// rest under the hardware path, whose blocks read every GPU and memory
// key.
func boundPolicies(key string) []string {
	switch section, _, _ := strings.Cut(key, "."); section {
	case "um", "uvmsmart", "adaptive", "uvmmu":
		return []string{section}
	case "pcie":
		return []string{"um", "uvmmu"}
	}
	return []string{"uvmmu"}
}

// Every numeric key at the smallest and at the largest value `uvmsim list`
// shows passes `config --check` and runs a tiny simulation under each
// policy that reads it (or, for the bounds in unrunnableBounds, is
// refused by both with the same message). The tiny run is ra at 1% on two
// SMs.
func TestEveryNumericKeyAtItsBounds(t *testing.T) {
	def := config.Default()
	bounds := 0
	for _, k := range config.Keys() {
		lo, hi, ok := k.Bounds(&def)
		if !ok {
			continue
		}
		for _, v := range []string{lo, hi} {
			bounds++
			for _, policy := range boundPolicies(k.Name) {
				set := k.Name + "=" + v
				t.Run(set+" "+policy, func(t *testing.T) {
					t.Parallel()
					checkBound(t, def, set, policy)
				})
			}
		}
	}
	assert.Equal(t, 146, bounds, "every numeric key has two bounds")
}

// checkBound runs config --check and run with one key at a bound.
func checkBound(t *testing.T, def config.Config, set, policy string) {
	dir := t.TempDir()
	wl := boundWorkload[set]
	if wl == "" {
		wl = "ra"
	}
	text := fmt.Sprintf("[run]\nworkload = %q\npolicy = %q\nscale = 0.01\n[gpu]\nsms = 2\n", wl, policy)
	path := filepath.Join(dir, "bound.toml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	args := []string{"--config", path, "--set", set}
	for _, c := range boundCompanions[set] {
		args = append(args, "--set", c)
	}
	// config --check takes a file only: write the overrides into it.
	cfg := def
	require.NoError(t, cfg.LoadFile(path))
	for i := 2; i < len(args); i += 2 {
		require.NoError(t, cfg.Set(args[i+1]), args[i+1])
	}
	checked := filepath.Join(dir, "checked.toml")
	require.NoError(t, os.WriteFile(checked, []byte(defaultsTOML(&cfg)), 0o644))

	var out, checkErr, runErr bytes.Buffer
	checkCode := Main([]string{"config", "--check", checked}, &out, &checkErr)
	if _, slow := checkedOnlyBounds[set+" "+policy]; slow {
		assert.Equal(t, exitOK, checkCode, checkErr.String())
		return
	}
	runCode := Main(append([]string{"run"}, args...), &out, &runErr)
	if want, refused := unrunnableBounds[set]; refused {
		assert.Equal(t, exitUsage, checkCode)
		assert.Equal(t, exitUsage, runCode)
		assert.Contains(t, checkErr.String(), want)
		assert.Contains(t, runErr.String(), want)
		return
	}
	assert.Equal(t, exitOK, checkCode, checkErr.String())
	assert.Equal(t, exitOK, runCode, runErr.String())
}

// config --check and run agree on every value: the cases that
// used to pass --check and fail in run, and the rules that join keys, are
// refused by both with the same message naming the key; the fixed-up
// values are accepted by both.
func TestCheckAndRunAgree(t *testing.T) {
	cases := []struct {
		file string
		want string // empty: accepted
	}{
		{"[uvmmu]\nfrab_word = 8\n", "uvmmu.frab_word = 8 out of range; allowed: 32..512, a power of two"},
		{"[uvmmu]\nfrab_word = 1024\n", "uvmmu.frab_word = 1024 out of range; allowed: 32..512, a power of two"},
		{"[pcie]\nrtt_us = 0.0\n", "pcie.rtt_us = 0 out of range; allowed: 2..131072 cycles at gpu.clock_mhz = 1481"},
		{"[pcie]\nrtt_us = 1000.0\n", "pcie.rtt_us = 1000 out of range; allowed: 2..131072 cycles at gpu.clock_mhz = 1481"},
		{"[gpu]\nclock_mhz = 1\n", "pcie.rtt_us = 1 out of range; allowed: 2..131072 cycles at gpu.clock_mhz = 1"},
		{"[gpu]\nclock_mhz = 1\n[pcie]\nrtt_us = 2.0\n", "memory.bandwidth_gbs = 484 at gpu.clock_mhz = 1 is 484000 bytes per cycle; allowed: at most 131072"},
		{"[gpu]\nwarps_per_sm = 1\n", "gpu.warps_per_sm = 1 out of range for workload hotspot; allowed: 8..64"},
		{"[gpu]\nl1_tlb_entries = 4096\n", "gpu.l1_tlb_entries = 4096 out of range; allowed: 1..1024"},
		{"[gpu]\nwalk_queue = 65536\n", "gpu.walk_queue = 65536 out of range; allowed: 1..4096"},
		{"[gpu]\nwalk_cycles = 100000\n", "gpu.walk_cycles = 100000 out of range; allowed: 1..65536"},
		{"[memory]\nlatency_cycles = 100000\n", "memory.latency_cycles = 100000 out of range; allowed: 1..65536"},
		{"[pcie]\nbandwidth_gbs = 10000.0\n", "pcie.bandwidth_gbs = 10000 out of range; allowed: 0.001..1048.576"},
		{"[pcie]\npacket_bytes = 65536\n", "pcie.packet_bytes = 65536 out of range; allowed: 16..65535"},
		{"[run]\nseed = -1\n", "run.seed = -1 out of range; allowed: 0..9223372036854775807"},
		{"[run]\nseed = 18446744073709551615\n", "18446744073709551615"},
		{"[uvmmu]\ndcq_threshold = 65\n", "uvmmu.dcq_threshold = 65 must not exceed uvmmu.dcq_depth = 64"},
		{"[run]\nscale = 10000.0\n[memory]\ncapacity_gb = 1024.0\n", "run.scale = 10000: workload hotspot spans 120000 MB of pages"},
		{"[run]\nscale = 10000.0\n", "workload hotspot at run.scale = 10000 needs more than 113998 MB of GPU memory at run.oversub_pct = 100, more than memory.capacity_gb = 11"},
		{"[gpu]\nwarps_per_sm = 1\n[run]\nworkload = \"nw\"\nscale = 0.01\n", ""},
		{"[uvmmu]\nfrab_word = 512\n[run]\nscale = 0.01\n", ""},
		{"[pcie]\nrtt_us = 88.0\n[run]\nscale = 0.01\n", ""},
		{"[run]\nseed = 0x10\nscale = 0.01\n", ""},
	}
	dir := t.TempDir()
	for _, tc := range cases { // the default workload, hotspot, unless a case names one
		path := filepath.Join(dir, "case.toml")
		require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o644))
		var out, checkErr, runErr bytes.Buffer
		checkCode := Main([]string{"config", "--check", path}, &out, &checkErr)
		runCode := Main([]string{"run", "--config", path}, &out, &runErr)
		if tc.want == "" {
			assert.Equal(t, exitOK, checkCode, "%s%s", tc.file, checkErr.String())
			assert.Equal(t, exitOK, runCode, "%s%s", tc.file, runErr.String())
			continue
		}
		assert.Equal(t, exitUsage, checkCode, tc.file)
		assert.Equal(t, exitUsage, runCode, tc.file)
		assert.Contains(t, checkErr.String(), tc.want, tc.file)
		assert.Contains(t, runErr.String(), tc.want, tc.file)
	}

	// --seed, --set run.seed and a file's seed read the same literals.
	for _, seed := range []string{"0x10", "16"} {
		var out, stderr bytes.Buffer
		require.Equal(t, exitOK, Main([]string{"run", "--workload", "ra", "--scale", "0.01", "--policy", "ideal", "--seed", seed}, &out, &stderr), stderr.String())
		assert.Contains(t, out.String(), "seed 16")
		out.Reset()
		require.Equal(t, exitOK, Main([]string{"run", "--workload", "ra", "--scale", "0.01", "--policy", "ideal", "--set", "run.seed=" + seed}, &out, &stderr), stderr.String())
		assert.Contains(t, out.String(), "seed 16")
	}
	for _, seed := range []string{"-1", "18446744073709551615"} {
		var out, flagErr, setErr bytes.Buffer
		assert.Equal(t, exitUsage, Main([]string{"run", "--workload", "ra", "--scale", "0.01", "--seed", seed}, &out, &flagErr), seed)
		assert.Equal(t, exitUsage, Main([]string{"run", "--workload", "ra", "--scale", "0.01", "--set", "run.seed=" + seed}, &out, &setErr), seed)
		assert.Contains(t, flagErr.String(), "run.seed", seed)
		assert.Contains(t, setErr.String(), "run.seed", seed)
	}
}
