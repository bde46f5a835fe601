package uvm

import (
	"fmt"
	"math/bits"
)

// MaxPages bounds the address space: 2^28 pages of 4 KB cover 1 TB.
const MaxPages = 1 << 28

// Space is the driver's view of the managed address space: which 4 KB
// pages are resident in GPU memory, counted per 64 KB block and 2 MB
// region, the capacity in pages, and the pins that keep pages with
// accesses in flight from being evicted (the UVMSmart simulator's
// reserve_pages: a 2 MB page is evicted only when "not currently addressed
// by scheduled warps", UVMSmart Section II-C).
type Space struct {
	pages, blocks, regions int
	capacity, resident     int

	mask        []uint16 // resident pages of each block, bit i = page i of the block
	regionPages []int32  // resident pages of each region

	pinPage, pinBlock, pinRegion []int32
}

// NewSpace makes an address space of pages pages, a whole number of 64 KB
// blocks, of which at most capacity can be resident.
func NewSpace(pages, capacity int) (*Space, error) {
	switch {
	case pages < PagesPerBlock || pages > MaxPages || pages%PagesPerBlock != 0:
		return nil, fmt.Errorf("uvm: pages = %d is not a multiple of %d in %d..%d", pages, PagesPerBlock, PagesPerBlock, MaxPages)
	case capacity < 1 || capacity > MaxPages:
		return nil, fmt.Errorf("uvm: capacity = %d pages is outside 1..%d", capacity, MaxPages)
	}
	blocks := pages / PagesPerBlock
	regions := (pages + PagesPerRegion - 1) / PagesPerRegion
	return &Space{
		pages: pages, blocks: blocks, regions: regions, capacity: capacity,
		mask:        make([]uint16, blocks),
		regionPages: make([]int32, regions),
		pinPage:     make([]int32, pages),
		pinBlock:    make([]int32, blocks),
		pinRegion:   make([]int32, regions),
	}, nil
}

// Pages is the size of the address space in pages.
func (s *Space) Pages() int { return s.pages }

// Blocks is the number of 64 KB blocks.
func (s *Space) Blocks() int { return s.blocks }

// Regions is the number of 2 MB regions; the last one may be partial.
func (s *Space) Regions() int { return s.regions }

// Capacity is the GPU memory available, in pages.
func (s *Space) Capacity() int { return s.capacity }

// Resident is the number of resident pages.
func (s *Space) Resident() int { return s.resident }

// IsResident reports whether page p is resident; pages outside the space
// are not.
func (s *Space) IsResident(p int) bool {
	return uint(p) < uint(s.pages) && s.mask[p>>blockShift]&(1<<(p&(PagesPerBlock-1))) != 0
}

// BlockMask is the residency mask of block b (bit i: page
// b*PagesPerBlock+i).
func (s *Space) BlockMask(b int) uint16 { return s.mask[b] }

// RegionResident is the number of resident pages of region r.
func (s *Space) RegionResident(r int) int { return int(s.regionPages[r]) }

// regionBlocks is the number of blocks region r spans.
func (s *Space) regionBlocks(r int) int {
	return min(BlocksPerRegion, s.blocks-r*BlocksPerRegion)
}

// Pin keeps page p from being evicted until a matching Unpin; pins nest.
func (s *Space) Pin(p int) error {
	if uint(p) >= uint(s.pages) {
		return s.pageErr("Pin", p)
	}
	s.pinPage[p]++
	s.pinBlock[p>>blockShift]++
	s.pinRegion[p>>regionPageShift]++
	return nil
}

// Unpin releases one Pin of page p.
func (s *Space) Unpin(p int) error {
	if uint(p) >= uint(s.pages) {
		return s.pageErr("Unpin", p)
	}
	if s.pinPage[p] == 0 {
		return fmt.Errorf("uvm: Unpin: page %d is not pinned", p)
	}
	s.pinPage[p]--
	s.pinBlock[p>>blockShift]--
	s.pinRegion[p>>regionPageShift]--
	return nil
}

// Pinned reports whether page p is pinned.
func (s *Space) Pinned(p int) bool { return uint(p) < uint(s.pages) && s.pinPage[p] != 0 }

func (s *Space) pageErr(op string, p int) error {
	return fmt.Errorf("uvm: %s: page %d is outside 0..%d", op, p, s.pages-1)
}

// add makes page p resident; the caller knows it was not.
func (s *Space) add(p int) {
	s.mask[p>>blockShift] |= 1 << (p & (PagesPerBlock - 1))
	s.regionPages[p>>regionPageShift]++
	s.resident++
}

// drop makes page p non-resident; the caller knows it was resident.
func (s *Space) drop(p int) {
	s.mask[p>>blockShift] &^= 1 << (p & (PagesPerBlock - 1))
	s.regionPages[p>>regionPageShift]--
	s.resident--
}

// blockFull reports whether every page of block b is resident.
func (s *Space) blockFull(b int) bool { return s.mask[b] == fullBlock }

// regionFull reports whether every page of region r is resident.
func (s *Space) regionFull(r int) bool {
	return int(s.regionPages[r]) == s.regionBlocks(r)*PagesPerBlock
}

// blockPages is the number of resident pages of block b.
func (s *Space) blockPages(b int) int { return bits.OnesCount16(s.mask[b]) }
