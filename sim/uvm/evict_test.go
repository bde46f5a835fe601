package uvm

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	region0 = 0
	region1 = PagesPerRegion
	region2 = 2 * PagesPerRegion
	region3 = 3 * PagesPerRegion
)

// threeRegions makes a 3-region space with room for two, on-demand
// paging, with regions 0 and 1 faulted in whole, region 0 first.
func threeRegions(t *testing.T, evictor string) *Driver {
	d := newDriver(t, 3*PagesPerRegion, 2*PagesPerRegion, func(c *Config) {
		c.Prefetcher, c.OversubPrefetcher, c.Evictor = PrefetchNone, PrefetchNone, evictor
	})
	fault(t, d, span(region0, region1)...)
	fault(t, d, span(region1, region2)...)
	require.Equal(t, 2*PagesPerRegion, d.Space().Resident())
	return d
}

// TestEvictLRU2M: regions 0 then 1 arrive; a read of page 3 makes region 0
// the most recent, so faulting region 2 evicts region 1, all 512 pages.
// With a page of region 1 pinned, region 0 goes instead.
func TestEvictLRU2M(t *testing.T) {
	d := threeRegions(t, EvictLRU2M)
	count(t, d, 3, 1, false)
	got := fault(t, d, span(region2, region3)...)
	assert.Empty(t, cmp.Diff(span(region1, region2), got.Evict))
	assert.True(t, d.Oversubscribed())

	d = threeRegions(t, EvictLRU2M)
	count(t, d, 3, 1, false)
	require.NoError(t, d.Space().Pin(600))
	got = fault(t, d, span(region2, region3)...)
	assert.Empty(t, cmp.Diff(span(region0, region1), got.Evict))
}

// TestEvictLRU2MPrefersFullRegions: region 0 is full, region 1 holds one
// page and is the least recent. A 2 MB region is evicted only when fully
// populated (UVMSmart Section II-C), so region 0 goes.
func TestEvictLRU2MPrefersFullRegions(t *testing.T) {
	d := newDriver(t, 3*PagesPerRegion, PagesPerRegion+1, func(c *Config) { c.Prefetcher = PrefetchNone })
	fault(t, d, region1)
	fault(t, d, span(region0, region1)...)
	got := fault(t, d, region2)
	assert.Empty(t, cmp.Diff(span(region0, region1), got.Evict))
}

// TestEvictLFU2M: three two-region cases, region 1 always accessed last.
//
//	counts 5 vs 2 reads:      LRU would take region 0; LFU takes region 1.
//	3 writes vs 3 reads:      tie; region 1 is read-only, so it goes first.
//	3 reads vs 3 reads:       flat counts fall back to LRU: region 0.
func TestEvictLFU2M(t *testing.T) {
	cases := []struct {
		name         string
		n0, n1       int
		write0       bool
		wantEvicted0 bool
	}{
		{"fewer accesses", 5, 2, false, false},
		{"read-only first", 3, 3, true, false},
		{"flat counts are LRU", 3, 3, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := threeRegions(t, EvictLFU2M)
			count(t, d, 10, c.n0, c.write0)
			count(t, d, region1+10, c.n1, false)
			got := fault(t, d, span(region2, region3)...)
			want := span(region1, region2)
			if c.wantEvicted0 {
				want = span(region0, region1)
			}
			assert.Empty(t, cmp.Diff(want, got.Evict))
		})
	}
}

// TestEvictLRU64K: seqlocal brings whole blocks; capacity is 4 blocks.
// Blocks 0, 1 (region 0) and 32, 33 (region 1) arrive in that order; a
// read of page 0 makes region 0 the most recent, with blocks in LRU order
// 1, 0. Faulting block 4 evicts region 1's LRU block 32. Block 4 joins
// region 0 (order 1, 0, 4); a read of page 528 (block 33) makes region 1
// the most recent; faulting block 6 then evicts region 0's LRU block 1.
func TestEvictLRU64K(t *testing.T) {
	d := newDriver(t, 2*PagesPerRegion, 4*PagesPerBlock, func(c *Config) {
		c.Prefetcher, c.OversubPrefetcher, c.Evictor = PrefetchSeqLocal, PrefetchSeqLocal, EvictLRU64K
	})
	for _, p := range []int{0, 16, 512, 528} {
		fault(t, d, p)
	}
	count(t, d, 0, 1, false)
	got := fault(t, d, 64)
	assert.Empty(t, cmp.Diff(blockPages(32), got.Evict))
	count(t, d, 528, 1, false)
	got = fault(t, d, 96)
	assert.Empty(t, cmp.Diff(blockPages(1), got.Evict))
}

// TestEvictLRUTree: region 0 holds blocks 0-15, 16 and 24-31 (25 blocks,
// capacity 25 blocks), block 0 the least recent. A fault in region 1
// evicts block 0, then walks region 0's tree bottom-up after removing it:
//
//	node{16-19}: 16 of 64 pages, under half: block 16 goes too
//	node{0-15}: 240/256, node{24-31}: 128/128, node{16-31}: 128/256 (half),
//	root: 368/512: all keep their blocks
//
// so blocks 0 and 16 are written back and each gets one round trip.
func TestEvictLRUTree(t *testing.T) {
	d := newDriver(t, 2*PagesPerRegion, 25*PagesPerBlock, func(c *Config) {
		c.Prefetcher, c.OversubPrefetcher, c.Evictor = PrefetchSeqLocal, PrefetchSeqLocal, EvictLRUTree
	})
	for _, b := range append(span(0, 17), span(24, 32)...) {
		fault(t, d, b*PagesPerBlock)
	}
	require.Equal(t, 25*PagesPerBlock, d.Space().Resident())
	got := fault(t, d, region1)
	assert.Empty(t, cmp.Diff(spans(0, 16, 256, 272), got.Evict))
	assert.Equal(t, Counter{RoundTrips: 1}, d.Counters().Get(0))
	assert.Equal(t, Counter{RoundTrips: 1}, d.Counters().Get(16))
	assert.Equal(t, Counter{}, d.Counters().Get(1))
}

// TestEvictLRU4K: capacity 4 pages. Pages 0-3 arrive, page 0 is read: LRU
// order 1, 2, 3, 0. Fault 4 evicts 1 (order 2, 3, 0, 4); fault 5 evicts 2
// (3, 0, 4, 5); a read of 3 gives 0, 4, 5, 3; fault 6 evicts 0.
func TestEvictLRU4K(t *testing.T) {
	d := newDriver(t, PagesPerBlock, 4, func(c *Config) {
		c.Prefetcher, c.OversubPrefetcher, c.Evictor = PrefetchNone, PrefetchNone, EvictLRU4K
	})
	for p := range 4 {
		fault(t, d, p)
	}
	count(t, d, 0, 1, false)
	assert.Empty(t, cmp.Diff([]int{1}, fault(t, d, 4).Evict))
	assert.Empty(t, cmp.Diff([]int{2}, fault(t, d, 5).Evict))
	count(t, d, 3, 1, false)
	assert.Empty(t, cmp.Diff([]int{0}, fault(t, d, 6).Evict))
}

// TestEvictRandom4K: pages 0-3 arrive in that order, so the resident list
// is [0 1 2 3]; the victim is the entry at the first draw from the
// evictor's PCG stream. With that page pinned, the next entry goes.
func TestEvictRandom4K(t *testing.T) {
	const seed = 11
	i := rand.New(rand.NewPCG(seed, seedStreamEvict)).IntN(4)
	setup := func() *Driver {
		d := newDriver(t, PagesPerBlock, 4, func(c *Config) {
			c.Prefetcher, c.OversubPrefetcher, c.Evictor, c.Seed = PrefetchNone, PrefetchNone, EvictRandom, seed
		})
		for p := range 4 {
			fault(t, d, p)
		}
		return d
	}
	d := setup()
	assert.Empty(t, cmp.Diff([]int{i}, fault(t, d, 8).Evict))

	d = setup()
	require.NoError(t, d.Space().Pin(i))
	assert.Empty(t, cmp.Diff([]int{(i + 1) % 4}, fault(t, d, 8).Evict))
}

// TestFreePageBuffer: capacity 1024 pages with a 25% buffer (256 pages).
// Region 0 (512) fits with the buffer; region 1 would leave 0 < 256 free,
// so region 0 is evicted ahead although both would fit. Without the buffer
// nothing is evicted.
func TestFreePageBuffer(t *testing.T) {
	for _, c := range []struct {
		pct       float64
		wantEvict []int
	}{{25, span(region0, region1)}, {0, nil}} {
		d := newDriver(t, 3*PagesPerRegion, 2*PagesPerRegion, func(cfg *Config) {
			cfg.Prefetcher, cfg.FreeBufferPercent = PrefetchNone, c.pct
		})
		assert.Equal(t, int(c.pct)*1024/100, d.BufferPages())
		fault(t, d, span(region0, region1)...)
		got := fault(t, d, span(region1, region2)...)
		assert.Empty(t, cmp.Diff(c.wantEvict, got.Evict), "buffer %g%%", c.pct)
		assert.Equal(t, c.pct > 0, d.Oversubscribed())
	}
}

// TestDeferredWhenAllPinned: capacity 16 pages, all resident and pinned;
// a fault batch for pages 20 and 21 finds no victim, drops its 14
// prefetches and defers both faults.
func TestDeferredWhenAllPinned(t *testing.T) {
	d := newDriver(t, 2*PagesPerBlock, PagesPerBlock, func(c *Config) {
		c.Prefetcher, c.OversubPrefetcher, c.Evictor = PrefetchSeqLocal, PrefetchSeqLocal, EvictLRU4K
	})
	fault(t, d, 0)
	for p := range PagesPerBlock {
		require.NoError(t, d.Space().Pin(p))
	}
	got := fault(t, d, 21, 20)
	assert.Empty(t, cmp.Diff(Plan{Deferred: []int{20, 21}}, got))
}

// TestPrefetchesDroppedBeforeFaults: capacity 20 pages, block 0 resident
// and pinned. A fault on page 20 brings block 1 (pages 16-31), 16 pages
// where 4 are free and nothing can be evicted: 12 pages are dropped,
// prefetches highest first (31 down to 21, then 19), leaving 16, 17, 18
// and the fault 20.
func TestPrefetchesDroppedBeforeFaults(t *testing.T) {
	d := newDriver(t, 2*PagesPerBlock, PagesPerBlock+4, func(c *Config) {
		c.Prefetcher, c.OversubPrefetcher, c.Evictor = PrefetchSeqLocal, PrefetchSeqLocal, EvictLRU4K
	})
	fault(t, d, 0)
	for p := range PagesPerBlock {
		require.NoError(t, d.Space().Pin(p))
	}
	got := fault(t, d, 20)
	assert.Empty(t, cmp.Diff(Plan{Fetch: []int{16, 17, 18, 20}, Prefetched: 3}, got))
	assert.Equal(t, d.Space().Capacity(), d.Space().Resident())
}
