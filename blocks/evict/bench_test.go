package evict

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// bench drives a metadata block's snooped channels and takes candidates
// from its victim port as the AFM would.
type bench struct {
	t   *testing.T
	sim *rtl.Sim
	p   Ports
	blk Metadata
}

func newBench(t *testing.T, cfg Config) *bench {
	b := buildBench(t, cfg)
	b.run(int(cfg.NFG) + 10) // the init sweep
	return b
}

// buildBench builds the block and resets the simulation.
func buildBench(t *testing.T, cfg Config) *bench {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	fg := linkBits(cfg.NFG)
	p := Ports{
		WalkValid: rtl.NewBit(s, "walk.valid"), WalkReady: rtl.NewBit(s, "walk.ready"),
		WalkPTE: rtl.NewWire[pte.PTE](s, "walk.pte", 64),
		IPgT:    ipgt.NewMemPorts(s, "ipgt", 40),
		Victim:  rtl.NewDecoupled[uint64](s, "victim", fg),
	}
	cfg.IPGTBase = benchBase
	blk, err := New(s, "evict", cfg, p)
	require.NoError(t, err)
	s.Reset()
	return &bench{t: t, sim: s, p: p, blk: blk}
}

func (b *bench) run(n int) {
	for range n {
		require.NoError(b.t, b.sim.Step())
	}
}

// mapped shows, for each x, a one-cycle IPgT write of a mapped entry of
// frame-group x, after a write of a reserved entry the block must ignore.
func (b *bench) mapped(xs ...uint64) {
	m := b.p.IPgT
	m.ReqReady.Set(true)
	m.ReqValid.Set(true)
	m.ReqWrite.Set(true)
	for _, x := range xs {
		m.ReqAddr.Set(ipgt.Address(benchBase, x+1))
		m.ReqWData.Set(ipgt.Reserve(ipgt.F))
		b.run(1)
		m.ReqAddr.Set(ipgt.Address(benchBase, x))
		m.ReqWData.Set(ipgt.Mapped(1, 100+x))
		b.run(1)
		m.ReqValid.Set(false)
		b.run(3)
		m.ReqValid.Set(true)
	}
	m.ReqValid.Set(false)
	b.run(4)
	require.Zero(b.t, b.blk.LostMaps())
}

// benchBase is the IPgT base address of the bench.
const benchBase = 0x4000

// touched shows a walk result with a local PTE in frame-group x.
func (b *bench) touched(xs ...uint64) {
	for _, x := range xs {
		b.p.WalkValid.Set(true)
		b.p.WalkReady.Set(true)
		b.p.WalkPTE.Set(pte.Local(x*pagesPerGroup + 5))
		b.run(1)
		b.p.WalkValid.Set(false)
		b.run(4)
	}
}

// offered is the candidate shown after the block settles.
func (b *bench) offered() (uint64, bool) {
	b.run(300)
	return b.p.Victim.Bits.Get(), b.p.Victim.Valid.Get()
}

// take accepts the offered candidate and returns it.
func (b *bench) take() uint64 {
	b.t.Helper()
	x, ok := b.offered()
	require.True(b.t, ok, "no candidate offered")
	b.p.Victim.Ready.Set(true)
	b.run(1)
	b.p.Victim.Ready.Set(false)
	return x
}

// takeAll takes candidates until none is offered.
func (b *bench) takeAll() []uint64 {
	var got []uint64
	for {
		if _, ok := b.offered(); !ok {
			return got
		}
		got = append(got, b.take())
		require.Less(b.t, len(got), 10000)
	}
}
