// Package suv is SUV's host-side analysis (SUV, Section V-B): from a
// workload's static access descriptors (package sim/workload/static) and the
// GPU's occupancy it computes, per kernel launch and per managed data
// structure, the access density, the working set of the concurrently running
// thread blocks and the per-iteration span, and classifies the structure as
// Density, Temporal or Unknown, possibly also Iterative. docs/suv.md gives
// the rules and the choices made where the paper is silent.
package suv

import (
	"fmt"
	"strings"

	"github.com/uvmmu/uvmmu/sim/workload"
	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// Class is a data structure's placement class (SUV Section V-B, Outcome).
type Class uint8

const (
	// Density: placed by access density (the default, SUV Section V-A).
	Density Class = iota
	// Temporal: the concurrent thread blocks touch less than TemporalFraction
	// of the structure; SUV reserves only its working set.
	Temporal
	// Unknown: a pointer chase or a data-dependent loop bound; SUV turns on
	// access counters for it.
	Unknown
)

func (c Class) String() string {
	switch c {
	case Density:
		return "Density"
	case Temporal:
		return "Temporal"
	case Unknown:
		return "Unknown"
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// TemporalFraction: a working set below this fraction of the structure's
// size makes it Temporal, and more concurrent thread blocks than this
// fraction of the grid skip the working-set analysis (SUV Section V-B, "here,
// 0.5" and "more than half the total number of TBs").
const TemporalFraction = 0.5

// GPU is what SUV-Host's injected code reads from the device to estimate
// concurrent thread blocks.
type GPU struct {
	SMs        int // streaming multiprocessors
	WarpsPerSM int // occupancy limit in warps per SM
}

// Validate names the bad key and its range.
func (g GPU) Validate() error {
	if g.SMs < 1 {
		return fmt.Errorf("suv: GPU.SMs = %d, must be >= 1", g.SMs)
	}
	if g.WarpsPerSM < 1 {
		return fmt.Errorf("suv: GPU.WarpsPerSM = %d, must be >= 1", g.WarpsPerSM)
	}
	return nil
}

// ConcurrentBlocks is the number of thread blocks of k the GPU runs at once:
// blocks per SM (the occupancy limit over the block's warps, at least one)
// times SMs, at most the grid. SUV divides threads per SM by threads per
// block; the model's occupancy limit is in warps, so warps are divided.
func (g GPU) ConcurrentBlocks(k *static.Kernel) int64 {
	warps := (k.ThreadsPerBlock() + workload.WarpSize - 1) / workload.WarpSize
	perSM := max(int64(g.WarpsPerSM)/warps, 1)
	return min(perSM*int64(g.SMs), k.Blocks())
}

// Span is one iteration-dependent operation's byte range in one launch
// (SUV Algorithm 2: getStart and getSpan).
type Span struct {
	Start, Bytes uint64 // offset within the structure, length
}

// KernelRegion is the analysis of one data structure in one launch.
type KernelRegion struct {
	Alloc     string
	Bytes     uint64
	Class     Class
	Iterative bool
	// Accesses is the sum over the launch's operations on the structure of
	// threads x loop trips x branch fraction (operations in data-dependent
	// loops are left out: their count is unknown).
	Accesses float64
	// Density is Accesses / Bytes, accesses per byte.
	Density float64
	// WSSKnown says whether the working-set rule ran; WSS is then the bytes
	// the concurrent blocks touch (one block's range times ConcurrentBlocks,
	// at most Bytes).
	WSSKnown bool
	WSS      uint64
	// Spans are the iteration-dependent operations' ranges, in op order.
	Spans []Span
}

// AnalyzeKernel classifies every managed structure k touches, in the
// order of p.Allocs.
func AnalyzeKernel(p *static.Program, k *static.Kernel, g GPU) []KernelRegion {
	concurrent := g.ConcurrentBlocks(k)
	temporalCandidate := float64(concurrent) <= TemporalFraction*float64(k.Blocks())
	var out []KernelRegion
	for _, a := range p.Allocs {
		if !a.Managed {
			continue
		}
		r := KernelRegion{Alloc: a.Name, Bytes: a.Bytes}
		touched, indirect := false, false
		oneLo, oneHi := a.Bytes, uint64(0)
		for oi := range k.Ops {
			op := &k.Ops[oi]
			if op.Alloc != a.Name {
				continue
			}
			touched = true
			trips, known := loopTrips(k, op)
			if !known || op.Kind == static.PointerChase {
				r.Class = Unknown
			}
			if known {
				r.Accesses += float64(k.Threads()) * float64(trips) * op.BranchFraction
			}
			lo, hi, ok := static.OneBlock(k, 0, 0).OpRange(op, a)
			if !ok {
				indirect = true
			}
			oneLo, oneHi = min(oneLo, lo), max(oneHi, hi)
			if k.HostIters > 0 && op.Kind == static.AffineIndex && op.Index.Uses(static.HostIter) {
				if lo, hi, ok := static.WholeGrid(k).OpRange(op, a); ok {
					r.Iterative = true
					r.Spans = append(r.Spans, Span{Start: lo, Bytes: hi - lo})
				}
			}
		}
		if !touched {
			continue
		}
		r.Density = r.Accesses / float64(a.Bytes)
		if temporalCandidate && !indirect && oneHi > oneLo {
			r.WSSKnown = true
			r.WSS = min((oneHi-oneLo)*uint64(concurrent), a.Bytes)
			if r.Class != Unknown && float64(r.WSS) < TemporalFraction*float64(a.Bytes) {
				r.Class = Temporal
			}
		}
		out = append(out, r)
	}
	return out
}

// loopTrips is the product of op's enclosing loops' trip counts; known is
// false when one of them is data-dependent.
func loopTrips(k *static.Kernel, op *static.MemOp) (trips int64, known bool) {
	trips = 1
	for _, li := range op.Loops {
		l := k.Loops[li]
		if l.DataDependent {
			return 0, false
		}
		trips *= l.Trips
	}
	return trips, true
}

// Region is a data structure's analysis over the whole program.
type Region struct {
	Alloc string
	Bytes uint64
	// Class is the strongest class any launch gave it: Unknown over Temporal
	// over Density.
	Class     Class
	Iterative bool
	// Density is the program's accesses (over every launch) per byte.
	Density float64
	// WSS is the largest working set of the launches that ran the rule;
	// WSSKnown is false when none did.
	WSSKnown bool
	WSS      uint64
	// Span is the largest per-iteration span of its iteration-dependent
	// operations (0 when not Iterative).
	Span     uint64
	Launches int // launches that touch it
}

// Types is the class list in SUV Table I's notation: I, D, T, U.
func (r Region) Types() string {
	var t []string
	if r.Iterative {
		t = append(t, "I")
	}
	t = append(t, r.Class.String()[:1])
	return strings.Join(t, ",")
}

// Analyze runs AnalyzeKernel on every launch and folds the results per
// managed structure, in the order of p.Allocs; structures no kernel touches
// are left out.
func Analyze(p *static.Program, g GPU) []Region {
	byName := map[string]*Region{}
	accesses := map[string]float64{}
	for ki := range p.Kernels {
		for _, kr := range AnalyzeKernel(p, &p.Kernels[ki], g) {
			r, ok := byName[kr.Alloc]
			if !ok {
				r = &Region{Alloc: kr.Alloc, Bytes: kr.Bytes}
				byName[kr.Alloc] = r
			}
			r.Class = max(r.Class, kr.Class)
			r.Iterative = r.Iterative || kr.Iterative
			accesses[kr.Alloc] += kr.Accesses
			if kr.WSSKnown {
				r.WSSKnown = true
				r.WSS = max(r.WSS, kr.WSS)
			}
			for _, s := range kr.Spans {
				r.Span = max(r.Span, s.Bytes)
			}
			r.Launches++
		}
	}
	var out []Region
	for _, a := range p.Allocs {
		if r, ok := byName[a.Name]; ok {
			r.Density = accesses[a.Name] / float64(a.Bytes)
			out = append(out, *r)
		}
	}
	return out
}
