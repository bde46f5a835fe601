package uvm

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
type FaultCount struct {
	requested []uint64 // per page: valid, or in the MSHR map
	count     uint64
}

// NewFaultCount makes a counter for an address space of pages pages.
func NewFaultCount(pages int) *FaultCount {
	return &FaultCount{requested: make([]uint64, (pages+63)/64)}
}

// Fault records a faulting access to page p and reports whether it counts
// as a fault: p was neither valid nor requested. The page is requested
// from now on.
func (f *FaultCount) Fault(p int) bool {
	w, bit := &f.requested[p/64], uint64(1)<<(p%64)
	if *w&bit != 0 {
		return false
	}
	*w |= bit
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
