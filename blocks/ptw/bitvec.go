package ptw

import (
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// bitVec is one bit per queue entry or walker, in 64-bit register words:
// the one-hot state vectors a hardware walk queue keeps beside its
// entries, so that a priority encoder finds a free slot and a search
// visits only the slots in a state. A cycle's edits gather in next and
// are written once per word when the cycle's Eval ends (flush).
type bitVec struct {
	words  *rtl.Vec[uint64]
	n      int
	next   []uint64 // scratch: the next value of each word in edited
	edited uint64   // bit w: word w has an edit this cycle (64 words hold MaxQueueDepth slots)
	list   []int    // the words in edited, in the order first edited
}

func newBitVec(b *rtl.Base, name string, n int) *bitVec {
	w := (n + 63) / 64
	return &bitVec{words: rtl.NewVec[uint64](b, name, w, 64, 0), n: n, next: make([]uint64, w), list: make([]int, 0, w)}
}

// word is word w's value in the current cycle.
func (v *bitVec) word(w int) uint64 { return v.words.At(w).Q() }

// has reports slot i's bit in the current cycle.
func (v *bitVec) has(i int) bool { return v.word(i/64)>>(i%64)&1 != 0 }

// put sets slot i's bit in the next cycle.
func (v *bitVec) put(i int, on bool) {
	w := i / 64
	if v.edited&(1<<w) == 0 {
		v.edited |= 1 << w
		v.next[w] = v.word(w)
		v.list = append(v.list, w)
	}
	if on {
		v.next[w] |= 1 << (i % 64)
	} else {
		v.next[w] &^= 1 << (i % 64)
	}
}

// flush writes the cycle's edited words that changed.
func (v *bitVec) flush() {
	for _, w := range v.list {
		if r := v.words.At(w); r.Q() != v.next[w] {
			r.Set(v.next[w])
		}
	}
	v.edited, v.list = 0, v.list[:0]
}

// firstClear is the lowest slot whose bit is clear in every one of vs in
// the current cycle, or -1.
func firstClear(n int, vs ...*bitVec) int {
	for w := 0; w*64 < n; w++ {
		var set uint64
		for _, v := range vs {
			set |= v.word(w)
		}
		if free := ^set; free != 0 {
			if i := w*64 + bits.TrailingZeros64(free); i < n {
				return i
			}
			return -1
		}
	}
	return -1
}
