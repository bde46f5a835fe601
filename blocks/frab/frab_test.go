package frab

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

type bench struct {
	t   *testing.T
	sim *rtl.Sim
	p   Ports
	f   *FrAB
}

func newBench(t *testing.T, cfg Config) *bench {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	p := NewPorts(s, "frab", cfg)
	f, err := New(s, "frab", cfg, p)
	require.NoError(t, err)
	s.Reset()
	return &bench{t: t, sim: s, p: p, f: f}
}

// command holds a command valid until it is accepted and returns the cycle
// in which it was accepted.
func (b *bench) command(op Op, region uint64) uint64 {
	b.p.CmdValid.Set(true)
	b.p.CmdOp.Set(uint8(op))
	b.p.CmdRegion.Set(region)
	for !b.p.CmdReady.Get() {
		require.NoError(b.t, b.sim.Step())
	}
	at := b.sim.Cycle()
	require.NoError(b.t, b.sim.Step())
	b.p.CmdValid.Set(false)
	return at
}

// find issues a FIND and returns the response and the cycles from accept
// to response.
func (b *bench) find(region uint64) (uint64, bool, uint64) {
	at := b.command(Find, region)
	for !b.p.RspValid.Get() {
		require.NoError(b.t, b.sim.Step())
	}
	return b.p.RspRegion.Get(), b.p.RspFound.Get(), b.sim.Cycle() - at
}

func TestConfigValidate(t *testing.T) {
	assert.NoError(t, Config{Regions: 5632, WordBits: 256}.Validate())
	assert.ErrorContains(t, Config{Regions: 0, WordBits: 256}.Validate(), "Regions 0 outside")
	assert.ErrorContains(t, Config{Regions: 10, WordBits: 96}.Validate(), "WordBits 96 outside 32..512, a power of two")
	assert.Equal(t, 22, Config{Regions: 5632, WordBits: 256}.Words())
	assert.Equal(t, 13, Config{Regions: 5632, WordBits: 256}.RegionBits())
	assert.Equal(t, 8, EncoderDepth(256))
}

// TestInitSweep: init_done rises after one cycle per word, every existing
// region is available and no bit beyond the last region is set; commands
// wait for the sweep.
func TestInitSweep(t *testing.T) {
	cfg := Config{Regions: 70, WordBits: 32}
	b := newBench(t, cfg)
	b.p.CmdValid.Set(true)
	for c := range cfg.Words() {
		require.False(t, b.p.InitDone.Get(), "cycle %d", c)
		require.False(t, b.p.CmdReady.Get(), "cycle %d", c)
		require.NoError(t, b.sim.Step())
	}
	require.True(t, b.p.InitDone.Get())
	require.True(t, b.p.CmdReady.Get())
	for r := range cfg.Words() * cfg.WordBits {
		assert.Equal(t, r < cfg.Regions, b.f.RegionSet(r), "region %d", r)
	}
	last := b.f.Peek(2)
	assert.Equal(t, Word{0b111111}, last)
}

// TestFindSetClear checks FIND results and timing within a word, at word
// edges and in the last partial word, and that SET and CLEAR change exactly
// one bit and are seen by the next FIND.
func TestFindSetClear(t *testing.T) {
	cfg := Config{Regions: 70, WordBits: 32}
	b := newBench(t, cfg)
	_, err := b.sim.RunUntil(func() bool { return b.p.InitDone.Get() }, 100)
	require.NoError(t, err)
	for r := range uint64(40) {
		b.command(Clear, r)
	}
	b.command(Set, 35)
	got, ok, lat := b.find(0)
	assert.False(t, ok, "word 0 is empty")
	assert.Equal(t, uint64(2), lat, "FIND answers two cycles after it is accepted")
	got, ok, _ = b.find(33)
	assert.True(t, ok)
	assert.Equal(t, uint64(35), got)
	got, ok, _ = b.find(36)
	assert.True(t, ok)
	assert.Equal(t, uint64(40), got)
	got, ok, _ = b.find(69)
	assert.True(t, ok)
	assert.Equal(t, uint64(69), got)
	b.command(Clear, 69)
	_, ok, _ = b.find(69)
	assert.False(t, ok, "bits beyond the last region are never set")
	assert.Equal(t, Word{0, 0}, b.f.Peek(0))
	assert.Equal(t, uint32(0b1111_1111_0000_1000), uint32(b.f.Peek(1)[0]>>0&0xffff))
}

// TestPriorityEncoderRandom compares the tree with a bit-scan reference.
func TestPriorityEncoderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 20000 {
		width := 32 << rng.IntN(5)
		var w Word
		for i := range width / 64 {
			w[i] = rng.Uint64() & rng.Uint64() & rng.Uint64()
		}
		if width == 32 {
			w[0] = uint64(rng.Uint32() & rng.Uint32())
		}
		from := rng.IntN(width)
		wantIdx, wantOK := 0, false
		for i := from; i < width; i++ {
			if w[i/64]>>(i%64)&1 != 0 {
				wantIdx, wantOK = i, true
				break
			}
		}
		idx, ok := FirstSetFrom(&w, width, from)
		require.Equal(t, wantOK, ok)
		if ok {
			require.Equal(t, wantIdx, idx)
		}
	}
	assert.Equal(t, bits.Len(MaxWordBits)-1, EncoderDepth(MaxWordBits))
}

// TestRandomCommandsAgainstReference issues random FIND, SET and CLEAR
// commands with random gaps to bitmaps of random geometry and checks every
// FIND response, its timing, and the final contents against a bool array.
func TestRandomCommandsAgainstReference(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 77))
		cfg := Config{Regions: 1 + rng.IntN(3000), WordBits: 32 << rng.IntN(5)}
		b := newBench(t, cfg)
		_, err := b.sim.RunUntil(func() bool { return b.p.InitDone.Get() }, uint64(cfg.Words()+1))
		require.NoError(t, err)
		ref := make([]bool, cfg.Regions)
		for i := range ref {
			ref[i] = true
		}
		w := cfg.WordWidth()
		for range 3000 {
			r := rng.IntN(cfg.Regions)
			switch op := Op(rng.IntN(3)); op {
			case Find:
				got, ok, lat := b.find(uint64(r))
				require.Equal(t, uint64(2), lat)
				want, wantOK := 0, false
				for i := r; i < (r/w+1)*w && i < cfg.Regions; i++ {
					if ref[i] {
						want, wantOK = i, true
						break
					}
				}
				require.Equal(t, wantOK, ok, "seed %d FIND %d", seed, r)
				if ok {
					require.Equal(t, uint64(want), got, "seed %d FIND %d", seed, r)
				}
			default:
				b.command(op, uint64(r))
				ref[r] = op == Set
			}
			for range rng.IntN(3) {
				require.NoError(t, b.sim.Step())
			}
		}
		require.NoError(t, b.sim.Run(3))
		for i := range cfg.Words() * w {
			require.Equal(t, i < cfg.Regions && ref[i], b.f.RegionSet(i), "seed %d region %d", seed, i)
		}
	}
}
