package suv

import (
	"fmt"
	"slices"

	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// SUV-Mgmt (SUV Section V-C): the host runtime that turns the analysis into
// driver calls before every kernel launch (Algorithm 1) and at every host
// loop iteration (Algorithm 2), and the SC'19 placement SUV compares
// against (Section III-B, VI-B). The runtimes here decide; the policy
// (sim/policy suv and sc) turns their actions into the UM driver's steps
// with modelled costs. docs/suv.md lists the decisions and the fixes to
// the printed algorithms.

// PageBytes is the granularity of every decision: the driver's 4 KB pages.
const PageBytes = 4096

// RegionBytes is the 2 MB large page: Algorithm 2 batches iterations whose
// span is smaller (SUV Section V-C, "If the span is smaller than 2MB").
const RegionBytes = 2 << 20

// TemporalDensityThreshold is Algorithm 1's density threshold for a
// Temporal structure to migrate on demand into its reserved working set
// (SUV Section V-C, footnote 4: "here, 5"), in accesses per byte.
const TemporalDensityThreshold = 5

// Do is a driver operation of SUV-Mgmt (SUV Section V-D).
type Do uint8

const (
	// PinGPU: suvPinOnGPU, place the range on the GPU and take it out of
	// the eviction order (a prefetch and a pin).
	PinGPU Do = iota
	// PinHost: suvPinOnHost, keep the range in host memory, mapped for
	// remote access without faults (also suvSetNoMigrateRegion).
	PinHost
	// Counters: suvEnableAccessCounter, remote access until the access
	// counters migrate a block.
	Counters
	// OnDemand: unset every policy, the range migrates by faults (into the
	// capacity Algorithm 1 reserved for it).
	OnDemand
	// Release: Algorithm 2's eviction of an earlier iteration's span, which
	// is also unpinned (it migrates on demand again if touched).
	Release
)

func (d Do) String() string {
	switch d {
	case PinGPU:
		return "pin-gpu"
	case PinHost:
		return "pin-host"
	case Counters:
		return "counters"
	case OnDemand:
		return "on-demand"
	case Release:
		return "release"
	}
	return fmt.Sprintf("Do(%d)", uint8(d))
}

// Action is one driver call on a byte range of an allocation; Offset and
// Bytes are whole pages (the last page of an allocation rounded up).
type Action struct {
	Alloc         string
	Offset, Bytes uint64
	Do            Do
}

// Decision is what Algorithm 1 decided for one structure at one launch, for
// reports and tests.
type Decision struct {
	Alloc string
	Class Class
	// GPUBytes are pinned on the GPU, HostBytes pinned on host memory.
	GPUBytes, HostBytes uint64
	// ReservedBytes is the GPU capacity set aside for on-demand or
	// counter-driven migration (Temporal, Unknown) or Algorithm 2's
	// prefetch window (Iterative).
	ReservedBytes uint64
	Counters      bool
}

// Launch is the runtime's work before one kernel launch: the driver calls
// in order and the per-structure decisions.
type Launch struct {
	Actions   []Action
	Decisions []Decision
}

func pages(b uint64) uint64 { return (b + PageBytes - 1) / PageBytes }

// placement is what a range of a structure is currently advised, so that a
// launch calls the driver only for what changes.
type placement struct {
	do            Do
	offset, bytes uint64
}

// Memory is the GPU memory a runtime places into: Capacity bytes for
// managed data, and the driver's eviction unit. Pins cover whole units (a
// unit partly pinned could never be evicted, and its unpinned pages would
// hold memory for good), and one unit is kept out of avail, so that a page
// migrating on demand always finds an unpinned unit to evict.
type Memory struct {
	Capacity, Unit uint64
}

// avail is the memory the placements may use: whole units, less one.
func (m Memory) avail() uint64 {
	units := m.Capacity / m.Unit
	if units == 0 {
		return 0
	}
	return (units - 1) * m.Unit
}

// pinnable is the largest whole number of units within bytes, or the
// whole structure (its last unit ends with it) when it fits.
func (m Memory) pinnable(bytes, size uint64) uint64 {
	if bytes >= size {
		return size
	}
	return bytes / m.Unit * m.Unit
}

// Validate checks the unit.
func (m Memory) Validate() error {
	if m.Unit < PageBytes || m.Unit%PageBytes != 0 {
		return fmt.Errorf("suv: Memory.Unit = %d, must be a positive multiple of %d", m.Unit, PageBytes)
	}
	return nil
}

// Runtime is SUV-Mgmt over one program on one GPU and its memory.
type Runtime struct {
	prog *static.Program
	gpu  GPU
	mem  Memory
	// current advice per structure (ranges in order); window is Algorithm
	// 2's prefetched range per Iterative structure, and windowEnd the
	// first iteration it does not cover.
	advice      map[string][]placement
	window      map[string]placement
	windowStart map[string]int64
	windowEnd   map[string]int64
	// hostTail is the part of an Iterative structure's span pinned on host
	// memory because its window did not fit.
	hostTail map[string]placement
}

// validateInputs checks what a placement is made from: the GPU, its
// memory and the program's descriptions.
func validateInputs(p *static.Program, g GPU, m Memory) error {
	if err := g.Validate(); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	return p.Validate()
}

// NewRuntime makes the runtime for p on g with memory m.
func NewRuntime(p *static.Program, g GPU, m Memory) (*Runtime, error) {
	if err := validateInputs(p, g, m); err != nil {
		return nil, err
	}
	return &Runtime{prog: p, gpu: g, mem: m,
		advice: map[string][]placement{}, window: map[string]placement{}, windowStart: map[string]int64{}, windowEnd: map[string]int64{}, hostTail: map[string]placement{}}, nil
}

// Plan runs the runtime over every launch in order.
func (rt *Runtime) Plan() []Launch {
	var out []Launch
	for ki := range rt.prog.Kernels {
		out = append(out, rt.BeforeLaunch(ki))
	}
	return out
}

// BeforeLaunch is the injected call before launch ki (launches must come in
// order): Algorithm 2 at a host-loop iteration boundary, then Algorithm 1.
func (rt *Runtime) BeforeLaunch(ki int) Launch {
	k := &rt.prog.Kernels[ki]
	regions := AnalyzeKernel(rt.prog, k, rt.gpu)
	var l Launch
	touched := map[string]bool{}
	for _, r := range regions {
		touched[r.Alloc] = true
	}
	// Structures this kernel does not touch keep their pages but lose their
	// pins, so getAvailableHBM sees the whole memory (Algorithm 1, line 1).
	for _, a := range rt.prog.Allocs {
		if a.Managed && !touched[a.Name] {
			if _, win := rt.window[a.Name]; !win {
				rt.advise(&l, a.Name, []placement{{do: OnDemand, bytes: pages(a.Bytes) * PageBytes}})
			}
		}
	}
	windows, held := rt.algorithm2(&l, k, regions)
	rt.algorithm1(&l, regions, windows, held)
	return l
}

// algorithm1 is SUV Algorithm 1 with the printed pseudo-code's slips fixed
// (docs/suv.md): the reservation for Unknown structures comes out of avail
// (line 4 does not subtract it); Unknown structures are not placed again by
// the density loop (lines 7-21 iterate over every structure); a Temporal
// structure pinned on host memory does not fall through to line 17's GPU
// pin; a reservation never exceeds what is left; Iterative structures keep
// Algorithm 2's window, which is reserved here.
func (rt *Runtime) algorithm1(l *Launch, regions []KernelRegion, windows map[string]uint64, held uint64) {
	avail := rt.mem.avail() - min(held, rt.mem.avail())
	var footprint uint64
	for _, r := range regions {
		footprint += pages(r.Bytes) * PageBytes
	}
	start := avail
	for _, r := range regions {
		if r.Class != Unknown || r.Iterative {
			continue
		}
		size := pages(r.Bytes) * PageBytes
		reserve := min(uint64(float64(size)/float64(footprint)*float64(start))/PageBytes*PageBytes, avail)
		avail -= reserve
		rt.advise(l, r.Alloc, []placement{{do: Counters, bytes: size}})
		l.Decisions = append(l.Decisions, Decision{Alloc: r.Alloc, Class: Unknown, ReservedBytes: reserve, Counters: true})
	}
	for _, r := range regions {
		if w, ok := windows[r.Alloc]; ok {
			avail -= min(w, avail)
		}
	}
	rest := slices.DeleteFunc(slices.Clone(regions), func(r KernelRegion) bool {
		_, win := windows[r.Alloc]
		return (r.Class == Unknown && !r.Iterative) || win
	})
	slices.SortStableFunc(rest, func(a, b KernelRegion) int {
		switch {
		case a.Density > b.Density:
			return -1
		case a.Density < b.Density:
			return 1
		}
		return 0
	})
	for _, r := range rest {
		size := pages(r.Bytes) * PageBytes
		d := Decision{Alloc: r.Alloc, Class: r.Class}
		switch {
		case avail == 0:
			d.HostBytes = size
			rt.advise(l, r.Alloc, []placement{{do: PinHost, bytes: size}})
		case r.Class == Temporal && r.Density > TemporalDensityThreshold:
			d.ReservedBytes = min(pages(r.WSS)*PageBytes, avail)
			avail -= d.ReservedBytes
			rt.advise(l, r.Alloc, []placement{{do: OnDemand, bytes: size}})
		case r.Class == Temporal:
			d.HostBytes = size
			rt.advise(l, r.Alloc, []placement{{do: PinHost, bytes: size}})
		default:
			pin := rt.mem.pinnable(avail, size)
			d.GPUBytes, d.HostBytes = pin, size-pin
			avail -= pin
			ps := []placement{{do: PinGPU, bytes: pin}}
			if pin < size {
				ps = append(ps, placement{do: PinHost, offset: pin, bytes: size - pin})
			}
			rt.advise(l, r.Alloc, ps)
		}
		l.Decisions = append(l.Decisions, d)
	}
}

// algorithm2 is SUV Algorithm 2 at launch k: when k starts a host-loop
// iteration that the current window of an Iterative structure does not
// cover, the union of its iteration-dependent operations' ranges over the
// next iterations is prefetched and pinned (one iteration, or as many as
// make 2 MB when one iteration's span is smaller), and the previous window
// is released. It returns each Iterative structure's window size, which
// Algorithm 1 reserves, and the bytes of the windows of structures the
// launch does not touch, which stay pinned.
//
// Fix: the windows never exceed the available memory. The printed
// algorithm prefetches and pins every span whole; where the spans of the
// launch's Iterative structures add up to more than the GPU holds (a
// column's span, min/max over the rows, is the whole matrix: GRM's A and
// Q), pinning them all would leave no unpinned block to evict and the
// kernel's faults would wait forever. First the batches halve (to one
// iteration at least) until the new windows fit what the kept ones leave;
// then, if they still do not, each window is clipped, in the
// order of the program's allocations, to the whole units still free, and
// the rest of the span is pinned on host memory, as Algorithm 1 splits a
// Density structure that does not fit (line 17-19): left to faults it
// would thrash in the one block Memory keeps free. A structure left no
// unit gets no window (Algorithm 1 places it).
func (rt *Runtime) algorithm2(l *Launch, k *static.Kernel, regions []KernelRegion) (windows map[string]uint64, held uint64) {
	windows = map[string]uint64{}
	// Windows of structures this launch does not touch stay pinned (their
	// next iteration's launch uses them): they hold memory neither the new
	// windows nor Algorithm 1 may take.
	touched := map[string]bool{}
	for _, r := range regions {
		touched[r.Alloc] = true
	}
	for alloc, w := range rt.window {
		if !touched[alloc] {
			held += w.bytes
		}
	}
	if k.HostIters == 0 {
		return windows, held
	}
	u := rt.mem.Unit
	left := rt.mem.avail() - min(held, rt.mem.avail())
	var fresh []KernelRegion
	for _, r := range regions {
		if !r.Iterative {
			continue
		}
		if w, ok := rt.window[r.Alloc]; ok && k.HostIter >= rt.windowStart[r.Alloc] && k.HostIter < rt.windowEnd[r.Alloc] {
			windows[r.Alloc] = w.bytes
			left -= min(w.bytes, left)
			continue
		}
		fresh = append(fresh, r)
	}
	// The batches halve until the new windows fit in what is left, or
	// each is one iteration.
	iters := make([]int64, len(fresh))
	for i, r := range fresh {
		iters[i] = rt.batch(k, r)
	}
	for {
		var total uint64
		shrink := false
		for i, r := range fresh {
			lo, end := rt.windowRange(k, r, iters[i])
			total += end - lo
			shrink = shrink || iters[i] > 1
		}
		if total <= left/u*u || !shrink {
			break
		}
		for i := range iters {
			iters[i] = max(1, iters[i]/2)
		}
	}
	for i, r := range fresh {
		lo, spanEnd := rt.windowRange(k, r, iters[i])
		hi := min(spanEnd, lo+left/u*u)
		w := placement{do: PinGPU, offset: lo, bytes: hi - lo}
		if w.bytes == 0 {
			continue
		}
		left -= w.bytes
		if old, ok := rt.window[r.Alloc]; ok {
			// What the new window does not cover is released.
			if end := min(old.offset+old.bytes, w.offset); end > old.offset {
				l.Actions = append(l.Actions, Action{Alloc: r.Alloc, Offset: old.offset, Bytes: end - old.offset, Do: Release})
			}
			if start := max(old.offset, w.offset+w.bytes); start < old.offset+old.bytes {
				l.Actions = append(l.Actions, Action{Alloc: r.Alloc, Offset: start, Bytes: old.offset + old.bytes - start, Do: Release})
			}
		}
		l.Actions = append(l.Actions, Action{Alloc: r.Alloc, Offset: w.offset, Bytes: w.bytes, Do: PinGPU})
		if tail := (placement{do: PinHost, offset: hi, bytes: spanEnd - hi}); tail != rt.hostTail[r.Alloc] {
			if tail.bytes > 0 {
				l.Actions = append(l.Actions, Action{Alloc: r.Alloc, Offset: tail.offset, Bytes: tail.bytes, Do: PinHost})
			}
			rt.hostTail[r.Alloc] = tail
		}
		rt.window[r.Alloc] = w
		rt.windowStart[r.Alloc] = k.HostIter
		rt.windowEnd[r.Alloc] = k.HostIter + iters[i]
		rt.advice[r.Alloc] = nil
		windows[r.Alloc] = w.bytes
		l.Decisions = append(l.Decisions, Decision{Alloc: r.Alloc, Class: r.Class, GPUBytes: w.bytes, ReservedBytes: w.bytes})
	}
	return windows, held
}

// windowRange is the union of r's iteration-dependent ranges over iters
// iterations from k's, rounded out to whole units (see Memory).
func (rt *Runtime) windowRange(k *static.Kernel, r KernelRegion, iters int64) (lo, end uint64) {
	lo, hi := spanRange(r.Spans)
	for it := k.HostIter + 1; it < k.HostIter+iters && it < k.HostIters; it++ {
		next := *k
		next.HostIter = it
		for _, nr := range AnalyzeKernel(rt.prog, &next, rt.gpu) {
			if nr.Alloc == r.Alloc {
				nlo, nhi := spanRange(nr.Spans)
				lo, hi = min(lo, nlo), max(hi, nhi)
			}
		}
	}
	u := rt.mem.Unit
	return lo / u * u, min((hi+u-1)/u*u, pages(r.Bytes)*PageBytes)
}

// batch is the number of iterations one prefetch covers: 1, or enough to
// make 2 MB when one iteration's span is smaller.
func (rt *Runtime) batch(k *static.Kernel, r KernelRegion) int64 {
	lo, hi := spanRange(r.Spans)
	span := hi - lo
	if span == 0 || span >= RegionBytes {
		return 1
	}
	return int64((RegionBytes + span - 1) / span)
}

func spanRange(spans []Span) (lo, hi uint64) {
	lo = ^uint64(0)
	for _, s := range spans {
		lo, hi = min(lo, s.Start), max(hi, s.Start+s.Bytes)
	}
	return lo, hi
}

// advise emits the calls that change alloc's advice to ps (ranges in
// order, from offset 0), nothing when it is unchanged.
func (rt *Runtime) advise(l *Launch, alloc string, ps []placement) {
	var keep []placement
	for _, p := range ps {
		if p.bytes > 0 {
			keep = append(keep, p)
		}
	}
	if slices.Equal(rt.advice[alloc], keep) {
		// Unchanged: only the GPU pins are called again, a prefetch of
		// whatever a host phase's synchronisation took back (nothing moves
		// when every page is still there).
		for _, p := range keep {
			if p.do == PinGPU {
				l.Actions = append(l.Actions, Action{Alloc: alloc, Offset: p.offset, Bytes: p.bytes, Do: p.do})
			}
		}
		return
	}
	if _, win := rt.window[alloc]; win {
		// The structure leaves Algorithm 2's care: its window goes back to
		// on-demand first.
		delete(rt.window, alloc)
		delete(rt.windowStart, alloc)
		delete(rt.windowEnd, alloc)
		delete(rt.hostTail, alloc)
	}
	rt.advice[alloc] = keep
	for _, p := range keep {
		l.Actions = append(l.Actions, Action{Alloc: alloc, Offset: p.offset, Bytes: p.bytes, Do: p.do})
	}
}
