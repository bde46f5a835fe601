package uvm

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Evictor chooses what to evict. The driver tells it about every access
// and arrival (Touched) and every departure (Removed); Victim names the
// next unit to write back. A unit is evictable only when none of its pages
// is pinned. Every policy first looks for a fully resident unit, as the
// UVMSmart simulator's is_block_evictable demands (a 2 MB page is "selected
// for eviction only when it is fully populated", UVMSmart Section II-C);
// where the simulator would then evict nothing and stall, these policies
// fall back to the first evictable partial unit in the same order.
type Evictor interface {
	Name() string
	// Touched records an access to page p, or its arrival. p may be a
	// non-resident page served remotely; only LFU's counts notice those.
	Touched(p int)
	// Removed records that page p, resident until now, has left.
	Removed(p int)
	// Victim appends the resident pages of the next unit to evict to dst,
	// ascending, and returns dst unchanged when every unit is pinned.
	Victim(dst []int) []int
}

// halvingAware evictors rebuild their order when the counters halve.
type halvingAware interface{ countsHalved() }

// NewEvictor makes the eviction policy called name over s, reading the
// access counters c; seed seeds the random policy.
func NewEvictor(name string, s *Space, c *Counters, seed uint64) (Evictor, error) {
	switch name {
	case EvictLRU2M:
		return newRegionLRU(s), nil
	case EvictLFU2M:
		return newRegionLFU(s, c), nil
	case EvictLRU64K:
		return newBlockLRU(s, false), nil
	case EvictLRUTree:
		return newBlockLRU(s, true), nil
	case EvictLRU4K:
		return newPageLRU(s), nil
	case EvictRandom:
		return newPageRandom(s, seed), nil
	}
	return nil, fmt.Errorf("uvm: evictor %q is not one of %v", name, evictorNames)
}

// appendRegion appends region r's resident pages, ascending.
func appendRegion(s *Space, r int, dst []int) []int {
	first := r * BlocksPerRegion
	for i := range s.regionBlocks(r) {
		dst = appendBlock(s, first+i, dst)
	}
	return dst
}

// appendBlock appends block b's resident pages, ascending.
func appendBlock(s *Space, b int, dst []int) []int {
	for m := s.mask[b]; m != 0; m &= m - 1 {
		dst = append(dst, b*PagesPerBlock+bits.TrailingZeros16(m))
	}
	return dst
}

// regionLRU evicts the least recently used 2 MB region (-eviction_policy
// 0, the NVIDIA driver's policy, UVMSmart Section II-C): regions enter the
// list when a page arrives and move to its tail on every access to a
// resident page.
type regionLRU struct {
	s     *Space
	links links
	order chain
}

func newRegionLRU(s *Space) *regionLRU {
	return &regionLRU{s: s, links: newLinks(s.regions), order: emptyChain()}
}

func (*regionLRU) Name() string { return EvictLRU2M }

func (e *regionLRU) Touched(p int) {
	if e.s.IsResident(p) {
		e.links.touch(&e.order, int32(p>>regionPageShift))
	}
}

func (e *regionLRU) Removed(p int) {
	if r := p >> regionPageShift; e.s.regionPages[r] == 0 {
		e.links.remove(&e.order, int32(r))
	}
}

func (e *regionLRU) Victim(dst []int) []int {
	partial := int32(none)
	for r := e.order.head; r != none; r = e.links.next[r] {
		if e.s.pinRegion[r] != 0 {
			continue
		}
		if e.s.regionFull(int(r)) {
			return appendRegion(e.s, int(r), dst)
		}
		if partial == none {
			partial = r
		}
	}
	if partial == none {
		return dst
	}
	return appendRegion(e.s, int(partial), dst)
}

// regionLFU evicts the least frequently used 2 MB region (UVMSmart
// Section IV, "Access Counter Based Page Replacement"; -eviction_policy
// 4): regions ordered by access count, then by access kind so read-only
// regions go before written ones, then least recently used first, which
// is plain LRU when the counts are flat (gpu-sim.cc sort_valid_pages). An
// indexed binary min-heap keeps the order in O(log n) per access.
type regionLFU struct {
	s     *Space
	c     *Counters
	heap  []int32 // regions with resident pages, heap-ordered by less
	pos   []int32 // heap index of each region, none if absent
	stamp []uint64
	clock uint64
	held  []int32 // regions popped while searching for a victim
}

func newRegionLFU(s *Space, c *Counters) *regionLFU {
	e := &regionLFU{s: s, c: c, pos: make([]int32, s.regions), stamp: make([]uint64, s.regions)}
	for i := range e.pos {
		e.pos[i] = none
	}
	return e
}

func (*regionLFU) Name() string { return EvictLFU2M }

func (e *regionLFU) less(a, b int32) bool {
	ca, cb := e.c.regionCount[a], e.c.regionCount[b]
	if ca != cb {
		return ca < cb
	}
	ka, kb := e.c.regionKind[a], e.c.regionKind[b]
	if ka != kb {
		return ka < kb
	}
	return e.stamp[a] < e.stamp[b]
}

func (e *regionLFU) Touched(p int) {
	r := int32(p >> regionPageShift)
	if e.s.IsResident(p) {
		e.clock++
		e.stamp[r] = e.clock
		if e.pos[r] == none {
			e.push(r)
			return
		}
	}
	if e.pos[r] != none {
		e.fix(e.pos[r])
	}
}

func (e *regionLFU) Removed(p int) {
	if r := int32(p >> regionPageShift); e.s.regionPages[r] == 0 && e.pos[r] != none {
		e.delete(e.pos[r])
	}
}

func (e *regionLFU) Victim(dst []int) []int {
	chosen, partial := int32(none), int32(none)
	for len(e.heap) > 0 {
		r := e.heap[0]
		e.delete(0)
		e.held = append(e.held, r)
		if e.s.pinRegion[r] != 0 {
			continue
		}
		if e.s.regionFull(int(r)) {
			chosen = r
			break
		}
		if partial == none {
			partial = r
		}
	}
	for _, r := range e.held {
		e.push(r)
	}
	e.held = e.held[:0]
	if chosen == none {
		chosen = partial
	}
	if chosen == none {
		return dst
	}
	return appendRegion(e.s, int(chosen), dst)
}

// countsHalved restores the heap order: halving keeps every count order
// but can turn one into a tie that the kind or stamp breaks the other way.
func (e *regionLFU) countsHalved() {
	for i := len(e.heap)/2 - 1; i >= 0; i-- {
		e.down(int32(i))
	}
}

func (e *regionLFU) push(r int32) {
	e.heap = append(e.heap, r)
	e.pos[r] = int32(len(e.heap) - 1)
	e.up(e.pos[r])
}

func (e *regionLFU) delete(i int32) {
	last := int32(len(e.heap) - 1)
	r := e.heap[i]
	e.swap(i, last)
	e.heap = e.heap[:last]
	e.pos[r] = none
	if i < last {
		e.fix(i)
	}
}

func (e *regionLFU) fix(i int32) {
	if !e.down(i) {
		e.up(i)
	}
}

func (e *regionLFU) swap(i, j int32) {
	e.heap[i], e.heap[j] = e.heap[j], e.heap[i]
	e.pos[e.heap[i]], e.pos[e.heap[j]] = i, j
}

func (e *regionLFU) up(i int32) {
	for i > 0 {
		parent := (i - 1) / 2
		if !e.less(e.heap[i], e.heap[parent]) {
			return
		}
		e.swap(i, parent)
		i = parent
	}
}

// down sifts node i down and reports whether it moved.
func (e *regionLFU) down(i int32) bool {
	start, n := i, int32(len(e.heap))
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && e.less(e.heap[r], e.heap[l]) {
			m = r
		}
		if !e.less(e.heap[m], e.heap[i]) {
			break
		}
		e.swap(i, m)
		i = m
	}
	return i > start
}

// blockLRU evicts 64 KB blocks in the UVMSmart simulator's order for its
// block-granular policies (gpu-sim.cc sort_valid_pages): regions from the
// least recently used (by their most recent block) and, within a region,
// blocks from the least recently used. Two levels of intrusive lists keep
// that order in O(1) per access.
//
// Without tree it is sequential-local (-eviction_policy 2): the victim is
// that one block. With tree it is LRU tree-based neighborhood
// (-eviction_policy 1): after removing the block, bottom-up over the
// region's tree, every node left with some but less than half of its
// pages also loses all its fully resident, unpinned blocks (gpu-sim.cc
// traverse_and_remove_lp_tree), the mirror of the prefetcher's >50% rule.
type blockLRU struct {
	s       *Space
	tree    bool
	regions links
	order   chain
	blocks  links
	within  []chain // per region: its resident blocks
}

func newBlockLRU(s *Space, tree bool) *blockLRU {
	e := &blockLRU{s: s, tree: tree, regions: newLinks(s.regions), order: emptyChain(),
		blocks: newLinks(s.blocks), within: make([]chain, s.regions)}
	for i := range e.within {
		e.within[i] = emptyChain()
	}
	return e
}

func (e *blockLRU) Name() string {
	if e.tree {
		return EvictLRUTree
	}
	return EvictLRU64K
}

func (e *blockLRU) Touched(p int) {
	if !e.s.IsResident(p) {
		return
	}
	r := p >> regionPageShift
	e.blocks.touch(&e.within[r], int32(p>>blockShift))
	e.regions.touch(&e.order, int32(r))
}

func (e *blockLRU) Removed(p int) {
	b, r := p>>blockShift, p>>regionPageShift
	if e.s.mask[b] == 0 {
		e.blocks.remove(&e.within[r], int32(b))
	}
	if e.s.regionPages[r] == 0 {
		e.regions.remove(&e.order, int32(r))
	}
}

func (e *blockLRU) Victim(dst []int) []int {
	partial := int32(none)
	for r := e.order.head; r != none; r = e.regions.next[r] {
		for b := e.within[r].head; b != none; b = e.blocks.next[b] {
			if e.s.pinBlock[b] != 0 {
				continue
			}
			if e.s.blockFull(int(b)) {
				return e.unit(int(b), dst)
			}
			if partial == none {
				partial = b
			}
		}
	}
	if partial == none {
		return dst
	}
	return e.unit(int(partial), dst)
}

// unit appends the pages leaving with victim block v.
func (e *blockLRU) unit(v int, dst []int) []int {
	if !e.tree {
		return appendBlock(e.s, v, dst)
	}
	r := v / BlocksPerRegion
	first, n := r*BlocksPerRegion, e.s.regionBlocks(r)
	var gone [BlocksPerRegion]bool
	var occ, size [BlocksPerRegion]int
	gone[v-first] = true
	for i := range n {
		if !gone[i] {
			occ[i] = e.s.blockPages(first + i)
		}
		size[i] = PagesPerBlock
	}
	width := BlocksPerRegion
	for level := 1; level <= treeLevels; level++ {
		width /= 2
		span := 1 << level
		for j := range width {
			o, z := occ[2*j]+occ[2*j+1], size[2*j]+size[2*j+1]
			if o != 0 && 2*o < z {
				for leaf := j * span; leaf < min((j+1)*span, n); leaf++ {
					blk := first + leaf
					if !gone[leaf] && e.s.blockFull(blk) && e.s.pinBlock[blk] == 0 {
						gone[leaf] = true
						o -= PagesPerBlock
					}
				}
			}
			occ[j], size[j] = o, z
		}
	}
	for i := range n {
		if gone[i] {
			dst = appendBlock(e.s, first+i, dst)
		}
	}
	return dst
}

// pageLRU evicts the least recently used 4 KB page (-eviction_policy 5).
type pageLRU struct {
	s     *Space
	links links
	order chain
}

func newPageLRU(s *Space) *pageLRU {
	return &pageLRU{s: s, links: newLinks(s.pages), order: emptyChain()}
}

func (*pageLRU) Name() string { return EvictLRU4K }

func (e *pageLRU) Touched(p int) {
	if e.s.IsResident(p) {
		e.links.touch(&e.order, int32(p))
	}
}

func (e *pageLRU) Removed(p int) { e.links.remove(&e.order, int32(p)) }

func (e *pageLRU) Victim(dst []int) []int {
	for p := e.order.head; p != none; p = e.links.next[p] {
		if e.s.pinPage[p] == 0 {
			return append(dst, int(p))
		}
	}
	return dst
}

// pageRandom evicts a 4 KB page drawn uniformly from the resident ones
// (-eviction_policy 3); if it is pinned, the next resident pages in the
// draw's order are tried, as the simulator walks on from its draw.
type pageRandom struct {
	s     *Space
	rng   *rand.Rand
	dense []int32 // resident pages
	pos   []int32 // index in dense, none if absent
}

func newPageRandom(s *Space, seed uint64) *pageRandom {
	e := &pageRandom{s: s, rng: rand.New(rand.NewPCG(seed, seedStreamEvict)), pos: make([]int32, s.pages)}
	for i := range e.pos {
		e.pos[i] = none
	}
	return e
}

func (*pageRandom) Name() string { return EvictRandom }

func (e *pageRandom) Touched(p int) {
	if e.pos[p] == none && e.s.IsResident(p) {
		e.pos[p] = int32(len(e.dense))
		e.dense = append(e.dense, int32(p))
	}
}

func (e *pageRandom) Removed(p int) {
	i, last := e.pos[p], int32(len(e.dense)-1)
	moved := e.dense[last]
	e.dense[i], e.pos[moved] = moved, i
	e.dense, e.pos[p] = e.dense[:last], none
}

func (e *pageRandom) Victim(dst []int) []int {
	n := len(e.dense)
	if n == 0 {
		return dst
	}
	start := e.rng.IntN(n)
	for k := range n {
		if p := e.dense[(start+k)%n]; e.s.pinPage[p] == 0 {
			return append(dst, int(p))
		}
	}
	return dst
}
