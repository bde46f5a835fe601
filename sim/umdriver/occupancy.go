package umdriver

import (
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// occupancy is the fault buffer's valid vector: bit i of word i/64 is set
// while entry i holds a request (its kind is not entryFree), so that the
// searches of the buffer visit only occupied entries and a priority
// encoder finds the free entry an arrival takes. A cycle's edits (an
// arrival, the reply taken, a raised migration freed: at most one each)
// gather in edits and are written once per word by flush, at the end of
// Eval; word reads the current cycle's value, like Q.
type occupancy struct {
	words *rtl.Vec[uint64]
	edits []occupancyEdit
}

// occupancyEdit is the next value of one word the cycle edits.
type occupancyEdit struct {
	word int
	next uint64
}

// maxOccupancyEdits is the most words one cycle edits: an arrival, the
// reply the router took and a raised migration freed.
const maxOccupancyEdits = 3

func newOccupancy(b *rtl.Base, name string, entries int) occupancy {
	return occupancy{
		words: rtl.NewVec[uint64](b, name, (entries+63)/64, 64, 0),
		edits: make([]occupancyEdit, 0, maxOccupancyEdits),
	}
}

// word is word w's value in the current cycle: entries 64w..64w+63.
func (o *occupancy) word(w int) uint64 { return o.words.At(w).Q() }

// put sets entry i's bit for the next cycle.
func (o *occupancy) put(i int, on bool) {
	w, bit := i/64, uint64(1)<<(i%64)
	k := 0
	for k < len(o.edits) && o.edits[k].word != w {
		k++
	}
	if k == len(o.edits) {
		o.edits = append(o.edits, occupancyEdit{word: w, next: o.word(w)})
	}
	if on {
		o.edits[k].next |= bit
	} else {
		o.edits[k].next &^= bit
	}
}

// flush writes the cycle's edits; a word they leave unchanged is not
// written.
func (o *occupancy) flush() {
	for _, e := range o.edits {
		if r := o.words.At(e.word); r.Q() != e.next {
			r.Set(e.next)
		}
	}
	o.edits = o.edits[:0]
}

// firstFree is the lowest entry free in the current cycle, or -1.
func (o *occupancy) firstFree(entries int) int {
	for w := range o.words.Len() {
		if free := ^o.word(w); free != 0 {
			if i := w*64 + bits.TrailingZeros64(free); i < entries {
				return i
			}
			return -1
		}
	}
	return -1
}
