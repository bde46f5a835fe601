package suv

import (
	"slices"

	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// SC is the placement of Li and Chapman's SC'19 compiler-assisted UVM
// management as SUV ports it to CUDA (SUV Sections III-B and VI-B): every
// decision is about a whole data structure; structures are ranked by their
// total access count over the program (not by density), ties by their
// reuse distance across kernel launches (shorter first); before each launch
// the structures it touches are pinned on the GPU whole, in rank order,
// while they fit, and the rest are pinned on host memory whole. Structures
// whose accesses cannot be analysed (pointer chases, data-dependent loops:
// SUV's Unknown) are left to on-demand migration, as SC ignores them.
type SC struct {
	prog   *static.Program
	gpu    GPU
	mem    Memory
	count  map[string]float64
	reuse  map[string]float64
	advice map[string]Do
}

// NewSC makes the SC placement for p on g with memory m (Memory: whole
// units, one kept back).
func NewSC(p *static.Program, g GPU, m Memory) (*SC, error) {
	if err := validateInputs(p, g, m); err != nil {
		return nil, err
	}
	sc := &SC{prog: p, gpu: g, mem: m, count: map[string]float64{}, reuse: map[string]float64{}, advice: map[string]Do{}}
	last := map[string]int{}
	gaps := map[string]int{}
	uses := map[string]int{}
	for ki := range p.Kernels {
		for _, r := range AnalyzeKernel(p, &p.Kernels[ki], g) {
			sc.count[r.Alloc] += r.Accesses
			if prev, ok := last[r.Alloc]; ok {
				gaps[r.Alloc] += ki - prev
				uses[r.Alloc]++
			}
			last[r.Alloc] = ki
		}
	}
	for a := range last {
		// Reuse distance: the mean launches between two uses; a structure
		// used once has the longest possible, the program's length.
		sc.reuse[a] = float64(len(p.Kernels))
		if uses[a] > 0 {
			sc.reuse[a] = float64(gaps[a]) / float64(uses[a])
		}
	}
	return sc, nil
}

// Plan runs SC before every launch in order.
func (sc *SC) Plan() []Launch {
	var out []Launch
	for ki := range sc.prog.Kernels {
		out = append(out, sc.BeforeLaunch(ki))
	}
	return out
}

// BeforeLaunch places the structures launch ki touches.
func (sc *SC) BeforeLaunch(ki int) Launch {
	regions := AnalyzeKernel(sc.prog, &sc.prog.Kernels[ki], sc.gpu)
	var l Launch
	touched := map[string]bool{}
	for _, r := range regions {
		touched[r.Alloc] = true
	}
	for _, a := range sc.prog.Allocs {
		if a.Managed && !touched[a.Name] {
			sc.set(&l, a.Name, pages(a.Bytes)*PageBytes, OnDemand)
		}
	}
	slices.SortStableFunc(regions, func(a, b KernelRegion) int {
		ca, cb := sc.count[a.Alloc], sc.count[b.Alloc]
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		case sc.reuse[a.Alloc] < sc.reuse[b.Alloc]:
			return -1
		case sc.reuse[a.Alloc] > sc.reuse[b.Alloc]:
			return 1
		}
		return 0
	})
	avail := sc.mem.avail()
	for _, r := range regions {
		size := pages(r.Bytes) * PageBytes
		d := Decision{Alloc: r.Alloc, Class: r.Class}
		switch {
		case r.Class == Unknown:
			sc.set(&l, r.Alloc, size, OnDemand)
		case size <= avail:
			avail -= size
			d.GPUBytes = size
			sc.set(&l, r.Alloc, size, PinGPU)
		default:
			d.HostBytes = size
			sc.set(&l, r.Alloc, size, PinHost)
		}
		l.Decisions = append(l.Decisions, d)
	}
	return l
}

// set emits the call that changes alloc's advice to do; a GPU pin is
// called again at every launch, as SUV's is.
func (sc *SC) set(l *Launch, alloc string, size uint64, do Do) {
	if was, ok := sc.advice[alloc]; do != PinGPU && (ok && was == do || !ok && do == OnDemand) {
		sc.advice[alloc] = do
		return
	}
	sc.advice[alloc] = do
	l.Actions = append(l.Actions, Action{Alloc: alloc, Bytes: size, Do: do})
}
