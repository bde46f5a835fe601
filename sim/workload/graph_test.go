package workload

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 5-node graph in the Rodinia format: 0-1, 0-2, 1-3, 3-4 stored in both
// directions; node 4 is two levels below node 1.
const tinyRodinia = `5
0 2
2 2
4 1
5 2
7 1

0

8
1 3
2 5
0 3
3 1
0 5
1 1
4 2
3 2
`

func TestReadRodiniaGraph(t *testing.T) {
	g, err := readRodiniaGraph(strings.NewReader(tinyRodinia))
	require.NoError(t, err)
	assert.Empty(t, cmp.Diff([]uint32{0, 2, 4, 5, 7}, g.start))
	assert.Empty(t, cmp.Diff([]uint32{2, 2, 1, 2, 1}, g.degree))
	assert.Empty(t, cmp.Diff([]uint32{1, 2, 0, 3, 0, 1, 4, 3}, g.dest))
	level, depth := allLevels(g)
	assert.Empty(t, cmp.Diff([]int32{0, 1, 1, 2, 3}, level))
	assert.Equal(t, 3, depth)
}

func TestReadRodiniaGraphErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", "expected node count"},
		{"zero nodes", "0", "node count must be an integer in [1, 2147483647]"},
		{"not a number", "2\n0 x", `degree of node 0 must be an integer`},
		{"truncated nodes", "2\n0 1\n", "expected start of node 1"},
		{"source out of range", "1\n0 0\n3\n0\n", "source node must be an integer in [0, 0]"},
		{"dest out of range", "2\n0 1\n1 0\n0\n1\n7 1\n", "destination of edge 0 must be an integer in [0, 1]"},
		{"edge list too short", "2\n0 1\n1 0\n0\n2\n1 1\n", "expected destination of edge 1"},
		{"node runs past edges", "2\n0 2\n1 0\n0\n1\n1 1\n", "line 2: node 0: start 0 + degree 2 exceeds the edge count 1 (line 5)"},
		{"trailing data", "1\n0 0\n0\n0\n5\n", `line 5: unexpected token "5"`},
		{"huge token", "1" + strings.Repeat("0", 100), `line 1: node count must be an integer in [1, 2147483647], got "1000000000000000000000000000000000000000"... (101 bytes)`},
		{"line too long", strings.Repeat(" ", 5000), "line 1: longer than 4096 bytes"},
		{"negative cost", "2\n0 1\n1 1\n0\n2\n1 1\n0 -3\n", "line 7: cost of edge 1 must be an integer in [0, 2147483647], got \"-3\""},
		{"overlapping ranges", "3\n0 2\n2 1\n1 2\n0\n4\n1 1\n2 1\n0 1\n0 1\n", "line 4: node 2's edges [1, 3) overlap node 0's [0, 2) (line 2)"},
		{"binary garbage", "2\n0 \x1b[31m\xff\xfe\u202e", `line 2: degree of node 0 must be an integer in [0, 2147483647], got "\x1b[31m\xff\xfe\u202e"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readRodiniaGraph(strings.NewReader(c.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func FuzzReadRodiniaGraph(f *testing.F) {
	f.Add(tinyRodinia)
	f.Add("1\n0 0\n0\n0\n")
	f.Add("3\n0 1\n1 1\n2 1\n0\n3\n1 1\n2 1\n0 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		g, err := readRodiniaGraph(strings.NewReader(in))
		if err != nil {
			return
		}
		for i := range g.start {
			require.LessOrEqual(t, uint64(g.start[i])+uint64(g.degree[i]), uint64(g.edges()))
		}
		for _, d := range g.dest {
			require.Less(t, int(d), g.nodes())
		}
		level, _ := allLevels(g)
		require.Equal(t, int32(0), level[0])
	})
}

// The generated graph has the shipped input's counts and graphgen's
// structure: every node has at least its 2 own draws, edges come in
// reverse pairs, and the mean degree is 6.
func TestGeneratedGraphMatchesGraphgen(t *testing.T) {
	g := explicitGraph(generateRodiniaGraph(bfsNodes, bfsEdges, 1))
	require.Equal(t, bfsNodes, g.nodes())
	require.Equal(t, bfsEdges, g.edges())
	hist := map[uint32]int{}
	for _, d := range g.degree {
		require.GreaterOrEqual(t, d, uint32(graphgenMinEdges))
		hist[d]++
	}
	// Degree = own draws (2..4) + Poisson(3) reverse edges: degree 6 is the
	// mode and degrees above 15 are rare.
	assert.Greater(t, hist[6], hist[3])
	assert.Greater(t, hist[6], hist[10])
	tail := 0
	for d, n := range hist {
		if d > 15 {
			tail += n
		}
	}
	assert.Less(t, tail, bfsNodes/1000)
	// Every edge u->v has a matching v->u: the sorted edge list equals the
	// sorted list of reversed edges.
	fwd := make([]uint64, 0, g.edges())
	rev := make([]uint64, 0, g.edges())
	for u := range g.start {
		for e := g.start[u]; e < g.start[u]+g.degree[u]; e++ {
			fwd = append(fwd, uint64(u)<<32|uint64(g.dest[e]))
			rev = append(rev, uint64(g.dest[e])<<32|uint64(u))
		}
	}
	slices.Sort(fwd)
	slices.Sort(rev)
	assert.True(t, slices.Equal(fwd, rev))
}

// TestBFSKernelsFollowTraversal checks every warp of every launch against
// the traversal: Kernel of iteration k reads exactly the edge lists of the
// level-k nodes and writes cost and updating_graph_mask of their unvisited
// neighbours; Kernel2 sets the flags of exactly the level-(k+1) nodes.
func TestBFSKernelsFollowTraversal(t *testing.T) {
	wl := mustNew(t, "bfs", Params{Scale: 0.02, Seed: 4})
	g := explicitGraph(generateRodiniaGraph(scaled(bfsNodes, 0.02, 1, 2), scaled(bfsEdges, 0.02, 2, 4), 4))
	level, depth := allLevels(g)
	edges, visited := allocByName(t, wl, "graph_edges"), allocByName(t, wl, "graph_visited")
	cost := allocByName(t, wl, "cost")
	ks := kernels(wl)
	require.Len(t, ks, 2*(depth+1))
	for k := 0; k <= depth; k++ {
		wantEdges, wantNew, wantCostWrites := 0, 0, 0
		for v := range level {
			switch int(level[v]) {
			case k:
				wantEdges += int(g.degree[v])
				for e := g.start[v]; e < g.start[v]+g.degree[v]; e++ {
					if l := level[g.dest[e]]; l < 0 || int(l) > k {
						wantCostWrites++
					}
				}
			case k + 1:
				wantNew++
			}
		}
		gotEdges, gotCost, gotVisited := 0, 0, 0
		for b := 0; b < ks[2*k].Blocks; b++ {
			for w := 0; w < 16; w++ {
				for _, op := range collect(ks[2*k], b, w) {
					if op.Kind == OpLoad && op.Size == 4 && op.Addr[0] >= edges.Base && op.Addr[0] < edges.Base+edges.Bytes {
						gotEdges += int(op.Lanes)
					}
					if op.Kind == OpStore && op.Size == 4 && op.Addr[0] >= cost.Base {
						gotCost += int(op.Lanes)
					}
				}
				for _, op := range collect(ks[2*k+1], b, w) {
					if op.Kind == OpStore && op.Addr[0] >= visited.Base && op.Addr[0] < visited.Base+visited.Bytes {
						gotVisited += int(op.Lanes)
					}
				}
			}
		}
		assert.Equal(t, wantEdges, gotEdges, "iteration %d edge reads", k)
		assert.Equal(t, wantCostWrites, gotCost, "iteration %d cost writes", k)
		assert.Equal(t, wantNew, gotVisited, "iteration %d discoveries", k)
	}
	assert.Zero(t, func() int {
		n := 0
		for b := 0; b < ks[len(ks)-1].Blocks; b++ {
			n += len(collect(ks[len(ks)-1], b, 0)) - 2
		}
		return n
	}(), "the last Kernel2 discovers nothing")
}

func TestBFSReadsGraphFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.txt")
	require.NoError(t, os.WriteFile(path, []byte(tinyRodinia), 0o644))
	wl := mustNew(t, "bfs", Params{GraphFile: path})
	assert.Len(t, kernels(wl), 2*4, "levels 0..3 plus nothing new in the last")
	nodes, edges := allocByName(t, wl, "graph_nodes"), allocByName(t, wl, "graph_edges")
	visited, cost := allocByName(t, wl, "graph_visited"), allocByName(t, wl, "cost")
	assert.EqualValues(t, 8*5, nodes.Bytes)
	assert.EqualValues(t, 4*8, edges.Bytes)
	// Iteration 0: only node 0 (lane 0) expands, over edges 0 and 1 to
	// nodes 1 and 2, both unvisited.
	ops := collect(kernels(wl)[0], 0, 0)
	require.Equal(t, []OpKind{OpCompute, OpLoad, OpStore, OpLoad, OpLoad, OpLoad, OpCompute, OpLoad, OpStore, OpStore,
		OpLoad, OpLoad, OpCompute, OpLoad, OpStore, OpStore}, kinds(ops))
	assert.EqualValues(t, 5, ops[1].Lanes, "mask read by all five threads")
	assert.Equal(t, []uint64{nodes.Base}, lanes(ops[3]))
	assert.Equal(t, []uint64{edges.Base}, lanes(ops[4]))
	assert.Equal(t, []uint64{visited.Base + 1}, lanes(ops[5]))
	assert.Equal(t, []uint64{cost.Base}, lanes(ops[7]), "cost[tid] reloaded")
	assert.Equal(t, []uint64{cost.Base + 4}, lanes(ops[8]))
	assert.Equal(t, []uint64{edges.Base + 4}, lanes(ops[10]))

	_, err := New("bfs", Params{GraphFile: path, Scale: 2})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Scale must be 1")
	_, err = New("bfs", Params{GraphFile: filepath.Join(t.TempDir(), "missing.txt")})
	require.Error(t, err)
	bad := filepath.Join(t.TempDir(), "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("2\n0 1\n"), 0o644))
	_, err = New("bfs", Params{GraphFile: bad})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.txt")
	assert.Contains(t, err.Error(), "start of node 1")
}

// TestSSSPKernelsFollowRelaxation re-runs the relaxation with an
// independent per-iteration loop and checks Kernel1's atomics and Kernel2's
// flag writes against it.
func TestSSSPKernelsFollowRelaxation(t *testing.T) {
	wl := mustNew(t, "sssp", Params{Scale: 1.0 / 64, Seed: 8})
	ss := &sssp{n: scaled(ssspVertices, 1.0/64, 1, 3), seed: 8}
	n := ss.n
	dist := make([]float32, n)
	for i := range dist {
		dist[i] = math.MaxFloat32
	}
	dist[0] = 0
	frontier := map[int]bool{0: true}
	ks := kernels(wl)
	require.Equal(t, "initializeArrays", ks[0].Name)
	upd := allocByName(t, wl, "updatingShortestDistances")
	flags := allocByName(t, wl, "finalizedVertices")
	for it := 0; 1+2*it < len(ks); it++ {
		// Reference: relax out of the frontier, then settle.
		next := append([]float32(nil), dist...)
		for v := range frontier {
			for l := 0; l < 2; l++ {
				d := ss.neighbour(v, l)
				require.NotEqual(t, uint32(v), d)
				if c := dist[v] + ss.weight(2*v+l); c < next[d] {
					next[d] = c
				}
			}
		}
		settled := map[int]bool{}
		for v := range dist {
			if next[v] < dist[v] {
				settled[v] = true
			}
		}
		atomics := map[uint64]int{}
		gotSettled := map[int]bool{}
		for b := 0; b < ks[1+2*it].Blocks; b++ {
			for _, op := range collect(ks[1+2*it], b, 0) {
				if op.Kind == OpAtomic {
					for _, a := range op.Addr[:op.Lanes] {
						atomics[a]++
					}
				}
			}
			for _, op := range collect(ks[2+2*it], b, 0) {
				if op.Kind == OpStore && op.Size == 1 {
					for _, a := range op.Addr[:op.Lanes] {
						gotSettled[int(a-flags.Base)] = true
					}
				}
			}
		}
		wantAtomics := map[uint64]int{}
		for v := range frontier {
			for l := 0; l < 2; l++ {
				wantAtomics[upd.Base+4*uint64(ss.neighbour(v, l))]++
			}
		}
		require.Empty(t, cmp.Diff(wantAtomics, atomics), "iteration %d atomics", it)
		require.Empty(t, cmp.Diff(settled, gotSettled), "iteration %d settled", it)
		dist, frontier = next, settled
	}
}
