package pacache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// faultSource offers a pseudo-random fault every cycle: pages drawn from a
// 128-page working set in front of a 64-entry cache, so hits, misses,
// write-backs and triggers all occur.
type faultSource struct {
	rtl.Base
	out  ReqPort
	lfsr *rtl.Reg[uint32]
}

func newFaultSource(s *rtl.Sim, out ReqPort) *faultSource {
	f := &faultSource{out: out}
	s.Add(f, "src")
	f.lfsr = rtl.NewReg[uint32](&f.Base, "lfsr", 32, 0x1234567)
	out.Producer(&f.Base)
	return f
}

func (f *faultSource) Drive() {
	x := f.lfsr.Q()
	f.out.Valid.Set(true)
	f.out.Set(Request{VPN: uint64(x&0x7f) * 0x9e5, Write: x>>8&7 == 0})
}

func (f *faultSource) Eval() {
	if f.out.Fire() {
		x := f.lfsr.Q()
		f.lfsr.Set(x>>1 ^ -(x&1)&0xa3000000) // x^32 + x^30 + x^26 + x^25 + 1
	}
}

// BenchmarkPACacheRandomTraffic reports simulated cycles per second of a
// PA-Cache, a PA-Table with a 3-cycle latency and a fault source; one
// benchmark op is one cycle.
func BenchmarkPACacheRandomTraffic(b *testing.B) {
	s := rtl.New(rtl.Options{})
	cfg := DefaultConfig()
	p := NewPorts(s, "pac", cfg)
	_, err := New(s, "pac", cfg, p)
	require.NoError(b, err)
	tbl, err := NewTable(s, "pat", TableConfig{Latency: tableLatency}, p)
	require.NoError(b, err)
	newFaultSource(s, p.Req)
	s.Reset()
	require.NoError(b, s.Run(10000))
	require.Positive(b, tbl.WriteBacks)
	require.Positive(b, tbl.Deletes)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}
