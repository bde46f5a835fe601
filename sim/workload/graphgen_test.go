package workload

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceRodiniaGraph is the generator with every edge list stored: the
// reference the compact generatedGraph is checked against.
func referenceRodiniaGraph(nodes, edges int, seed uint64) *graph {
	const (
		streamDraws = iota + 1
		streamNudge
		streamDest
	)
	draws := make([]uint8, nodes)
	pairs := edges / 2
	total := 0
	for i := range draws {
		draws[i] = uint8(graphgenMinEdges + draw(seed, streamDraws, uint64(i), graphgenMaxEdges-graphgenMinEdges+1))
		total += int(draws[i])
	}
	pairs = max(min(pairs, nodes*graphgenMaxEdges), nodes*graphgenMinEdges)
	for k := uint64(0); total != pairs; k++ {
		i := draw(seed, streamNudge, k, uint64(nodes))
		switch {
		case total < pairs && draws[i] < graphgenMaxEdges:
			draws[i]++
			total++
		case total > pairs && draws[i] > graphgenMinEdges:
			draws[i]--
			total--
		}
	}
	// Draw every destination once, count degrees, then fill in order.
	src := make([]uint32, 0, pairs)
	dst := make([]uint32, 0, pairs)
	degree := make([]uint32, nodes)
	k := uint64(0)
	for i := range draws {
		for j := 0; j < int(draws[i]); j++ {
			d := uint32(draw(seed, streamDest, k, uint64(nodes)))
			k++
			src = append(src, uint32(i))
			dst = append(dst, d)
			degree[i]++
			degree[d]++
		}
	}
	g := &graph{start: make([]uint32, nodes), degree: degree, dest: make([]uint32, 2*len(src))}
	var off uint32
	for i := range g.start {
		g.start[i] = off
		off += degree[i]
	}
	fill := make([]uint32, nodes)
	for p := range src {
		s, d := src[p], dst[p]
		g.dest[g.start[s]+fill[s]] = d
		fill[s]++
		g.dest[g.start[d]+fill[d]] = s
		fill[d]++
	}
	return g
}

// explicitGraph reads every edge list of g through its cursors into the
// stored layout.
func explicitGraph(g *graph) *graph {
	x := &graph{start: make([]uint32, g.nodes()), degree: make([]uint32, g.nodes()), dest: make([]uint32, 0, g.edges())}
	for i := range x.start {
		c := g.cursor(i)
		x.start[i], x.degree[i] = c.start, c.degree
		for j := uint32(0); j < c.degree; j++ {
			x.dest = append(x.dest, g.destOf(&c, j))
		}
	}
	return x
}

// TestGeneratedGraphMatchesReference: the compact graph lists, node for
// node, the same edges in the same order as the stored reference, at sizes
// from a handful of nodes (many self loops and repeated draws) to the
// shipped input's, and allLevels finds the same levels on both.
func TestGeneratedGraphMatchesReference(t *testing.T) {
	for _, c := range []struct {
		nodes, edges int
		seed         uint64
	}{{2, 4, 1}, {3, 20, 2}, {5, 16, 3}, {64, 512, 4}, {65, 300, 5}, {1000, 6000, 6}, {bfsNodes, bfsEdges, 1}} {
		want := referenceRodiniaGraph(c.nodes, c.edges, c.seed)
		g := generateRodiniaGraph(c.nodes, c.edges, c.seed)
		require.Equal(t, want.nodes(), g.nodes(), "%+v", c)
		require.Equal(t, want.edges(), g.edges(), "%+v", c)
		assertSameGraph(t, want, g, fmt.Sprintf("%+v", c))
	}
}

// assertSameGraph checks that g lists the reference's edges node for node
// and gives its BFS levels and depth; name labels the case.
func assertSameGraph(t *testing.T, want, g *graph, name string) {
	t.Helper()
	got := explicitGraph(g)
	assert.Empty(t, cmp.Diff(want.start, got.start), "%s: start", name)
	assert.Empty(t, cmp.Diff(want.degree, got.degree), "%s: degree", name)
	assert.Empty(t, cmp.Diff(want.dest, got.dest), "%s: dest", name)
	wantLevel, wantDepth := allLevels(want)
	level, depth := allLevels(g)
	assert.Equal(t, wantDepth, depth, "%s: depth", name)
	assert.Empty(t, cmp.Diff(wantLevel, level), "%s: level", name)
}

// TestChunkedGraphMatchesReference: a graph whose reverse edges are listed
// a few blocks of 64 nodes at a time reads, node for node, the reference's
// edge lists, in ascending node order (a chunk built once per pass), in a
// random order (chunks built again and again) and from two goroutines at
// once.
func TestChunkedGraphMatchesReference(t *testing.T) {
	for _, c := range []struct {
		nodes, edges, chunk int
		seed                uint64
	}{{65, 300, 64, 5}, {1000, 6000, 64, 6}, {1000, 6000, 200, 7}, {3000, 18000, 1000, 8}} {
		want := referenceRodiniaGraph(c.nodes, c.edges, c.seed)
		g := generateChunkedGraph(c.nodes, c.edges, c.seed, c.chunk)
		require.False(t, g.gen.single(), "%+v", c)
		assertSameGraph(t, want, g, fmt.Sprintf("%+v", c))

		r := rand.New(rand.NewPCG(c.seed, 1))
		done := make(chan []string, 2)
		for range 2 {
			order := r.Perm(c.nodes)
			go func() {
				var diffs []string
				for _, i := range order {
					cur := g.cursor(i)
					if cur.start != want.start[i] || cur.degree != want.degree[i] {
						diffs = append(diffs, fmt.Sprintf("node %d: start %d degree %d, want %d %d", i, cur.start, cur.degree, want.start[i], want.degree[i]))
						continue
					}
					for j := uint32(0); j < cur.degree; j++ {
						if d := g.destOf(&cur, j); d != want.dest[want.start[i]+j] {
							diffs = append(diffs, fmt.Sprintf("node %d edge %d: %d, want %d", i, j, d, want.dest[want.start[i]+j]))
						}
					}
				}
				done <- diffs
			}()
		}
		for range 2 {
			assert.Empty(t, <-done, "%+v: random order", c)
		}
	}
}
