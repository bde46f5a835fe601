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
