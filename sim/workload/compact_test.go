package workload

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The graph workloads keep their data compactly; these are the streams
// every warp of every kernel yielded when they kept it whole (bfs its
// levels as int32 and its reverse-edge offsets per node, sssp its
// distances per vertex and each finalized set as a bitset), hashed with
// streamHash over all warps, at commit 4a0b2cf.
var wholeDataStreams = []struct {
	name  string
	scale float64
	seed  uint64
	hash  uint64
}{
	{"bfs", 0.01, 1, 0x873cb21c7d032856},
	{"bfs", 0.01, 7, 0x90ddd5dca99cc449},
	{"bfs", 0.1, 2, 0xd43d6be6db9f7472},
	{"bfs", 0.1, 3, 0xde33a713303d3ea1},
	{"bfs", 0.5, 4, 0xf656a12391619d99},
	{"bfs", 1, 1, 0x12406c180f1bfe25},
	{"bfs", 2, 5, 0x54352cfb7534dc8a},
	{"sssp", 0.01, 1, 0xb0a97b04ba7be771},
	{"sssp", 0.01, 7, 0x9a51a29ffc753f61},
	{"sssp", 0.1, 2, 0x3edaa2fd49c01329},
	{"sssp", 0.1, 3, 0x894e5e23daf5c3fc},
	{"sssp", 0.5, 4, 0x9f53a7b4e7d7c17f},
	{"sssp", 1, 1, 0x381daa9df71fafe1},
	{"sssp", 2, 5, 0xca7ed9f6d3c5b0d6},
}

// TestCompactDataSameStreams: every lane address of every warp is the one
// the whole-data representation gave, for several seeds and scales.
func TestCompactDataSameStreams(t *testing.T) {
	for _, c := range wholeDataStreams {
		if testing.Short() && c.scale > 0.1 {
			continue
		}
		wl := mustNew(t, c.name, Params{Scale: c.scale, Seed: c.seed})
		assert.Equal(t, c.hash, streamHash(wl, math.MaxInt), "%s at scale %g, seed %d", c.name, c.scale, c.seed)
	}
}

// referenceSSSPFinalized is sssp's host loop over whole arrays: a float32
// distance pair per vertex and every finalized set as a bitset of all
// vertices.
func referenceSSSPFinalized(ss *sssp) [][]uint64 {
	n := ss.n
	dist := make([]float32, n)
	upd := make([]float32, n)
	for i := range dist {
		dist[i], upd[i] = math.MaxFloat32, math.MaxFloat32
	}
	dist[0], upd[0] = 0, 0
	words := (n + 63) / 64
	flags := make([]uint64, words)
	flags[0] = 1
	nonEmpty := func(f []uint64) bool {
		for _, x := range f {
			if x != 0 {
				return true
			}
		}
		return false
	}
	var finalized [][]uint64
	for it := 0; nonEmpty(flags) && it < ssspMaxIterations; {
		for a := 0; a < ssspAsyncIters; a++ {
			finalized = append(finalized, flags)
			for wi, word := range flags {
				for ; word != 0; word &= word - 1 {
					v := wi*64 + bits.TrailingZeros64(word)
					for l := 0; l < ssspNeighbours; l++ {
						d := ss.neighbour(v, l)
						upd[d] = min(upd[d], dist[v]+ss.weight(v*ssspNeighbours+l))
					}
				}
			}
			next := make([]uint64, words)
			for v := 0; v < n; v++ {
				if dist[v] > upd[v] {
					dist[v] = upd[v]
					next[v/64] |= 1 << (v % 64)
				}
				upd[v] = dist[v]
			}
			flags = next
			it++
		}
	}
	return append(finalized, flags)
}

// TestSSSPFinalizedSetsMatchReference: the sparse host loop finalizes the
// same vertices in every iteration as the loop over whole arrays, for
// graphs from a handful of vertices (where the frontier fills the graph)
// to several times the shipped size, and its sets stay under the bound
// ssspHostBytes assumes.
func TestSSSPFinalizedSetsMatchReference(t *testing.T) {
	for _, c := range []struct {
		n    int
		seed uint64
	}{{3, 1}, {4, 2}, {100, 3}, {5000, 4}, {ssspVertices, 1}, {ssspVertices, 9}, {3 * ssspVertices, 5}} {
		if testing.Short() && c.n > ssspVertices {
			continue
		}
		ss := &sssp{n: c.n, seed: c.seed}
		iterations := ss.run()
		want := referenceSSSPFinalized(&sssp{n: c.n, seed: c.seed})
		require.Len(t, ss.finalized, iterations+1, "%+v", c)
		require.Len(t, want, len(ss.finalized), "%+v", c)
		entries := 0
		for it, set := range ss.finalized {
			bitset := make([]uint64, len(want[it]))
			for _, v := range set {
				bitset[v/64] |= 1 << (v % 64)
			}
			assert.Empty(t, cmp.Diff(want[it], bitset), "%+v: iteration %d", c, it)
			assert.LessOrEqual(t, len(set), 1<<it, "%+v: iteration %d", c, it)
			entries += len(set)
		}
		assert.Less(t, entries, 1<<16, "%+v", c)
	}
}

// allLevels is bfsLevels with every node's level in an int32.
func allLevels(g *graph) ([]int32, int) {
	l, depth := bfsLevels(g)
	all := make([]int32, l.len())
	for v := range all {
		all[v] = l.at(uint32(v))
	}
	return all, depth
}

// TestNarrowLevelsMatchWide: the one-byte search finds the levels and depth
// of the queue search, unreachable nodes included, and a graph too deep for
// one byte (a path of 300 nodes) falls back to the queue.
func TestNarrowLevelsMatchWide(t *testing.T) {
	for _, c := range []struct {
		nodes, edges int
		seed         uint64
	}{{2, 4, 1}, {5, 16, 3}, {1000, 6000, 6}, {bfsNodes, bfsEdges, 2}} {
		g := generateRodiniaGraph(c.nodes, c.edges, c.seed)
		narrow, depth, ok := narrowBFSLevels(g)
		require.True(t, ok, "%+v", c)
		wide, wideDepth := wideBFSLevels(g)
		assert.Equal(t, wideDepth, depth, "%+v", c)
		for v := range wide {
			assert.Equal(t, wide[v], (&nodeLevels{narrow: narrow}).at(uint32(v)), "%+v: node %d", c, v)
		}
	}
	// A path 0 - 1 - ... - 299 plus an unreachable node 300.
	const n = 301
	path := &graph{start: make([]uint32, n), degree: make([]uint32, n)}
	for i := 0; i < n-1; i++ {
		path.start[i] = uint32(len(path.dest))
		for _, v := range []int{i - 1, i + 1} {
			if v >= 0 && v < n-1 {
				path.dest = append(path.dest, uint32(v))
				path.degree[i]++
			}
		}
	}
	path.start[n-1] = uint32(len(path.dest))
	_, _, ok := narrowBFSLevels(path)
	assert.False(t, ok)
	l, depth := bfsLevels(path)
	assert.Nil(t, l.narrow)
	assert.Equal(t, n-2, depth)
	assert.Equal(t, int32(299), l.at(299))
	assert.Equal(t, int32(-1), l.at(300))
}

// The graph generators refuse a scale whose indices overflow a C int before
// generating anything, and the scale the message names is accepted.
func TestGraphIndicesBoundScale(t *testing.T) {
	for _, c := range []struct {
		name     string
		perScale int
		count    func(scale float64) int
	}{
		{"bfs", bfsEdges, func(s float64) int { return scaled(bfsEdges, s, 2, 4) }},
		{"sssp", ssspVertices * ssspNeighbours, func(s float64) int { return ssspNeighbours * scaled(ssspVertices, s, 1, ssspNeighbours+1) }},
	} {
		largest := maxGraphCount / c.perScale
		require.NoError(t, checkGraphIndices(c.name, "x", c.count(float64(largest)), c.perScale, float64(largest)), c.name)
		_, err := New(c.name, Params{Scale: float64(largest + 1), Seed: 1})
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), fmt.Sprintf("Params.Scale = %d fits", largest), c.name)
	}
}
