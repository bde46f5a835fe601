package pme

import (
	"testing"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/rtl"
)

// swapper keeps the engine busy with page-group swaps and takes every event.
type swapper struct {
	rtl.Base
	e   *Engine
	tag *rtl.Reg[uint16]
}

func (w *swapper) Drive() {
	w.e.Cmd.Valid.Set(true)
	w.e.Cmd.Bits.Set(Command{Tag: w.tag.Q(), Op: Swap, Pages: 16, First: w.tag.Q() % 16})
	w.e.Events.Ready.Set(true)
}

func (w *swapper) Eval() {
	if w.e.Cmd.Fire() {
		w.tag.Set(w.tag.Q() + 1)
		return
	}
	w.Sleep()
}

func BenchmarkSwapStream(b *testing.B) {
	s := rtl.New(rtl.Options{SkipIdle: true})
	l, err := pcie.New(s, "pcie", pcie.DefaultConfig(), pcie.NewPorts(s, "pcie", pcie.DefaultConfig()))
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	e, err := New(s, "pme", cfg, NewPorts(s, "pme", l.D2H.In[0], l.H2D.Out[0]))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := NewHostDMA(s, "host.dma", cfg, HostPorts{In: l.D2H.Out[0], Out: l.H2D.In[0]}); err != nil {
		b.Fatal(err)
	}
	w := &swapper{e: e}
	s.Add(w, "tb")
	w.tag = rtl.NewReg[uint16](&w.Base, "tag", 16, 0)
	e.Cmd.Producer(&w.Base)
	e.Events.Consumer(&w.Base)
	s.Reset()
	const cycles = 100_000
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.Run(cycles); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cycles)*float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(s.Executed())/float64(s.Cycle()), "evaluated/cycle")
}
