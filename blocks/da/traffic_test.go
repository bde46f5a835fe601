package da

import (
	"testing"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

// consumer is a traffic block for benchmarks: it takes a destination after
// a random gap (mean meanGap cycles), maps it mapDelay cycles later, and
// frees a random frame-group every freeEvery destinations. Its pseudo-random
// numbers come from a register (xorshift), and it sleeps until its next
// event, so the simulation skips the cycles in between.
type consumer struct {
	rtl.Base
	p                   Ports
	nfg                 uint64
	meanGap, mapDelay   uint64
	freeEvery           uint64
	rnd                 *rtl.Reg[uint64]
	ready               *rtl.Reg[bool]
	nextTake            *rtl.Reg[uint64]
	mapAt               *rtl.Vec[uint64] // ring of pending maps: due cycle
	mapPFgN             *rtl.Vec[uint64]
	head, tail, pending *rtl.Reg[uint32]
	mapValid            *rtl.Reg[bool]
	swValid             *rtl.Reg[bool]
	swPFgN              *rtl.Reg[uint64]
	taken               *rtl.Reg[uint64]
}

const consumerRing = 256

func newConsumer(s *rtl.Sim, p Ports, nfg, meanGap, mapDelay, freeEvery uint64) *consumer {
	c := &consumer{p: p, nfg: nfg, meanGap: meanGap, mapDelay: mapDelay, freeEvery: freeEvery}
	s.Add(c, "consumer")
	b := &c.Base
	c.rnd = rtl.NewReg[uint64](b, "rnd", 64, 0x9e3779b97f4a7c15)
	c.ready = rtl.NewFlag(b, "ready", false)
	c.nextTake = rtl.NewReg[uint64](b, "next_take", 64, 0)
	c.mapAt = rtl.NewVec[uint64](b, "map_at", consumerRing, 64, 0)
	c.mapPFgN = rtl.NewVec[uint64](b, "map_pfgn", consumerRing, 64, 0)
	c.head = rtl.NewReg[uint32](b, "head", 32, 0)
	c.tail = rtl.NewReg[uint32](b, "tail", 32, 0)
	c.pending = rtl.NewReg[uint32](b, "pending", 32, 0)
	c.mapValid = rtl.NewFlag(b, "map_valid", false)
	c.swValid = rtl.NewFlag(b, "sw_valid", false)
	c.swPFgN = rtl.NewReg[uint64](b, "sw_pfgn", 64, 0)
	c.taken = rtl.NewReg[uint64](b, "taken", 64, 0)
	c.Listen(p.DstValid, p.DstPFgN, p.Map.Ready, p.SW.Ready)
	return c
}

func (c *consumer) Drive() {
	c.p.DstReady.Set(c.ready.Q())
	h := c.head.Q()
	c.p.Map.Valid.Set(c.mapValid.Q())
	c.p.Map.PFgN.Set(c.mapPFgN.At(int(h)).Q())
	c.p.Map.VPgN.Set(c.mapPFgN.At(int(h)).Q())
	c.p.Map.CID.Set(1)
	c.p.SW.Valid.Set(c.swValid.Q())
	c.p.SW.Op.Set(uint8(afm.OpFree))
	c.p.SW.PFgN.Set(c.swPFgN.Q())
}

func (c *consumer) Eval() {
	now := c.Now()
	r := c.rnd.Q()
	r ^= r << 13
	r ^= r >> 7
	r ^= r << 17
	wake := rtl.Never
	pending := c.pending.Q()
	if c.p.DstFire() {
		c.rnd.Set(r)
		c.ready.Set(false)
		c.nextTake.Set(now + 1 + r%(2*c.meanGap))
		wake = now + 1
		t := c.tail.Q()
		c.mapAt.At(int(t)).Set(now + c.mapDelay)
		c.mapPFgN.At(int(t)).Set(c.p.DstPFgN.Get())
		c.tail.Set((t + 1) % consumerRing)
		pending++
		n := c.taken.Q() + 1
		c.taken.Set(n)
		if n%c.freeEvery == 0 && !c.swValid.Q() {
			c.swValid.Set(true)
			c.swPFgN.Set(r % c.nfg)
		}
	} else if !c.ready.Q() {
		if now >= c.nextTake.Q() && pending < consumerRing-1 {
			// While ready is high a transfer can happen in any cycle.
			c.ready.Set(true)
			wake = now + 1
		} else {
			wake = min(wake, max(c.nextTake.Q(), now+1))
		}
	}
	if c.swValid.Q() && c.p.SW.Ready.Get() {
		c.swValid.Set(false)
		wake = now + 1
	}
	h := c.head.Q()
	switch {
	case c.mapValid.Q() && c.p.Map.Ready.Get():
		c.mapValid.Set(false)
		c.head.Set((h + 1) % consumerRing)
		pending--
		wake = now + 1
	case !c.mapValid.Q() && pending > 0 && c.pending.Q() > 0:
		if due := c.mapAt.At(int(h)).Q(); due <= now {
			c.mapValid.Set(true)
		} else {
			wake = min(wake, due)
		}
	}
	if pending != c.pending.Q() {
		c.pending.Set(pending)
	}
	if wake > now+1 {
		c.SleepUntil(wake)
	}
}

// BenchmarkDA runs the DA with its DRAM (latency 100) under consumer
// traffic and reports simulated cycles per second; one op is one simulated
// cycle. "sparse" takes a destination every 300 cycles on average and maps
// it 2000 cycles later (a migration), freeing a random frame-group every 16
// destinations; "dense" takes one every 4 cycles on average and maps it 50
// cycles later.
func BenchmarkDA(b *testing.B) {
	for _, tc := range []struct {
		name                  string
		gap, delay, freeEvery uint64
	}{{"sparse", 300, 2000, 16}, {"dense", 2, 50, 16}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.NFG = 16384
			s := rtl.New(rtl.Options{SkipIdle: true})
			p := NewPorts(s, "da", cfg)
			if _, err := New(s, "da", cfg, p); err != nil {
				b.Fatal(err)
			}
			mc := dram.DefaultConfig(int(cfg.NFG))
			m, err := dram.New(s, "dram", mc, p.Mem)
			if err != nil {
				b.Fatal(err)
			}
			for i := range int(cfg.NFG) {
				m.Load(i, ipgt.F)
			}
			c := newConsumer(s, p, cfg.NFG, tc.gap, tc.delay, tc.freeEvery)
			s.Reset()
			b.ReportAllocs()
			b.ResetTimer()
			if err := s.Run(uint64(b.N)); err != nil {
				b.Fatal(err)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/sec, "cycles/s")
			b.ReportMetric(float64(c.taken.Q())/float64(b.N)*1000, "dst/kcycle")
			b.ReportMetric(float64(s.Executed())/float64(b.N), "evaluated/cycle")
		})
	}
}
