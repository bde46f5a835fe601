package system

import (
	"fmt"
	"math/bits"

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
// cudaMalloc'd (device) allocations, and the GPU memory.
//
// GPU memory is counted in 4 KB pages (SPEC 2): the managed footprint
// divided by the oversubscription ratio, rounded down to a page, plus the
// frames the device allocations take; or run.gpu_memory_mb, the whole GPU
// memory as the UVMSmart simulator's -gddr_size gives it (its GMMU hands
// out the frames of managed and cudaMalloc'd data alike from that one
// budget), of which the device allocations take their frames first. Every
// policy works within the same pages: the UM driver's managed capacity is
// ManagedPages; the UVMMU Destination Allocator manages the NFG whole 64 KB
// frame-groups inside the GPU memory (its migration unit is the 64 KB
// page-group, so a last partial frame-group, under 16 pages, stays unused),
// and the last 2 MB frame-region of its FrAB may be only partly present.
type Layout struct {
	BaseVPN uint64 // first page of the first allocation
	Pages   int    // pages from BaseVPN to the end of the last allocation

	Managed []Range // managed allocations, in page-groups
	Device  []Range // cudaMalloc'd allocations, in page-groups

	ManagedGroupCount int // 64 KB page-groups of the managed allocations
	DeviceGroups      int // frame-groups the device allocations need
	// FootprintPages is the footprint in 4 KB pages: the managed
	// allocations as the UVMSmart simulator's cudaMallocManaged sizes them
	// (ManagedGroups), as its benchmark working sets count them
	// (benchmarks/benchmark_workingset.txt: a 68 B array is 64 KB, fdtd's
	// 5.5 MB ex is 6 MB), so that at 100% every page-group the tree
	// prefetcher can fill has a frame.
	FootprintPages int

	// GPUPages is the GPU memory in 4 KB pages.
	GPUPages int
	// ManagedPages is the GPU memory left for managed data, in pages: at
	// least one page-group's worth, at most the footprint.
	ManagedPages int
	// ManagedCapacity is the frame-groups managed data may occupy, the
	// last one perhaps partly: device allocations are placed after them.
	ManagedCapacity int
	// NFG is the whole frame-groups of GPU memory, device allocations
	// included: the frame-groups the UVMMU's allocator manages.
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
		if a.Kind != workload.Device {
			hi = min(lo+ManagedGroups(a.Bytes), nextBase(allocs, a.Base)>>GroupShift)
		}
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
	l.FootprintPages = l.ManagedGroupCount * PagesPerGroup
	devicePages := l.DeviceGroups * PagesPerGroup
	if mb := cfg.Run.GPUMemoryMB; mb > 0 {
		l.GPUPages = int(mb * (1 << 20) / (1 << PageShift))
		l.ManagedPages = l.GPUPages - devicePages
		if l.ManagedPages < PagesPerGroup {
			return Layout{}, fmt.Errorf("system: run.gpu_memory_mb = %g leaves %d pages for managed data after the %d pages of %s's cudaMalloc'd allocations; at least %d are needed (%g MB in all)",
				mb, max(l.ManagedPages, 0), devicePages, wl.Name(), PagesPerGroup, float64((devicePages+PagesPerGroup)<<PageShift)/(1<<20))
		}
		l.ManagedPages = min(l.ManagedPages, l.FootprintPages)
	} else {
		l.ManagedPages = max(l.FootprintPages*100/cfg.Run.OversubPct, PagesPerGroup)
		l.GPUPages = l.ManagedPages + devicePages
	}
	l.ManagedCapacity = (l.ManagedPages + PagesPerGroup - 1) / PagesPerGroup
	l.NFG = l.GPUPages / PagesPerGroup
	if capacity := uint64(cfg.Memory.CapacityGB * (1 << 30)); uint64(l.GPUPages)<<PageShift > capacity {
		return Layout{}, fmt.Errorf("system: workload %s needs %.1f MB of GPU memory at run.oversub_pct = %d, more than memory.capacity_gb = %g",
			wl.Name(), float64(l.GPUPages<<PageShift)/(1<<20), cfg.Run.OversubPct, cfg.Memory.CapacityGB)
	}
	return l, nil
}

// ManagedGroups is the page-groups a managed allocation of the given bytes
// takes: the UVMSmart simulator's cudaMallocManaged allocates whole 2 MB
// large pages and rounds the rest up to a power of two of 64 KB blocks
// (cuda_runtime_api.cc:480-495), and builds its prefetch trees over that
// size (:517-527), so its tree prefetcher fills and migrates the rounded
// tail and its GPU memory sizes count it (the -gddr_size of fdtd's
// Scalability logs, 16.42045, 14.45 and 12.04167 MB at 110, 125 and 150%,
// is 18.0625 MB / R, and its run without oversubscription validates 4,624
// pages, benchmarks/Results/Eviction_Prefetcher_Interplay/output_logs).
func ManagedGroups(bytes uint64) uint64 {
	whole := bytes >> RegionShift << (RegionShift - GroupShift)
	rest := (bytes&(1<<RegionShift-1) + 1<<GroupShift - 1) >> GroupShift
	if rest == 0 {
		return whole
	}
	return whole + 1<<bits.Len64(rest-1)
}

// nextBase is the lowest base of an allocation above base (none: no
// limit), where a rounded managed allocation must end; workload.Layout
// starts every allocation on a 2 MB boundary, so the rounding always fits.
func nextBase(allocs []workload.Alloc, base uint64) uint64 {
	next := ^uint64(0)
	for _, a := range allocs {
		if a.Base > base && a.Bytes > 0 {
			next = min(next, a.Base)
		}
	}
	return next
}
