package suv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/workload"
	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// smallGPU: 4 SMs of 8 warps.
var smallGPU = GPU{SMs: 4, WarpsPerSM: 8}

func aff(c int64, terms ...static.Term) static.Affine { return static.Affine{Const: c, Terms: terms} }

func tm(v static.Var, coef int64) static.Term { return static.Term{Var: v, Coef: coef} }

func analyzeOne(t *testing.T, p *static.Program, g GPU) map[string]KernelRegion {
	t.Helper()
	require.NoError(t, p.Validate())
	out := map[string]KernelRegion{}
	for _, r := range AnalyzeKernel(p, &p.Kernels[0], g) {
		out[r.Alloc] = r
	}
	return out
}

func TestClassifyDensity(t *testing.T) {
	// 16 blocks of 64 threads (2 warps): 4 SMs x (8/2) = 16 concurrent
	// blocks, more than half of 16, so the working-set rule is skipped.
	p := &static.Program{Workload: "density", Allocs: []static.Alloc{{Name: "a", Bytes: 4096, Managed: true}},
		Kernels: []static.Kernel{{Name: "k", GridX: 16, GridY: 1, BlockX: 64, BlockY: 1,
			Loops: []static.Loop{{Name: "l", Trips: 3}},
			Ops: []static.MemOp{
				{Alloc: "a", Access: static.Read, ElemBytes: 4, Index: aff(0, tm(static.BlockX, 64), tm(static.ThreadX, 1)), BranchFraction: 1},
				{Alloc: "a", Access: static.Write, ElemBytes: 4, Index: aff(0, tm(static.BlockX, 64), tm(static.ThreadX, 1)),
					Loops: []int{0}, BranchFraction: 0.5},
			}}}}
	r := analyzeOne(t, p, smallGPU)["a"]
	// Accesses: 1024 threads x 1 + 1024 threads x 3 trips x 0.5 = 2560;
	// density 2560 / 4096 B = 0.625.
	assert.Equal(t, KernelRegion{Alloc: "a", Bytes: 4096, Class: Density, Accesses: 2560, Density: 0.625}, r)
}

func temporalProgram() *static.Program {
	return &static.Program{Workload: "temporal", Allocs: []static.Alloc{
		{Name: "m", Bytes: 64 * 64 * 4, Managed: true},
		{Name: "v", Bytes: 64 * 4, Managed: true},
	},
		Kernels: []static.Kernel{{Name: "k", GridX: 64, GridY: 1, BlockX: 64, BlockY: 1,
			Ops: []static.MemOp{
				{Alloc: "m", Access: static.Read, ElemBytes: 4, Index: aff(0, tm(static.BlockX, 64), tm(static.ThreadX, 1)), BranchFraction: 1},
				{Alloc: "v", Access: static.Read, ElemBytes: 4, Index: aff(0, tm(static.ThreadX, 1)), BranchFraction: 1},
			}}}}
}

func TestClassifyTemporal(t *testing.T) {
	got := analyzeOne(t, temporalProgram(), smallGPU)
	// 64 blocks of 2 warps: 4 SMs x (8/2) = 16 concurrent <= 64/2, so the
	// rule runs. m: block 0 reads m[0..63], bytes [0, 256); WSS 256 x 16 =
	// 4096 < 16384/2 -> Temporal. Accesses 64 x 64 = 4096, density
	// 4096/16384 = 0.25.
	assert.Equal(t, KernelRegion{Alloc: "m", Bytes: 16384, Class: Temporal, Accesses: 4096, Density: 0.25,
		WSSKnown: true, WSS: 4096}, got["m"])
	// v: every block reads v[0..63], [0, 256); 256 x 16 = 4096 clipped to
	// the 256 B size, not under 128 -> Density. Density 4096/256 = 16.
	assert.Equal(t, KernelRegion{Alloc: "v", Bytes: 256, Class: Density, Accesses: 4096, Density: 16,
		WSSKnown: true, WSS: 256}, got["v"])
}

func TestTemporalSkippedWhenMostBlocksRunTogether(t *testing.T) {
	// 16 SMs x 4 = 64 concurrent blocks > 64/2: no working set, Density.
	got := analyzeOne(t, temporalProgram(), GPU{SMs: 16, WarpsPerSM: 8})
	assert.Equal(t, Density, got["m"].Class)
	assert.False(t, got["m"].WSSKnown)
}

func TestClassifyIterative(t *testing.T) {
	// x is 8 rows of 1024 floats; launch 3 of 8 reads row iter:
	// x[iter*1024 + bid*256 + tid] over 4 blocks of 256 threads (8 warps,
	// 4 SMs x 1 = 4 concurrent = all blocks: no working set).
	p := &static.Program{Workload: "iterative", Allocs: []static.Alloc{{Name: "x", Bytes: 8 * 1024 * 4, Managed: true}},
		Kernels: []static.Kernel{{Name: "k", GridX: 4, GridY: 1, BlockX: 256, BlockY: 1, HostIter: 3, HostIters: 8,
			Ops: []static.MemOp{{Alloc: "x", Access: static.Read, ElemBytes: 4,
				Index: aff(0, tm(static.HostIter, 1024), tm(static.BlockX, 256), tm(static.ThreadX, 1)), BranchFraction: 1}}}}}
	// Span: index 3*1024 = 3072 .. 3072 + 3*256 + 255 = 4095, bytes
	// [12288, 16384): start 12288, 4096 B. Density 1024 / 32768 = 0.03125.
	assert.Equal(t, KernelRegion{Alloc: "x", Bytes: 32768, Class: Density, Iterative: true, Accesses: 1024, Density: 0.03125,
		Spans: []Span{{Start: 12288, Bytes: 4096}}}, analyzeOne(t, p, smallGPU)["x"])
}

func TestClassifyUnknownAndIndirect(t *testing.T) {
	// 64 blocks of 64 threads: the working-set rule runs (16 <= 32).
	p := &static.Program{Workload: "unknown", Allocs: []static.Alloc{
		{Name: "list", Bytes: 1 << 20, Managed: true},
		{Name: "data", Bytes: 1 << 20, Managed: true},
		{Name: "tbl", Bytes: 1 << 20, Managed: true},
		{Name: "flag", Bytes: 4, Managed: false},
	},
		Kernels: []static.Kernel{{Name: "k", GridX: 64, GridY: 1, BlockX: 64, BlockY: 1,
			Loops: []static.Loop{{Name: "chase", DataDependent: true}},
			Ops: []static.MemOp{
				{Alloc: "list", Access: static.Read, ElemBytes: 8, Kind: static.PointerChase, Loops: []int{0}, BranchFraction: 1},
				{Alloc: "data", Access: static.Read, ElemBytes: 4, Index: aff(0, tm(static.LoopVar(0), 1)), Loops: []int{0}, BranchFraction: 1},
				{Alloc: "tbl", Access: static.Read, ElemBytes: 4, Kind: static.Indirect, BranchFraction: 0.25},
				{Alloc: "flag", Access: static.Write, ElemBytes: 4, BranchFraction: 1},
			}}}}
	got := analyzeOne(t, p, smallGPU)
	// list: pointer chase; data: bound read from memory. Neither has a
	// count nor a working set.
	assert.Equal(t, KernelRegion{Alloc: "list", Bytes: 1 << 20, Class: Unknown}, got["list"])
	assert.Equal(t, KernelRegion{Alloc: "data", Bytes: 1 << 20, Class: Unknown}, got["data"])
	// tbl: indirect, no working set -> Density. 4096 threads x 0.25 = 1024
	// accesses, density 1024 / 2^20 = 2^-10.
	assert.Equal(t, KernelRegion{Alloc: "tbl", Bytes: 1 << 20, Class: Density, Accesses: 1024, Density: 1.0 / 1024}, got["tbl"])
	// flag is cudaMalloc'd: SUV does not place it.
	assert.NotContains(t, got, "flag")
}

func TestAnalyzeFoldsLaunches(t *testing.T) {
	// The Temporal kernel then a whole-grid kernel of 16 blocks reading all
	// of m: the strongest class (Temporal) and the larger WSS (4096) stay;
	// accesses add: 4096 + 16 x 64 = 5120, density 5120/16384 = 0.3125.
	p := temporalProgram()
	p.Kernels = append(p.Kernels, static.Kernel{Name: "k2", GridX: 16, GridY: 1, BlockX: 64, BlockY: 1,
		Ops: []static.MemOp{{Alloc: "m", Access: static.Read, ElemBytes: 4, Index: aff(0, tm(static.BlockX, 64), tm(static.ThreadX, 1)), BranchFraction: 1}}})
	rs := Analyze(p, smallGPU)
	require.Len(t, rs, 2)
	assert.Equal(t, Region{Alloc: "m", Bytes: 16384, Class: Temporal, Density: 0.3125, WSSKnown: true, WSS: 4096, Launches: 2}, rs[0])
	assert.Equal(t, "T", rs[0].Types())
}

// TestDescribedWorkloadClasses pins the classification of the described
// workloads at default size on the default GPU (28 SMs of 64 warps); the
// table is docs/suv.md's.
func TestDescribedWorkloadClasses(t *testing.T) {
	want := map[string]map[string]string{
		"2dconv": {"A": "D", "B": "D"},
		"backprop": {"input_units": "T", "hidden_delta": "D", "input_weights": "T", "input_weights2": "T",
			"input_prev_weights": "T", "hidden_partial_sum": "T"},
		"fdtd":    {"_fict_": "I,D", "ex": "D", "ey": "D", "hz": "D"},
		"hotspot": {"MatrixTemp0": "D", "MatrixTemp1": "D", "MatrixPower": "D"},
		"nw":      {"referrence": "I,D", "itemsets": "I,D"},
		"srad":    {"J_shared": "D"},
		"sssp": {"vertexArray": "T", "edgeArray": "U", "weightArray": "U", "shortestDistances": "T",
			"updatingShortestDistances": "U"},
		"ra": {"input": "T", "table": "D", "output": "D"},
		"bfs": {"graph_nodes": "T", "graph_mask": "T", "updating_graph_mask": "U", "graph_visited": "U",
			"graph_edges": "U", "cost": "U"},
		"mvt":           {"a": "D", "x1": "D", "x2": "D", "y_1": "D", "y_2": "D"},
		"bicg":          {"A": "D", "r": "D", "s": "D", "p": "D", "q": "D"},
		"mm":            {"A": "D", "B": "D", "C": "D"},
		"xsbench":       {"num_nucs": "D", "mats": "U", "concs": "U", "nuclide_grid": "U", "verification": "D"},
		"btree":         {"queries": "D", "nodes": "U", "results": "D"},
		"gemm":          {"A": "T", "B": "D", "C": "T"},
		"gramschmidt":   {"A": "I,D", "R": "I,D", "Q": "I,D"},
		"floydwarshall": {"pathDistanceBuffer": "I,D", "pathBuffer": "D"},
		"doitgen":       {"A": "I,D", "C4": "D", "sum": "I,D"},
	}
	for _, name := range workload.DescribedNames() {
		_, p, err := workload.Describe(name, workload.Params{Seed: 1})
		require.NoError(t, err)
		got := map[string]string{}
		for _, r := range Analyze(p, GPU{SMs: 28, WarpsPerSM: 64}) {
			got[r.Alloc] = r.Types()
		}
		assert.Equal(t, want[name], got, name)
	}
}
