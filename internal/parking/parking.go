// Package parking keeps the parked entries of a block's software-side
// search: a set of entry numbers, each filed under a group (the migration
// slot or page-table word whose change makes it worth visiting again).
// A search skips the parked entries through Word, a change unparks a
// group's entries through First and Next, both in time proportional to
// the entries concerned, not to the table.
//
// It is derived state kept beside a block's registers, never a source of
// truth: the blocks that use it (blocks/mu, sim/umdriver) check it against
// their registers in their testbenches.
package parking

// Lot is the set of parked entries. Each group's entries form a doubly
// linked list (head per group, next and prev per entry, -1 for none).
type Lot struct {
	words            []uint64
	group            []int32
	head, next, prev []int32
}

// New makes an empty lot for entries 0..entries-1 in groups
// 0..groups-1.
func New(entries, groups int) Lot {
	l := Lot{
		words: make([]uint64, (entries+63)/64),
		group: make([]int32, entries), next: make([]int32, entries), prev: make([]int32, entries),
		head: make([]int32, groups),
	}
	for g := range l.head {
		l.head[g] = -1
	}
	return l
}

// Word is bit i%64 set for each parked entry i of word w.
func (l *Lot) Word(w int) uint64 { return l.words[w] }

// Parked reports whether entry i is parked.
func (l *Lot) Parked(i int) bool { return l.words[i/64]>>(i%64)&1 != 0 }

// Group is the group of parked entry i.
func (l *Lot) Group(i int) int { return int(l.group[i]) }

// Park parks entry i under group g, unless it is parked already.
func (l *Lot) Park(i, g int) {
	if l.Parked(i) {
		return
	}
	l.words[i/64] |= 1 << (i % 64)
	l.group[i] = int32(g)
	h := &l.head[g]
	l.next[i], l.prev[i] = *h, -1
	if *h >= 0 {
		l.prev[*h] = int32(i)
	}
	*h = int32(i)
}

// Unpark takes entry i out, if parked.
func (l *Lot) Unpark(i int) {
	if !l.Parked(i) {
		return
	}
	l.words[i/64] &^= 1 << (i % 64)
	n, p := l.next[i], l.prev[i]
	if p >= 0 {
		l.next[p] = n
	} else {
		l.head[l.group[i]] = n
	}
	if n >= 0 {
		l.prev[n] = p
	}
}

// First is the most recently parked entry of group g, or -1.
func (l *Lot) First(g int) int { return int(l.head[g]) }

// Next is the entry parked before entry i in its group, or -1.
func (l *Lot) Next(i int) int { return int(l.next[i]) }
