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

// hostPerByte is the generator's peak host memory (Go heap, collector
// headroom included) per byte of allocations, for the generators that
// compute the algorithm at construction; the others hold only a few
// scalars. Measured as the growth of runtime.MemStats.HeapSys while
// building at scale 64 and 256 (TestSizeBoundsHostMemory holds each value
// above the measurement):
//   - bfs: graphgen's draw arrays (4 B per half-edge in src and dst), the
//     graph (start, degree, 4 B per node each; dest, 4 B per edge) and
//     the levels, about 1.6 B per byte of its 15 B per node + 4 B per
//     edge of allocations, 2.2 B with the collector's headroom;
//   - sssp: the float32 distance arrays (8 B per vertex) and one finalized
//     bitset per iteration against 29 B of allocations per vertex, 0.34 B.
var hostPerByte = map[string]float64{
	"bfs":  2.4,
	"sssp": 0.4,
}

// hostBytes is implemented by workloads that know their host memory (a
// trace: its records).
type hostBytes interface{ HostBytes() uint64 }

// SizeOfWorkload is the size of a built workload.
func SizeOfWorkload(wl Workload) Size {
	var s Size
	for _, a := range wl.Allocs() {
		s.Bytes += a.Bytes
	}
	if h, ok := wl.(hostBytes); ok {
		s.Host = h.HostBytes()
	} else {
		s.Host = uint64(hostPerByte[wl.Name()] * float64(s.Bytes))
	}
	return s
}

// reference holds every built-in workload's size at scale 1, built once.
var reference sync.Map // name -> Size

// SizeOf predicts the size of the workload New(name, p) builds, without
// building it at p's scale: a built-in workload's allocations grow in
// proportion to Scale (each generator scales one dimension of its arrays,
// nw both dimensions by the square root), so its size is its size at
// scale 1 times Scale. A trace or a graph file is read.
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
	r := ref.(Size)
	return Size{Bytes: uint64(float64(r.Bytes) * scale), Host: uint64(float64(r.Host) * scale)}, nil
}
