package dcq

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

type bench struct {
	t   *testing.T
	sim *rtl.Sim
	p   Ports
	q   *DCQ
}

func newBench(t *testing.T, cfg Config, skip bool) *bench {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	p := NewPorts(s, "dcq", cfg)
	q, err := New(s, "dcq", cfg, p)
	require.NoError(t, err)
	s.Reset()
	return &bench{t: t, sim: s, p: p, q: q}
}

// outputs is what the queue shows in the current cycle.
type outputs struct {
	PushReady, PopValid bool
	Head                Entry
	Count               uint32
	Refill              bool
}

func (b *bench) out() outputs {
	o := outputs{PushReady: b.p.PushReady.Get(), PopValid: b.p.PopValid.Get(), Count: b.p.Count.Get(), Refill: b.p.Refill.Get()}
	if o.PopValid {
		o.Head = Entry{PFgN: b.p.PopPFgN.Get(), Swap: b.p.PopSwap.Get()}
	}
	return o
}

// cycle applies inputs for one cycle and steps the clock.
func (b *bench) cycle(push *Entry, pop bool) {
	b.p.PushValid.Set(push != nil)
	if push != nil {
		b.p.PushPFgN.Set(push.PFgN)
		b.p.PushSwap.Set(push.Swap)
	}
	b.p.PopReady.Set(pop)
	require.NoError(b.t, b.sim.Step())
}

func TestEntryLayout(t *testing.T) {
	e := Entry{PFgN: 0x2bc00, Swap: true}
	assert.Equal(t, uint64(0x2bc00<<1|1), e.Pack())
	assert.Equal(t, e, Unpack(e.Pack()))
	assert.Equal(t, 33, Module.At(Config{Depth: 4, Threshold: 2, FGBits: 32}.Params()).RegWidth("mem"), "entry width FG_BITS+1")
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	assert.ErrorContains(t, Config{Depth: 1, Threshold: 1, FGBits: 8}.Validate(), "Depth 1 outside 2..65536")
	assert.ErrorContains(t, Config{Depth: 8, Threshold: 9, FGBits: 8}.Validate(), "Threshold 9 outside 1..Depth (8)")
	assert.ErrorContains(t, Config{Depth: 8, Threshold: 0, FGBits: 8}.Validate(), "Threshold 0 outside")
	assert.ErrorContains(t, Config{Depth: 8, Threshold: 4, FGBits: 64}.Validate(), "FGBits 64 outside 1..63")
	_, err := New(rtl.New(rtl.Options{}), "dcq", Config{}, Ports{})
	assert.Error(t, err)
}

// TestFillDrainAndThresholdEdges fills a 4-entry queue with threshold 2,
// then drains it, checking every output in every cycle, including the
// refill flag at count = THRESHOLD-1, THRESHOLD and full.
func TestFillDrainAndThresholdEdges(t *testing.T) {
	b := newBench(t, Config{Depth: 4, Threshold: 2, FGBits: 8}, false)
	e := func(n uint64) *Entry { return &Entry{PFgN: n, Swap: n%2 == 1} }
	var got []outputs
	for i := range uint64(5) { // the fifth push is refused: queue full
		got = append(got, b.out())
		b.cycle(e(10+i), false)
	}
	for range 5 {
		got = append(got, b.out())
		b.cycle(nil, true)
	}
	got = append(got, b.out())
	want := []outputs{
		{PushReady: true, Count: 0, Refill: true},
		{PushReady: true, PopValid: true, Head: Entry{10, false}, Count: 1, Refill: true},
		{PushReady: true, PopValid: true, Head: Entry{10, false}, Count: 2},
		{PushReady: true, PopValid: true, Head: Entry{10, false}, Count: 3},
		{PushReady: false, PopValid: true, Head: Entry{10, false}, Count: 4},
		{PushReady: false, PopValid: true, Head: Entry{10, false}, Count: 4},
		{PushReady: true, PopValid: true, Head: Entry{11, true}, Count: 3},
		{PushReady: true, PopValid: true, Head: Entry{12, false}, Count: 2},
		{PushReady: true, PopValid: true, Head: Entry{13, true}, Count: 1, Refill: true},
		{PushReady: true, Count: 0, Refill: true},
		{PushReady: true, Count: 0, Refill: true},
	}
	require.Empty(t, cmp.Diff(want, got))
}

// TestSimultaneousPushPop checks push and pop in one cycle when the queue
// is empty (only the push happens: nothing to pop), in the middle (count
// unchanged, order kept) and full (only the pop happens: push_ready is low
// for the whole cycle even though an entry leaves).
func TestSimultaneousPushPop(t *testing.T) {
	b := newBench(t, Config{Depth: 3, Threshold: 1, FGBits: 8}, false)
	b.cycle(&Entry{PFgN: 1}, true) // empty: pop_valid low, push lands
	require.Equal(t, outputs{PushReady: true, PopValid: true, Head: Entry{PFgN: 1}, Count: 1}, b.out())
	b.cycle(&Entry{PFgN: 2}, true) // middle: 1 leaves, 2 lands
	require.Equal(t, outputs{PushReady: true, PopValid: true, Head: Entry{PFgN: 2}, Count: 1}, b.out())
	b.cycle(&Entry{PFgN: 3}, false)
	b.cycle(&Entry{PFgN: 4, Swap: true}, false)
	require.Equal(t, outputs{PushReady: false, PopValid: true, Head: Entry{PFgN: 2}, Count: 3}, b.out())
	b.cycle(&Entry{PFgN: 5}, true) // full: 2 leaves, 5 refused
	require.Equal(t, outputs{PushReady: true, PopValid: true, Head: Entry{PFgN: 3}, Count: 2}, b.out())
	var order []Entry
	for b.out().PopValid {
		order = append(order, b.out().Head)
		b.cycle(nil, true)
	}
	require.Equal(t, []Entry{{PFgN: 3}, {PFgN: 4, Swap: true}}, order)
}

// TestRandomAgainstSliceFIFO drives random pushes and pops (legal per the
// handshake: valid does not depend on ready) and compares every output in
// every cycle with a slice FIFO, for several geometries, with idle
// skipping on and off.
func TestRandomAgainstSliceFIFO(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 17))
		depth := 2 + rng.IntN(70)
		cfg := Config{Depth: depth, Threshold: 1 + rng.IntN(depth), FGBits: 1 + rng.IntN(MaxFGBits)}
		b := newBench(t, cfg, seed%2 == 0)
		var ref []Entry
		pushRate, popRate := rng.Float64(), rng.Float64()
		for c := range 20000 {
			want := outputs{PushReady: len(ref) < depth, PopValid: len(ref) > 0, Count: uint32(len(ref)), Refill: len(ref) < cfg.Threshold}
			if len(ref) > 0 {
				want.Head = ref[0]
			}
			require.Equal(t, want, b.out(), "seed %d cycle %d", seed, c)
			var push *Entry
			if rng.Float64() < pushRate {
				push = &Entry{PFgN: rng.Uint64() >> (64 - cfg.FGBits), Swap: rng.IntN(2) == 0}
			}
			pop := rng.Float64() < popRate
			if pop && len(ref) > 0 {
				ref = ref[1:]
			}
			if push != nil && want.PushReady {
				ref = append(ref, *push)
			}
			b.cycle(push, pop)
		}
	}
}

func BenchmarkDCQ(b *testing.B) {
	s := rtl.New(rtl.Options{SkipIdle: true})
	cfg := DefaultConfig()
	p := NewPorts(s, "dcq", cfg)
	if _, err := New(s, "dcq", cfg, p); err != nil {
		b.Fatal(err)
	}
	s.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p.PushValid.Set(i%3 != 0)
		p.PushPFgN.Set(uint64(i) & 0xffff)
		p.PopReady.Set(i%4 != 0)
		if err := s.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}
