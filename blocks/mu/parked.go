package mu

import "math/bits"

// parkedRequests marks the waiting requests whose page a migration still
// moves: the slot migrating the request's page-group has not landed its
// page. Such a request is not answerable, and stays so until that slot's
// landed pages change or the slot is started or retired (the only writes
// that change what the search finds for it), so the reply search passes
// it by, visiting only the requests that may be answerable.
//
// It is derived from the registers, never a source of truth: the search
// parks the requests it finds waiting so, an arrival takes its entry out,
// and at the end of every cycle the requests of the slots whose landed
// pages or use the cycle changed are unparked (a search later in the same
// cycle reads the registers before the change). A parked bit of a free
// entry means nothing: the search visits valid requests only.
// checkParked verifies it against the registers.
type parkedRequests struct {
	words []uint64
	// slot is each parked request's slot; the parked requests of each
	// slot form a doubly linked list (head per slot, -1 for none; next
	// and prev per request).
	slot             []int8
	head, next, prev []int16
	// changed is the slots whose landed pages or use changed this cycle.
	changed uint64
}

func newParkedRequests(requests, slots int) parkedRequests {
	p := parkedRequests{
		words: make([]uint64, (requests+63)/64),
		slot:  make([]int8, requests), next: make([]int16, requests), prev: make([]int16, requests),
		head: make([]int16, slots),
	}
	for s := range p.head {
		p.head[s] = -1
	}
	return p
}

func (p *parkedRequests) word(w int) uint64 { return p.words[w] }

func (p *parkedRequests) parked(i int) bool { return p.words[i/64]>>(i%64)&1 != 0 }

// park parks request i, whose page slot still moves.
func (p *parkedRequests) park(i, slot int) {
	if p.parked(i) {
		return
	}
	p.words[i/64] |= 1 << (i % 64)
	p.slot[i] = int8(slot)
	h := &p.head[slot]
	p.next[i], p.prev[i] = *h, -1
	if *h >= 0 {
		p.prev[*h] = int16(i)
	}
	*h = int16(i)
}

// unpark takes request i out, if parked.
func (p *parkedRequests) unpark(i int) {
	if !p.parked(i) {
		return
	}
	p.words[i/64] &^= 1 << (i % 64)
	n, v := p.next[i], p.prev[i]
	if v >= 0 {
		p.next[v] = n
	} else {
		p.head[p.slot[i]] = n
	}
	if n >= 0 {
		p.prev[n] = v
	}
}

// unparkChanged unparks the requests of the slots changed this cycle.
func (p *parkedRequests) unparkChanged() {
	for ; p.changed != 0; p.changed &= p.changed - 1 {
		s := bits.TrailingZeros64(p.changed)
		for i := p.head[s]; i >= 0; i = p.head[s] {
			p.unpark(int(i))
		}
	}
}
