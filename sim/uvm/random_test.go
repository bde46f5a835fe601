package uvm

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// step is one recorded outcome of a random run.
type step struct {
	Op       string
	Page     int
	Decision Decision
	Plan     Plan
}

// randomRun drives a driver with a seeded random mix of accesses, remote
// decisions, fault batches, pins and unpins over 4 regions and a 64 KB
// tail, with memory for a third of it and a 5% free-page buffer, checks
// the invariants after every batch and returns the outcomes.
func randomRun(t *testing.T, cfg Config, seed uint64, ops int) []step {
	const pages = 4*PagesPerRegion + PagesPerBlock
	const capacity = pages / 3
	d, err := New(cfg, pages, capacity)
	require.NoError(t, err)
	s := d.Space()
	rng := rand.New(rand.NewPCG(seed, 0))
	var trace []step
	var pinned []int
	before := make([]uint16, s.Blocks())
	// Faults and accesses cluster in a few hot spots so that the tree
	// fills, regions become full and eviction has choices.
	page := func() int {
		if rng.IntN(4) == 0 {
			return rng.IntN(pages)
		}
		return (rng.IntN(6)*211 + rng.IntN(64)) % pages
	}
	for range ops {
		switch op := rng.IntN(10); {
		case op < 5:
			p, w := page(), rng.IntN(4) == 0
			require.NoError(t, d.Count(p, w))
			dec, err := d.ShouldMigrate(p, w)
			require.NoError(t, err)
			trace = append(trace, step{Op: "access", Page: p, Decision: dec})
		case op < 8:
			faults := make([]int, 1+rng.IntN(4))
			for i := range faults {
				faults[i] = page()
			}
			copy(before, s.mask)
			plan, err := d.HandleFaults(faults)
			require.NoError(t, err)
			checkPlan(t, d, before, faults, plan)
			trace = append(trace, step{Op: "faults", Plan: Plan{
				Fetch: slices.Clone(plan.Fetch), Prefetched: plan.Prefetched,
				Evict: slices.Clone(plan.Evict), Deferred: slices.Clone(plan.Deferred),
			}})
		case op < 9:
			p := page()
			require.NoError(t, s.Pin(p))
			pinned = append(pinned, p)
		default:
			if len(pinned) > 0 {
				i := rng.IntN(len(pinned))
				require.NoError(t, s.Unpin(pinned[i]))
				pinned = slices.Delete(pinned, i, i+1)
			}
		}
	}
	return trace
}

func wasResident(mask []uint16, p int) bool {
	return mask[p/PagesPerBlock]&(1<<(p%PagesPerBlock)) != 0
}

func checkPlan(t *testing.T, d *Driver, before []uint16, faults []int, plan Plan) {
	t.Helper()
	s := d.Space()
	require.LessOrEqual(t, s.Resident(), s.Capacity(), "resident within capacity")
	total := 0
	for b := range s.Blocks() {
		total += bits.OnesCount16(s.BlockMask(b))
	}
	require.Equal(t, total, s.Resident(), "resident count matches the masks")
	require.True(t, slices.IsSorted(plan.Fetch))
	for _, p := range plan.Fetch {
		if wasResident(before, p) || !s.IsResident(p) {
			t.Fatalf("fetched page %d: resident before %v, after %v", p, wasResident(before, p), s.IsResident(p))
		}
	}
	for _, p := range plan.Evict {
		if !wasResident(before, p) || s.IsResident(p) || s.Pinned(p) {
			t.Fatalf("evicted page %d: resident before %v, after %v, pinned %v", p, wasResident(before, p), s.IsResident(p), s.Pinned(p))
		}
	}
	for _, p := range plan.Deferred {
		require.Contains(t, faults, p)
		require.False(t, s.IsResident(p))
	}
	for _, p := range faults {
		require.True(t, s.IsResident(p) || slices.Contains(plan.Deferred, p), "fault %d neither served nor deferred", p)
	}
}

// TestRandomInvariants runs every prefetcher with every evictor, under
// adaptive remote access, and checks after each batch that residency
// stays within capacity, no page is both evicted and resident, no pinned
// page is evicted, prefetches never fetch a resident page, and every
// fault is served or deferred; a second run with the same seed must give
// the same outcomes.
func TestRandomInvariants(t *testing.T) {
	for _, pf := range PrefetcherNames() {
		for _, ev := range EvictorNames() {
			t.Run(pf+"/"+ev, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Prefetcher, cfg.OversubPrefetcher, cfg.Evictor = pf, pf, ev
				cfg.Remote, cfg.FreeBufferPercent, cfg.Seed = RemoteAdaptive, 5, 9
				first := randomRun(t, cfg, 42, 1500)
				second := randomRun(t, cfg, 42, 1500)
				if !slices.EqualFunc(first, second, sameStep) {
					t.Fatalf("same seed, different outcomes (-first +second):\n%s", cmp.Diff(first, second))
				}
			})
		}
	}
}

// sameStep compares steps without reflection: cmp.Diff explains a
// mismatch, but is too slow to compare every trace.
func sameStep(a, b step) bool {
	return a.Op == b.Op && a.Page == b.Page && a.Decision == b.Decision &&
		a.Plan.Prefetched == b.Plan.Prefetched && slices.Equal(a.Plan.Fetch, b.Plan.Fetch) &&
		slices.Equal(a.Plan.Evict, b.Plan.Evict) && slices.Equal(a.Plan.Deferred, b.Plan.Deferred)
}
