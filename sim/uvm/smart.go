package uvm

import "fmt"

// Pattern is a data structure's access pattern as the DATE'21 smart
// runtime classifies it (UVMSmart simulator -enable_smart_runtime,
// gpu-sim.h:762 ds_pattern).
type Pattern uint8

const (
	Undecided Pattern = iota
	Random
	Linear
	Mixed
	RandomReuse
	LinearReuse
	MixedReuse
)

var patternNames = [...]string{"undecided", "random", "linear", "mixed", "random-reuse", "linear-reuse", "mixed-reuse"}

func (p Pattern) String() string {
	if int(p) < len(patternNames) {
		return patternNames[p]
	}
	return fmt.Sprintf("pattern(%d)", uint8(p))
}

// Irregular reports a random or mixed pattern, with or without reuse: the
// patterns that switch the runtime to zero-copy after oversubscription.
func (p Pattern) Irregular() bool {
	return p == Random || p == RandomReuse || p == Mixed || p == MixedReuse
}

// merge folds one kernel's pattern into the data structure's pattern so
// far (gpu-sim.cc:2771-2807): linear and random combine to mixed, reuse is
// kept, and a mixed pattern without reuse stays as it is.
func (p Pattern) merge(cur Pattern) Pattern {
	switch p {
	case Undecided:
		return cur
	case Linear:
		switch cur {
		case LinearReuse:
			return LinearReuse
		case Random:
			return Mixed
		case RandomReuse:
			return MixedReuse
		}
	case LinearReuse:
		if cur == Random || cur == RandomReuse {
			return MixedReuse
		}
	case Random:
		switch cur {
		case RandomReuse:
			return RandomReuse
		case Linear:
			return Mixed
		case LinearReuse:
			return MixedReuse
		}
	case RandomReuse:
		if cur == Linear || cur == LinearReuse {
			return MixedReuse
		}
	}
	return p
}

// kernelPattern is the pattern of one kernel's block sequence: linear when
// the blocks come in non-decreasing order (std::is_sorted), with reuse
// when a block repeats within the kernel or was seen in an earlier one
// (gpu-sim.cc:2728-2769).
func kernelPattern(sorted, reuse bool) Pattern {
	switch {
	case sorted && reuse:
		return LinearReuse
	case sorted:
		return Linear
	case reuse:
		return RandomReuse
	}
	return Random
}

// SmartRuntime is the access-pattern detector and policy engine of the
// DATE'21 adaptive framework (UVMSmart simulator -enable_smart_runtime;
// gmmu_t::update_memory_management_policy, gpu-sim.cc:2672-2833). It sees
// the 64 KB blocks of every transfer the driver schedules, in order
// (gpu-sim.cc:3653 block_access_list: each fault batch's blocks,
// prefetched ones included, ascending), tagged with the running kernel,
// and sorts them by data structure (managed allocation). When memory is
// oversubscribed it classifies every data structure over the kernels so
// far and decides:
//
//   - any data structure random or mixed (with or without reuse): remote
//     zero-copy access once oversubscribed (dma_type::OVERSUB) and the
//     tree-based neighbourhood eviction (eviction_policy::TBN);
//   - otherwise any linear-reuse data structure: tree-based eviction only;
//   - otherwise (linear only) nothing changes.
//
// The decision is for the whole driver, as in the simulator, which sets
// its global dma_mode and evict_policy. It is taken every time the driver
// evicts and never undone.
//
// The reference rebuilds every kernel's block lists at each call; here
// each block remembers the last kernel that touched it and each data
// structure the state of the running kernel's sequence, which gives the
// same patterns without keeping the lists.
type SmartRuntime struct {
	dsOfBlock  []int32 // per block: its data structure, -1 outside every allocation
	lastKernel []int32 // per block: 1 + the last kernel whose transfers included it, 0 never
	kernel     int32   // the running kernel, from 1

	// Per data structure: the pattern of the finished kernels, and the
	// running kernel's sequence so far.
	done    []Pattern
	touched []bool  // the running kernel has transferred its blocks
	sorted  []bool  // ... in non-decreasing order
	reuse   []bool  // ... with a repeat or a block seen in an earlier kernel
	last    []int32 // ... the last block
}

// Allocation is a data structure: a managed allocation's 64 KB blocks
// [FirstBlock, FirstBlock+Blocks).
type Allocation struct{ FirstBlock, Blocks int }

// NewSmartRuntime makes the runtime for an address space of blocks blocks
// holding the managed allocations allocs.
func NewSmartRuntime(blocks int, allocs []Allocation) (*SmartRuntime, error) {
	r := &SmartRuntime{dsOfBlock: make([]int32, blocks), lastKernel: make([]int32, blocks), kernel: 1}
	for i := range r.dsOfBlock {
		r.dsOfBlock[i] = -1
	}
	for i, a := range allocs {
		if a.FirstBlock < 0 || a.Blocks < 1 || a.FirstBlock+a.Blocks > blocks {
			return nil, fmt.Errorf("uvm: allocation %d (blocks %d..%d) is outside the %d-block space", i, a.FirstBlock, a.FirstBlock+a.Blocks-1, blocks)
		}
		for b := a.FirstBlock; b < a.FirstBlock+a.Blocks; b++ {
			if r.dsOfBlock[b] >= 0 {
				return nil, fmt.Errorf("uvm: allocations %d and %d overlap at block %d", r.dsOfBlock[b], i, b)
			}
			r.dsOfBlock[b] = int32(i)
		}
	}
	n := len(allocs)
	r.done = make([]Pattern, n)
	r.touched, r.sorted, r.reuse = make([]bool, n), make([]bool, n), make([]bool, n)
	r.last = make([]int32, n)
	return r, nil
}

// Transferred records that the driver scheduled block b for transfer in
// the running kernel.
func (r *SmartRuntime) Transferred(b int) {
	ds := r.dsOfBlock[b]
	if ds < 0 {
		return
	}
	if !r.touched[ds] {
		r.touched[ds], r.sorted[ds], r.reuse[ds] = true, true, false
	} else if int32(b) < r.last[ds] {
		r.sorted[ds] = false
	}
	r.last[ds] = int32(b)
	if r.lastKernel[b] != 0 {
		// A repeat in this kernel or a block an earlier kernel moved.
		r.reuse[ds] = true
	}
	r.lastKernel[b] = r.kernel
}

// KernelEnded closes the running kernel: its sequences are folded into
// the patterns and the next kernel starts.
func (r *SmartRuntime) KernelEnded() {
	for ds := range r.done {
		if r.touched[ds] {
			r.done[ds] = r.done[ds].merge(kernelPattern(r.sorted[ds], r.reuse[ds]))
			r.touched[ds] = false
		}
	}
	r.kernel++
}

// Pattern is data structure ds's pattern over the finished kernels and
// the running one so far.
func (r *SmartRuntime) Pattern(ds int) Pattern {
	p := r.done[ds]
	if r.touched[ds] {
		p = p.merge(kernelPattern(r.sorted[ds], r.reuse[ds]))
	}
	return p
}

// Decide classifies every data structure and reports what the runtime
// switches on: remote access once oversubscribed, and tree-based
// eviction.
func (r *SmartRuntime) Decide() (zeroCopy, treeEviction bool) {
	linearReuse := false
	for ds := range r.done {
		switch p := r.Pattern(ds); {
		case p.Irregular():
			return true, true
		case p == LinearReuse:
			linearReuse = true
		}
	}
	return false, linearReuse
}
