package tlb

import (
	"cmp"
	"math/bits"
	"slices"
)

// lruOrder is the replacement logic's view of the use stamps and tag valid
// bits: each set's ways as a list from least to most recently used, and a
// bit per way whose tag is not valid. Like match, it is derived from the
// registers, never a source of truth: Eval moves a way to the end of its
// set's list whenever it writes the way's stamp and flips its bit whenever
// it writes its tag's valid bit, so a fill finds its victim without
// comparing every way's stamp.
//
// The order is by stamp, ties (the never-used ways, stamp 0) by way
// number, as the compare chain of victim's former scan picked them. Every
// stamp written is the clock's value, which only grows, so a way written
// goes last. clock records the clock register's value the order was kept
// up to; a clock that differs (a Sim.Reset clears the registers, not this
// order) makes the TLB rebuild the order from the registers.
type lruOrder struct {
	ways        int
	next, prev  []int32 // per way: its neighbours in its set's list, -1 at the ends
	first, last []int32 // per set: its least and most recently used way
	invalid     []uint64
	clock       uint64
	byStamp     []int32 // rebuild's scratch: one set's ways
}

func newLRUOrder(sets, ways int) lruOrder {
	n := sets * ways
	o := lruOrder{
		ways: ways,
		next: make([]int32, n), prev: make([]int32, n),
		first: make([]int32, sets), last: make([]int32, sets),
		invalid: make([]uint64, (n+63)/64),
		byStamp: make([]int32, ways),
	}
	o.reset()
	return o
}

// reset is the order of the registers' reset values: every tag invalid,
// every stamp 0 and the clock at 1.
func (o *lruOrder) reset() {
	for s := range o.first {
		for i := range o.byStamp {
			o.byStamp[i] = int32(s*o.ways + i)
		}
		o.link(s)
	}
	for w := range len(o.next) {
		o.setInvalid(w, true)
	}
	o.clock = 1
}

// link makes byStamp set s's list, least recently used first.
func (o *lruOrder) link(s int) {
	prev := int32(-1)
	for _, w := range o.byStamp {
		o.prev[w] = prev
		if prev >= 0 {
			o.next[prev] = w
		}
		prev = w
	}
	o.next[prev] = -1
	o.first[s], o.last[s] = o.byStamp[0], prev
}

// rebuild derives the order from the stamps and valid bits read by
// stamp(w) and valid(w), with the clock at clock.
func (o *lruOrder) rebuild(clock uint64, stamp func(w int) uint64, valid func(w int) bool) {
	for s := range o.first {
		for i := range o.byStamp {
			o.byStamp[i] = int32(s*o.ways + i)
		}
		slices.SortStableFunc(o.byStamp, func(a, b int32) int { return cmp.Compare(stamp(int(a)), stamp(int(b))) })
		o.link(s)
	}
	for w := range len(o.next) {
		o.setInvalid(w, !valid(w))
	}
	o.clock = clock
}

// touch makes way w its set's most recently used.
func (o *lruOrder) touch(w int) {
	s := w / o.ways
	if o.last[s] == int32(w) {
		return
	}
	p, n := o.prev[w], o.next[w]
	if p >= 0 {
		o.next[p] = n
	} else {
		o.first[s] = n
	}
	o.prev[n] = p // n >= 0: w is not last
	o.prev[w], o.next[w] = o.last[s], -1
	o.next[o.last[s]] = int32(w)
	o.last[s] = int32(w)
}

func (o *lruOrder) setInvalid(w int, invalid bool) {
	if invalid {
		o.invalid[w/64] |= 1 << (w % 64)
	} else {
		o.invalid[w/64] &^= 1 << (w % 64)
	}
}

// firstInvalid is the lowest way of set s whose tag is not valid, or -1.
func (o *lruOrder) firstInvalid(s int) int {
	lo, hi := s*o.ways, (s+1)*o.ways
	for wi := lo / 64; wi*64 < hi; wi++ {
		word := o.invalid[wi]
		if wi*64 < lo {
			word &^= 1<<(lo-wi*64) - 1
		}
		if word != 0 {
			if w := wi*64 + bits.TrailingZeros64(word); w < hi {
				return w
			}
			return -1
		}
	}
	return -1
}
