package umdriver

// parkedEntries marks the fault buffer's entries that wait for their
// page to change state: a fault or raised migration whose page is not
// valid, a zero-copy access whose page is on its way. Such an entry is
// not answerable, and stays so while its page's state is as it was
// (its kind does not change while it is in the buffer), so the reply
// search passes it by, visiting only the entries that may be answerable.
//
// It is derived from the registers, never a source of truth: the search
// parks the entries it finds waiting, an arrival takes its entry out,
// and every write of the page-state table unparks, at the end of the
// cycle, the entries of the pages whose state it changed (a search later
// in the same cycle reads the states before the write). A parked bit of
// a free entry means nothing: the search visits occupied entries only.
// TestParkedEntriesWaitForTheirPage checks it against the registers
// after every cycle.
type parkedEntries struct {
	words []uint64
	// page is each parked entry's page, copied from its walk register
	// (which does not change while the entry is in the buffer).
	page []int32
	// The parked entries of each table word, as doubly linked lists
	// (head per table word, -1 for none; next and prev per entry), so
	// that a table write looks only at the entries of its pages.
	head, next, prev []int32
	// changes are the cycle's table writes: the word and the page-state
	// bits it changed.
	changes []stateChange
}

type stateChange struct {
	word int
	bits uint64
}

func newParkedEntries(entries, tableWords int) parkedEntries {
	p := parkedEntries{
		words: make([]uint64, (entries+63)/64),
		page:  make([]int32, entries), next: make([]int32, entries), prev: make([]int32, entries),
		head:    make([]int32, tableWords),
		changes: make([]stateChange, 0, tableWords),
	}
	for w := range p.head {
		p.head[w] = -1
	}
	return p
}

// waits reports whether an entry of kind waits for its page in state st:
// it is neither answerable nor a zero-copy reply held back.
func waits(kind uint8, st int) bool {
	return st != pageValid && (st != pageRemote || kind != entryZeroCopy)
}

func (p *parkedEntries) word(w int) uint64 { return p.words[w] }

func (p *parkedEntries) parked(i int) bool { return p.words[i/64]>>(i%64)&1 != 0 }

// park parks entry i, which waits for page.
func (p *parkedEntries) park(i, page int) {
	if p.parked(i) {
		return
	}
	p.words[i/64] |= 1 << (i % 64)
	p.page[i] = int32(page)
	h := &p.head[page/32]
	p.next[i], p.prev[i] = *h, -1
	if *h >= 0 {
		p.prev[*h] = int32(i)
	}
	*h = int32(i)
}

// unpark takes entry i out, if parked.
func (p *parkedEntries) unpark(i int) {
	if !p.parked(i) {
		return
	}
	p.words[i/64] &^= 1 << (i % 64)
	n, v := p.next[i], p.prev[i]
	if v >= 0 {
		p.next[v] = n
	} else {
		p.head[p.page[i]/32] = n
	}
	if n >= 0 {
		p.prev[n] = v
	}
}

// writeState writes table word wi, noting the page states it changes.
func (d *Driver) writeState(wi int, v uint64) {
	r := d.table.At(wi)
	if diff := r.Q() ^ v; diff != 0 {
		d.parked.changes = append(d.parked.changes, stateChange{wi, diff})
	}
	r.Set(v)
}

// unparkChanged unparks the entries of the pages whose state the cycle's
// table writes changed.
func (d *Driver) unparkChanged() {
	p := &d.parked
	for _, c := range p.changes {
		for i := p.head[c.word]; i >= 0; {
			next := p.next[i]
			if c.bits>>(2*(p.page[i]%32))&3 != 0 {
				p.unpark(int(i))
			}
			i = next
		}
	}
	p.changes = p.changes[:0]
}
