package uvm

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrefetchNoneFetchesOnlyFaults(t *testing.T) {
	d := newDriver(t, PagesPerRegion, PagesPerRegion, func(c *Config) { c.Prefetcher = PrefetchNone })
	// Repeats and unordered faults collapse to the distinct pages, ascending.
	got := fault(t, d, 40, 5, 40)
	assert.Empty(t, cmp.Diff(Plan{Fetch: []int{5, 40}}, got))
	// A fault on a page already resident is stale and ignored.
	got = fault(t, d, 5)
	assert.Empty(t, cmp.Diff(Plan{}, got))
}

func TestPrefetchSeqLocalFetchesTheFaultingBlock(t *testing.T) {
	d := newDriver(t, PagesPerRegion, PagesPerRegion, func(c *Config) { c.Prefetcher = PrefetchSeqLocal })
	// Page 5 is in block 0 (pages 0-15): the other 15 are prefetched.
	got := fault(t, d, 5)
	assert.Empty(t, cmp.Diff(Plan{Fetch: span(0, 16), Prefetched: 15}, got))
	// Page 33 is in block 2 (pages 32-47); page 40 already faults with it.
	got = fault(t, d, 33, 40)
	assert.Empty(t, cmp.Diff(Plan{Fetch: span(32, 48), Prefetched: 14}, got))
}

// TestPrefetchTreePromotesUpTheTree faults the first page of blocks 0, 1,
// 2, 4, 8 and 16 of one region in turn. Each fault brings its 64 KB leaf;
// an inner node then strictly above half full is filled:
//
//	fault block 0:  leaf 0                        node{0,1} 16/32: no
//	fault block 1:  leaf 1                        node{0-3} 32/64 = half: no
//	fault block 2:  leaf 2, node{0-3} 48/64 > half: fill block 3
//	                                              node{0-7} 64/128: no
//	fault block 4:  leaf 4, node{0-7} 80/128: fill blocks 5-7
//	fault block 8:  leaf 8, node{0-15} 144/256: fill blocks 9-15
//	fault block 16: leaf 16, root 272/512: fill blocks 17-31
//
// so each fault from block 2 on doubles the resident span.
func TestPrefetchTreePromotesUpTheTree(t *testing.T) {
	d := newDriver(t, PagesPerRegion, PagesPerRegion, nil)
	steps := []struct {
		block int
		want  Plan
	}{
		{0, Plan{Fetch: span(0, 16), Prefetched: 15}},
		{1, Plan{Fetch: span(16, 32), Prefetched: 15}},
		{2, Plan{Fetch: span(32, 64), Prefetched: 31}},
		{4, Plan{Fetch: span(64, 128), Prefetched: 63}},
		{8, Plan{Fetch: span(128, 256), Prefetched: 127}},
		{16, Plan{Fetch: span(256, 512), Prefetched: 255}},
	}
	for _, s := range steps {
		got := fault(t, d, s.block*PagesPerBlock)
		require.Empty(t, cmp.Diff(s.want, got), "fault in block %d", s.block)
	}
	assert.Equal(t, PagesPerRegion, d.Space().Resident())
}

// TestPrefetchTreeOneBatch: faults in blocks 0, 1 and 3 in one batch make
// node{0-3} 48/64, so block 2 is filled; node{0-7} is then 64/128, half,
// and stops the promotion. 64 pages, 3 of them faulting.
func TestPrefetchTreeOneBatch(t *testing.T) {
	d := newDriver(t, PagesPerRegion, PagesPerRegion, nil)
	got := fault(t, d, 48, 0, 16)
	assert.Empty(t, cmp.Diff(Plan{Fetch: span(0, 64), Prefetched: 61}, got))
}

// TestPrefetchTreePartialRegion: a 576-page space ends with a region of 4
// blocks (32-35). Faults in blocks 32 and 33 make node{32-35} 32/64, half:
// no fill. A fault in block 34 makes it 48/64, so block 35 is filled; the
// nodes above count only the 4 existing blocks, so nothing more exists to
// fill.
func TestPrefetchTreePartialRegion(t *testing.T) {
	d := newDriver(t, PagesPerRegion+4*PagesPerBlock, 2*PagesPerRegion, nil)
	got := fault(t, d, 512, 528)
	assert.Empty(t, cmp.Diff(Plan{Fetch: span(512, 544), Prefetched: 30}, got))
	got = fault(t, d, 544)
	assert.Empty(t, cmp.Diff(Plan{Fetch: span(544, 576), Prefetched: 31}, got))
}

// TestPrefetchRandomDrawsFromTheRegion: each fault adds one page drawn
// uniformly from its 2 MB region, from the PCG stream seeded by
// Config.Seed; the expected draws are made here from the same stream.
// The third fault's draw is forced onto a resident page by faulting that
// page first, and then nothing is prefetched.
func TestPrefetchRandomDrawsFromTheRegion(t *testing.T) {
	const seed = 7
	draws := rand.New(rand.NewPCG(seed, seedStreamPrefetch))
	d := newDriver(t, 2*PagesPerRegion, 2*PagesPerRegion, func(c *Config) {
		c.Prefetcher = PrefetchRandom
		c.Seed = seed
	})

	first := draws.IntN(PagesPerRegion)
	got := fault(t, d, 3)
	want := []int{3, first}
	if first < 3 {
		want = []int{first, 3}
	}
	require.NotEqual(t, 3, first, "seed draws the faulting page; pick another seed")
	assert.Empty(t, cmp.Diff(Plan{Fetch: want, Prefetched: 1}, got))

	second := PagesPerRegion + draws.IntN(PagesPerRegion)
	got = fault(t, d, 600)
	assert.Contains(t, got.Fetch, second)
	assert.Equal(t, 1, got.Prefetched)
	assert.Equal(t, PagesPerRegion, second&^(PagesPerRegion-1), "the draw stays in the faulting page's region")
}

func TestPrefetcherAfterOversubscription(t *testing.T) {
	// Capacity 32 pages: the first tree fault brings 16; the second batch
	// (16 more) fits exactly; the third cannot, so memory is oversubscribed
	// and from the fourth batch on the on-demand prefetcher applies.
	d := newDriver(t, PagesPerRegion, 2*PagesPerBlock, func(c *Config) {
		c.OversubPrefetcher = PrefetchNone
		c.Evictor = EvictLRU64K
	})
	assert.Equal(t, PrefetchTree, d.Prefetcher().Name())
	fault(t, d, 0)
	fault(t, d, 100)
	assert.False(t, d.Oversubscribed())
	got := fault(t, d, 200)
	assert.True(t, d.Oversubscribed())
	assert.Equal(t, 15, got.Prefetched, "the batch that fills memory still uses the first prefetcher")
	assert.Equal(t, PrefetchNone, d.Prefetcher().Name())
	got = fault(t, d, 300)
	assert.Empty(t, cmp.Diff([]int{300}, got.Fetch))
}
