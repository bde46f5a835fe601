package uvm

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Prefetcher adds, to a far-fault batch holding the faulting pages, the
// pages to migrate with them. It reads the resident set and must only add
// pages through the Batch, which refuses resident ones.
type Prefetcher interface {
	Name() string
	Prefetch(s *Space, b *Batch)
}

// NewPrefetcher makes the prefetcher called name; seed seeds the random
// one.
func NewPrefetcher(name string, seed uint64) (Prefetcher, error) {
	switch name {
	case PrefetchNone:
		return onDemand{}, nil
	case PrefetchTree:
		return treeNeighborhood{}, nil
	case PrefetchSeqLocal:
		return sequentialLocal{}, nil
	case PrefetchRandom:
		return &random4K{rng: rand.New(rand.NewPCG(seed, seedStreamPrefetch))}, nil
	}
	return nil, fmt.Errorf("uvm: prefetcher %q is not one of %v", name, prefetcherNames)
}

// Second words of the PCG seeds, so the prefetcher and the evictor draw
// independent streams from one Config.Seed.
const (
	seedStreamPrefetch = 0x70726566 // "pref"
	seedStreamEvict    = 0x65766963 // "evic"
)

// onDemand migrates only the faulting pages (-hardware_prefetch 0).
type onDemand struct{}

func (onDemand) Name() string            { return PrefetchNone }
func (onDemand) Prefetch(*Space, *Batch) {}

// sequentialLocal migrates each faulting page's whole 64 KB block
// (-hardware_prefetch 2: the simulator schedules every invalid page of the
// faulting basic block).
type sequentialLocal struct{}

func (sequentialLocal) Name() string { return PrefetchSeqLocal }
func (sequentialLocal) Prefetch(_ *Space, b *Batch) {
	for _, p := range b.Faults() {
		b.AddBlock(p >> blockShift)
	}
}

// random4K adds, for each faulting page in ascending order, one page drawn
// uniformly from the page's 2 MB region if it is neither resident nor
// already in the batch (-hardware_prefetch 3, gpu-sim.cc
// do_hardware_prefetch).
type random4K struct{ rng *rand.Rand }

func (*random4K) Name() string { return PrefetchRandom }
func (p *random4K) Prefetch(s *Space, b *Batch) {
	for _, f := range b.Faults() {
		r := f >> regionPageShift
		b.Add(r*PagesPerRegion + p.rng.IntN(s.regionBlocks(r)*PagesPerBlock))
	}
}

// treeNeighborhood is the NVIDIA driver's tree-based neighborhood
// prefetcher (UVMSmart Section II-B; Ganguly et al., ISCA 2019;
// -hardware_prefetch 1). Each 2 MB region is a full binary tree over its
// 64 KB blocks. A faulting page brings its whole block (the leaf). Then,
// bottom-up, every inner node whose occupancy (resident pages plus pages
// in the batch) is strictly more than half of its size, but not all of it,
// is filled: every missing page under it joins the batch, and its parent
// sees it full (gpu-sim.cc traverse_and_fill_lp_tree).
//
// The simulator rounds a region shorter than 2 MB (an allocation's tail)
// up to a power of two of blocks; here a node's size counts only the
// blocks that exist, so the >50% rule is taken over real pages.
type treeNeighborhood struct{}

func (treeNeighborhood) Name() string { return PrefetchTree }
func (treeNeighborhood) Prefetch(s *Space, b *Batch) {
	for _, p := range b.Faults() {
		b.AddBlock(p >> blockShift)
	}
	for _, r := range b.Regions() {
		fillTree(s, b, r)
	}
}

// fillTree applies the >50% rule to region r's tree over its resident
// pages and the pages already in the batch.
func fillTree(s *Space, b *Batch, r int) {
	first, n := r*BlocksPerRegion, s.regionBlocks(r)
	var occ [BlocksPerRegion]uint16
	for i := range n {
		occ[i] = s.mask[first+i] | b.fetch[first+i]
	}
	for fill := TreeFill(occ[:n]); fill != 0; fill &= fill - 1 {
		b.AddBlock(first + bits.TrailingZeros32(fill))
	}
}

// TreeFill is the tree-based neighborhood prefetcher's >50% rule over one
// 2 MB region (gpu-sim.cc traverse_and_fill_lp_tree): occ holds the
// occupancy of the region's first len(occ) 64 KB blocks, the ones that
// exist, a bit per 4 KB page present or already to be fetched. Bottom-up,
// every inner node whose occupancy is strictly more than half of its size,
// but not all of it, is filled, and its parent sees it full. TreeFill
// returns the blocks to fill, a bit per block of the region. The
// single-GPU driver applies it to the GPU's residency, the multi-GPU
// system (sim/multigpu, ot-prefetch) to each GPU's own.
func TreeFill(occ []uint16) uint32 {
	var o, size [BlocksPerRegion]int
	n := min(len(occ), BlocksPerRegion)
	for i := range n {
		o[i] = bits.OnesCount16(occ[i])
		size[i] = PagesPerBlock
	}
	var fill uint32
	width := BlocksPerRegion
	for level := 1; level <= treeLevels; level++ {
		width /= 2
		span := 1 << level
		for j := range width {
			sum, z := o[2*j]+o[2*j+1], size[2*j]+size[2*j+1]
			if sum != z && 2*sum > z {
				for leaf := j * span; leaf < min((j+1)*span, n); leaf++ {
					fill |= 1 << leaf
				}
				sum = z
			}
			o[j], size[j] = sum, z
		}
	}
	return fill
}
