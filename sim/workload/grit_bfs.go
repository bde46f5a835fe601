package workload

// grit-bfs: SHOC BFS as MGPUSim ships it (amd/benchmarks/shoc/bfs). The
// graph (graph.go:22-49) is a random spanning tree, node i linked to a
// uniformly drawn parent below it, plus uniformly drawn extra edges until
// there are numNode*degree/2 undirected edges; each node lists its
// neighbours in the order the edges were made. The host allocates levels
// (numNode uints, all UINT_MAX but the source's 0), edgeArray (numNode+1
// offsets), edgeArrayAux (the neighbour lists) and a one-word flag
// (bfs.go:144-163), then for depth curr = 0, 1, .. clears the flag, launches
// BFS_kernel_warp on groups of 1024 over numNode rounded up to 1024, reads
// the flag back and stops when no kernel set it (bfs.go:179-233).
//
// BFS_kernel_warp (native/kernels.cl:34-64) with W_SZ = CHUNK_SZ = 32:
// warp W_ID walks vertices 32*W_ID .. 32*W_ID+31 one by one, every lane
// reading levels[v]; for a frontier vertex (levels[v] == curr) every lane
// reads edgeArray[v] and edgeArray[v+1], then lane W_OFF takes neighbours
// W_OFF, W_OFF+32, ..: it reads edgeArrayAux[off+i] and levels[nbr], and an
// unvisited neighbour gets levels[nbr] = curr+1 and *flag = 1. Which of two
// frontier vertices sharing an unvisited neighbour writes first depends on
// timing; the model lets every lane whose neighbour's BFS level is curr+1
// write (the upper bound). Neighbours are drawn uniformly, so every warp
// reads and writes levels all over the array (random, GRIT Table II).
//
// 1,677,721 nodes of degree 3 give 32.0 MiB (GRIT Table II: 32). The
// generator draws from Params.Seed where MGPUSim seeds with 42. Scale
// multiplies the node count.

import "math"

const (
	gritBFSNodes  = 1677721
	gritBFSDegree = 3    // samples/bfs/main.go:17
	gritBFSBlock  = 1024 // bfs.go:179
	gritBFSChunk  = 32   // CHUNK_SZ, bfs.go:188
	// random streams of the generator
	gritBFSTreeStream  = 1
	gritBFSExtraStream = 2
	// ALU instructions: the level compare; the neighbour count and loop
	// test; the visited test.
	gritBFSTestOps  = 1
	gritBFSCountOps = 2
)

type gritBFSGraph struct {
	nodes                            int
	offset                           []uint32 // edgeArray
	edges                            []uint32 // edgeArrayAux
	level                            []uint32 // final BFS level of each node, MaxUint32 if unreachable
	levels, edgeArray, edgeAux, flag uint64
}

// generate builds the graph's neighbour lists in edge-creation order.
func (g *gritBFSGraph) generate(seed uint64) {
	n := g.nodes
	target := n * gritBFSDegree / 2
	extra := func(yield func(u, v int)) {
		made := n - 1
		for j := uint64(0); made < target; j++ {
			u := int(draw(seed, gritBFSExtraStream, 2*j, uint64(n)))
			v := int(draw(seed, gritBFSExtraStream, 2*j+1, uint64(n)))
			if u != v {
				yield(u, v)
				made++
			}
		}
	}
	parent := func(i int) int { return int(draw(seed, gritBFSTreeStream, uint64(i), uint64(i))) }
	deg := make([]uint32, n+1)
	for i := 1; i < n; i++ {
		deg[parent(i)]++
		deg[i]++
	}
	extra(func(u, v int) { deg[u]++; deg[v]++ })
	g.offset = make([]uint32, n+1)
	for i := 0; i < n; i++ {
		g.offset[i+1] = g.offset[i] + deg[i]
	}
	g.edges = make([]uint32, g.offset[n])
	fill := deg[:n]
	copy(fill, g.offset[:n])
	add := func(u, v int) {
		g.edges[fill[u]] = uint32(v)
		fill[u]++
	}
	for i := 1; i < n; i++ {
		p := parent(i)
		add(p, i)
		add(i, p)
	}
	extra(func(u, v int) { add(u, v); add(v, u) })
}

// bfs fills level from source node 0 and returns the deepest level.
func (g *gritBFSGraph) bfs() uint32 {
	g.level = make([]uint32, g.nodes)
	for i := range g.level {
		g.level[i] = math.MaxUint32
	}
	g.level[0] = 0
	frontier := []uint32{0}
	depth := uint32(0)
	for len(frontier) > 0 {
		var nextFrontier []uint32
		for _, v := range frontier {
			for _, u := range g.edges[g.offset[v]:g.offset[v+1]] {
				if g.level[u] == math.MaxUint32 {
					g.level[u] = g.level[v] + 1
					nextFrontier = append(nextFrontier, u)
				}
			}
		}
		if len(nextFrontier) > 0 {
			depth++
		}
		frontier = nextFrontier
	}
	return depth
}

func newGritBFS(p Params, scale float64) (*builtin, error) {
	g := &gritBFSGraph{nodes: scaled(gritBFSNodes, scale, 1, 2)}
	if err := checkIndexRange("grit-bfs", uint64(g.nodes)*gritBFSDegree); err != nil {
		return nil, err
	}
	g.generate(p.Seed)
	depth := g.bfs()
	w := &builtin{name: "grit-bfs", class: Irregular}
	iLev := w.alloc("levels", uint64(g.nodes)*4, Managed, false)
	iOff := w.alloc("edgeArray", uint64(g.nodes+1)*4, Managed, true)
	iAux := w.alloc("edgeArrayAux", uint64(len(g.edges))*4, Managed, true)
	iFlag := w.alloc("flag", 4, Managed, false)
	Layout(w.allocs)
	g.levels, g.edgeArray, g.edgeAux, g.flag = w.base(iLev), w.base(iOff), w.base(iAux), w.base(iFlag)
	flagRange := [][2]uint64{{g.flag, g.flag + 4}}
	blocks := ceilDiv(g.nodes, gritBFSBlock)
	// The kernel of the deepest level finds no new node and ends the loop.
	for curr := uint32(0); curr <= depth; curr++ {
		w.host(&HostAccess{Alloc: "flag", Ranges: flagRange, Write: true})
		w.kernel(&Kernel{Name: "BFS_kernel_warp", Blocks: blocks, ThreadsPerBlock: gritBFSBlock,
			NewWarp: func(b, wp int) WarpStream {
				v := (b*gritBFSBlock/WarpSize + wp) * gritBFSChunk
				return &gritBFSWarp{g: g, curr: curr, v: v, end: min(v+gritBFSChunk, g.nodes)}
			}})
		w.host(&HostAccess{Alloc: "flag", Ranges: flagRange})
	}
	return w, nil
}

// gritBFSWarp walks its chunk of vertices; state says which instruction of
// the current vertex comes next.
type gritBFSWarp struct {
	g      *gritBFSGraph
	curr   uint32
	v, end int
	state  int
	nbr    int // first neighbour index of the current 32-neighbour round
}

const (
	bfsLoadLevel = iota
	bfsTestLevel
	bfsLoadOffset
	bfsLoadNext
	bfsCount
	bfsLoadNbr
	bfsLoadNbrLevel
	bfsVisitTest
	bfsStoreLevel
	bfsStoreFlag
)

func (s *gritBFSWarp) Next(op *Op) bool {
	g := s.g
	for s.v < s.end {
		v := s.v
		state := s.state
		s.state++
		switch state {
		case bfsLoadLevel:
			broadcast(op, g.levels+4*uint64(v))
			return true
		case bfsTestLevel:
			if g.level[v] != s.curr {
				s.v, s.state = v+1, bfsLoadLevel
			}
			op.compute(gritBFSTestOps)
			return true
		case bfsLoadOffset:
			broadcast(op, g.edgeArray+4*uint64(v))
			return true
		case bfsLoadNext:
			broadcast(op, g.edgeArray+4*uint64(v+1))
			return true
		case bfsCount:
			s.nbr = 0
			op.compute(gritBFSCountOps)
			return true
		case bfsLoadNbr, bfsLoadNbrLevel, bfsStoreLevel, bfsStoreFlag:
			s.neighbours(op, state, v)
			if state == bfsStoreFlag {
				s.nextRound(v)
			}
			if op.Lanes > 0 {
				return true
			}
		case bfsVisitTest:
			op.compute(gritBFSTestOps)
			return true
		}
	}
	return false
}

// nextRound moves to the next 32 neighbours of v, or to the next vertex.
func (s *gritBFSWarp) nextRound(v int) {
	g := s.g
	s.nbr += WarpSize
	if s.nbr < int(g.offset[v+1]-g.offset[v]) {
		s.state = bfsLoadNbr
		return
	}
	s.v, s.state = v+1, bfsLoadLevel
}

func (s *gritBFSWarp) neighbours(op *Op, state, v int) {
	g := s.g
	kind := OpLoad
	if state == bfsStoreLevel || state == bfsStoreFlag {
		kind = OpStore
	}
	op.mem(kind, 4)
	lo, hi := int(g.offset[v]), int(g.offset[v+1])
	for i := lo + s.nbr; i < hi && i < lo+s.nbr+WarpSize; i++ {
		u := g.edges[i]
		switch state {
		case bfsLoadNbr:
			op.lane(g.edgeAux + 4*uint64(i))
		case bfsLoadNbrLevel:
			op.lane(g.levels + 4*uint64(u))
		case bfsStoreLevel:
			if g.level[u] == s.curr+1 {
				op.lane(g.levels + 4*uint64(u))
			}
		case bfsStoreFlag:
			if g.level[u] == s.curr+1 {
				op.lane(g.flag)
			}
		}
	}
}

// broadcast makes op a load of one word by all 32 lanes.
func broadcast(op *Op, addr uint64) {
	op.mem(OpLoad, 4)
	for l := 0; l < WarpSize; l++ {
		op.lane(addr)
	}
}
