package workload

import (
	"math"

	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// SUV Table I's applications that the built-in workloads do not already
// cover (2DC = 2dconv, FDT = fdtd, BFS = bfs), written as described
// workloads (described.go) from the public sources (GMM, GRM, FW and DTG
// in suv_iterative.go). They are not part of
// Names() (the UVMMU experiments' set); SUVNames lists them, and
// SUVTableNames maps Table I's abbreviations to the workloads.
//
// Scale multiplies the footprint: a square N x N problem scales N by the
// square root of Scale. The paper's inputs are 2.6-8 GB; the defaults are a
// few MB so that a run takes seconds, and reach the paper's sizes with
// --scale (docs/suv.md lists the factors and the class changes).
var suvGenerators = map[string]generator{
	"mvt":           describedGenerator(buildMVT),
	"bicg":          describedGenerator(buildBICG),
	"mm":            describedGenerator(buildMM),
	"xsbench":       describedGenerator(buildXSBench),
	"btree":         describedGenerator(buildBTree),
	"gemm":          describedGenerator(buildGEMM),
	"gramschmidt":   describedGenerator(buildGramschmidt),
	"floydwarshall": describedGenerator(buildFloydWarshall),
	"doitgen":       describedGenerator(buildDoitgen),
}

// describedGenerator is the generator of a described workload.
func describedGenerator(build func(p Params, scale float64) *describedWorkload) generator {
	return func(p Params, scale float64) (*builtin, error) {
		w, _ := build(p, scale).build()
		return w, nil
	}
}

// SUVNames returns the SUV workloads' names, sorted.
func SUVNames() []string {
	return []string{"bicg", "btree", "doitgen", "floydwarshall", "gemm", "gramschmidt", "mm", "mvt", "xsbench"}
}

// SUVTableNames maps SUV Table I's abbreviation to the workload that
// models it, for the workloads this simulator has.
var SUVTableNames = map[string]string{
	"2DC": "2dconv", "FDT": "fdtd", "BFS": "bfs", "MVT": "mvt", "BCG": "bicg",
	"MM": "mm", "XSB": "xsbench", "BTR": "btree", "GMM": "gemm", "GRM": "gramschmidt",
	"FW": "floydwarshall", "DTG": "doitgen",
}

// SUVTableTypes are the types SUV Table I gives each application's data
// structures (I Iterative, D Density, T Temporal, U Unknown), for the
// applications in SUVTableNames.
var SUVTableTypes = map[string]string{
	"2DC": "D", "BFS": "D, U", "BCG": "D", "BTR": "U, D", "DTG": "I, D", "FDT": "D",
	"FW": "I, D", "GMM": "D, T", "GRM": "I, D", "MM": "D, T", "MVT": "D", "XSB": "D, U",
}

// scaledSide scales a square problem's side by the square root of scale,
// to a multiple of unit.
func scaledSide(n int, scale float64, unit int) int {
	return scaled(n, math.Sqrt(scale), unit, unit)
}

// mvtDimX is DIM_THREAD_BLOCK_X of PolyBench/GPU MVT and BICG.
const mvtDimX = 256

// newMVT: PolyBench/GPU MVT (CUDA/MVT/mvt.cu:106-130, 155-162): N x N
// matrix a and vectors x1, x2, y_1, y_2; mvt_kernel1 has thread i sum
// a[i*N + j] * y_1[j] over j into x1[i] (a row per thread), mvt_kernel2
// a[j*N + i] * y_2[j] into x2[i] (a column per thread, coalesced); grids of
// ceil(N/256) blocks of 256. Default N = 1024 (a: 4 MB; the paper's 4 GB
// is N = 32768, --scale 1024).
func buildMVT(p Params, scale float64) *describedWorkload {
	n := int64(scaledSide(1024, scale, mvtDimX))
	dw := newDescribed("mvt", Regular, p.Seed)
	dw.alloc("a", uint64(n*n*4), true)
	for _, v := range []string{"x1", "x2", "y_1", "y_2"} {
		dw.alloc(v, uint64(n*4), v[0] == 'y')
	}
	i := affine(0, term(static.BlockX, mvtDimX), term(static.ThreadX, 1))
	for _, k := range []struct{ name, x, y string }{{"mvt_kernel1", "x1", "y_1"}, {"mvt_kernel2", "x2", "y_2"}} {
		d := kernelBuilder(k.name, n/mvtDimX, 1, mvtDimX, 1)
		d.op(2, memop(k.x, static.Read, 4, i, 1))
		j := d.loop("j", n)
		if k.x == "x1" {
			d.op(2, memop("a", static.Read, 4, affine(0, term(static.BlockX, mvtDimX*n), term(static.ThreadX, n), term(j, 1)), 1))
		} else {
			d.op(2, memop("a", static.Read, 4, affine(0, term(j, n), term(static.BlockX, mvtDimX), term(static.ThreadX, 1)), 1))
		}
		d.op(0, memop(k.y, static.Read, 4, affine(0, term(j, 1)), 1))
		d.end()
		d.op(2, memop(k.x, static.Write, 4, i, 1))
		dw.launch(d)
	}
	return dw
}

// newBICG: PolyBench/GPU BICG (CUDA/BICG/bicg.cu:95-124, 195-202): NX x NY
// matrix A; bicg_kernel1 has thread j sum r[i] * A[i*NY + j] over i into
// s[j] (coalesced), bicg_kernel2 thread i sum A[i*NY + j] * p[j] over j
// into q[i] (a row per thread). Default NX = NY = 1024 (A: 4 MB; the
// paper's 4 GB at --scale 1024).
func buildBICG(p Params, scale float64) *describedWorkload {
	n := int64(scaledSide(1024, scale, mvtDimX))
	dw := newDescribed("bicg", Regular, p.Seed)
	dw.alloc("A", uint64(n*n*4), true)
	for _, v := range []string{"r", "s", "p", "q"} {
		dw.alloc(v, uint64(n*4), v == "r" || v == "p")
	}
	t := affine(0, term(static.BlockX, mvtDimX), term(static.ThreadX, 1))
	d := kernelBuilder("bicg_kernel1", n/mvtDimX, 1, mvtDimX, 1)
	d.op(2, memop("s", static.Write, 4, t, 1))
	i := d.loop("i", n)
	d.op(2, memop("r", static.Read, 4, affine(0, term(i, 1)), 1))
	d.op(0, memop("A", static.Read, 4, affine(0, term(i, n), term(static.BlockX, mvtDimX), term(static.ThreadX, 1)), 1))
	d.end()
	d.op(2, memop("s", static.Write, 4, t, 1))
	dw.launch(d)
	d = kernelBuilder("bicg_kernel2", n/mvtDimX, 1, mvtDimX, 1)
	d.op(2, memop("q", static.Write, 4, t, 1))
	j := d.loop("j", n)
	d.op(2, memop("A", static.Read, 4, affine(0, term(static.BlockX, mvtDimX*n), term(static.ThreadX, n), term(j, 1)), 1))
	d.op(0, memop("p", static.Read, 4, affine(0, term(j, 1)), 1))
	d.end()
	d.op(2, memop("q", static.Write, 4, t, 1))
	dw.launch(d)
	return dw
}

// mmTileSide is the shared-memory tile of the tiled matrix multiplication.
const mmTileSide = 16

// newMM: tiled matrix multiplication C = A x B of N x N floats, 16 x 16
// thread blocks, each thread loading one element of A's and one of B's
// tile per step into shared memory and accumulating the tile's 16
// products (the shared-memory kernel HeCBench and the CUDA samples ship):
// row = by*16 + ty, col = bx*16 + tx; for t < N/16: A[row*N + t*16 + tx],
// B[(t*16 + ty)*N + col]; then C[row*N + col]. Default N = 512 (3 MB; the
// paper's 5.8 GB at --scale 1920).
func buildMM(p Params, scale float64) *describedWorkload {
	n := int64(scaledSide(512, scale, mmTileSide))
	dw := newDescribed("mm", Regular, p.Seed)
	dw.alloc("A", uint64(n*n*4), true)
	dw.alloc("B", uint64(n*n*4), true)
	dw.alloc("C", uint64(n*n*4), false)
	g := n / mmTileSide
	d := kernelBuilder("matrixMul", g, g, mmTileSide, mmTileSide)
	tl := d.loop("t", g)
	d.op(4, memop("A", static.Read, 4, affine(0, term(static.BlockY, mmTileSide*n), term(static.ThreadY, n), term(tl, mmTileSide), term(static.ThreadX, 1)), 1))
	// The tile's 16 multiply-adds follow the loads.
	d.op(0, memop("B", static.Read, 4, affine(0, term(tl, mmTileSide*n), term(static.ThreadY, n), term(static.BlockX, mmTileSide), term(static.ThreadX, 1)), 1))
	d.end()
	d.op(mmTileSide+2, memop("C", static.Write, 4, affine(0, term(static.BlockY, mmTileSide*n), term(static.ThreadY, n), term(static.BlockX, mmTileSide), term(static.ThreadX, 1)), 1))
	dw.launch(d)
	return dw
}

// XSBench (the event-based lookup kernel, xs_lookup_kernel_baseline):
// every thread samples an energy and a material, and for each nuclide of
// the material (a count loaded from num_nucs: a data-dependent loop) reads
// the nuclide's id and concentration (mats, concs: indexed by loaded
// values) and binary-searches the nuclide's energy grid (a data-dependent
// loop of loads whose index is the previous load's outcome), then reads the
// two bracketing grid points; it writes one verification value. Sizes at
// scale 1: 12 materials of up to 8 nuclides, 68 nuclides x 1024 points of
// 48 B (energy and five cross sections: 3.3 MB of grid), 4096 lookups;
// Scale multiplies the points and the lookups (the paper's 3.9 GB at
// --scale 1150).
const (
	xsMaterials   = 12
	xsNucsPerMat  = 8
	xsNuclides    = 68
	xsGridPoints  = 1024
	xsPointBytes  = 48
	xsLookups     = 4096
	xsBlock       = 256
	xsSearchSteps = 10 // log2(xsGridPoints)
)

func buildXSBench(p Params, scale float64) *describedWorkload {
	points := int64(scaled(xsGridPoints, scale, 64, 64))
	lookups := int64(scaled(xsLookups, scale, xsBlock, xsBlock))
	dw := newDescribed("xsbench", Irregular, p.Seed)
	dw.alloc("num_nucs", xsMaterials*4, true)
	dw.alloc("mats", xsMaterials*xsNucsPerMat*4, true)
	dw.alloc("concs", xsMaterials*xsNucsPerMat*8, true)
	dw.alloc("nuclide_grid", uint64(xsNuclides*points*xsPointBytes), true)
	dw.alloc("verification", uint64(lookups*8), false)
	d := kernelBuilder("xs_lookup_kernel_baseline", lookups/xsBlock, 1, xsBlock, 1)
	d.op(12, indirect("num_nucs", static.Read, 4, 1))
	d.dataLoop("nuclide", xsNucsPerMat)
	d.op(2, indirect("mats", static.Read, 4, 1))
	d.op(0, indirect("concs", static.Read, 8, 1))
	d.dataLoop("search", xsSearchSteps)
	d.op(4, indirect("nuclide_grid", static.Read, 8, 1))
	d.end()
	d.op(2, indirect("nuclide_grid", static.Read, 8, 1))
	d.op(0, indirect("nuclide_grid", static.Read, 8, 1))
	d.end()
	d.op(10, memop("verification", static.Write, 8, affine(0, term(static.BlockX, xsBlock), term(static.ThreadX, 1)), 1))
	dw.launch(d)
	return dw
}

// GPU B-tree lookups (HeCBench btree-cuda, map/kernels/map_warps.cu:509-
// 580, search_unit): every query descends from the root, reading one
// 128 B node per level, the next node's address taken from the node just
// read (a pointer chase) until a leaf (a data-dependent number of levels);
// queries are read and results written once. The model has each thread
// descend for its own query. Sizes at scale 1: a pool of 32768 nodes
// (4 MB), 8192 queries and results (32 KB each); Scale multiplies both (the
// paper's 5 GB at --scale 1250).
const (
	btreeNodes     = 32768
	btreeNodeBytes = 128
	btreeQueries   = 8192
	btreeBlock     = 256
	btreeLevels    = 4
)

func buildBTree(p Params, scale float64) *describedWorkload {
	nodes := int64(scaled(btreeNodes, scale, 512, 512))
	queries := int64(scaled(btreeQueries, scale, btreeBlock, btreeBlock))
	dw := newDescribed("btree", Irregular, p.Seed)
	dw.alloc("queries", uint64(queries*4), true)
	dw.alloc("nodes", uint64(nodes*btreeNodeBytes), true)
	dw.alloc("results", uint64(queries*4), false)
	t := affine(0, term(static.BlockX, btreeBlock), term(static.ThreadX, 1))
	d := kernelBuilder("search_b_tree", queries/btreeBlock, 1, btreeBlock, 1)
	d.op(4, memop("queries", static.Read, 4, t, 1))
	d.dataLoop("level", btreeLevels)
	d.op(8, static.MemOp{Alloc: "nodes", Access: static.Read, ElemBytes: btreeNodeBytes, Kind: static.PointerChase, BranchFraction: 1})
	d.end()
	d.op(4, memop("results", static.Write, 4, t, 1))
	dw.launch(d)
	return dw
}

// suvDescribers describe the SUV workloads from the same builders.
var suvDescribers = map[string]func(p Params, scale float64) *describedWorkload{
	"mvt": buildMVT, "bicg": buildBICG, "mm": buildMM, "xsbench": buildXSBench, "btree": buildBTree,
	"gemm": buildGEMM, "gramschmidt": buildGramschmidt, "floydwarshall": buildFloydWarshall, "doitgen": buildDoitgen,
}
