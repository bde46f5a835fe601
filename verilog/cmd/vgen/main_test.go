package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func vgen(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestOutThenCheck(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := vgen("-out", dir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "modules to "+dir)
	code, out, _ = vgen("-check", dir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "match the generator")

	path := filepath.Join(dir, "uvmmu_dcq.v")
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, bytes.Replace(text, []byte("refill = mem_fill < REFILL_BELOW;"), []byte("refill = mem_fill <= REFILL_BELOW;"), 1), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "uvmmu_lfsr.v")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.v"), nil, 0o644))
	code, _, errOut := vgen("-check", dir)
	require.Equal(t, 1, code)
	assert.Contains(t, errOut, "3 of the files in "+dir+" differ")
	assert.Contains(t, errOut, "uvmmu_dcq.v: changed at line")
	assert.Contains(t, errOut, "committed:   assign refill = mem_fill <= REFILL_BELOW;")
	assert.Contains(t, errOut, "uvmmu_lfsr.v: missing")
	assert.Contains(t, errOut, "old.v: stale")
	assert.Contains(t, errOut, "regenerate with: go run ./verilog/cmd/vgen -out "+dir)
}

func TestTopWithOverrides(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := vgen("-top", "uvmmu_dcq", "-set", "DEPTH=128", "-set", "THRESHOLD=100", "-set", "FG_BITS=20", "-out", dir)
	require.Equal(t, 0, code, errOut)
	text, err := os.ReadFile(filepath.Join(dir, "uvmmu_dcq.v"))
	require.NoError(t, err)
	assert.Contains(t, string(text), "// Parameters (defaults): DEPTH=128 THRESHOLD=100 FG_BITS=20.")
	assert.Contains(t, string(text), "  parameter DEPTH = 128,\n")
}

func TestBadInvocations(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-top", "uvmmu_dcq", "-set", "DEPTH=1", "-out", "x"}, "uvmmu_dcq parameter DEPTH = 1 is outside the allowed range 2..65536"},
		{[]string{"-top", "nope", "-out", "x"}, `no emitter for module "nope"`},
		{[]string{"-top", "uvmmu_dcq", "-set", "DEPTH", "-out", "x"}, "want NAME=VALUE"},
		{[]string{"-set", "DEPTH=4", "-out", "x"}, "-set needs -top"},
		{[]string{"-check", "x", "-top", "uvmmu_dcq"}, "-check compares the default modules"},
		{nil, "Usage"},
	} {
		code, _, errOut := vgen(tc.args...)
		assert.Equal(t, 2, code, strings.Join(tc.args, " "))
		assert.Contains(t, errOut, tc.want)
	}
}

func TestList(t *testing.T) {
	code, out, _ := vgen("-list")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "uvmmu_dcq: destination candidate queue")
	assert.Contains(t, out, "DEPTH")
}
