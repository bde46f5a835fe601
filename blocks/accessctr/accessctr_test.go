package accessctr

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// Event kinds seen on the ports.
const (
	evInc       = "inc"
	evRoundTrip = "round-trip"
	evNotify    = "notify"
)

type event struct {
	Cycle  uint64
	Kind   string
	Access Access
	Block  uint32
	Notice Notice
}

// bench drives the block's ports from lists of pending operations.
type bench struct {
	t      testing.TB
	sim    *rtl.Sim
	p      Ports
	ctr    *AccessCounters
	inc    []Access
	rt     []uint32
	thr    []uint32
	events []event
}

func newBench(t testing.TB, cfg Config) *bench {
	s := rtl.New(rtl.Options{Checked: true})
	p := NewPorts(s, "ac", cfg)
	a, err := New(s, "ac", cfg, p)
	require.NoError(t, err)
	s.Reset()
	return &bench{t: t, sim: s, p: p, ctr: a}
}

// settle runs until the reset sweep is over and its last word is written.
func (b *bench) settle() {
	for !b.p.Inc.Ready.Get() {
		b.step()
	}
	b.step()
	b.events = nil
}

func (b *bench) step() {
	b.t.Helper()
	p, now := b.p, b.sim.Cycle()
	p.Inc.Valid.Set(len(b.inc) > 0)
	if len(b.inc) > 0 {
		p.Inc.Bits.Set(b.inc[0])
	}
	p.RoundTrip.Valid.Set(len(b.rt) > 0)
	if len(b.rt) > 0 {
		p.RoundTrip.Bits.Set(b.rt[0])
	}
	p.SetThreshold.Valid.Set(len(b.thr) > 0)
	if len(b.thr) > 0 {
		p.SetThreshold.Bits.Set(b.thr[0])
	}
	if p.Inc.Valid.Get() && p.Inc.Ready.Get() {
		b.events = append(b.events, event{Cycle: now, Kind: evInc, Access: b.inc[0]})
		b.inc = b.inc[1:]
	}
	if p.RoundTrip.Valid.Get() && p.RoundTrip.Ready.Get() {
		b.events = append(b.events, event{Cycle: now, Kind: evRoundTrip, Block: b.rt[0]})
		b.rt = b.rt[1:]
	}
	if p.SetThreshold.Valid.Get() && p.SetThreshold.Ready.Get() {
		b.thr = b.thr[1:]
	}
	if p.NotifyValid.Get() {
		b.events = append(b.events, event{Cycle: now, Kind: evNotify, Notice: p.Notify.Get()})
	}
	require.NoError(b.t, b.sim.Step())
}

func (b *bench) run(n int) {
	b.t.Helper()
	for range n {
		b.step()
	}
}

func smallConfig() Config { return Config{Blocks: 16, Threshold: 3, CountLocal: true} }

func TestConfigValidation(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Blocks: 1, Threshold: 8}, "Blocks = 1 is outside 2..16777216"},
		{Config{Blocks: 1<<24 + 1, Threshold: 8}, "Blocks = 16777217 is outside 2..16777216"},
		{Config{Blocks: 16, Threshold: 0}, "Threshold = 0 is outside 1..134217727"},
		{Config{Blocks: 16, Threshold: 1 << 27}, "Threshold = 134217728 is outside 1..134217727"},
	} {
		require.ErrorContains(t, tc.cfg.Validate(), tc.want)
		_, err := New(rtl.New(rtl.Options{}), "ac", tc.cfg, Ports{})
		require.ErrorContains(t, err, tc.want)
	}
}

func TestWordLayout(t *testing.T) {
	c := Counter{Count: MaxCount, RoundTrips: 5}
	assert.Equal(t, uint32(5<<27|(1<<27-1)), c.Pack())
	assert.Equal(t, c, Unpack(c.Pack()))
	assert.Equal(t, 32, WordBits)
}

func TestResetClearsEveryWord(t *testing.T) {
	cfg := smallConfig()
	b := newBench(t, cfg)
	for i := range cfg.Blocks {
		b.ctr.words.Load(i, 0xdeadbeef)
	}
	b.sim.Reset()
	for c := range cfg.Blocks {
		require.False(t, b.p.Inc.Ready.Get(), "not ready during the clear sweep (cycle %d)", c)
		b.step()
	}
	require.True(t, b.p.Inc.Ready.Get(), "ready %d cycles after reset", cfg.Blocks)
	b.run(1)
	for i := range cfg.Blocks {
		assert.Equal(t, Counter{}, b.ctr.Peek(i), "block %d", i)
	}
}

func TestCountsAndNotifiesBackToBack(t *testing.T) {
	b := newBench(t, smallConfig())
	b.settle()
	start := b.sim.Cycle()
	b.inc = []Access{{Block: 5, Remote: true}, {Block: 5}, {Block: 5, Remote: true}, {Block: 5, Remote: true}, {Block: 6, Remote: true}}
	b.run(8)
	want := []event{
		{Cycle: start, Kind: evInc, Access: Access{Block: 5, Remote: true}},
		{Cycle: start + 1, Kind: evInc, Access: Access{Block: 5}},
		{Cycle: start + 2, Kind: evInc, Access: Access{Block: 5, Remote: true}},
		{Cycle: start + 3, Kind: evInc, Access: Access{Block: 5, Remote: true}},
		{Cycle: start + 4, Kind: evInc, Access: Access{Block: 6, Remote: true}},
		// The third access to block 5 is remote and brings it to 3.
		{Cycle: start + 4, Kind: evNotify, Notice: Notice{Block: 5, Counter: Counter{Count: 3}}},
		{Cycle: start + 5, Kind: evNotify, Notice: Notice{Block: 5, Counter: Counter{Count: 4}}},
	}
	if d := cmp.Diff(want, b.events); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	assert.Equal(t, Counter{Count: 4}, b.ctr.Peek(5))
	assert.Equal(t, Counter{Count: 1}, b.ctr.Peek(6))
}

func TestLocalAccessesNotCountedWhenDisabled(t *testing.T) {
	cfg := smallConfig()
	cfg.CountLocal = false
	b := newBench(t, cfg)
	b.settle()
	b.inc = []Access{{Block: 2}, {Block: 2}, {Block: 2, Remote: true}}
	b.run(5)
	assert.Equal(t, Counter{Count: 1}, b.ctr.Peek(2))
}

func TestSetThreshold(t *testing.T) {
	b := newBench(t, smallConfig())
	b.settle()
	b.thr = []uint32{1}
	b.run(1)
	require.Equal(t, uint32(1), b.ctr.Threshold())
	start := b.sim.Cycle()
	b.inc = []Access{{Block: 9, Remote: true}}
	b.run(3)
	assert.Contains(t, b.events, event{Cycle: start + 2, Kind: evNotify, Notice: Notice{Block: 9, Counter: Counter{Count: 1}}})
}

func TestRoundTripTogetherWithAccess(t *testing.T) {
	b := newBench(t, smallConfig())
	b.settle()
	start := b.sim.Cycle()
	b.inc = []Access{{Block: 1}, {Block: 1}}
	b.rt = []uint32{1, 1}
	var ready []bool
	for range 4 {
		ready = append(ready, b.p.Inc.Ready.Get())
		b.step()
	}
	assert.Equal(t, []bool{true, false, true, false}, ready, "the buffered round trip takes the next cycle")
	want := []event{
		{Cycle: start, Kind: evInc, Access: Access{Block: 1}},
		{Cycle: start, Kind: evRoundTrip, Block: 1},
		{Cycle: start + 2, Kind: evInc, Access: Access{Block: 1}},
		{Cycle: start + 2, Kind: evRoundTrip, Block: 1},
	}
	if d := cmp.Diff(want, b.events); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	b.run(2)
	assert.Equal(t, Counter{Count: 2, RoundTrips: 2}, b.ctr.Peek(1))
}

// preload sets every block's counter through the backdoor.
func preload(b *bench, f func(i int) Counter) {
	for i := range b.ctr.Config().Blocks {
		b.ctr.words.Load(i, f(i).Pack())
	}
}

func TestCountSaturationHalvesEveryCount(t *testing.T) {
	cfg := smallConfig()
	b := newBench(t, cfg)
	b.settle()
	preload(b, func(i int) Counter { return Counter{Count: uint32(100 + i), RoundTrips: uint8(i)} })
	b.ctr.words.Load(3, Counter{Count: MaxCount - 1, RoundTrips: 7}.Pack())
	// The saturating access, then one more to the same block in the next
	// cycle: it saturates too (no wrap) and is applied before the halving.
	b.inc = []Access{{Block: 3}, {Block: 3}, {Block: 4}}
	var ready []bool
	for range cfg.Blocks + 6 {
		ready = append(ready, b.p.Inc.Ready.Get())
		b.step()
	}
	// Accepted in cycles 0 and 1; not ready from cycle 2 for Blocks+2
	// cycles; the third access is accepted in cycle Blocks+4.
	for c, r := range ready {
		want := c < 2 || c >= cfg.Blocks+4
		require.Equal(t, want, r, "ready in cycle %d after the first access", c)
	}
	b.run(2)
	for i := range cfg.Blocks {
		want := Counter{Count: uint32(100+i) / 2, RoundTrips: uint8(i)}
		switch i {
		case 3:
			want = Counter{Count: MaxCount / 2, RoundTrips: 7}
		case 4:
			want.Count++
		}
		assert.Equal(t, want, b.ctr.Peek(i), "block %d", i)
	}
}

func TestRoundTripSaturationHalvesEveryRoundTrip(t *testing.T) {
	cfg := smallConfig()
	b := newBench(t, cfg)
	b.settle()
	preload(b, func(i int) Counter { return Counter{Count: uint32(i), RoundTrips: uint8(i)} })
	b.ctr.words.Load(7, Counter{Count: 50, RoundTrips: MaxRoundTrip - 1}.Pack())
	b.rt = []uint32{7}
	b.run(cfg.Blocks + 5)
	for i := range cfg.Blocks {
		want := Counter{Count: uint32(i), RoundTrips: uint8(i) / 2}
		if i == 7 {
			want = Counter{Count: 50, RoundTrips: MaxRoundTrip / 2}
		}
		assert.Equal(t, want, b.ctr.Peek(i), "block %d", i)
	}
}
