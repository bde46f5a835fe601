package workload

import (
	"fmt"
	"os"
)

// bfs: Rodinia BFS as shipped with the UVMSmart simulator
// (benchmarks/Managed/bfs, run on data/bfs/graph256k.txt: 261,444 nodes and
// 1,568,420 edges made by Rodinia's graphgen). The graph, masks and cost are
// cudaMallocManaged; the loop flag d_over is cudaMalloc'd. The host launches
// Kernel then Kernel2 (512 threads per block, one thread per node) until no
// node was discovered, so an iteration exists per BFS level plus the final
// one that finds nothing. The traversal always starts at node 0 (the
// benchmark overrides the file's source).
//
// Kernel, per thread tid with graph_mask[tid] set: clear the mask, read the
// 8 B node record, then for every edge read the destination id and its
// visited flag and, if unvisited, reload cost[tid] (the pointers are not
// restrict-qualified) and write cost[id] and updating_graph_mask[id].
// Kernel2, per thread with updating_graph_mask[tid] set: set the mask and
// visited flags, set d_over and clear the updating flag.
//
// At construction the traversal runs in Go and records each node's level;
// iteration k's frontier is the nodes of level k and a node is visited
// during iteration k exactly when its level is at most k.
//
// Scale multiplies the node and edge counts of the generated graph; a graph
// file is used as is (Scale must be 1).

const (
	bfsNodes   = 261444  // graph256k.txt
	bfsEdges   = 1568420 // graph256k.txt
	bfsThreads = 512     // MAX_THREADS_PER_BLOCK

	// ALU instructions per thread: tid and the bounds test; per edge the
	// loop bound, increment and visited test; cost[tid] + 1.
	bfsIndexOps = 4
	bfsEdgeOps  = 4
)

type bfs struct {
	g                                                 *graph
	level                                             nodeLevels
	nodes, mask, updating, visited, edges, cost, over uint64
}

func newBFS(p Params, scale float64) (*builtin, error) {
	var g *graph
	if p.GraphFile != "" {
		if scale != 1 {
			return nil, fmt.Errorf("workload bfs: Params.Scale = %v, but a graph file is used as is (Scale must be 1)", p.Scale)
		}
		f, err := os.Open(p.GraphFile)
		if err != nil {
			return nil, fmt.Errorf("workload bfs: %w", err)
		}
		defer f.Close()
		g, err = readRodiniaGraph(f)
		if err != nil {
			return nil, fmt.Errorf("workload bfs: %s: %w", p.GraphFile, err)
		}
	} else {
		edges := scaled(bfsEdges, scale, 2, 4)
		if err := checkGraphIndices("bfs", "edges", edges, bfsEdges, p.Scale); err != nil {
			return nil, err
		}
		g = generateRodiniaGraph(scaled(bfsNodes, scale, 1, 2), edges, p.Seed)
	}
	w := buildBFS(g)
	w.fromFile = p.GraphFile != ""
	return w, nil
}

func buildBFS(g *graph) *builtin {
	n, e := uint64(g.nodes()), uint64(g.edges())
	bf := &bfs{g: g}
	w := &builtin{name: "bfs", class: Irregular}
	iNodes := w.alloc("graph_nodes", 8*n, Managed, true)
	iMask := w.alloc("graph_mask", n, Managed, false)
	iUpd := w.alloc("updating_graph_mask", n, Managed, false)
	iVis := w.alloc("graph_visited", n, Managed, false)
	iEdges := w.alloc("graph_edges", 4*e, Managed, true)
	iCost := w.alloc("cost", 4*n, Managed, false)
	iOver := w.alloc("d_over", 1, Device, false)
	Layout(w.allocs)
	bf.nodes, bf.mask, bf.updating, bf.visited = w.base(iNodes), w.base(iMask), w.base(iUpd), w.base(iVis)
	bf.edges, bf.cost, bf.over = w.base(iEdges), w.base(iCost), w.base(iOver)
	var depth int
	bf.level, depth = bfsLevels(g)
	blocks := ceilDiv(g.nodes(), bfsThreads)
	for k := 0; k <= depth; k++ {
		k := int32(k)
		w.kernel(&Kernel{Name: "Kernel", Blocks: blocks, ThreadsPerBlock: bfsThreads,
			NewWarp: func(b, wp int) WarpStream { return newBFSExpand(bf, k, b*bfsThreads+wp*WarpSize) }})
		w.kernel(&Kernel{Name: "Kernel2", Blocks: blocks, ThreadsPerBlock: bfsThreads,
			NewWarp: func(b, wp int) WarpStream {
				return bfsUpdatePool.fill(bfsUpdate{bf: bf, k: k, tid0: b*bfsThreads + wp*WarpSize})
			}})
	}
	return w
}

// bfsExpand is one warp of Kernel in iteration k. The active lanes (level k)
// walk their edge lists in lockstep: edge step e runs for the lanes with
// more than e edges.
type bfsExpand struct {
	bf    *bfs
	k     int32
	tid0  int
	pc    int
	edge  uint32 // current edge step
	steps uint32 // longest active edge list
	n     int    // active lanes
	lane  [WarpSize]uint8
	edges [WarpSize]edgeCursor // the active lanes' edge lists
	dest  [WarpSize]uint32     // destination read at the current edge step
}

func newBFSExpand(bf *bfs, k int32, tid0 int) *bfsExpand {
	s := bfsExpandPool.fill(bfsExpand{bf: bf, k: k, tid0: tid0})
	for l := 0; l < WarpSize; l++ {
		tid := tid0 + l
		if tid < bf.level.len() && bf.level.at(uint32(tid)) == k {
			s.lane[s.n] = uint8(l)
			s.edges[s.n] = bf.g.cursor(tid)
			s.steps = max(s.steps, s.edges[s.n].degree)
			s.n++
		}
	}
	return s
}

const (
	bfsIndex = iota
	bfsLoadMask
	bfsClearMask
	bfsLoadNode
	bfsLoadEdge // edge-loop body starts here
	bfsLoadVisited
	bfsEdgeMath
	bfsLoadCost
	bfsStoreCost
	bfsStoreUpdating
)

func (s *bfsExpand) visited(v uint32) bool {
	l := s.bf.level.at(v)
	return l >= 0 && l <= s.k
}

var bfsExpandPool warpPool[bfsExpand]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *bfsExpand) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	bfsExpandPool.done(s)
	return false
}

func (s *bfsExpand) next(op *Op) bool {
	bf := s.bf
	for {
		pc := s.pc
		s.pc++
		switch pc {
		case bfsIndex:
			op.compute(bfsIndexOps)
			return true
		case bfsLoadMask:
			op.mem(OpLoad, 1)
			for l := 0; l < WarpSize && s.tid0+l < bf.level.len(); l++ {
				op.lane(bf.mask + uint64(s.tid0+l))
			}
		case bfsClearMask, bfsLoadNode:
			if pc == bfsClearMask {
				op.mem(OpStore, 1)
			} else {
				op.mem(OpLoad, 8)
			}
			for i := 0; i < s.n; i++ {
				tid := uint64(s.tid0 + int(s.lane[i]))
				if pc == bfsClearMask {
					op.lane(bf.mask + tid)
				} else {
					op.lane(bf.nodes + 8*tid)
				}
			}
		case bfsLoadEdge:
			if s.edge >= s.steps {
				return false
			}
			op.mem(OpLoad, 4)
			for i := 0; i < s.n; i++ {
				if c := &s.edges[i]; s.edge < c.degree {
					s.dest[i] = bf.g.destOf(c, s.edge)
					op.lane(bf.edges + 4*uint64(c.start+s.edge))
				}
			}
		case bfsLoadVisited:
			op.mem(OpLoad, 1)
			for i := 0; i < s.n; i++ {
				if s.edge < s.edges[i].degree {
					op.lane(bf.visited + uint64(s.dest[i]))
				}
			}
		case bfsEdgeMath:
			op.compute(bfsEdgeOps)
			return true
		case bfsLoadCost, bfsStoreCost, bfsStoreUpdating:
			switch pc {
			case bfsLoadCost:
				op.mem(OpLoad, 4)
			case bfsStoreCost:
				op.mem(OpStore, 4)
			default:
				op.mem(OpStore, 1)
			}
			for i := 0; i < s.n; i++ {
				if s.edge >= s.edges[i].degree || s.visited(s.dest[i]) {
					continue
				}
				switch pc {
				case bfsLoadCost:
					op.lane(bf.cost + 4*uint64(s.tid0+int(s.lane[i])))
				case bfsStoreCost:
					op.lane(bf.cost + 4*uint64(s.dest[i]))
				default:
					op.lane(bf.updating + uint64(s.dest[i]))
				}
			}
			if pc == bfsStoreUpdating {
				s.edge++
				s.pc = bfsLoadEdge
			}
		default:
			return false
		}
		if op.Lanes > 0 {
			return true
		}
	}
}

// bfsUpdate is one warp of Kernel2 in iteration k: the lanes whose node has
// level k+1 were discovered in this iteration.
type bfsUpdate struct {
	bf   *bfs
	k    int32
	tid0 int
	pc   int
}

var bfsUpdatePool warpPool[bfsUpdate]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *bfsUpdate) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	bfsUpdatePool.done(s)
	return false
}

func (s *bfsUpdate) next(op *Op) bool {
	bf := s.bf
	for {
		pc := s.pc
		s.pc++
		switch pc {
		case 0:
			op.compute(bfsIndexOps)
			return true
		case 1:
			op.mem(OpLoad, 1)
			for l := 0; l < WarpSize && s.tid0+l < bf.level.len(); l++ {
				op.lane(bf.updating + uint64(s.tid0+l))
			}
		case 2, 3, 4, 5: // graph_mask, graph_visited, *g_over, updating_graph_mask
			op.mem(OpStore, 1)
			for l := 0; l < WarpSize && s.tid0+l < bf.level.len(); l++ {
				tid := uint64(s.tid0 + l)
				if bf.level.at(uint32(tid)) != s.k+1 {
					continue
				}
				switch pc {
				case 2:
					op.lane(bf.mask + tid)
				case 3:
					op.lane(bf.visited + tid)
				case 4:
					op.lane(bf.over)
				default:
					op.lane(bf.updating + tid)
				}
			}
		default:
			return false
		}
		if op.Lanes > 0 {
			return true
		}
	}
}
