package dram

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

type bench struct {
	t   *testing.T
	sim *rtl.Sim
	p   ipgt.MemPorts
	d   *DRAM
}

func newBench(t *testing.T, cfg Config, skip bool) *bench {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	p := ipgt.NewMemPorts(s, "mem", cfg.AddrBits)
	d, err := New(s, "dram", cfg, p)
	require.NoError(t, err)
	s.Reset()
	return &bench{t: t, sim: s, p: p, d: d}
}

func (b *bench) request(valid, write bool, addr, wdata uint64) {
	b.p.ReqValid.Set(valid)
	b.p.ReqWrite.Set(write)
	b.p.ReqAddr.Set(addr)
	b.p.ReqWData.Set(wdata)
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig(1024).Validate())
	assert.InDelta(t, 326.8, DefaultConfig(1).BytesPerCycle, 0.05)
	cfg := DefaultConfig(16)
	cfg.Latency = 0
	assert.ErrorContains(t, cfg.Validate(), "Latency 0 outside 1..")
	cfg = DefaultConfig(16)
	cfg.BytesPerCycle = 0
	assert.ErrorContains(t, cfg.Validate(), "BytesPerCycle 0 outside")
	cfg = DefaultConfig(0)
	assert.ErrorContains(t, cfg.Validate(), "Words 0 outside")
	cfg = DefaultConfig(16)
	cfg.AddrBits = 6
	assert.ErrorContains(t, cfg.Validate(), "exceeds the 6-bit address space")
}

// TestReadLatencyExact writes a word, reads it back in the next cycle and
// sees the response exactly Latency cycles after the read was accepted.
func TestReadLatencyExact(t *testing.T) {
	cfg := DefaultConfig(64)
	cfg.Latency, cfg.Base = 7, 0x1000
	b := newBench(t, cfg, true)
	require.True(t, b.p.ReqReady.Get())
	b.request(true, true, 0x1000+8*5, 0xdead)
	require.NoError(t, b.sim.Step())
	b.request(true, false, 0x1000+8*5, 0)
	require.NoError(t, b.sim.Step())
	accepted := b.sim.Cycle() - 1
	b.request(false, false, 0, 0)
	var at uint64
	for range 20 {
		if b.p.RespValid.Get() {
			require.Zero(t, at, "exactly one response")
			at = b.sim.Cycle()
			assert.Equal(t, uint64(0xdead), b.p.RespData.Get())
		}
		require.NoError(t, b.sim.Step())
	}
	assert.Equal(t, accepted+7, at)
	assert.NoError(t, b.d.Err())
	assert.Equal(t, uint64(0xdead), b.d.Peek(5))
}

// TestBandwidthBudget holds a request valid for 1000 cycles with a budget
// of 2 bytes per cycle: one 8-byte request is accepted every 4 cycles.
func TestBandwidthBudget(t *testing.T) {
	cfg := DefaultConfig(16)
	cfg.BytesPerCycle = 2
	b := newBench(t, cfg, false)
	b.request(true, true, 8, 1)
	fired := 0
	for range 1000 {
		if b.p.ReqValid.Get() && b.p.ReqReady.Get() {
			fired++
		}
		require.NoError(t, b.sim.Step())
	}
	assert.InDelta(t, 250, fired, 1)
}

func TestFaultOnBadAddress(t *testing.T) {
	cfg := DefaultConfig(16)
	b := newBench(t, cfg, false)
	b.request(true, false, 8*16, 0)
	require.NoError(t, b.sim.Step())
	b.request(true, false, 3, 0)
	require.NoError(t, b.sim.Step())
	assert.ErrorContains(t, b.d.Err(), "address 0x80 outside [0x0, 0x80)")
}

// TestRandomTrafficInOrder issues random reads and writes with random
// gaps and checks every response against a reference array and the
// latency, with idle skipping on and off giving the same responses.
func TestRandomTrafficInOrder(t *testing.T) {
	run := func(skip bool) []uint64 {
		rng := rand.New(rand.NewPCG(5, 6))
		cfg := DefaultConfig(32)
		cfg.Latency, cfg.BytesPerCycle = 13, 3.5
		b := newBench(t, cfg, skip)
		ref := make([]uint64, 32)
		type pending struct{ due, data uint64 }
		var inflight []pending
		var got []uint64
		for c := range 20000 {
			if b.p.RespValid.Get() {
				require.NotEmpty(t, inflight, "cycle %d: response without a read", c)
				require.Equal(t, inflight[0].due, b.sim.Cycle(), "cycle %d skip %v", c, skip)
				require.Equal(t, inflight[0].data, b.p.RespData.Get())
				got = append(got, b.p.RespData.Get())
				inflight = inflight[1:]
			}
			if !b.p.ReqValid.Get() && rng.IntN(4) == 0 {
				b.request(true, rng.IntN(2) == 0, 8*rng.Uint64N(32), rng.Uint64())
			}
			fired := b.p.ReqValid.Get() && b.p.ReqReady.Get()
			if fired {
				i := b.p.ReqAddr.Get() / 8
				if b.p.ReqWrite.Get() {
					ref[i] = b.p.ReqWData.Get()
				} else {
					inflight = append(inflight, pending{b.sim.Cycle() + 13, ref[i]})
				}
			}
			if !b.p.ReqValid.Get() && len(inflight) == 0 && rng.IntN(50) == 0 {
				require.NoError(t, b.sim.Run(300))
			} else {
				require.NoError(t, b.sim.Step())
			}
			if fired {
				b.request(false, false, 0, 0)
			}
		}
		return got
	}
	off, on := run(false), run(true)
	require.Greater(t, len(off), 1000)
	require.Equal(t, off, on)
}
