package pcie

import (
	"testing"

	"github.com/uvmmu/uvmmu/rtl"
)

// saturator keeps every input port of a direction busy with pages and drains
// its output, without logging, so the benchmark measures the link alone.
type saturator struct {
	rtl.Base
	in  []*rtl.Decoupled[Packet]
	out []*rtl.Decoupled[Packet]
}

func (s *saturator) Drive() {
	for _, p := range s.in {
		p.Valid.Set(true)
		p.Bits.Set(Packet{Tag: 1, Bytes: page})
	}
	for _, p := range s.out {
		p.Ready.Set(true)
	}
}

func (s *saturator) Eval() { s.Sleep() }

func BenchmarkLinkSaturated(b *testing.B) {
	for _, skip := range []bool{false, true} {
		name := "skip_off"
		if skip {
			name = "skip_on"
		}
		b.Run(name, func(b *testing.B) {
			s := rtl.New(rtl.Options{SkipIdle: skip})
			l, err := New(s, "pcie", DefaultConfig(), NewPorts(s, "pcie", DefaultConfig()))
			if err != nil {
				b.Fatal(err)
			}
			for _, d := range []*Direction{l.H2D, l.D2H} {
				sat := &saturator{in: d.In, out: d.Out}
				s.Add(sat, d.Path()+".tb")
			}
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
		})
	}
}
