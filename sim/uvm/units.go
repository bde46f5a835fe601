package uvm

import "github.com/uvmmu/uvmmu/blocks/accessctr"

// Units of the address space (SPEC 2; UVMSmart Section II-B). Pages are
// numbered from 0 by the caller; 2 MB regions are aligned at page 0, so a
// policy maps each managed allocation to start on a region boundary (the
// workload package already places allocations on 2 MB boundaries).
//
// sim/system defines the same units for the system's layout; they are not
// imported from there because sim/system depends on sim/config, and
// sim/config must be able to carry this package's Config without an
// import cycle (units_test.go checks that both agree). The basic block is
// the access-counter block's span, imported from blocks/accessctr so both
// agree by construction.
const (
	// PageShift is log2 of the 4 KB page, the unit of residency.
	PageShift = 12
	// PageBytes is the page size.
	PageBytes = 1 << PageShift
	// PagesPerBlock is the pages of a 64 KB basic block: the tree
	// prefetcher's leaf and the access counters' unit.
	PagesPerBlock = accessctr.BasicBlockBytes / PageBytes
	// RegionShift is log2 of the 2 MB large page: the tree prefetcher's
	// root and the default eviction unit.
	RegionShift = 21
	// PagesPerRegion is the pages of a 2 MB region.
	PagesPerRegion = 1 << (RegionShift - PageShift)
	// BlocksPerRegion is the basic blocks of a region: the tree's leaves.
	BlocksPerRegion = PagesPerRegion / PagesPerBlock

	// blockShift and regionPageShift turn a page into its block and region.
	blockShift      = 4
	regionPageShift = RegionShift - PageShift
	// fullBlock is the residency mask of a block with every page present;
	// the conversion fails to compile if a block outgrows 16 pages.
	fullBlock = uint16(1<<PagesPerBlock - 1)
	// treeLevels is the depth of a region's tree below the root.
	treeLevels = 5
)

// Compile-time checks that the shifts agree with the sizes above.
var (
	_ [PagesPerBlock - 1<<blockShift]struct{}
	_ [1<<blockShift - PagesPerBlock]struct{}
	_ [BlocksPerRegion - 1<<treeLevels]struct{}
	_ [1<<treeLevels - BlocksPerRegion]struct{}
)

// Counter is one basic block's access-counter word, shared with the
// hardware block so a policy can drive either.
type Counter = accessctr.Counter
