package uvm

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/accessctr"
	"github.com/uvmmu/uvmmu/rtl"
)

// hwCounters drives blocks/accessctr one operation at a time.
type hwCounters struct {
	t   *testing.T
	sim *rtl.Sim
	p   accessctr.Ports
	blk *accessctr.AccessCounters
}

func newHWCounters(t *testing.T, blocks int) *hwCounters {
	cfg := accessctr.Config{Blocks: blocks, Threshold: 8, CountLocal: true}
	s := rtl.New(rtl.Options{Checked: true})
	p := accessctr.NewPorts(s, "ac", cfg)
	a, err := accessctr.New(s, "ac", cfg, p)
	require.NoError(t, err)
	s.Reset()
	h := &hwCounters{t: t, sim: s, p: p, blk: a}
	h.settle()
	return h
}

func (h *hwCounters) step() { require.NoError(h.t, h.sim.Step()) }

// settle runs past a possible halving sweep (Blocks+3 cycles of
// back-pressure), then until the ports are ready and the last write has
// landed.
func (h *hwCounters) settle() {
	for range h.blk.Config().Blocks + 4 {
		h.step()
	}
	for !h.p.Inc.Ready.Get() {
		h.step()
	}
	h.step()
	h.step()
}

func (h *hwCounters) access(block int) {
	h.p.Inc.Valid.Set(true)
	h.p.Inc.Bits.Set(accessctr.Access{Block: uint32(block), Remote: true})
	for !h.p.Inc.Ready.Get() {
		h.step()
	}
	h.step()
	h.p.Inc.Valid.Set(false)
	h.settle()
}

func (h *hwCounters) roundTrip(block int) {
	h.p.RoundTrip.Valid.Set(true)
	h.p.RoundTrip.Bits.Set(uint32(block))
	for !h.p.RoundTrip.Ready.Get() {
		h.step()
	}
	h.step()
	h.p.RoundTrip.Valid.Set(false)
	h.settle()
}

// TestCountersMirrorTheHardwareBlock applies one random sequence of
// accesses and round trips over 4 blocks to the functional Counters and
// to blocks/accessctr, and compares every word after every operation.
// Block 0 gets most round trips, so the round-trip field saturates at 31
// and halves in both.
func TestCountersMirrorTheHardwareBlock(t *testing.T) {
	const blocks = 4
	hw := newHWCounters(t, blocks)
	sw := newCounters(blocks, 1)
	rng := rand.New(rand.NewPCG(3, 4))
	halvings := 0
	for i := range 300 {
		b := rng.IntN(blocks)
		if rng.IntN(3) == 0 {
			if rng.IntN(2) == 0 {
				b = 0
			}
			before := sw.Get(0).RoundTrips
			sw.roundTrip(b)
			hw.roundTrip(b)
			if sw.Get(0).RoundTrips < before {
				halvings++
			}
		} else {
			sw.count(b*PagesPerBlock, false)
			hw.access(b)
		}
		for k := range blocks {
			require.Equal(t, hw.blk.Peek(k), sw.Get(k), "operation %d, block %d", i, k)
		}
	}
	require.Positive(t, halvings, "the sequence must reach a round-trip halving")
}
