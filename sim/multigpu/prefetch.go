package multigpu

import (
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// On-touch migration with the tree-based neighborhood prefetcher
// (ot-prefetch; GRIT Section VI-E, Fig. 30, on top of the NVIDIA driver's
// prefetcher as UVMSmart Section II-B and Ganguly et al., ISCA 2019
// describe it). A local fault that on-touch migration serves brings, with
// the faulting page, its whole 64 KB block (the leaf) and every block the
// >50% rule fills in the page's 2 MB region (the root), the rule applied
// to the requesting GPU's own occupancy: the pages it holds plus the
// batch (uvm.TreeFill, the single-GPU driver's rule). Each page of the
// batch moves as an on-touch migration would move it: its other copies
// and remote mappings are invalidated first, it leaves its holder (or host
// memory), and the requester installs it; one plan serves the whole batch
// behind one fault-handling latency:
//
//	fault latency
//	per page with other holders or mappings: their PTEs written not
//	    present, then their TLBs shot down
//	per page: room on the requester (an eviction, which waits for its
//	    copy to the host), then the page's copy booked on its link; the
//	    copies do not wait for one another, the last waits for them all
//	per prefetched page: the requester's PTE written; then the faulting
//	    page's PTE and the answer to its walk
//
// Only pages on on-touch migration are prefetched (under GRIT, pages the
// driver has moved to duplication or access-counter keep their scheme
// and place), and a batch never takes more than half of the requester's
// frames (its highest pages are left out), so that its evictions always
// find a victim outside it.

// prefetchBatch fills pn.batch with the pages the prefetcher moves to GPU
// g with the faulting page i, ascending, i excluded.
func (pn *planner) prefetchBatch(g, i int) []int {
	t := pn.t
	pn.batch = pn.batch[:0]
	vpn := pn.baseVPN + uint64(i)
	// The region's first page and block, relative to baseVPN: the layout
	// puts every allocation on a 2 MB boundary, so baseVPN is one.
	first := int(vpn&^(uvm.PagesPerRegion-1)) - int(pn.baseVPN)
	firstBlock := first / uvm.PagesPerBlock
	var occ [uvm.BlocksPerRegion]uint16
	n := 0
	for n < uvm.BlocksPerRegion && first >= 0 && firstBlock+n < len(pn.blocks) && pn.blocks[firstBlock+n] {
		for k := range uvm.PagesPerBlock {
			if t.Page(first + n*uvm.PagesPerBlock + k).Has(g) {
				occ[n] |= 1 << k
			}
		}
		n++
	}
	leaf := (i - first) / uvm.PagesPerBlock
	if leaf < 0 || leaf >= n {
		return pn.batch
	}
	occ[leaf] = 1<<uvm.PagesPerBlock - 1 // the leaf comes whole
	fill := uvm.TreeFill(occ[:n]) | 1<<leaf
	for ; fill != 0; fill &= fill - 1 {
		base := first + bits.TrailingZeros32(fill)*uvm.PagesPerBlock
		for j := base; j < base+uvm.PagesPerBlock; j++ {
			p := t.Page(j)
			if j != i && !p.Has(g) && (p.Scheme == pte.SchemeNone || p.Scheme == pte.SchemeOnTouch) {
				pn.batch = append(pn.batch, j)
			}
		}
	}
	// At most half of the frames, the faulting page included: the highest
	// pages are left out, as the single-GPU driver trims a batch.
	pn.batch = pn.batch[:max(min(len(pn.batch), t.frames/2-1), 0)]
	return pn.batch
}

// ownPrefetching serves local fault f under on-touch migration with the
// prefetcher: page f.Page and its batch move to the requester.
func (pn *planner) ownPrefetching(pl *plan, f Fault, s pte.Scheme) {
	var batch []int
	if !pn.t.Page(f.Page).Has(f.GPU) {
		batch = pn.prefetchBatch(f.GPU, f.Page)
	}
	pn.ownBatch(pl, f, s, batch)
	pl.prefetched += uint64(len(batch))
}

// ownBatch makes GPU f.GPU the only, writable holder of page f.Page and
// of every page of batch (ascending, f.Page excluded) in one plan: every
// other copy and remote mapping of each page is invalidated first, the
// copies are booked back to back on their links, the batch's PTEs are
// written, then the faulting page's, and its walk (if any) is answered.
func (pn *planner) ownBatch(pl *plan, f Fault, s pte.Scheme, batch []int) {
	if len(batch) == 0 {
		pn.own(pl, f, s, false, true)
		return
	}
	t, g := pn.t, f.GPU
	for _, j := range batch {
		pn.markBusy(pl, j)
	}
	// The faulting page first, then the batch.
	for k := -1; k < len(batch); k++ {
		j := f.Page
		if k >= 0 {
			j = batch[k]
		}
		p := t.Page(j)
		mask := (p.Holders|p.Mapped)&^(1<<g) | p.Mapped&(1<<g)
		if mask == 0 {
			continue
		}
		var o op
		o.kind, o.mask, o.vpn = opWrite, mask, pn.baseVPN+uint64(j)
		for m := mask; m != 0; m &= m - 1 {
			o.pte[bits.TrailingZeros16(m)] = notPresent(p.Scheme)
		}
		pl.add(o)
		pl.add(op{kind: opShoot, mask: mask, vpn: o.vpn})
		pl.invalidations += uint64(bits.OnesCount16(mask))
	}
	last := -1
	for k := -1; k < len(batch); k++ {
		j := f.Page
		if k >= 0 {
			j = batch[k]
		}
		src := source(t.Page(j))
		pn.evictFor(pl, g)
		last = len(pl.ops)
		pl.add(op{kind: opCopy, src: src, dst: int8(g), vpn: pn.baseVPN + uint64(j), async: true})
		pl.migrations++
		// The table's outcome: g is the page's only, writable holder.
		p := t.Page(j)
		for m := p.Holders; m != 0; m &= m - 1 {
			t.drop(j, bits.TrailingZeros16(m))
		}
		p.Holders, p.Mapped = 1<<g, 0
		p.Version++
		p.Owner, p.Writable = int8(g), true
		if j == f.Page {
			p.Scheme = s
		}
		t.setPage(j, p)
		t.place(j, g, p.Version)
	}
	pl.ops[last].async = false
	for _, j := range batch {
		var o op
		o.kind, o.mask, o.vpn = opWrite, 1<<g, pn.baseVPN+uint64(j)
		o.pte[g] = pn.localPTE(j, g)
		pl.add(o)
	}
	pn.install(pl, f, pn.baseVPN+uint64(f.Page))
}
