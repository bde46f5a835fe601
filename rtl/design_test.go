package rtl_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// burstSource emits a pseudo-random word, then waits a data-dependent gap
// (sometimes long) before offering the next one: it exercises timed sleep.
type burstSource struct {
	rtl.Base
	Out *rtl.Decoupled[uint16]

	pending *rtl.Reg[bool]
	data    *rtl.Reg[uint16]
	next    *rtl.Reg[uint64]
}

func newBurstSource(s *rtl.Sim, name string, seed uint16, out *rtl.Decoupled[uint16]) *burstSource {
	b := &burstSource{Out: out}
	s.Add(b, name)
	b.pending = rtl.NewFlag(&b.Base, "pending", false)
	b.data = rtl.NewReg(&b.Base, "data", 16, seed)
	b.next = rtl.NewReg[uint64](&b.Base, "next", 64, 3)
	out.Producer(&b.Base)
	return b
}

func (b *burstSource) Drive() {
	b.Out.Valid.Set(b.pending.Q())
	b.Out.Bits.Set(b.data.Q())
}

func (b *burstSource) Eval() {
	now := b.Now()
	switch {
	case b.Out.Fire():
		d := b.data.Q()
		b.pending.Set(false)
		b.data.Set(d*25173 + 13849)
		gap := uint64(1 + d%7)
		if d%5 == 0 {
			gap = 500 + uint64(d%300)
		}
		b.next.Set(now + gap)
	case !b.pending.Q() && now >= b.next.Q():
		b.pending.Set(true)
	case !b.pending.Q():
		b.SleepUntil(b.next.Q())
	default:
		b.Sleep()
	}
}

// stallSink accepts words, sums them, and after some words stalls for a
// counted number of cycles: it exercises automatic sleep and wake-on-input.
type stallSink struct {
	rtl.Base
	In *rtl.Decoupled[uint16]

	ready *rtl.Reg[bool]
	stall *rtl.Reg[uint8]
	sum   *rtl.Reg[uint32]
	count *rtl.Reg[uint32]
}

func newStallSink(s *rtl.Sim, name string, in *rtl.Decoupled[uint16]) *stallSink {
	k := &stallSink{In: in}
	s.Add(k, name)
	k.ready = rtl.NewFlag(&k.Base, "ready", true)
	k.stall = rtl.NewReg[uint8](&k.Base, "stall", 8, 0)
	k.sum = rtl.NewReg[uint32](&k.Base, "sum", 32, 0)
	k.count = rtl.NewReg[uint32](&k.Base, "count", 32, 0)
	in.Consumer(&k.Base)
	return k
}

func (k *stallSink) Drive() { k.In.Ready.Set(k.ready.Q()) }

func (k *stallSink) Eval() {
	switch {
	case k.In.Fire():
		v := k.In.Bits.Get()
		k.sum.Set(k.sum.Q()*31 + uint32(v))
		k.count.Set(k.count.Q() + 1)
		if v%3 == 0 {
			k.ready.Set(false)
			k.stall.Set(uint8(v % 11))
		}
	case !k.ready.Q() && k.stall.Q() == 0:
		k.ready.Set(true)
	case !k.ready.Q():
		k.stall.Set(k.stall.Q() - 1)
	}
}

// testDesign is two source -> pipe -> queue -> sink lanes.
type testDesign struct {
	sim   *rtl.Sim
	sinks []*stallSink
}

func newTestDesign(opts rtl.Options) *testDesign {
	return newLanes(opts, []uint16{7, 1234})
}

// newLanes makes one source -> pipe -> queue -> sink lane per seed.
func newLanes(opts rtl.Options, seeds []uint16) *testDesign {
	s := rtl.New(opts)
	d := &testDesign{sim: s}
	for lane, seed := range seeds {
		name := func(n string) string { return fmt.Sprintf("lane%d.%s", lane, n) }
		a := rtl.NewDecoupled[uint16](s, name("src_out"), 16)
		b := rtl.NewDecoupled[uint16](s, name("pipe_out"), 16)
		c := rtl.NewDecoupled[uint16](s, name("fifo_out"), 16)
		newBurstSource(s, name("src"), seed, a)
		rtl.NewPipe(s, name("link"), 4, 9, a, b)
		rtl.NewQueue(s, name("fifo"), 3, b, c)
		d.sinks = append(d.sinks, newStallSink(s, name("sink"), c))
	}
	s.Reset()
	return d
}

// trace runs the design for n cycles and returns its full VCD.
func (d *testDesign) trace(t *testing.T, n uint64) []byte {
	var buf bytes.Buffer
	require.NoError(t, d.sim.TraceVCD(&buf, "*"))
	require.NoError(t, d.sim.Run(n))
	require.NoError(t, d.sim.CloseTrace())
	return buf.Bytes()
}

func TestOrderIndependence(t *testing.T) {
	ref := newTestDesign(rtl.Options{Checked: true})
	want := ref.trace(t, 20000)
	require.Greater(t, ref.sinks[0].count.Q(), uint32(50), "design must move data")
	for seed := range uint64(6) {
		d := newTestDesign(rtl.Options{Checked: true, SkipIdle: seed%2 == 1})
		d.sim.Shuffle(rand.New(rand.NewPCG(seed, 99)))
		got := d.trace(t, 20000)
		require.True(t, bytes.Equal(want, got), "per-cycle trace differs with block order shuffled (seed %d)", seed)
	}
}

// TestParallelEvalIsExact: evaluating the blocks of each Eval phase on
// several goroutines gives the serial run's per-cycle trace, bit for bit,
// at every thread count, with idle skipping on and off and the blocks in
// any order. Twenty lanes make 100 blocks, enough to be spread.
func TestParallelEvalIsExact(t *testing.T) {
	seeds := make([]uint16, 20)
	for i := range seeds {
		seeds[i] = uint16(31*i + 7)
	}
	for _, skip := range []bool{false, true} {
		ref := newLanes(rtl.Options{SkipIdle: skip}, seeds)
		want := ref.trace(t, 20000)
		for _, threads := range []int{2, 3, 8} {
			d := newLanes(rtl.Options{SkipIdle: skip, Threads: threads}, seeds)
			d.sim.SpreadAlways()
			d.sim.Shuffle(rand.New(rand.NewPCG(uint64(threads), 5)))
			got := d.trace(t, 20000)
			require.True(t, bytes.Equal(want, got), "trace differs at %d threads (skip idle %t)", threads, skip)
			require.Equal(t, ref.sim.Executed(), d.sim.Executed())
			require.Equal(t, ref.sim.Commits(), d.sim.Commits())
		}
	}
}

func TestIdleSkippingIsExact(t *testing.T) {
	on := newTestDesign(rtl.Options{Checked: true, SkipIdle: true})
	off := newTestDesign(rtl.Options{Checked: true})
	traceOn, traceOff := on.trace(t, 50000), off.trace(t, 50000)
	require.Equal(t, off.sim.Cycle(), on.sim.Cycle())
	require.True(t, bytes.Equal(traceOff, traceOn), "trace with idle skipping differs")
	for i := range on.sinks {
		require.Equal(t, off.sinks[i].sum.Q(), on.sinks[i].sum.Q())
		require.Equal(t, off.sinks[i].count.Q(), on.sinks[i].count.Q())
	}
	require.Less(t, on.sim.Executed(), off.sim.Executed()/2, "skipping should evaluate far fewer cycles")
}

// alarm does one thing at a far-off cycle and sleeps until then.
type alarm struct {
	rtl.Base
	at    uint64
	fired *rtl.Reg[uint32]
}

func newAlarm(s *rtl.Sim, at uint64) *alarm {
	a := &alarm{at: at}
	s.Add(a, "alarm")
	a.fired = rtl.NewReg[uint32](&a.Base, "fired", 32, 0)
	return a
}

func (a *alarm) Drive() {}

func (a *alarm) Eval() {
	switch now := a.Now(); {
	case now == a.at:
		a.fired.Set(a.fired.Q() + 1)
	case now < a.at:
		a.SleepUntil(a.at)
	default:
		a.Sleep()
	}
}

func TestIdleSkipJumpsLongGaps(t *testing.T) {
	for _, skip := range []bool{true, false} {
		s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
		a := newAlarm(s, 1000)
		s.Reset()
		require.NoError(t, s.Run(5000))
		require.Equal(t, uint32(1), a.fired.Q())
		require.Equal(t, uint64(5000), s.Cycle())
		if skip {
			require.LessOrEqual(t, s.Executed(), uint64(3))
		}
	}
	s := rtl.New(rtl.Options{SkipIdle: true})
	a := newAlarm(s, 1_000_000_000)
	s.Reset()
	ok, err := s.RunUntil(func() bool { return a.fired.Q() == 1 }, 2_000_000_000)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(1_000_000_001), s.Cycle())
}

// A probe runs after the commit of every evaluated cycle: it sees the
// registers' new values, reads them without a checked-mode error, and
// sees each change in the same cycle with idle skipping on and off
// (skipped cycles change nothing).
func TestProbeSeesEveryEvaluatedCycle(t *testing.T) {
	var fired [2][]uint64
	for i, skip := range []bool{false, true} {
		s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
		a := newAlarm(s, 1000)
		last := uint32(0)
		s.Probe(func(c uint64) {
			if n := a.fired.Q(); n != last {
				fired[i] = append(fired[i], c)
				last = n
			}
		})
		s.Reset()
		require.NoError(t, s.Run(5000))
		require.NoError(t, s.Err())
	}
	assert.Equal(t, [2][]uint64{{1000}, {1000}}, fired)
}
