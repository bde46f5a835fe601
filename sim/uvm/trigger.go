package uvm

// ShouldEvict is the UVMSmart simulator's eviction trigger
// (src/cuda-sim/memory.cc:259-262, should_evict_page, which
// gmmu_t::cycle consults every cycle, src/gpgpu-sim/gpu-sim.cc:3086-3106):
// eviction starts while the pages already allocated in GPU memory, plus
// the pages queued to be read in, plus the free-page buffer, exceed the
// capacity plus the pages queued to be written back:
//
//	queuedWrites + capacity < capacity*bufferPercent/100 + allocated + queuedReads
//
// Frames are allocated when a read transfer starts and freed when a
// write-back starts (gpu-sim.cc:3146-3160, 3305), so allocated counts the
// pages valid or landing. The comparison is in float32 as there, so that
// the buffer's fractional pages fall exactly where the reference's do.
func ShouldEvict(capacity, allocated, queuedReads, queuedWrites int, bufferPercent float64) bool {
	total := float32(capacity)
	return float32(queuedWrites)+total < total*float32(bufferPercent)/100+float32(allocated+queuedReads)
}
