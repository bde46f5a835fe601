package rtl

import (
	"fmt"
	"math/bits"
)

// BitVec is a register of one bit per slot of a table (a queue entry, a
// walker, a request), in 64-bit words: the valid or state vector a
// hardware table keeps beside its entries, so that a priority encoder
// finds a free slot and a search visits only the slots whose bit is set.
// A cycle's edits (Put) gather in scratch and are written once per word
// by Flush, which the owner calls at the end of its Eval; Has, Word and
// the searches read the current cycle's value, like Q.
type BitVec struct {
	words  *Vec[uint64]
	n      int
	next   []uint64 // scratch: the next value of each word in edited
	edited uint64   // bit w: word w has an edit this cycle
	list   []int    // the words in edited, in the order first edited
}

// MaxBitVec is the most slots a BitVec holds: 64 words of 64.
const MaxBitVec = 64 * 64

// NewBitVec makes a BitVec of n slots (1..MaxBitVec), all clear at reset,
// in block b.
func NewBitVec(b *Base, name string, n int) *BitVec {
	if n < 1 || n > MaxBitVec {
		panic(fmt.Sprintf("rtl: bit vector %s of %d slots outside 1..%d", name, n, MaxBitVec))
	}
	w := (n + 63) / 64
	return &BitVec{words: NewVec[uint64](b, name, w, 64, 0), n: n, next: make([]uint64, w), list: make([]int, 0, w)}
}

// Len is the number of slots.
func (v *BitVec) Len() int { return v.n }

// Words is the number of 64-bit words.
func (v *BitVec) Words() int { return v.words.Len() }

// Word is word w's value in the current cycle: slots 64w..64w+63.
func (v *BitVec) Word(w int) uint64 { return v.words.At(w).Q() }

// Has reports slot i's bit in the current cycle.
func (v *BitVec) Has(i int) bool { return v.Word(i/64)>>(i%64)&1 != 0 }

// Put sets slot i's bit for the next cycle.
func (v *BitVec) Put(i int, on bool) {
	w := i / 64
	if v.edited&(1<<w) == 0 {
		v.edited |= 1 << w
		v.next[w] = v.Word(w)
		v.list = append(v.list, w)
	}
	if on {
		v.next[w] |= 1 << (i % 64)
	} else {
		v.next[w] &^= 1 << (i % 64)
	}
}

// Flush writes the cycle's edits; a word they leave unchanged is not
// written.
func (v *BitVec) Flush() {
	for _, w := range v.list {
		if r := v.words.At(w); r.Q() != v.next[w] {
			r.Set(v.next[w])
		}
	}
	v.edited, v.list = 0, v.list[:0]
}

// FirstClear is the lowest slot whose bit is clear in every one of vs
// (of n slots each) in the current cycle, or -1.
func FirstClear(n int, vs ...*BitVec) int {
	for w := 0; w*64 < n; w++ {
		var set uint64
		for _, v := range vs {
			set |= v.Word(w)
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
