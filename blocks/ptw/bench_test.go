package ptw

import (
	"testing"

	"github.com/uvmmu/uvmmu/rtl"
)

// flood offers a walk of a new VPN every cycle and takes every result.
type flood struct {
	rtl.Base
	g    *GMMU
	next *rtl.Reg[uint64]
}

func (f *flood) Drive() {
	f.g.Req.Valid.Set(true)
	f.g.Req.Bits.Set(Walk{VPN: f.next.Q() % 4096})
	f.g.Resp.Ready.Set(true)
}

func (f *flood) Eval() {
	if f.g.Req.Fire() {
		f.next.Set(f.next.Q()*5 + 1)
	}
}

func BenchmarkWalkerPoolSaturated(b *testing.B) {
	s := rtl.New(rtl.Options{SkipIdle: true})
	cfg := DefaultConfig()
	cfg.Pages = 4096
	g, err := New(s, "gmmu", cfg, NewPorts(s, "gmmu"))
	if err != nil {
		b.Fatal(err)
	}
	f := &flood{g: g}
	s.Add(f, "tb")
	f.next = rtl.NewReg[uint64](&f.Base, "next", 64, 1)
	g.Req.Producer(&f.Base)
	s.Reset()
	const cycles = 10_000
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.Run(cycles); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cycles)*float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(g.Stats().Walks)/float64(s.Cycle()), "walks/cycle")
}
