package uvm

import "fmt"

// FaultCount counts far faults as the UVMSmart simulator counts them for
// its published runs (-enable_accurate_simulation 0): a fault is a
// distinct faulting page whose walk finds it neither valid nor already
// requested (gpu-sim.cc:3653-3700: a page already in the MSHR map req_info,
// as a fault or as part of a scheduled transfer, only adds a pending
// request; gpu-sim.cc:3759-3765: every other faulting page of the cycle
// increments mf_page_fault_outstanding once). The fault time is the count
// times the fault latency, added to the kernel time after the run
// (gpu-sim.cc:116-126, Tot_kernel_exec_time_and_fault_time); it is not on
// the timeline.
//
// The policy calls Fault for every faulting access that will migrate (not
// one served remotely), and Requested for every page its transfer planning
// puts on the way (the faulting pages and the prefetched ones): from then
// on until the page is written back and Evicted, further faults on it are
// pending requests, not faults.
//
// The simulator plans a fault's transfer in the cycle its walk completes
// (do_hardware_prefetch, gpu-sim.cc:3624-3700), so the rest of the
// faulting page's 64 KB basic block is requested at once under the tree
// and sequential-local prefetchers, which always bring the whole block. A
// policy that plans later passes that unit (16 pages) to NewFaultCount,
// and a counted fault requests its unit's pages at once.
type FaultCount struct {
	requested []uint64 // per page: valid, or in the MSHR map
	unit      int      // pages a counted fault requests, aligned: 1 or 16
	count     uint64
}

// NewFaultCount makes a counter for an address space of pages pages whose
// counted faults request unit pages (1, or PagesPerBlock).
func NewFaultCount(pages, unit int) (*FaultCount, error) {
	if unit != 1 && unit != PagesPerBlock {
		return nil, fmt.Errorf("uvm: fault unit = %d pages is not 1 or %d", unit, PagesPerBlock)
	}
	return &FaultCount{requested: make([]uint64, (pages+63)/64), unit: unit}, nil
}

// FaultUnit is the pages a fault requests at once under prefetcher name:
// the whole 64 KB block for tree and seqlocal, the page otherwise.
func FaultUnit(prefetcher string) int {
	if prefetcher == PrefetchTree || prefetcher == PrefetchSeqLocal {
		return PagesPerBlock
	}
	return 1
}

// Fault records a faulting access to page p and reports whether it counts
// as a fault: p was neither valid nor requested. The page (and the rest of
// its unit) is requested from now on.
func (f *FaultCount) Fault(p int) bool {
	w, bit := &f.requested[p/64], uint64(1)<<(p%64)
	if *w&bit != 0 {
		return false
	}
	first := p &^ (f.unit - 1)
	*w |= (uint64(1)<<f.unit - 1) << (first % 64)
	f.count++
	return true
}

// Requested marks page p valid or on its way (a prefetched page).
func (f *FaultCount) Requested(p int) { f.requested[p/64] |= 1 << (p % 64) }

// Evicted marks page p back in host memory: its next fault counts.
func (f *FaultCount) Evicted(p int) { f.requested[p/64] &^= 1 << (p % 64) }

// Count is the faults counted so far.
func (f *FaultCount) Count() uint64 { return f.count }

// Cycles is the fault time added to the total: every counted fault times
// the fault latency (gpu-sim.cc:117-118, mf_page_fault_outstanding *
// page_fault_latency).
func (f *FaultCount) Cycles(latency uint64) uint64 { return f.count * latency }
