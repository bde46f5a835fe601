package accessctr

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// accessSource offers a pseudo-random access every cycle and a round trip
// in about one cycle in eight.
type accessSource struct {
	rtl.Base
	inc  *rtl.Decoupled[Access]
	rt   *rtl.Decoupled[uint32]
	mask uint32
	lfsr *rtl.Reg[uint32]
}

func newAccessSource(s *rtl.Sim, p Ports, blocks int) *accessSource {
	a := &accessSource{inc: p.Inc, rt: p.RoundTrip, mask: uint32(blocks - 1)}
	s.Add(a, "src")
	a.lfsr = rtl.NewReg[uint32](&a.Base, "lfsr", 32, 0xace1)
	p.Inc.Producer(&a.Base)
	p.RoundTrip.Producer(&a.Base)
	return a
}

func (a *accessSource) Drive() {
	x := a.lfsr.Q()
	a.inc.Valid.Set(true)
	a.inc.Bits.Set(Access{Block: x & a.mask, Remote: x>>20&1 == 1})
	a.rt.Valid.Set(x>>24&7 == 0)
	a.rt.Bits.Set(x >> 8 & a.mask)
}

func (a *accessSource) Eval() {
	if a.inc.Fire() || a.rt.Fire() {
		x := a.lfsr.Q()
		a.lfsr.Set(x>>1 ^ -(x&1)&0xa3000000) // x^32 + x^30 + x^26 + x^25 + 1
	}
}

// BenchmarkAccessCountersRandomTraffic reports simulated cycles per second
// of the default 4096-block counters under an access every cycle; one
// benchmark op is one cycle.
func BenchmarkAccessCountersRandomTraffic(b *testing.B) {
	s := rtl.New(rtl.Options{})
	cfg := DefaultConfig()
	p := NewPorts(s, "ac", cfg)
	_, err := New(s, "ac", cfg, p)
	require.NoError(b, err)
	newAccessSource(s, p, cfg.Blocks)
	s.Reset()
	require.NoError(b, s.Run(uint64(cfg.Blocks)+10000))
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

// traceDesign runs 256 counters under the access source for n cycles and
// returns the VCD of every signal.
func traceDesign(t *testing.T, opts rtl.Options, shuffle uint64, n uint64) []byte {
	s := rtl.New(opts)
	cfg := Config{Blocks: 256, Threshold: 5, CountLocal: true}
	p := NewPorts(s, "ac", cfg)
	_, err := New(s, "ac", cfg, p)
	require.NoError(t, err)
	newAccessSource(s, p, cfg.Blocks)
	if shuffle != 0 {
		s.Shuffle(rand.New(rand.NewPCG(shuffle, 1)))
	}
	s.Reset()
	var buf bytes.Buffer
	require.NoError(t, s.TraceVCD(&buf, "*"))
	require.NoError(t, s.Run(n))
	require.NoError(t, s.CloseTrace())
	return buf.Bytes()
}

func TestOrderAndIdleSkipInvariance(t *testing.T) {
	want := traceDesign(t, rtl.Options{Checked: true}, 0, 3000)
	for seed := range uint64(3) {
		got := traceDesign(t, rtl.Options{Checked: true, SkipIdle: true}, seed+1, 3000)
		require.True(t, bytes.Equal(want, got), "trace differs with shuffled order and idle skipping (seed %d)", seed)
	}
}
