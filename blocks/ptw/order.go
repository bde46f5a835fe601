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

// walkClasses are the walk latencies a walker can take: a walk with a
// page-walk cache hit (Config.WalkCycles(true)) and one without.
const walkClasses = 2

// walkOrder lists the busy walkers of one walk latency in dispatch order,
// a ring of at most Walkers entries. Dispatch takes the oldest waiting
// request and one walk per cycle, so along the ring both the ages and the
// cycles of the leaf reads (now + the class's latency - 1) grow: the
// oldest finished walk of the class, if any, is at the front, and so is
// its earliest leaf read. Like ageOrder it is derived, never a source of
// truth; each entry carries copies of its walker's registers, which do
// not change while the walker is busy.
type walkOrder struct {
	walks []pendingWalk
	head  int
	n     int
}

type pendingWalk struct {
	doneAt, age uint64
	walker      int32
}

func newWalkOrder(walkers int) walkOrder { return walkOrder{walks: make([]pendingWalk, walkers)} }

func (o *walkOrder) front() pendingWalk { return o.walks[o.head] }

func (o *walkOrder) push(p pendingWalk) {
	i := o.head + o.n
	if i >= len(o.walks) {
		i -= len(o.walks)
	}
	o.walks[i] = p
	o.n++
}

func (o *walkOrder) popFront() {
	if o.head++; o.head == len(o.walks) {
		o.head = 0
	}
	o.n--
}

// vpnFilter counts the busy walkers per hash bucket of their VPN: a VPN
// whose bucket is empty is being walked by none, and the accept's search
// for a walk of its VPN to merge into has nothing to find. n is the
// walkers counted, checked against the active count like the orders.
type vpnFilter struct {
	buckets []uint16
	shift   uint
	n       uint32
}

func newVPNFilter(walkers int) vpnFilter {
	size := 64 << bits.Len(uint(walkers)) // under 1/64 of the buckets in use
	return vpnFilter{buckets: make([]uint16, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
}

// bucket is vpn's bucket (Fibonacci hashing).
func (f *vpnFilter) bucket(vpn uint64) *uint16 {
	return &f.buckets[(vpn*0x9e3779b97f4a7c15)>>f.shift]
}

func (f *vpnFilter) add(vpn uint64) { *f.bucket(vpn)++; f.n++ }

func (f *vpnFilter) remove(vpn uint64) { *f.bucket(vpn)--; f.n-- }

func (f *vpnFilter) mayHold(vpn uint64) bool { return *f.bucket(vpn) != 0 }

// startWalk records walker w's dispatch, of a walk of vpn and age age that
// reads its leaf PTE in cycle doneAt, in the walker orders and the filter.
func (g *GMMU) startWalk(w int, vpn, age, doneAt uint64, pwcHit bool) {
	c := 0
	if pwcHit {
		c = 1
	}
	g.walkClass[w] = uint8(c)
	g.walkOrders[c].push(pendingWalk{doneAt, age, int32(w)})
	g.walkVPNs.add(vpn)
}

// endWalk records that walker w, the oldest finished one, is free again.
func (g *GMMU) endWalk(w int, vpn uint64) {
	g.walkOrders[g.walkClass[w]].popFront()
	g.walkVPNs.remove(vpn)
}

// checkWalks rebuilds the walker orders and the filter if they do not
// count the walkers busy (after a Sim.Reset, for one).
func (g *GMMU) checkWalks() {
	if n := g.active.Q(); g.walkVPNs.n != n || uint32(g.walkOrders[0].n+g.walkOrders[1].n) != n {
		g.rebuildWalks()
	}
}

// rebuildWalks derives the walker orders and the filter from the busy
// walkers' registers, each walker in the class of its last dispatch.
func (g *GMMU) rebuildWalks() {
	clear(g.walkVPNs.buckets)
	g.walkVPNs.n = 0
	var busy [walkClasses][]pendingWalk
	for wi := range g.busy.Words() {
		for set := g.busy.Word(wi); set != 0; set &= set - 1 {
			w := wi*64 + bits.TrailingZeros64(set)
			c := g.walkClass[w]
			busy[c] = append(busy[c], pendingWalk{g.doneAt.At(w).Q(), g.wAge.At(w).Q(), int32(w)})
			g.walkVPNs.add(g.wVPN.At(w).Q())
		}
	}
	for c := range g.walkOrders {
		slices.SortFunc(busy[c], func(x, y pendingWalk) int { return cmp.Compare(x.age, y.age) })
		o := &g.walkOrders[c]
		o.head, o.n = 0, 0
		for _, p := range busy[c] {
			o.push(p)
		}
	}
}
