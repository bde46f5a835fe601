package da

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

// system is a DA wired to a DRAM that holds its IPgT.
type system struct {
	t   testing.TB
	sim *rtl.Sim
	p   Ports
	da  *DA
	mem *dram.DRAM
}

// newSystem builds the DA and its memory, preloads the IPgT with table
// (nil: every frame-group free) and resets.
func newSystem(t testing.TB, cfg Config, mc dram.Config, table []uint64, opts rtl.Options) *system {
	return newSystemWith(t, cfg, mc, table, opts, nil)
}

// newSystemWith is newSystem with more blocks: attach adds them to the
// simulation before its reset.
func newSystemWith(t testing.TB, cfg Config, mc dram.Config, table []uint64, opts rtl.Options, attach func(*rtl.Sim, Ports)) *system {
	s := rtl.New(opts)
	p := NewPorts(s, "da", cfg)
	d, err := New(s, "da", cfg, p)
	require.NoError(t, err)
	if attach != nil {
		attach(s, p)
	}
	mc.Base, mc.Words, mc.AddrBits = cfg.IPGTBase, int(cfg.NFG), cfg.AddrBits
	m, err := dram.New(s, "dram", mc, p.Mem)
	require.NoError(t, err)
	for i := range int(cfg.NFG) {
		w := ipgt.F
		if table != nil {
			w = table[i]
		}
		m.Load(i, w)
	}
	s.Reset()
	return &system{t: t, sim: s, p: p, da: d, mem: m}
}

func (y *system) step() {
	if err := y.sim.Step(); err != nil {
		y.t.Fatal(err)
	}
}

// waitFor steps until cond holds, at most limit cycles, and returns the
// number of cycles stepped.
func (y *system) waitFor(what string, cond func() bool, limit int) int {
	y.t.Helper()
	for n := 0; n <= limit; n++ {
		if cond() {
			return n
		}
		y.step()
	}
	require.FailNow(y.t, "timeout", "waiting for %s", what)
	return 0
}

// pop takes one destination, waiting for one to be offered.
func (y *system) pop() (uint64, bool) {
	y.t.Helper()
	y.waitFor("a destination", y.p.DstValid.Get, 100000)
	p, s := y.p.DstPFgN.Get(), y.p.DstSwap.Get()
	y.p.DstReady.Set(true)
	y.step()
	y.p.DstReady.Set(false)
	return p, s
}

// sw issues a software op and waits until the DA accepted it.
func (y *system) sw(op afm.SWOp, pfgn uint64) {
	y.t.Helper()
	y.p.SW.Valid.Set(true)
	y.p.SW.Op.Set(uint8(op))
	y.p.SW.PFgN.Set(pfgn)
	y.waitFor("sw_ready", y.p.SW.Ready.Get, 100000)
	y.step()
	y.p.SW.Valid.Set(false)
}

// mapTo issues a map write and waits until the DA accepted it.
func (y *system) mapTo(pfgn uint64, cid uint16, vpgn uint64) {
	y.t.Helper()
	y.p.Map.Valid.Set(true)
	y.p.Map.PFgN.Set(pfgn)
	y.p.Map.CID.Set(cid)
	y.p.Map.VPgN.Set(vpgn)
	y.waitFor("map_ready", y.p.Map.Ready.Get, 100000)
	y.step()
	y.p.Map.Valid.Set(false)
}

// quiet steps until the DA has no memory traffic for a while.
func (y *system) quiet() {
	y.t.Helper()
	idle := 0
	for n := 0; idle < 400; n++ {
		require.Less(y.t, n, 1_000_000, "DA never went quiet")
		if y.p.Mem.ReqValid.Get() || y.p.Mem.RespValid.Get() {
			idle = 0
		} else {
			idle++
		}
		y.step()
	}
}

// smallConfig is a DA over nfg frame-groups with a small DCQ.
func smallConfig(nfg uint64, depth, threshold, word int) Config {
	c := DefaultConfig()
	c.NFG, c.DCQDepth, c.DCQThreshold, c.FrABWord = nfg, depth, threshold, word
	c.LFSRWidth = 16
	return c
}

// fastMemory is a DRAM with the given latency and the default bandwidth.
func fastMemory(latency int) dram.Config {
	m := dram.DefaultConfig(1)
	m.Latency = latency
	return m
}
