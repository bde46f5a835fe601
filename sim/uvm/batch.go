package uvm

import (
	"math/bits"
	"slices"
)

// Batch is the set of pages one far-fault batch migrates: the faulting
// pages, then whatever the prefetcher adds. Pages are kept as per-block
// masks, so adding, testing and listing cost O(1) per page and nothing is
// allocated once the backing arrays have grown.
type Batch struct {
	s       *Space
	fetch   []uint16 // per block: pages to migrate
	fault   []uint16 // per block: the faulting pages among them
	blocks  []int32  // blocks with a non-empty fetch mask
	faults  []int    // faulting pages, ascending once sealed
	regions []int    // regions with a fault, ascending once sealed
	marked  []bool   // per region: in regions
	n       int      // pages to migrate
}

func newBatch(s *Space) Batch {
	return Batch{s: s, fetch: make([]uint16, s.blocks), fault: make([]uint16, s.blocks), marked: make([]bool, s.regions)}
}

// Faults are the faulting pages, ascending, without duplicates or pages
// already resident.
func (b *Batch) Faults() []int { return b.faults }

// Regions are the 2 MB regions with a faulting page, ascending.
func (b *Batch) Regions() []int { return b.regions }

// Len is the number of pages to migrate.
func (b *Batch) Len() int { return b.n }

// Has reports whether page p is in the batch.
func (b *Batch) Has(p int) bool {
	return uint(p) < uint(b.s.pages) && b.fetch[p>>blockShift]&(1<<(p&(PagesPerBlock-1))) != 0
}

// Add adds page p as a prefetch and reports whether it was added: pages
// outside the space, resident or already in the batch are not.
func (b *Batch) Add(p int) bool {
	if uint(p) >= uint(b.s.pages) || b.s.IsResident(p) || b.Has(p) {
		return false
	}
	b.addMask(p>>blockShift, 1<<(p&(PagesPerBlock-1)))
	return true
}

// AddBlock adds every page of block blk that is neither resident nor in
// the batch, and returns how many it added.
func (b *Batch) AddBlock(blk int) int {
	if uint(blk) >= uint(b.s.blocks) {
		return 0
	}
	missing := fullBlock &^ (b.s.mask[blk] | b.fetch[blk])
	b.addMask(blk, missing)
	return bits.OnesCount16(missing)
}

func (b *Batch) addMask(blk int, m uint16) {
	if m == 0 {
		return
	}
	if b.fetch[blk] == 0 {
		b.blocks = append(b.blocks, int32(blk))
	}
	b.fetch[blk] |= m
	b.n += bits.OnesCount16(m)
}

// reset empties the batch in time proportional to what it held.
func (b *Batch) reset() {
	for _, blk := range b.blocks {
		b.fetch[blk], b.fault[blk] = 0, 0
	}
	for _, r := range b.regions {
		b.marked[r] = false
	}
	b.blocks, b.faults, b.regions, b.n = b.blocks[:0], b.faults[:0], b.regions[:0], 0
}

// addFault adds faulting page p unless it is resident or already present;
// the caller has checked the range.
func (b *Batch) addFault(p int) {
	if b.s.IsResident(p) || b.Has(p) {
		return
	}
	blk, bit := p>>blockShift, uint16(1)<<(p&(PagesPerBlock-1))
	b.addMask(blk, bit)
	b.fault[blk] |= bit
	b.faults = append(b.faults, p)
	if r := p >> regionPageShift; !b.marked[r] {
		b.marked[r] = true
		b.regions = append(b.regions, r)
	}
}

// seal orders the faults and regions for the prefetcher.
func (b *Batch) seal() {
	slices.Sort(b.faults)
	slices.Sort(b.regions)
}

// trim removes up to excess pages, highest address first: prefetched
// pages before any fault, then faults, which it appends to deferred,
// ascending.
func (b *Batch) trim(excess int, deferred []int) []int {
	slices.Sort(b.blocks)
	for i := len(b.blocks) - 1; i >= 0 && excess > 0; i-- {
		blk := b.blocks[i]
		extra := b.fetch[blk] &^ b.fault[blk]
		for extra != 0 && excess > 0 {
			bit := uint16(1) << (bits.Len16(extra) - 1)
			extra &^= bit
			b.fetch[blk] &^= bit
			b.n--
			excess--
		}
	}
	for i := len(b.blocks) - 1; i >= 0 && excess > 0; i-- {
		blk := b.blocks[i]
		for b.fault[blk] != 0 && excess > 0 {
			top := bits.Len16(b.fault[blk]) - 1
			bit := uint16(1) << top
			b.fault[blk] &^= bit
			b.fetch[blk] &^= bit
			b.n--
			excess--
			deferred = append(deferred, int(blk)*PagesPerBlock+top)
		}
	}
	slices.Reverse(deferred)
	return deferred
}

// appendPages appends the batch's pages, ascending, to dst.
func (b *Batch) appendPages(dst []int) []int {
	slices.Sort(b.blocks)
	for _, blk := range b.blocks {
		for m := b.fetch[blk]; m != 0; m &= m - 1 {
			dst = append(dst, int(blk)*PagesPerBlock+bits.TrailingZeros16(m))
		}
	}
	return dst
}
