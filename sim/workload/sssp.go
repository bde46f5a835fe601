package workload

import (
	"math"
	"slices"
)

// sssp: the frontier-based single-source shortest path shipped with the
// UVMSmart simulator (benchmarks/Managed/sssp): 2^20 vertices, each with 2
// distinct random out-neighbours (not itself) and a weight (rand()%1000)/1000,
// source 0, blocks of 16 threads. vertexArray, edgeArray, weightArray,
// shortestDistances and updatingShortestDistances are cudaMallocManaged;
// finalizedVertices is cudaMalloc'd.
//
// Launches: initializeArrays, then while some vertex is finalized and fewer
// than MAX_ITERATION = 15 iterations ran, NUM_ASYNCHRONOUS_ITERATIONS = 5
// (Kernel1, Kernel2) pairs: at most 1 + 15*2 = 31 kernels.
// Kernel1, per finalized vertex: clear the flag, read its two vertexArray
// entries, its distance, then per edge the destination and weight and an
// atomicMin on the destination's updating distance (a load of the old value
// and one compare-and-swap). Kernel2, per vertex: read both distances; where
// the updating one is smaller, write the distance and set the flag; write
// the updating distance back.
//
// At construction the algorithm runs in Go with float32 arithmetic and
// records the finalized set before every iteration as a sorted list of
// vertices. A vertex is finalized only when an edge from the previous set
// improved it, so set it holds at most 2^it vertices: the sets together hold
// fewer than 2^(MAX_ITERATION+1) = 65,536, and the distances the algorithm
// keeps are those of the vertices it reached, at most twice as many, at any
// scale (ssspHostBytes).
//
// Scale multiplies the vertex count.

const (
	ssspVertices      = 1 << 20 // numVertices
	ssspNeighbours    = 2       // neighborsPerVertex
	ssspBlock         = 16      // BLOCK_SIZE
	ssspAsyncIters    = 5       // NUM_ASYNCHRONOUS_ITERATIONS
	ssspMaxIterations = 15      // MAX_ITERATION
	ssspWeightSteps   = 1000    // weight = (rand() % 1000) / 1000

	// ALU instructions per thread: tid and the bounds test; per edge the
	// loop test, the address and distance + weight, fminf; Kernel2's
	// comparison.
	ssspIndexOps = 3
	ssspEdgeOps  = 5
	ssspCmpOps   = 2
)

type sssp struct {
	n    int
	seed uint64
	// finalized[it] is the finalized set before iteration it (it = 0 ..
	// iterations), in ascending vertex order.
	finalized                                                [][]uint32
	vertexArr, edgeArr, weightArr, shortest, flags, updating uint64
}

func newSSSP(p Params, scale float64) (*builtin, error) {
	ss := &sssp{n: scaled(ssspVertices, scale, 1, ssspNeighbours+1), seed: p.Seed}
	n := uint64(ss.n)
	if err := checkGraphIndices("sssp", "edgeArray entries", ss.n*ssspNeighbours, ssspVertices*ssspNeighbours, p.Scale); err != nil {
		return nil, err
	}
	w := &builtin{name: "sssp", class: Irregular}
	iVertex := w.alloc("vertexArray", 4*n, Managed, true)
	iEdge := w.alloc("edgeArray", 4*n*ssspNeighbours, Managed, true)
	iWeight := w.alloc("weightArray", 4*n*ssspNeighbours, Managed, true)
	iShortest := w.alloc("shortestDistances", 4*n, Managed, false)
	iFlags := w.alloc("finalizedVertices", n, Device, false)
	iUpdating := w.alloc("updatingShortestDistances", 4*n, Managed, false)
	Layout(w.allocs)
	ss.vertexArr, ss.edgeArr, ss.weightArr = w.base(iVertex), w.base(iEdge), w.base(iWeight)
	ss.shortest, ss.flags, ss.updating = w.base(iShortest), w.base(iFlags), w.base(iUpdating)
	iterations := ss.run()

	blocks := ceilDiv(ss.n, ssspBlock)
	w.kernel(&Kernel{Name: "initializeArrays", Blocks: blocks, ThreadsPerBlock: ssspBlock,
		NewWarp: func(b, _ int) WarpStream { return ssspInitPool.fill(ssspInit{ss: ss, tid0: b * ssspBlock}) }})
	for it := 0; it < iterations; it++ {
		w.kernel(&Kernel{Name: "Kernel1", Blocks: blocks, ThreadsPerBlock: ssspBlock,
			NewWarp: func(b, _ int) WarpStream { return ssspRelaxPool.fill(ssspRelax{ss: ss, it: it, tid0: b * ssspBlock}) }})
		w.kernel(&Kernel{Name: "Kernel2", Blocks: blocks, ThreadsPerBlock: ssspBlock,
			NewWarp: func(b, _ int) WarpStream { return ssspSettlePool.fill(ssspSettle{ss: ss, it: it, tid0: b * ssspBlock}) }})
	}
	return w, nil
}

// neighbour returns out-edge l of vertex v: generateRandomGraph's rejection
// sampling (distinct from the earlier neighbours and from v itself) on a
// per-vertex random stream.
func (ss *sssp) neighbour(v, l int) uint32 {
	const streamDest = 1
	var chosen [ssspNeighbours]uint32
	attempt := uint64(0)
	for k := 0; k <= l; k++ {
		for {
			d := uint32(draw(ss.seed, streamDest, uint64(v)<<8|attempt, uint64(ss.n)))
			attempt++
			ok := d != uint32(v)
			for j := 0; j < k; j++ {
				ok = ok && d != chosen[j]
			}
			if ok {
				chosen[k] = d
				break
			}
		}
	}
	return chosen[l]
}

func (ss *sssp) weight(e int) float32 {
	const streamWeight = 2
	return float32(draw(ss.seed, streamWeight, uint64(e), ssspWeightSteps)) / ssspWeightSteps
}

// finalizedIn is the part of finalized set it in vertices [lo, hi).
func (ss *sssp) finalizedIn(it, lo, hi int) []uint32 {
	set := ss.finalized[it]
	i, _ := slices.BinarySearch(set, uint32(lo))
	j := i
	for j < len(set) && set[j] < uint32(hi) {
		j++
	}
	return set[i:j]
}

// ssspDistance is a reached vertex's shortestDistances and
// updatingShortestDistances; every other vertex holds FLT_MAX in both.
type ssspDistance struct{ dist, upd float32 }

// ssspHostBytes bounds the algorithm's host memory at any scale: the
// finalized sets (4 B per entry, fewer than 65,536 entries) and the map of
// reached vertices (at most 2^17, about 40 B each with the map's buckets),
// doubled for the collector.
const ssspHostBytes = 2 * (4<<16 + 40<<17)

// run executes the host loop and the kernels functionally and returns the
// number of (Kernel1, Kernel2) iterations launched. Only the vertices an
// edge from a finalized vertex reaches change, so a round visits those
// alone, in ascending order as the kernels do; the others keep FLT_MAX.
func (ss *sssp) run() int {
	reached := map[uint32]*ssspDistance{0: {0, 0}}
	flags := []uint32{0}
	var touched []uint32
	it := 0
	for len(flags) > 0 && it < ssspMaxIterations {
		for a := 0; a < ssspAsyncIters; a++ {
			ss.finalized = append(ss.finalized, flags)
			touched = touched[:0]
			for _, v := range flags {
				from := reached[v].dist
				for l := 0; l < ssspNeighbours; l++ {
					d := ss.neighbour(int(v), l)
					r, ok := reached[d]
					if !ok {
						r = &ssspDistance{math.MaxFloat32, math.MaxFloat32}
						reached[d] = r
					}
					r.upd = min(r.upd, from+ss.weight(int(v)*ssspNeighbours+l))
					touched = append(touched, d)
				}
			}
			slices.Sort(touched)
			var next []uint32
			for _, v := range slices.Compact(touched) {
				r := reached[v]
				if r.dist > r.upd {
					r.dist = r.upd
					next = append(next, v)
				}
				r.upd = r.dist
			}
			flags = next
			it++
		}
	}
	ss.finalized = append(ss.finalized, flags)
	return it
}

// ssspInit is initializeArrays: every vertex writes its flag and both
// distances.
type ssspInit struct {
	ss   *sssp
	tid0 int
	pc   int
}

var ssspInitPool warpPool[ssspInit]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *ssspInit) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	ssspInitPool.done(s)
	return false
}

func (s *ssspInit) next(op *Op) bool {
	ss := s.ss
	pc := s.pc
	s.pc++
	switch pc {
	case 0:
		op.compute(ssspIndexOps)
		return true
	case 1:
		op.mem(OpStore, 1)
	case 2, 3:
		op.mem(OpStore, 4)
	default:
		return false
	}
	for t := s.tid0; t < min(s.tid0+ssspBlock, ss.n); t++ {
		switch pc {
		case 1:
			op.lane(ss.flags + uint64(t))
		case 2:
			op.lane(ss.shortest + 4*uint64(t))
		default:
			op.lane(ss.updating + 4*uint64(t))
		}
	}
	return true
}

// ssspRelax is Kernel1 of iteration it.
type ssspRelax struct {
	ss     *sssp
	it     int
	tid0   int
	pc     int
	edge   int
	n      int
	active [ssspBlock]int32 // active vertex ids
	dest   [ssspBlock]uint32
}

const (
	relaxIndex = iota
	relaxLoadFlag
	relaxClearFlag
	relaxLoadStart
	relaxLoadEnd
	relaxLoadDist
	relaxLoadEdge // per-edge body starts here
	relaxLoadWeight
	relaxMath
	relaxLoadOld
	relaxCAS
)

var ssspRelaxPool warpPool[ssspRelax]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *ssspRelax) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	ssspRelaxPool.done(s)
	return false
}

func (s *ssspRelax) next(op *Op) bool {
	ss := s.ss
	hi := min(s.tid0+ssspBlock, ss.n)
	for {
		pc := s.pc
		s.pc++
		switch pc {
		case relaxIndex:
			op.compute(ssspIndexOps)
			return true
		case relaxLoadFlag:
			op.mem(OpLoad, 1)
			for t := s.tid0; t < hi; t++ {
				op.lane(ss.flags + uint64(t))
			}
			for _, t := range ss.finalizedIn(s.it, s.tid0, hi) {
				s.active[s.n] = int32(t)
				s.n++
			}
			return true
		case relaxClearFlag:
			op.mem(OpStore, 1)
			for _, t := range s.active[:s.n] {
				op.lane(ss.flags + uint64(t))
			}
		case relaxLoadStart, relaxLoadEnd:
			op.mem(OpLoad, 4)
			for _, t := range s.active[:s.n] {
				// vertexArray[tid + 1] is read only below numVertices.
				if pc == relaxLoadStart || int(t)+1 < ss.n {
					op.lane(ss.vertexArr + 4*uint64(int(t)+pc-relaxLoadStart))
				}
			}
		case relaxLoadDist:
			op.mem(OpLoad, 4)
			for _, t := range s.active[:s.n] {
				op.lane(ss.shortest + 4*uint64(t))
			}
		case relaxLoadEdge, relaxLoadWeight:
			if s.edge == ssspNeighbours || s.n == 0 {
				return false
			}
			op.mem(OpLoad, 4)
			for i, t := range s.active[:s.n] {
				e := uint64(int(t)*ssspNeighbours + s.edge)
				if pc == relaxLoadEdge {
					s.dest[i] = ss.neighbour(int(t), s.edge)
					op.lane(ss.edgeArr + 4*e)
				} else {
					op.lane(ss.weightArr + 4*e)
				}
			}
		case relaxMath:
			op.compute(ssspEdgeOps)
			return true
		case relaxLoadOld, relaxCAS:
			if pc == relaxLoadOld {
				op.mem(OpLoad, 4)
			} else {
				op.mem(OpAtomic, 4)
				s.edge++
				s.pc = relaxLoadEdge
			}
			for _, d := range s.dest[:s.n] {
				op.lane(ss.updating + 4*uint64(d))
			}
		default:
			return false
		}
		if op.Lanes > 0 {
			return true
		}
	}
}

// ssspSettle is Kernel2 of iteration it.
type ssspSettle struct {
	ss   *sssp
	it   int
	tid0 int
	pc   int
}

var ssspSettlePool warpPool[ssspSettle]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *ssspSettle) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	ssspSettlePool.done(s)
	return false
}

func (s *ssspSettle) next(op *Op) bool {
	ss := s.ss
	hi := min(s.tid0+ssspBlock, ss.n)
	for {
		pc := s.pc
		s.pc++
		switch pc {
		case 0:
			op.compute(ssspIndexOps)
			return true
		case 1:
			op.mem(OpLoad, 4)
			for t := s.tid0; t < hi; t++ {
				op.lane(ss.shortest + 4*uint64(t))
			}
		case 2:
			op.mem(OpLoad, 4)
			for t := s.tid0; t < hi; t++ {
				op.lane(ss.updating + 4*uint64(t))
			}
		case 3:
			op.compute(ssspCmpOps)
			return true
		case 4, 5: // shortestDistances[tid], finalizedVertices[tid] where improved
			if pc == 4 {
				op.mem(OpStore, 4)
			} else {
				op.mem(OpStore, 1)
			}
			for _, t := range ss.finalizedIn(s.it+1, s.tid0, hi) {
				if pc == 4 {
					op.lane(ss.shortest + 4*uint64(t))
				} else {
					op.lane(ss.flags + uint64(t))
				}
			}
		case 6:
			op.mem(OpStore, 4)
			for t := s.tid0; t < hi; t++ {
				op.lane(ss.updating + 4*uint64(t))
			}
		default:
			return false
		}
		if op.Lanes > 0 {
			return true
		}
	}
}
