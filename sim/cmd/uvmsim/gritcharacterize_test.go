package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGritCharacterizeWritesTableAndCSV(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"grit-characterize", "--workloads", "grit-fir,grit-gemm", "--scale", "0.01", "--sms", "2", "--allocs", "--out", dir}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "grit-fir")
	assert.Contains(t, stdout.String(), "private%")
	f, err := os.Open(filepath.Join(dir, "grit-characterize.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	// header; fir: all + 4 allocations; gemm: all + 4 allocations.
	require.Len(t, rows, 1+5+5)
	assert.Equal(t, []string{"grit-fir", "all", "4"}, rows[1][:3])
	assert.Equal(t, "history", rows[2][1])
}

func TestGritCharacterizeRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--gpus", "17"},
		{"--workloads", "bfs"},
		{"--scale", "-1"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"grit-characterize", "--out", dir}, args...), &stdout, &stderr)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr.String())
	}
}

// Without --out the command prints its table and writes no file.
func TestGritCharacterizeWritesNothingUnasked(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, Main([]string{"grit-characterize", "--workloads", "grit-gemm", "--scale", "0.01", "--sms", "2"}, &stdout, &stderr), stderr.String())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestGritCharacterizeHelpExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitOK, Main([]string{"grit-characterize", "--help"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--warps-per-sm")
}

// The scheme comparison refuses what it cannot run before any
// simulation, naming the flag.
func TestGritSchemesRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--schemes", "um"},
		{"--workloads", "bfs"},
		{"--scale", "-1"},
		{"--set", "multigpu.gpus=17"},
		{"--jobs", "0"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"experiment", "grit-schemes", "--out", dir}, args...), &stdout, &stderr)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr.String())
	}
}

// A multi-GPU run prints a row per GPU and the total, and writes its
// record as JSON.
func TestRunMultiGPU(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "--preset", "grit", "--gpus", "2", "--policy", "dup", "--workload", "grit-gemm", "--scale", "0.003",
		"--set", "gpu.sms=1", "--set", "gpu.warps_per_sm=8", "--json", out, "--check"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "multi-GPU policy dup, 2 GPUs")
	assert.Contains(t, stdout.String(), "total")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"replicas_made"`)
	var stderr2 bytes.Buffer
	assert.Equal(t, exitUsage, Main([]string{"run", "--gpus", "2", "--policy", "uvmmu", "--workload", "grit-gemm"}, &stdout, &stderr2), "a single-GPU policy on the multi-GPU system")
	assert.Contains(t, stderr2.String(), "multigpu.policy")
}
