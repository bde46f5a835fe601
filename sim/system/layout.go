package system

import (
	"fmt"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// Units of SPEC 2.
const (
	PageShift       = 12 // 4 KB page
	GroupShift      = 16 // 64 KB page-group / frame-group
	RegionShift     = 21 // 2 MB frame-region
	PagesPerGroup   = 1 << (GroupShift - PageShift)
	GroupsPerRegion = 1 << (RegionShift - GroupShift)
	PagesPerRegion  = 1 << (RegionShift - PageShift)
)

// Layout is the workload's memory as the system maps it: the virtual page
// range the page table covers, the page-groups of managed and of
// cudaMalloc'd (device) allocations, and the GPU memory that the
// oversubscription ratio leaves for managed data.
type Layout struct {
	BaseVPN uint64 // first page of the first allocation
	Pages   int    // pages from BaseVPN to the end of the last allocation

	Managed []Range // managed allocations, in page-groups
	Device  []Range // cudaMalloc'd allocations, in page-groups

	ManagedGroupCount int // 64 KB page-groups of the managed allocations: the footprint
	DeviceGroups      int // frame-groups the device allocations need
	// ManagedCapacity is the frame-groups left for managed data: the
	// footprint divided by the oversubscription ratio in whole 2 MB
	// regions (SPEC 2), rounded down, except that at 100% it is rounded up
	// so that the footprint fits; at least one region.
	ManagedCapacity int
	// NFG is the frame-groups of GPU memory the system builds: the
	// device allocations (rounded up to whole regions) plus the managed
	// capacity.
	NFG int
}

// Range is a run of virtual page-groups [First, First+Count).
type Range struct {
	Name  string
	First uint64 // VPgN
	Count int
	// ReadOnly allocations are never written by a kernel.
	ReadOnly bool
}

// NewLayout maps the workload's allocations under cfg's oversubscription.
func NewLayout(wl workload.Workload, cfg *config.Config) (Layout, error) {
	allocs := wl.Allocs()
	if len(allocs) == 0 {
		return Layout{}, fmt.Errorf("system: workload %s declares no allocations", wl.Name())
	}
	var l Layout
	first, end := ^uint64(0), uint64(0)
	for _, a := range allocs {
		if a.Bytes == 0 {
			continue
		}
		lo := a.Base >> GroupShift
		hi := (a.Base + a.Bytes + 1<<GroupShift - 1) >> GroupShift
		r := Range{Name: a.Name, First: lo, Count: int(hi - lo), ReadOnly: a.ReadOnly}
		if a.Kind == workload.Device {
			l.Device = append(l.Device, r)
			l.DeviceGroups += r.Count
		} else {
			l.Managed = append(l.Managed, r)
			l.ManagedGroupCount += r.Count
		}
		first = min(first, lo)
		end = max(end, hi)
	}
	if end == 0 {
		return Layout{}, fmt.Errorf("system: workload %s allocates no bytes", wl.Name())
	}
	l.BaseVPN = first * PagesPerGroup
	l.Pages = int(end-first) * PagesPerGroup
	regions := l.ManagedGroupCount * 100 / cfg.Run.OversubPct / GroupsPerRegion
	if cfg.Run.OversubPct == 100 {
		regions = (l.ManagedGroupCount + GroupsPerRegion - 1) / GroupsPerRegion
	}
	regions = max(regions, 1)
	l.ManagedCapacity = regions * GroupsPerRegion
	deviceRegions := (l.DeviceGroups + GroupsPerRegion - 1) / GroupsPerRegion
	l.NFG = (regions + deviceRegions) * GroupsPerRegion
	if capacity := uint64(cfg.Memory.CapacityGB * (1 << 30)); uint64(l.NFG)<<GroupShift > capacity {
		return Layout{}, fmt.Errorf("system: workload %s needs %d MB of GPU memory at run.oversub_pct = %d, more than memory.capacity_gb = %g",
			wl.Name(), l.NFG<<GroupShift>>20, cfg.Run.OversubPct, cfg.Memory.CapacityGB)
	}
	return l, nil
}
