package uvm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/accessctr"
)

// flipsAt reports the first count, with this access counted, at which a
// read of a block with the given round trips migrates, searching up to
// limit.
func flipsAt(d *Driver, roundTrips uint8, limit uint32) uint32 {
	for n := uint32(1); n <= limit; n++ {
		if d.Decide(Counter{Count: n, RoundTrips: roundTrips}, false) == Migrate {
			return n
		}
	}
	return 0
}

// oversubscribe faults two one-block batches into a one-block memory
// with sequential-local prefetching and 64 KB LRU eviction.
func oversubscribe(t *testing.T, d *Driver) {
	fault(t, d, 0)
	fault(t, d, PagesPerBlock)
	require.True(t, d.Oversubscribed())
}

func oneBlockMemory(t *testing.T, edit func(*Config)) *Driver {
	return newDriver(t, 2*PagesPerBlock, PagesPerBlock, func(c *Config) {
		c.Prefetcher, c.OversubPrefetcher, c.Evictor = PrefetchSeqLocal, PrefetchSeqLocal, EvictLRU64K
		edit(c)
	})
}

func TestRemoteOffAlwaysMigrates(t *testing.T) {
	d := oneBlockMemory(t, func(c *Config) { c.Remote = RemoteOff })
	assert.Equal(t, uint32(1), flipsAt(d, 0, 100))
	oversubscribe(t, d)
	assert.Equal(t, uint32(1), flipsAt(d, 5, 100))
}

// TestRemoteAlways: t_s = 8 from the start: counts 1-7 are served
// remotely, the 8th access migrates, before and after oversubscription
// and whatever the round trips. Writes migrate on the first access.
func TestRemoteAlways(t *testing.T) {
	d := oneBlockMemory(t, func(c *Config) { c.Remote = RemoteAlways })
	assert.Equal(t, uint32(8), flipsAt(d, 0, 100))
	assert.Equal(t, Remote, d.Decide(Counter{Count: 7}, false))
	assert.Equal(t, Migrate, d.Decide(Counter{Count: 1}, true))
	oversubscribe(t, d)
	assert.Equal(t, uint32(8), flipsAt(d, 3, 100))
}

// TestRemoteOversub: first touch migrates until memory fills; then the
// static t_s = 8 applies.
func TestRemoteOversub(t *testing.T) {
	d := oneBlockMemory(t, func(c *Config) { c.Remote = RemoteOversub })
	assert.Equal(t, uint32(1), flipsAt(d, 0, 100))
	oversubscribe(t, d)
	assert.Equal(t, uint32(8), flipsAt(d, 0, 100))
	assert.Equal(t, uint32(8), flipsAt(d, 2, 100))
	assert.Equal(t, Migrate, d.Decide(Counter{Count: 1}, true))
}

// TestRemoteAdaptiveBeforeOversubscription: Eq. 1's first case, t_s = 8,
// 4096 pages of GPU memory: t_d = 1 + 8*resident/4096, truncated.
//
//	resident    0: 1 + 0        = 1  (every first touch migrates)
//	resident  511: 1 + 4088/4096 = 1  (under 12.5%, as the paper says)
//	resident  512: 1 + 1        = 2
//	resident 4095: 1 + 7        = 8  (t_s just before full)
//
// With a 25% free-page buffer (1024 pages) counted as allocated, 0
// resident pages already give 1 + 8*1024/4096 = 3.
func TestRemoteAdaptiveBeforeOversubscription(t *testing.T) {
	const capacity = 4096
	d := newDriver(t, 2*capacity, capacity, func(c *Config) {
		c.Remote, c.Prefetcher = RemoteAdaptive, PrefetchNone
	})
	steps := []struct{ resident, want int }{{0, 1}, {511, 1}, {512, 2}, {4095, 8}}
	for _, s := range steps {
		fault(t, d, span(d.Space().Resident(), s.resident)...)
		require.Equal(t, s.resident, d.Space().Resident())
		assert.Equal(t, uint32(s.want), flipsAt(d, 0, 100), "resident %d", s.resident)
		assert.Equal(t, uint32(s.want), d.BaseThreshold())
	}
	assert.False(t, d.Oversubscribed())

	d = newDriver(t, 2*capacity, capacity, func(c *Config) {
		c.Remote, c.FreeBufferPercent = RemoteAdaptive, 25
	})
	assert.Equal(t, uint32(3), flipsAt(d, 0, 100))
}

// TestRemoteAdaptiveOversubscribed: Eq. 1's second case, t_d = t_s * p *
// (r+1) with t_s = 8: the count at which a read flips to migration.
//
//	        r=0  r=1  r=2
//	p = 2    16   32   48   (the paper's 16th access and 48 for two evictions)
//	p = 4    32   64   96
//	p = 8    64  128  192
func TestRemoteAdaptiveOversubscribed(t *testing.T) {
	want := map[uint32][3]uint32{2: {16, 32, 48}, 4: {32, 64, 96}, 8: {64, 128, 192}}
	for _, p := range []uint32{2, 4, 8} {
		d := oneBlockMemory(t, func(c *Config) { c.Remote, c.Penalty = RemoteAdaptive, p })
		oversubscribe(t, d)
		for r := range 3 {
			assert.Equal(t, want[p][r], flipsAt(d, uint8(r), 1000), "p=%d r=%d", p, r)
		}
		assert.Equal(t, Migrate, d.Decide(Counter{Count: 1, RoundTrips: 2}, true), "writes migrate")
	}
}

// TestRemoteAdaptiveEndToEnd drives the counters through the driver: a
// one-block memory, block 0 faulted, evicted by block 1, faulted back,
// evicted again: two round trips. Under p = 2 its threshold is
// 8*2*(2+1) = 48: the 47th read is remote, the 48th migrates.
func TestRemoteAdaptiveEndToEnd(t *testing.T) {
	d := oneBlockMemory(t, func(c *Config) { c.Remote = RemoteAdaptive })
	for _, p := range []int{0, 16, 0, 16} {
		fault(t, d, p)
	}
	require.Equal(t, uint8(2), d.Counters().Get(0).RoundTrips)
	require.False(t, d.Space().IsResident(0))
	for n := 1; n <= 48; n++ {
		require.NoError(t, d.Count(0, false))
		got, err := d.ShouldMigrate(0, false)
		require.NoError(t, err)
		want := Remote
		if n == 48 {
			want = Migrate
		}
		require.Equal(t, want, got, "read %d", n)
	}
}

// TestCountersHalveOnSaturation: block 0's count one below 2^27-1 and
// block 1's at 10; one more access to block 0 saturates it and every
// count halves: (2^27-1)>>1 = 67108863 and 5. Likewise round trips: block
// 0 at 30 and block 1 at 7; one more eviction of block 0 reaches 31 and
// they halve to 15 and 3, the counts untouched.
func TestCountersHalveOnSaturation(t *testing.T) {
	d := oneBlockMemory(t, func(c *Config) {})
	c := d.Counters()
	c.words[0] = Counter{Count: accessctr.MaxCount - 1, RoundTrips: 30}
	c.words[1] = Counter{Count: 10, RoundTrips: 7}
	require.NoError(t, d.Count(3, false))
	assert.Equal(t, Counter{Count: 67108863, RoundTrips: 30}, c.Get(0))
	assert.Equal(t, Counter{Count: 5, RoundTrips: 7}, c.Get(1))

	fault(t, d, 0)
	fault(t, d, 16) // evicts block 0: round trip 31 saturates
	assert.Equal(t, Counter{Count: 67108863, RoundTrips: 15}, c.Get(0))
	assert.Equal(t, Counter{Count: 5, RoundTrips: 3}, c.Get(1))
}

func TestBadPagesAreErrors(t *testing.T) {
	d := oneBlockMemory(t, func(c *Config) {})
	for _, err := range []error{
		d.Count(-1, false),
		d.Count(32, false),
		d.Space().Pin(32),
		d.Space().Unpin(0),
		func() error { _, err := d.ShouldMigrate(99, false); return err }(),
		func() error { _, err := d.HandleFaults([]int{0, 40}); return err }(),
	} {
		assert.Error(t, err)
	}
	_, err := d.HandleFaults([]int{40})
	assert.EqualError(t, err, "uvm: HandleFaults: page 40 is outside 0..31")
	assert.Equal(t, 0, d.Space().Resident(), "a batch with a bad page changes nothing")
	assert.Equal(t, "remote", fmt.Sprint(Remote))
}
