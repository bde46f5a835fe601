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
//   - bfs and ispass-bfs: the generated graph (generatedGraph: 1 B of
//     draw count, 1 B of reverse-edge count and 1 B of level per node,
//     16 B per 64 nodes of block bases, and the reverse edges of two
//     chunks of a sixteenth of the nodes, or of 2^18 nodes in smaller
//     graphs, 4 B each, with a 4 B fill cursor per node of one chunk),
//     about 5 B per node against 15 B per node + 8 B per edge pair of
//     allocations: 0.13 B per byte at graphgen's 3 pairs per node, 0.16
//     at 2, plus the chunks of the smaller graphs. bfsHostPerByte and
//     bfsHostChunks leave room for the collector and for the chunks'
//     growth (TestSizeBoundsHostMemory holds them above the measured
//     heap).
//   - sssp: fixed at any scale (ssspHostBytes).
func generatorHost(name string, bytes uint64) uint64 {
	switch name {
	case "bfs", "ispass-bfs":
		return uint64(bfsHostPerByte*float64(bytes)) + bfsHostChunks
	case "sssp":
		return ssspHostBytes
	}
	return 0
}

const (
	bfsHostPerByte = 0.2
	bfsHostChunks  = 16 << 20
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
