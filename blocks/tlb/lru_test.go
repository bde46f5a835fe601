package tlb

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// scanVictim is the replacement choice as a compare chain over a set's
// ways: the lowest invalid way, else the lowest stamp, the lowest way
// among equal stamps.
func scanVictim(stamp []uint64, invalid []bool, lo, hi int) int {
	best := lo
	for w := lo; w < hi; w++ {
		if invalid[w] {
			return w
		}
		if stamp[w] < stamp[best] {
			best = w
		}
	}
	return best
}

// TestLRUOrderAgainstScan drives the order with seeded random touches at a
// growing clock and valid-bit flips, and holds its choice per set, and that
// of an order rebuilt from the same stamps, to the compare chain.
func TestLRUOrderAgainstScan(t *testing.T) {
	for _, geo := range []struct{ sets, ways int }{{1, 128}, {32, 16}, {4, 3}, {1, 1}} {
		n := geo.sets * geo.ways
		rng := rand.New(rand.NewPCG(uint64(n), 19))
		o := newLRUOrder(geo.sets, geo.ways)
		stamp, invalid := make([]uint64, n), make([]bool, n)
		for w := range invalid {
			invalid[w] = true
		}
		clock := uint64(1)
		for step := range 3000 {
			w := rng.IntN(n)
			if rng.UintN(4) == 0 {
				invalid[w] = !invalid[w]
				o.setInvalid(w, invalid[w])
			} else {
				stamp[w] = clock
				o.touch(w)
				clock += 2
				o.clock = clock
			}
			re := newLRUOrder(geo.sets, geo.ways)
			re.rebuild(clock, func(w int) uint64 { return stamp[w] }, func(w int) bool { return !invalid[w] })
			for s := range geo.sets {
				want := scanVictim(stamp, invalid, s*geo.ways, (s+1)*geo.ways)
				for _, x := range []*lruOrder{&o, &re} {
					got := x.firstInvalid(s)
					if got < 0 {
						got = int(x.first[s])
					}
					require.Equal(t, want, got, "%dx%d step %d set %d", geo.sets, geo.ways, step, s)
				}
			}
		}
	}
}
