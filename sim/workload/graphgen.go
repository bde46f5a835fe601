package workload

import (
	"math"
	"slices"
	"sync"
)

// Rodinia graphgen (benchmarks/data/bfs/inputGen/graphgen.cpp): every node
// draws MIN_EDGES..MAX_INIT_EDGES uniformly random neighbours and every such
// edge is stored in both directions, so degrees are 2..4 own draws plus a
// binomial number of reverse edges (mean 3), 6 on average.
const (
	graphgenMinEdges = 2
	graphgenMaxEdges = 4
)

// Random streams of the generator.
const (
	graphStreamDraws = iota + 1
	graphStreamNudge
	graphStreamDest
)

// generatedGraph is a graphgen graph kept in a few bytes per node, far
// below its edge lists. Draw p (0-based, node by node) is the edge pair from
// its node s to destination draw(seed, dest, p): node s lists it as a
// forward edge and the destination lists s as a reverse edge. The forward
// edges are drawn again from the seed when read. The reverse edges are
// counted per node once, at generation, and their sources listed only for
// one chunk of destinations at a time (revChunk), drawn again from the seed
// when a node outside the chunks at hand is read: a simulation reads the
// nodes of a kernel in ascending order, so each chunk is built once per
// kernel that reads it.
//
// Node i's edge list, in generation order, is then: its reverse edges from
// nodes below i (their draws come first), its own draws each followed, for
// a self loop, by the reverse edge it adds to the same list, and its reverse
// edges from nodes above i.
type generatedGraph struct {
	seed  uint64
	n     int
	pairs uint64
	draws []uint8 // per node: own draws, graphgenMinEdges..graphgenMaxEdges
	// revCount is every node's reverse-edge count, revCountWide where it
	// does not fit a byte (never at graphgen's degrees: a node's count is
	// binomial with a mean of 2 to 4), the exact count in revCountOver.
	revCount     []uint8
	revCountOver map[int]uint32
	// Per block of 64 nodes: the index of the first node's first draw and
	// of its first reverse edge.
	pairBase, revBase []uint64

	chunkNodes int // nodes per chunk of reverse edges, a multiple of 64
	// chunks holds the last revChunkSlots chunks built; building one reuses
	// the oldest slot's memory. fill is the building's per-node cursor.
	// mu guards chunks and fill when the chunks do not cover the graph;
	// a graph of one chunk builds it at generation and never changes.
	mu     sync.Mutex
	chunks [revChunkSlots]revChunk
	oldest int
	fill   []uint32
}

// revChunk lists the sources of the reverse edges of nodes lo .. lo+nodes-1:
// node i's are rev[revStart(i)-first ...], in draw order.
type revChunk struct {
	lo, nodes int // nodes = 0: the slot is empty
	first     uint64
	rev       []uint32
}

const (
	// revChunks: a large graph's reverse edges are listed a sixteenth at a
	// time, two chunks at hand (the nodes a kernel's resident thread blocks
	// read may straddle a chunk boundary), about 1.5 B per node against
	// the 12 B per node of the graph's reverse edges in GPU memory; each
	// chunk built costs a pass over every draw.
	revChunks     = 16
	revChunkSlots = 2
	// revChunkMinNodes: graphs of up to 2^18 nodes (graph256k.txt's
	// 261,444, scale 1) keep all their reverse edges in one chunk, built at
	// generation.
	revChunkMinNodes = 1 << 18
	// revCountWide marks a reverse-edge count of 255 or more in revCount.
	revCountWide = math.MaxUint8
)

// generateRodiniaGraph builds a graph with the structure of graphgen and
// exactly the given node and edge counts (edges must be even: every draw
// adds an edge pair). The per-node draw counts are uniform in 2..4 and then
// nudged one at a time, at random nodes, until they sum to edges/2. Each
// node's edge list holds its edges in generation order, as graphgen writes
// them.
func generateRodiniaGraph(nodes, edges int, seed uint64) *graph {
	return generateChunkedGraph(nodes, edges, seed, max(revChunkMinNodes, ceilDiv(nodes, revChunks)))
}

// generateChunkedGraph is generateRodiniaGraph listing reverse edges at
// least chunkNodes nodes at a time (rounded up to whole blocks of 64).
func generateChunkedGraph(nodes, edges int, seed uint64, chunkNodes int) *graph {
	gg := &generatedGraph{seed: seed, n: nodes, draws: make([]uint8, nodes), chunkNodes: ceilDiv(chunkNodes, 64) * 64}
	pairs := edges / 2
	total := 0
	for i := range gg.draws {
		gg.draws[i] = uint8(graphgenMinEdges + draw(seed, graphStreamDraws, uint64(i), graphgenMaxEdges-graphgenMinEdges+1))
		total += int(gg.draws[i])
	}
	pairs = max(min(pairs, nodes*graphgenMaxEdges), nodes*graphgenMinEdges)
	for k := uint64(0); total != pairs; k++ {
		i := draw(seed, graphStreamNudge, k, uint64(nodes))
		switch {
		case total < pairs && gg.draws[i] < graphgenMaxEdges:
			gg.draws[i]++
			total++
		case total > pairs && gg.draws[i] > graphgenMinEdges:
			gg.draws[i]--
			total--
		}
	}
	gg.pairs = uint64(pairs)
	blocks := ceilDiv(nodes, 64)
	gg.pairBase = make([]uint64, blocks)
	var p uint64
	for i, d := range gg.draws {
		if i%64 == 0 {
			gg.pairBase[i/64] = p
		}
		p += uint64(d)
	}
	// Count every node's reverse edges, drawing each destination once.
	gg.revCount = make([]uint8, nodes)
	for p := uint64(0); p < gg.pairs; p++ {
		t := int(gg.dest(p))
		switch c := gg.revCount[t]; {
		case c < revCountWide-1:
			gg.revCount[t]++
		case c == revCountWide-1:
			gg.revCount[t] = revCountWide
			if gg.revCountOver == nil {
				gg.revCountOver = map[int]uint32{}
			}
			gg.revCountOver[t] = revCountWide
		default:
			gg.revCountOver[t]++
		}
	}
	gg.revBase = make([]uint64, blocks)
	var off uint64
	for i := range gg.revCount {
		if i%64 == 0 {
			gg.revBase[i/64] = off
		}
		off += uint64(gg.reverseEdges(i))
	}
	if gg.chunkNodes >= nodes {
		gg.build(&gg.chunks[0], 0)
		gg.fill = nil
	}
	return &graph{gen: gg}
}

// dest is the destination of draw p.
func (gg *generatedGraph) dest(p uint64) uint32 {
	return uint32(draw(gg.seed, graphStreamDest, p, uint64(gg.n)))
}

// reverseEdges is node i's reverse-edge count.
func (gg *generatedGraph) reverseEdges(i int) uint32 {
	if c := gg.revCount[i]; c != revCountWide {
		return uint32(c)
	}
	return gg.revCountOver[i]
}

// firstPair is the index of node i's first draw.
func (gg *generatedGraph) firstPair(i int) uint64 {
	p := gg.pairBase[i/64]
	for _, d := range gg.draws[i&^63 : i] {
		p += uint64(d)
	}
	return p
}

// revStart is the index of node i's first reverse edge among all of them,
// node by node.
func (gg *generatedGraph) revStart(i int) uint64 {
	r := gg.revBase[i/64]
	for j := i &^ 63; j < i; j++ {
		r += uint64(gg.reverseEdges(j))
	}
	return r
}

// revAt is the index of node i's first reverse edge, at or past n the
// total count.
func (gg *generatedGraph) revAt(i int) uint64 {
	if i >= gg.n {
		return gg.pairs
	}
	return gg.revStart(i)
}

// build lists the reverse edges of the chunk starting at node lo into c,
// reusing its memory: the draws are drawn again and each one whose
// destination is in the chunk placed at the end of its destination's list,
// so every list is in draw order.
func (gg *generatedGraph) build(c *revChunk, lo int) {
	hi := min(lo+gg.chunkNodes, gg.n)
	c.lo, c.nodes, c.first = lo, hi-lo, gg.revAt(lo)
	c.rev = slices.Grow(c.rev[:0], int(gg.revAt(hi)-c.first))[:gg.revAt(hi)-c.first]
	gg.fill = slices.Grow(gg.fill[:0], hi-lo)[:hi-lo]
	next := uint32(0)
	for i := lo; i < hi; i++ {
		gg.fill[i-lo] = next
		next += gg.reverseEdges(i)
	}
	p := uint64(0)
	for s, d := range gg.draws {
		for range d {
			if t := int(gg.dest(p)); t >= lo && t < hi {
				c.rev[gg.fill[t-lo]] = uint32(s)
				gg.fill[t-lo]++
			}
			p++
		}
	}
}

// chunk is the chunk holding node i's reverse edges, built into the oldest
// slot when it is not at hand. The caller holds mu unless one chunk covers
// the graph.
func (gg *generatedGraph) chunk(i int) *revChunk {
	for k := range gg.chunks {
		if c := &gg.chunks[k]; c.nodes > 0 && i >= c.lo && i < c.lo+c.nodes {
			return c
		}
	}
	c := &gg.chunks[gg.oldest]
	gg.oldest = (gg.oldest + 1) % revChunkSlots
	gg.build(c, i/gg.chunkNodes*gg.chunkNodes)
	return c
}

// single reports whether one chunk, built at generation, covers the graph.
func (gg *generatedGraph) single() bool { return gg.chunkNodes >= gg.n }

// reverseSource is the source of node i's reverse edge k (its index among
// all reverse edges, node by node).
func (gg *generatedGraph) reverseSource(i int, k uint64) uint32 {
	if gg.single() {
		return gg.chunks[0].rev[k]
	}
	gg.mu.Lock()
	c := gg.chunk(i)
	s := c.rev[k-c.first]
	gg.mu.Unlock()
	return s
}

// edgeCursor is what reading one node's edge list needs: for a generated
// graph, where the node's own draws sit among its reverse edges.
type edgeCursor struct {
	start, degree uint32 // the node's edges are start .. start+degree-1
	node          uint32
	draws         uint32 // own draws
	below         uint32 // reverse edges from lower nodes, listed first
	selfLoops     uint32 // reverse edges that own draws add to this list
	firstPair     uint64
	rev           uint64 // first reverse edge, among all of them
}

// cursor returns node i's edge cursor.
func (g *graph) cursor(i int) edgeCursor {
	gg := g.gen
	if gg == nil {
		return edgeCursor{start: g.start[i], degree: g.degree[i]}
	}
	c := edgeCursor{node: uint32(i), draws: uint32(gg.draws[i]), firstPair: gg.firstPair(i), rev: gg.revStart(i)}
	reverse := gg.reverseEdges(i)
	if !gg.single() {
		gg.mu.Lock()
		defer gg.mu.Unlock()
	}
	ch := gg.chunk(i)
	for _, s := range ch.rev[c.rev-ch.first : c.rev-ch.first+uint64(reverse)] {
		switch {
		case s < c.node:
			c.below++
		case s == c.node:
			c.selfLoops++
		}
	}
	c.degree = c.draws + reverse
	// Edges before node i: every draw and reverse edge of the lower nodes.
	c.start = uint32(c.firstPair + c.rev)
	return c
}

// destOf is the destination of edge j (0 <= j < c.degree) of the cursor's
// node.
func (g *graph) destOf(c *edgeCursor, j uint32) uint32 {
	gg := g.gen
	if gg == nil {
		return g.dest[c.start+j]
	}
	switch own := c.draws + c.selfLoops; {
	case j < c.below:
		return gg.reverseSource(int(c.node), c.rev+uint64(j))
	case j >= c.below+own:
		return gg.reverseSource(int(c.node), c.rev+uint64(j-c.draws))
	}
	pos := c.below
	for q := uint64(0); ; q++ {
		d := gg.dest(c.firstPair + q)
		if pos == j {
			return d
		}
		pos++
		if d == c.node {
			if pos == j {
				return d
			}
			pos++
		}
	}
}

// expandLevel gives level k+1 to every unreached neighbour of a level-k
// node (narrowBFSLevels) in one pass over the draws: every draw is an edge
// in both directions, so a node's neighbours are the far ends of the draws
// it takes part in, and the pass needs no reverse edges. Only the draws of
// nodes at level k or unreached can change a level, so the others are not
// drawn again. found reports a node reached; ok is false when level k+1
// would be narrowUnreached.
func (gg *generatedGraph) expandLevel(level []uint8, k uint8) (found, ok bool) {
	p := uint64(0)
	for s, d := range gg.draws {
		ls := level[s]
		if ls != k && ls != narrowUnreached {
			p += uint64(d)
			continue
		}
		for range d {
			t := gg.dest(p)
			p++
			var reached *uint8
			switch lt := level[t]; {
			case ls == k && lt == narrowUnreached:
				reached = &level[t]
			case lt == k && ls == narrowUnreached:
				reached = &level[s]
				ls = k + 1
			default:
				continue
			}
			if k+1 == narrowUnreached {
				return false, false
			}
			*reached, found = k+1, true
		}
	}
	return found, true
}
