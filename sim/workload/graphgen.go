package workload

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

// generatedGraph is a graphgen graph kept in about half the memory of its
// edge lists. Draw p (0-based, node by node) is the edge pair from its node
// s to destination draw(seed, dest, p): node s lists it as a forward edge
// and the destination lists s as a reverse edge. The forward edges are drawn
// again from the seed when read; only the reverse edges are stored, grouped
// by destination, in draw order.
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
	// Per block of 64 nodes: the index of the first node's first draw and
	// of its first reverse edge; revOff[i] is node i's first reverse edge
	// from its block's.
	pairBase, revBase []uint64
	revOff            []uint32
	rev               []uint32 // source of every reverse edge
}

// generateRodiniaGraph builds a graph with the structure of graphgen and
// exactly the given node and edge counts (edges must be even: every draw
// adds an edge pair). The per-node draw counts are uniform in 2..4 and then
// nudged one at a time, at random nodes, until they sum to edges/2. Each
// node's edge list holds its edges in generation order, as graphgen writes
// them.
func generateRodiniaGraph(nodes, edges int, seed uint64) *graph {
	gg := &generatedGraph{seed: seed, n: nodes, draws: make([]uint8, nodes)}
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
	blocks := (nodes + 63) / 64
	gg.pairBase = make([]uint64, blocks)
	var p uint64
	for i, d := range gg.draws {
		if i%64 == 0 {
			gg.pairBase[i/64] = p
		}
		p += uint64(d)
	}
	// Count every node's reverse edges in revOff, turn the counts into the
	// offsets just past each node's list, then place the sources going
	// through the draws backwards, each one in front of the last placed:
	// every list ends in draw order and every offset back at its start.
	// The destinations are drawn a second time rather than kept.
	gg.revOff = make([]uint32, nodes)
	for p := uint64(0); p < gg.pairs; p++ {
		gg.revOff[gg.dest(p)]++
	}
	gg.revBase = make([]uint64, blocks)
	var off uint64
	for i, c := range gg.revOff {
		if i%64 == 0 {
			gg.revBase[i/64] = off
		}
		off += uint64(c)
		gg.revOff[i] = uint32(off - gg.revBase[i/64])
	}
	gg.rev = make([]uint32, gg.pairs)
	p = gg.pairs
	for s := nodes - 1; s >= 0; s-- {
		for range gg.draws[s] {
			p--
			t := gg.dest(p)
			gg.revOff[t]--
			gg.rev[gg.revStart(int(t))] = uint32(s)
		}
	}
	return &graph{gen: gg}
}

// dest is the destination of draw p.
func (gg *generatedGraph) dest(p uint64) uint32 {
	return uint32(draw(gg.seed, graphStreamDest, p, uint64(gg.n)))
}

// firstPair is the index of node i's first draw.
func (gg *generatedGraph) firstPair(i int) uint64 {
	p := gg.pairBase[i/64]
	for _, d := range gg.draws[i&^63 : i] {
		p += uint64(d)
	}
	return p
}

// revStart is the index of node i's first reverse edge in rev.
func (gg *generatedGraph) revStart(i int) uint64 {
	return gg.revBase[i/64] + uint64(gg.revOff[i])
}

// revEnd is one past node i's last reverse edge.
func (gg *generatedGraph) revEnd(i int) uint64 {
	if i+1 == gg.n {
		return gg.pairs
	}
	return gg.revStart(i + 1)
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
	rev           uint64 // first reverse edge in generatedGraph.rev
}

// cursor returns node i's edge cursor.
func (g *graph) cursor(i int) edgeCursor {
	gg := g.gen
	if gg == nil {
		return edgeCursor{start: g.start[i], degree: g.degree[i]}
	}
	c := edgeCursor{node: uint32(i), draws: uint32(gg.draws[i]), firstPair: gg.firstPair(i), rev: gg.revStart(i)}
	end := gg.revEnd(i)
	for _, s := range gg.rev[c.rev:end] {
		switch {
		case s < c.node:
			c.below++
		case s == c.node:
			c.selfLoops++
		}
	}
	c.degree = c.draws + uint32(end-c.rev)
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
		return gg.rev[c.rev+uint64(j)]
	case j >= c.below+own:
		return gg.rev[c.rev+uint64(j-c.draws)]
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
