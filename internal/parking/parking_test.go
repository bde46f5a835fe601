package parking

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLotAgainstMap parks and unparks random entries and compares every
// group's list and every word with a map of entry to group.
func TestLotAgainstMap(t *testing.T) {
	const entries, groups = 130, 7
	rng := rand.New(rand.NewPCG(1, 2))
	l := New(entries, groups)
	want := map[int]int{}
	for step := range 20000 {
		i := rng.IntN(entries)
		if rng.IntN(2) == 0 {
			g := rng.IntN(groups)
			if _, ok := want[i]; !ok {
				want[i] = g
			}
			l.Park(i, g)
		} else {
			delete(want, i)
			l.Unpark(i)
		}
		for w := range (entries + 63) / 64 {
			bits := uint64(0)
			for j := w * 64; j < min(entries, w*64+64); j++ {
				if _, ok := want[j]; ok {
					bits |= 1 << (j % 64)
				}
			}
			require.Equal(t, bits, l.Word(w), "step %d word %d", step, w)
		}
		for g := range groups {
			var got, exp []int
			for j := l.First(g); j >= 0; j = l.Next(j) {
				got = append(got, j)
				require.Equal(t, g, l.Group(j), "step %d entry %d", step, j)
			}
			for j, h := range want {
				if h == g {
					exp = append(exp, j)
				}
			}
			sort.Ints(got)
			sort.Ints(exp)
			require.Equal(t, exp, got, "step %d group %d", step, g)
		}
	}
}
