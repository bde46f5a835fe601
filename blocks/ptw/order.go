package ptw

import (
	"cmp"
	"math/bits"
	"slices"
)

// ageOrder lists the walk-queue entries of one state, oldest first: the
// order in which the state's oldest-first pick over the entries' ages
// takes them. It is derived from the state's bit vector and the age
// registers, never a source of truth: Eval edits it with the bit vector
// it mirrors, so that the pick reads its front instead of comparing the
// age of every entry in the state, and GMMU.checkOrders rebuilds it from
// the registers when its length disagrees with their count (after a
// Sim.Reset, for one). Each entry carries a copy of its age, which does
// not change while the entry is in a state, so that placing an entry
// reads no age register but its own.
type ageOrder []agedEntry

type agedEntry struct {
	age   uint64
	entry int32
}

// front is the oldest entry, or -1.
func (o ageOrder) front() int {
	if len(o) == 0 {
		return -1
	}
	return int(o[0].entry)
}

// popFront removes the oldest entry.
func (o *ageOrder) popFront() { *o = (*o)[:copy(*o, (*o)[1:])] }

// insert places entry e of age a by its age (ages are unique: each
// request takes the next), looking from the youngest end: a request
// answered is mostly younger than those answered before it.
func (o *ageOrder) insert(e int, a uint64) {
	s := append(*o, agedEntry{})
	i := len(s) - 1
	for ; i > 0 && s[i-1].age > a; i-- {
		s[i] = s[i-1]
	}
	s[i] = agedEntry{a, int32(e)}
	*o = s
}

// addWaiting puts entry e, the request accepted this cycle, in state
// waiting: the youngest entry, its age the sequence number it takes.
func (g *GMMU) addWaiting(e int) {
	g.waitingSet.Put(e, true)
	g.waitOrder = append(g.waitOrder, agedEntry{g.seq.Q(), int32(e)})
}

// takeWaiting takes entry e, the oldest waiting one, out of state waiting.
func (g *GMMU) takeWaiting(e int) {
	g.waitingSet.Put(e, false)
	g.waitOrder.popFront()
}

// addAnswer puts entry e in state answer.
func (g *GMMU) addAnswer(e int) {
	g.answerSet.Put(e, true)
	g.answerOrder.insert(e, g.age.At(e).Q())
}

// takeAnswer takes entry e, the oldest answered one, out of state answer.
func (g *GMMU) takeAnswer(e int) {
	g.answerSet.Put(e, false)
	g.answerOrder.popFront()
}

// checkOrders rebuilds the orders if a length is not its state's count.
func (g *GMMU) checkOrders() {
	if len(g.waitOrder) != int(g.waiting.Q()) || len(g.answerOrder) != int(g.answers.Q()) {
		g.rebuildOrders()
	}
}

// rebuildOrders derives both orders from the registers.
func (g *GMMU) rebuildOrders() {
	g.waitOrder = g.rebuildOrder(g.waitOrder[:0], g.waitingSet.Words(), g.waitingSet.Word)
	g.answerOrder = g.rebuildOrder(g.answerOrder[:0], g.answerSet.Words(), g.answerSet.Word)
}

// rebuildOrder lists the entries of a state vector by age into o.
func (g *GMMU) rebuildOrder(o ageOrder, words int, word func(int) uint64) ageOrder {
	for wi := range words {
		for set := word(wi); set != 0; set &= set - 1 {
			e := wi*64 + bits.TrailingZeros64(set)
			o = append(o, agedEntry{g.age.At(e).Q(), int32(e)})
		}
	}
	slices.SortFunc(o, func(x, y agedEntry) int { return cmp.Compare(x.age, y.age) })
	return o
}
