package grit

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkEngineFault measures one fault through the engine at GRIT's
// defaults: faults 500 cycles apart on a pool of 4,096 pages with host
// PTEs (so the PA-Cache misses, hits, evicts and triggers), a 300-cycle
// walk. One op is one fault.
func BenchmarkEngineFault(b *testing.B) {
	pt := newFakeTables(0, 4096)
	e, err := New(DefaultConfig(), pt)
	require.NoError(b, err)
	x := uint32(0x1234567)
	now := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		x = x>>1 ^ -(x&1)&0xa3000000
		now += 500
		if _, err := e.Fault(now, Fault{GPU: int(x >> 28 & 3), VPN: uint64(x & 0xfff), Write: x>>20&7 == 0}, 300); err != nil {
			b.Fatal(err)
		}
	}
}
