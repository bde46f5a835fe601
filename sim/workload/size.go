package workload

import (
	"fmt"
	"sync"
)

// Size is what a workload occupies, known before a run: the bytes its
// allocations span in the simulated machine, and the host memory the
// simulator needs to hold it (the generator's arrays at their peak, or a
// trace's records).
type Size struct {
	Bytes uint64 // allocations, managed and device
	Host  uint64 // host bytes of the workload itself, at the generator's peak
}

// generatorHost is a generator's peak host memory for allocations of the
// given bytes; the generators not named hold only a few scalars and draw
// their addresses from the seed as the warps run.
//   - bfs: the generated graph (generatedGraph: 1 B of draw count and 4 B
//     of reverse-edge offset per node, 4 B per reverse edge, 1 B per 64
//     nodes of block bases) and one byte of level per node, 6.25 B per
//     node + 4 B per edge pair against 15 B per node + 8 B per edge pair
//     of allocations: at most 0.48 B per byte at graphgen's 2 to 4 pairs
//     per node; 0.55 leaves room for the collector (TestSizeBoundsHostMemory
//     holds it above the measured heap).
//   - sssp: fixed at any scale (ssspHostBytes).
func generatorHost(name string, bytes uint64) uint64 {
	switch name {
	case "bfs":
		return uint64(bfsHostPerByte * float64(bytes))
	case "sssp":
		return ssspHostBytes
	}
	return 0
}

const (
	bfsHostPerByte = 0.55
	// graphFileHostPerByte: a graph read from a file is held whole (start
	// and degree per node, a destination per edge, each grown by append)
	// with int32 levels where it is deep, about 2 B per byte at graphgen's
	// degrees and 2.4 B at most.
	graphFileHostPerByte = 2.4
)

// hostBytes is implemented by workloads that know their host memory (a
// trace: its records).
type hostBytes interface{ HostBytes() uint64 }

// SizeOfWorkload is the size of a built workload.
func SizeOfWorkload(wl Workload) Size {
	var s Size
	for _, a := range wl.Allocs() {
		s.Bytes += a.Bytes
	}
	switch b, isBuiltin := wl.(*builtin); {
	case isBuiltin && b.fromFile:
		s.Host = uint64(graphFileHostPerByte * float64(s.Bytes))
	case isBuiltin:
		s.Host = generatorHost(b.name, s.Bytes)
	default:
		if h, ok := wl.(hostBytes); ok {
			s.Host = h.HostBytes()
		}
	}
	return s
}

// reference holds every built-in workload's size at scale 1, built once.
var reference sync.Map // name -> Size

// SizeOf predicts the size of the workload New(name, p) builds, without
// building it at p's scale: a built-in workload's allocations grow in
// proportion to Scale (each generator scales one dimension of its arrays,
// nw both dimensions by the square root), so its allocations are those at
// scale 1 times Scale, and its host memory generatorHost of them. A trace
// or a graph file is read.
func SizeOf(name string, p Params) (Size, error) {
	if _, ok := TraceFile(name); ok || p.GraphFile != "" {
		wl, err := New(name, p)
		if err != nil {
			return Size{}, err
		}
		return SizeOfWorkload(wl), nil
	}
	if _, ok := generatorOf(name); !ok {
		return Size{}, CheckName(name)
	}
	ref, ok := reference.Load(name)
	if !ok {
		wl, err := New(name, Params{Scale: 1, Seed: 1})
		if err != nil {
			return Size{}, fmt.Errorf("workload %s: %w", name, err)
		}
		ref, _ = reference.LoadOrStore(name, SizeOfWorkload(wl))
	}
	scale := p.Scale
	if scale == 0 {
		scale = 1
	}
	bytes := uint64(float64(ref.(Size).Bytes) * scale)
	return Size{Bytes: bytes, Host: generatorHost(name, bytes)}, nil
}
