package cosim

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wide is a DUT with inputs that straddle 64-bit word boundaries of the
// packed row, to check that ReadInputs undoes the packing exactly.
type wide struct{ last []uint64 }

func (w *wide) Ports() []Port {
	return []Port{
		{Name: "rst", Width: 1, Dir: In},
		{Name: "a", Width: 63, Dir: In},
		{Name: "b", Width: 64, Dir: In},
		{Name: "c", Width: 5, Dir: In},
		{Name: "v", Width: 1, Dir: Out},
		{Name: "x", Width: 64, Dir: Out, ValidBy: "v"},
	}
}

func (w *wide) Outputs(out []uint64) {
	out[0], out[1] = 0, 0
	if len(w.last) > 0 {
		out[0], out[1] = w.last[3]&1, w.last[1]^w.last[2]
	}
}

func (w *wide) Clock(in []uint64) error { w.last = append(w.last[:0], in...); return nil }

func TestReadInputsInvertsRecord(t *testing.T) {
	var want []uint64
	stim := func(c uint64, _, in []uint64) {
		in[1] = (c * 0x9e3779b97f4a7c15) & Mask(63)
		in[2] = ^c * 0xbf58476d1ce4e5b9
		in[3] = c & 31
		row := append([]uint64(nil), in...)
		if c == 0 {
			row[0] = 1 // Record forces the reset of cycle 0
		}
		want = append(want, row...)
	}
	v, err := Record(&wide{}, stim, 1000, t.TempDir(), "wide")
	require.NoError(t, err)
	got, err := ReadInputs(v)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	path := filepath.Join(t.TempDir(), "in.bin")
	require.NoError(t, WriteInputs(path, got[:4]))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, b, 32)
	assert.Equal(t, got[2], binary.LittleEndian.Uint64(b[16:]))
}

func TestChecksumIgnoresPayloadWhileInvalid(t *testing.T) {
	l, err := NewLayout((&wide{}).Ports())
	require.NoError(t, err)
	a, b := NewChecksum(l), NewChecksum(l)
	a.Add([]uint64{0, 123})
	b.Add([]uint64{0, 456})
	assert.Equal(t, a.Sum(), b.Sum(), "payload while v is 0")
	a.Add([]uint64{1, 123})
	b.Add([]uint64{1, 456})
	assert.NotEqual(t, a.Sum(), b.Sum(), "payload while v is 1")
}

func TestHarnessNamesEveryPort(t *testing.T) {
	l, err := NewLayout((&wide{}).Ports())
	require.NoError(t, err)
	text, err := Harness("wide", l)
	require.NoError(t, err)
	for _, want := range []string{`#include "Vwide.h"`, "top->rst = row[0];", "top->c = row[3];",
		"fold(sum, (uint64_t)top->v);", "fold(sum, top->v ? (uint64_t)top->x : 0);", "kInputs = 4;"} {
		assert.Contains(t, string(text), want)
	}
}
