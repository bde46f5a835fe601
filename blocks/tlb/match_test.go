package tlb

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWayIndexAgainstMap runs seeded random puts and removes over a small
// key space, so that probe runs wrap and removals shift entries back, and
// holds the table to a Go map after every step.
func TestWayIndexAgainstMap(t *testing.T) {
	const entries = 16
	rng := rand.New(rand.NewPCG(19, 1))
	x := newWayIndex(entries)
	ref := map[uint64]int{}
	for step := range 20000 {
		vpn := rng.Uint64N(64) << rng.UintN(30)
		switch {
		case rng.UintN(50) == 0:
			x.clear()
			clear(ref)
		case rng.UintN(2) == 0 || len(ref) == entries:
			x.remove(vpn)
			delete(ref, vpn)
		default:
			w := rng.IntN(entries)
			x.put(vpn, w)
			ref[vpn] = w
		}
		require.Equal(t, len(ref), x.n, "step %d", step)
		for v, w := range ref {
			require.Equal(t, w, x.get(v), "step %d vpn %#x", step, v)
		}
		for v := range x.vpns() {
			_, ok := ref[v]
			require.True(t, ok, "step %d: stray vpn %#x", step, v)
		}
	}
}

// TestWayIndexKeep drops the entries a predicate rejects and keeps the
// rest reachable.
func TestWayIndexKeep(t *testing.T) {
	x := newWayIndex(8)
	for v := range uint64(8) {
		x.put(v*1000, int(v))
	}
	require.True(t, x.full() == (2*9 > len(x.slots)))
	x.keep(func(vpn uint64, w int) bool { return w%2 == 0 })
	require.Equal(t, 4, x.n)
	for v := range uint64(8) {
		want := -1
		if v%2 == 0 {
			want = int(v)
		}
		require.Equal(t, want, x.get(v*1000))
	}
}
