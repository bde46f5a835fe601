package rtl_test

import (
	"fmt"

	"testing"

	"github.com/uvmmu/uvmmu/rtl"
)

// regBank updates 64 registers every cycle.
type regBank struct {
	rtl.Base
	r *rtl.Vec[uint32]
}

func (b *regBank) Drive() {}

func (b *regBank) Eval() {
	n := b.r.Len()
	for i := range n {
		b.r.At(i).Set(b.r.At(i).Q() + b.r.At((i+1)%n).Q() + 1)
	}
}

// streamer is a source that always offers a word and a sink that always
// takes one, in one block at the two ends of a queue.
type streamer struct {
	rtl.Base
	out, in  *rtl.Decoupled[uint32]
	next     *rtl.Reg[uint32]
	checksum *rtl.Reg[uint32]
}

func (s *streamer) Drive() {
	s.out.Valid.Set(true)
	s.out.Bits.Set(s.next.Q())
	s.in.Ready.Set(true)
}

func (s *streamer) Eval() {
	if s.out.Fire() {
		s.next.Set(s.next.Q() + 1)
	}
	if s.in.Fire() {
		s.checksum.Set(s.checksum.Q() ^ s.in.Bits.Get())
	}
}

func newKernelBenchDesign(opts rtl.Options) *rtl.Sim {
	s := rtl.New(opts)
	bank := &regBank{}
	s.Add(bank, "bank")
	bank.r = rtl.NewVec[uint32](&bank.Base, "r", 64, 32, 0)
	for i := range 8 {
		name := "lane" + string(rune('0'+i))
		st := &streamer{out: rtl.NewDecoupled[uint32](s, name+".enq", 32), in: rtl.NewDecoupled[uint32](s, name+".deq", 32)}
		s.Add(st, name+".stream")
		st.next = rtl.NewReg[uint32](&st.Base, "next", 32, 0)
		st.checksum = rtl.NewReg[uint32](&st.Base, "checksum", 32, 0)
		st.out.Producer(&st.Base)
		st.in.Consumer(&st.Base)
		rtl.NewQueue(s, name+".fifo", 4, st.out, st.in)
	}
	s.Reset()
	return s
}

// BenchmarkKernel64Regs8Queues measures the kernel's per-cycle overhead on a
// design of 64 always-written registers and 8 streaming queues.
func BenchmarkKernel64Regs8Queues(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts rtl.Options
	}{{"fast", rtl.Options{SkipIdle: true}}, {"checked", rtl.Options{Checked: true, SkipIdle: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			s := newKernelBenchDesign(mode.opts)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := s.Step(); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/sec, "cycles/s")
			b.ReportMetric(float64(s.Commits())/sec, "commits/s")
		})
	}
}

// BenchmarkIdleSkip measures a design that sleeps 1e9 cycles between two
// events: the cost per skipped cycle.
func BenchmarkIdleSkip(b *testing.B) {
	const gap = 1_000_000_000
	s := rtl.New(rtl.Options{SkipIdle: true})
	a := newAlarm(s, gap)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Reset()
		if ok, err := s.RunUntil(func() bool { return a.fired.Q() == 1 }, 2*gap); !ok || err != nil {
			b.Fatal("alarm did not fire", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/gap, "ns/skipped-cycle")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/1e9-cycle-gap")
}

// busyBlock spends a fixed amount of arithmetic per Eval and writes one
// register: a block of known cost for measuring the parallel Eval phase.
type busyBlock struct {
	rtl.Base
	rounds int
	acc    *rtl.Reg[uint64]
}

func (b *busyBlock) Drive() {}

func (b *busyBlock) Eval() {
	x := b.acc.Q()
	for range b.rounds {
		x = x*6364136223846793005 + 1442695040888963407
	}
	b.acc.Set(x)
}

// BenchmarkParallelEval measures a cycle of 24 always-awake blocks of
// about 100 ns each (one of them ten times heavier, like a shared cache
// among SMs) at 1 to 4 threads, spreading where timed trials find it
// faster (auto) or in every cycle (spread): the hand-off cost per cycle
// against the Eval work it spreads.
func BenchmarkParallelEval(b *testing.B) {
	for _, threads := range []int{1, 2, 3, 4} {
		for _, always := range []bool{false, true} {
			if threads == 1 && always {
				continue
			}
			mode := "auto"
			if always {
				mode = "spread"
			}
			b.Run(fmt.Sprintf("threads=%d/%s", threads, mode), func(b *testing.B) {
				s := rtl.New(rtl.Options{SkipIdle: true, Threads: threads})
				for i := range 24 {
					blk := &busyBlock{rounds: 60}
					if i == 5 {
						blk.rounds = 600
					}
					s.Add(blk, fmt.Sprintf("busy%d", i))
					blk.acc = rtl.NewReg[uint64](&blk.Base, "acc", 64, uint64(i))
				}
				s.Reset()
				if always {
					s.SpreadAlways()
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if err := s.Step(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
