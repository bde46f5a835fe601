package umdriver

import "github.com/uvmmu/uvmmu/internal/parking"

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
	// The parked entries, each filed under its page's table word, so
	// that a table write looks only at the entries of its pages.
	parking.Lot
	// page is each parked entry's page, copied from its walk register
	// (which does not change while the entry is in the buffer).
	page []int32
	// changes are the cycle's table writes: the word and the page-state
	// bits it changed.
	changes []stateChange
}

type stateChange struct {
	word int
	bits uint64
}

func newParkedEntries(entries, tableWords int) parkedEntries {
	return parkedEntries{
		Lot:     parking.New(entries, tableWords),
		page:    make([]int32, entries),
		changes: make([]stateChange, 0, tableWords),
	}
}

// waits reports whether an entry of kind waits for its page in state st:
// it is neither answerable nor a zero-copy reply held back.
func waits(kind uint8, st int) bool {
	return st != pageValid && (st != pageRemote || kind != entryZeroCopy)
}

// park parks entry i, which waits for page.
func (p *parkedEntries) park(i, page int) {
	if !p.Parked(i) {
		p.page[i] = int32(page)
		p.Park(i, page/32)
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
		for i := p.First(c.word); i >= 0; {
			next := p.Next(i)
			if c.bits>>(2*(p.page[i]%32))&3 != 0 {
				p.Unpark(i)
			}
			i = next
		}
	}
	p.changes = p.changes[:0]
}
