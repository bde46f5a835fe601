package tlb

import (
	"testing"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// sweeper looks up a sliding window of VPNs every cycle and fills every
// miss, so the TLB sees a mix of hits, misses and LRU evictions.
type sweeper struct {
	rtl.Base
	t    *TLB
	next *rtl.Reg[uint64]
	miss *rtl.Reg[uint64] // VPN+1 of the last miss, 0 if none
}

func (w *sweeper) Drive() {
	w.t.Req.Valid.Set(true)
	w.t.Req.Bits.Set(Lookup{VPN: w.next.Q() % 160})
	w.t.Resp.Ready.Set(true)
	w.t.Fill.Valid.Set(w.miss.Q() != 0)
	w.t.Fill.Bits.Set(w.miss.Q() - 1)
	w.t.Fill.PTE.Set(pte.Local(w.miss.Q()))
}

func (w *sweeper) Eval() {
	if w.t.Req.Fire() {
		w.next.Set(w.next.Q()*7 + 3)
	}
	if w.t.Resp.Fire() && w.t.Resp.Bits.Get().Status == Miss {
		w.miss.Set(w.t.Resp.Bits.Get().VPN + 1)
	} else if w.miss.Q() != 0 {
		w.miss.Set(0)
	}
}

func BenchmarkL1LookupEveryCycle(b *testing.B) {
	s := rtl.New(rtl.Options{SkipIdle: true})
	tl, err := New(s, "tlb", DefaultL1Config(), NewPorts(s, "tlb"))
	if err != nil {
		b.Fatal(err)
	}
	w := &sweeper{t: tl}
	s.Add(w, "tb")
	w.next = rtl.NewReg[uint64](&w.Base, "next", 64, 1)
	w.miss = rtl.NewReg[uint64](&w.Base, "miss", 64, 0)
	tl.Resp.Consumer(&w.Base)
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
}
