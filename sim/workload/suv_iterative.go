package workload

import (
	"math"

	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// SUV Table I's GMM (Density and Temporal) and its Iterative applications
// GRM, FW and DTG, written as described workloads (described.go) from the
// public sources. GRM, FW and DTG launch their kernels from a host loop
// whose variable reaches the kernels' indices (the HostIter of every
// launch), which SUV's Algorithm 2 prefetches span by span.
//
// Their work grows faster than their footprint (GEMM, GRM and FW are
// O(N^3) over O(N^2) bytes, doitgen O(N^4) over O(N^3)), so at the paper's
// 3-8 GB square shapes a run would take days. gemm and gramschmidt
// therefore keep their short dimension fixed and scale the long one (the
// footprint, and the work, grow linearly with Scale and reach the paper's
// footprint, not its shape); floydwarshall and doitgen scale their square
// (cube) sides and reach the paper's shape. docs/suv.md lists the factors.

// gemmBlockX, gemmBlockY are DIM_THREAD_BLOCK_X, _Y of PolyBench/GPU GEMM
// (CUDA/GEMM/gemm.cuh:63-64).
const (
	gemmBlockX = 32
	gemmBlockY = 8
	// gemmRows is NI at scale 1; NJ = NK = gemmCols.
	gemmRows = 16384
	gemmCols = 32
)

// buildGEMM: PolyBench/GPU GEMM (CUDA/GEMM/gemm.cu:123-137), C = alpha A B
// + beta C with A NI x NK, B NK x NJ, C NI x NJ floats; j = bx*32 + tx,
// i = by*8 + ty; c[i*NJ + j] *= beta, then for k < NK c[i*NJ + j] +=
// alpha * a[i*NK + k] * b[k*NJ + j]. The pointers are not restrict, so the
// compiler loads and stores c in every trip. NI = 16384, NJ = NK = 32 at
// scale 1 (A and C 2 MB, B 4 KB); Scale multiplies NI (the paper's
// 6912 MB at --scale 1728). PolyBench's square NI = NJ = NK is O(N^3) work.
// A and C are Temporal on the default GPU down to --scale 0.22: 224
// concurrent blocks of 8 rows cover 1792 rows, under half of NI >= 3584.
func buildGEMM(p Params, scale float64) *describedWorkload {
	ni := int64(scaled(gemmRows, scale, gemmBlockY, gemmBlockY))
	nj, nk := int64(gemmCols), int64(gemmCols)
	dw := newDescribed("gemm", Regular, p.Seed)
	dw.alloc("A", uint64(ni*nk*4), true)
	dw.alloc("B", uint64(nk*nj*4), true)
	dw.alloc("C", uint64(ni*nj*4), false)
	d := kernelBuilder("gemm_kernel", nj/gemmBlockX, ni/gemmBlockY, gemmBlockX, gemmBlockY)
	c := affine(0, term(static.BlockY, gemmBlockY*nj), term(static.ThreadY, nj), term(static.BlockX, gemmBlockX), term(static.ThreadX, 1))
	d.op(2, memop("C", static.Read, 4, c, 1))
	d.op(1, memop("C", static.Write, 4, c, 1))
	k := d.loop("k", nk)
	d.op(2, memop("A", static.Read, 4, affine(0, term(static.BlockY, gemmBlockY*nk), term(static.ThreadY, nk), term(k, 1)), 1))
	d.op(0, memop("B", static.Read, 4, affine(0, term(k, nj), term(static.BlockX, gemmBlockX), term(static.ThreadX, 1)), 1))
	d.op(2, memop("C", static.Read, 4, c, 1))
	d.op(2, memop("C", static.Write, 4, c, 1))
	d.end()
	dw.launch(d)
	return dw
}

// gramschmidtBlock is DIM_THREAD_BLOCK_X of PolyBench/GPU GRAMSCHM
// (CUDA/GRAMSCHM/gramschmidt.cuh:57).
const (
	gramschmidtBlock = 256
	// gramschmidtRows is NI at scale 1; NJ (the columns, and the host
	// loop's trips) is gramschmidtCols.
	gramschmidtRows = 2048
	gramschmidtCols = 64
)

// buildGramschmidt: PolyBench/GPU GRAMSCHM (CUDA/GRAMSCHM/gramschmidt.cu:
// 124-200): A and Q are NI x NJ, R NJ x NJ floats; for k < NJ the host
// launches
//
//   - gramschmidt_kernel1, one block, where thread 0 alone sums
//     a[i*NJ + k]^2 over i < NI and writes r[k*NJ + k] (modelled as a block
//     of that one thread: no other thread passes tid == 0);
//   - gramschmidt_kernel2, i = bx*256 + tx: q[i*NJ + k] = a[i*NJ + k] /
//     r[k*NJ + k], over NI threads (the source's grid is sized by NJ, equal
//     to NI there);
//   - gramschmidt_kernel3, j = bx*256 + tx, guarded by k < j < NJ:
//     r[k*NJ + j] = 0, then for i < NI r[k*NJ + j] += q[i*NJ + k] *
//     a[i*NJ + j], then for i < NI a[i*NJ + j] -= q[i*NJ + k] *
//     r[k*NJ + j] (not restrict: r is loaded and stored in every trip).
//     The guard's fraction (NJ - k - 1) / NJ is the description's branch
//     fraction; the generator runs the guarded-off columns' loops too (a
//     warp's lanes share their lines with its active ones). At k = NJ - 1
//     no thread passes the guard, and the launch is left out. The block is
//     NJ threads wide when NJ < 256 (j < NJ masks the rest).
//
// NI = 2048, NJ = 64 at scale 1 (A and Q 512 KB, R 16 KB); Scale
// multiplies NI (the paper's 3072 MB at --scale 3072). k, the host loop variable,
// indexes A's and Q's column k and R's row k: all three are Iterative.
func buildGramschmidt(p Params, scale float64) *describedWorkload {
	ni := int64(scaled(gramschmidtRows, scale, gramschmidtBlock, gramschmidtBlock))
	nj := int64(gramschmidtCols)
	dw := newDescribed("gramschmidt", Regular, p.Seed)
	dw.alloc("A", uint64(ni*nj*4), false)
	dw.alloc("R", uint64(nj*nj*4), false)
	dw.alloc("Q", uint64(ni*nj*4), false)
	colK := func(rows static.Var) static.Affine { // [i*NJ + k]
		return affine(0, term(rows, nj), term(static.HostIter, 1))
	}
	rkk := affine(0, term(static.HostIter, nj+1))
	colBlock := min(nj, gramschmidtBlock)
	for k := range nj {
		d := kernelBuilder("gramschmidt_kernel1", 1, 1, 1, 1).iter(k, nj)
		i := d.loop("i", ni)
		d.op(2, memop("A", static.Read, 4, colK(i), 1))
		d.end()
		d.op(8, memop("R", static.Write, 4, rkk, 1))
		dw.launch(d)

		d = kernelBuilder("gramschmidt_kernel2", ni/gramschmidtBlock, 1, gramschmidtBlock, 1).iter(k, nj)
		rowK := affine(0, term(static.BlockX, gramschmidtBlock*nj), term(static.ThreadX, nj), term(static.HostIter, 1))
		d.op(2, memop("A", static.Read, 4, rowK, 1))
		d.op(0, memop("R", static.Read, 4, rkk, 1))
		d.op(4, memop("Q", static.Write, 4, rowK, 1))
		dw.launch(d)

		if k == nj-1 {
			continue
		}
		guard := float64(nj-k-1) / float64(nj)
		d = kernelBuilder("gramschmidt_kernel3", nj/colBlock, 1, colBlock, 1).iter(k, nj)
		rkj := affine(0, term(static.HostIter, nj), term(static.BlockX, colBlock), term(static.ThreadX, 1))
		d.op(2, memop("R", static.Write, 4, rkj, guard))
		i = d.loop("i", ni)
		aij := affine(0, term(i, nj), term(static.BlockX, colBlock), term(static.ThreadX, 1))
		d.op(1, memop("Q", static.Read, 4, colK(i), guard))
		d.op(0, memop("A", static.Read, 4, aij, guard))
		d.op(0, memop("R", static.Read, 4, rkj, guard))
		d.op(2, memop("R", static.Write, 4, rkj, guard))
		d.end()
		i = d.loop("i", ni)
		aij = affine(0, term(i, nj), term(static.BlockX, colBlock), term(static.ThreadX, 1))
		d.op(1, memop("A", static.Read, 4, aij, guard))
		d.op(0, memop("Q", static.Read, 4, colK(i), guard))
		d.op(0, memop("R", static.Read, 4, rkj, guard))
		d.op(2, memop("A", static.Write, 4, aij, guard))
		d.end()
		dw.launch(d)
	}
	return dw
}

// fwBlock is the 16 x 16 block of HeCBench floydwarshall-cuda (main.cu:
// 207-212: blockSize capped at 16).
const (
	fwBlock = 16
	fwNodes = 256
)

// buildFloydWarshall: HeCBench floydwarshall-cuda (main.cu:112-131,
// 202-252): an N x N distance matrix and an N x N path matrix of 32-bit
// values; for every pass k < N the host launches floydWarshallPass on an
// N/16 x N/16 grid of 16 x 16 blocks, x = bx*16 + tx, y = by*16 + ty:
// d[y*N + x], d[y*N + k] and d[k*N + x] are read, and when the path
// through k is shorter d[y*N + x] and p[y*N + x] are written (a
// data-dependent condition: branch fraction 1, the paper's overestimate;
// the generator writes in every thread). N = 256 at scale 1 (256 KB each);
// Scale multiplies the footprint (N by its square root; the paper's
// 4096 MB, N = 23170, at --scale 8192). The pass k indexes d's column k
// and row k: the distance matrix is Iterative.
func buildFloydWarshall(p Params, scale float64) *describedWorkload {
	n := int64(scaledSide(fwNodes, scale, fwBlock))
	dw := newDescribed("floydwarshall", Regular, p.Seed)
	dw.alloc("pathDistanceBuffer", uint64(n*n*4), false)
	dw.alloc("pathBuffer", uint64(n*n*4), false)
	yx := affine(0, term(static.BlockY, fwBlock*n), term(static.ThreadY, n), term(static.BlockX, fwBlock), term(static.ThreadX, 1))
	yk := affine(0, term(static.BlockY, fwBlock*n), term(static.ThreadY, n), term(static.HostIter, 1))
	kx := affine(0, term(static.HostIter, n), term(static.BlockX, fwBlock), term(static.ThreadX, 1))
	for k := range n {
		d := kernelBuilder("floydWarshallPass", n/fwBlock, n/fwBlock, fwBlock, fwBlock).iter(k, n)
		d.op(2, memop("pathDistanceBuffer", static.Read, 4, yx, 1))
		d.op(0, memop("pathDistanceBuffer", static.Read, 4, yk, 1))
		d.op(0, memop("pathDistanceBuffer", static.Read, 4, kx, 1))
		d.op(2, memop("pathDistanceBuffer", static.Write, 4, yx, 1))
		d.op(0, memop("pathBuffer", static.Write, 4, yx, 1))
		dw.launch(d)
	}
	return dw
}

// doitgenBlockX, doitgenBlockY are DIM_THREAD_BLOCK_X, _Y of PolyBench/GPU
// DOITGEN (CUDA/DOITGEN/doitgen.cu:38-39).
const (
	doitgenBlockX = 32
	doitgenBlockY = 8
	// NR (the host loop's trips) and NP at scale 1; NQ is fixed.
	doitgenR = 32
	doitgenQ = 1024
	doitgenP = 32
)

// buildDoitgen: PolyBench/GPU DOITGEN (CUDA/DOITGEN/doitgen.cu:127-181): A
// and sum are NR x NQ x NP floats, C4 NP x NP; for r < NR the host
// launches doitgen_kernel1, p = bx*32 + tx, q = by*8 + ty:
// sum[r*NQ*NP + q*NP + p] = 0, then for s < NP sum[...] = sum[...] +
// A[r*NQ*NP + q*NP + s] * C4[s*NP + p] (not restrict: sum is loaded and
// stored in every trip), and doitgen_kernel2: A[r*NQ*NP + q*NP + p] =
// sum[...]. The grid is NP/32 x NQ/8 (the source sizes its y by NR, equal
// to NQ there). NR = 32, NQ = 1024, NP = 32 at scale 1 (A and sum 4 MB,
// C4 4 KB): one iteration's span of A and of sum is NQ*NP*4 = 128 KB, so
// Algorithm 2 batches 16 iterations into each 2 MB window. Scale
// multiplies NR and NP by its square root (the paper's 8192 MB,
// NR = NQ = NP = 1024, at --scale 1024). r, the host loop variable,
// selects A's and sum's slab: both are Iterative, C4 Density.
func buildDoitgen(p Params, scale float64) *describedWorkload {
	nr := int64(scaled(doitgenR, math.Sqrt(scale), 1, 1))
	np := int64(scaled(doitgenP, math.Sqrt(scale), doitgenBlockX, doitgenBlockX))
	nq := int64(doitgenQ)
	dw := newDescribed("doitgen", Regular, p.Seed)
	dw.alloc("A", uint64(nr*nq*np*4), false)
	dw.alloc("C4", uint64(np*np*4), true)
	dw.alloc("sum", uint64(nr*nq*np*4), false)
	slab := func(last static.Term) static.Affine { // [r*NQ*NP + q*NP + last]
		return affine(0, term(static.HostIter, nq*np), term(static.BlockY, doitgenBlockY*np), term(static.ThreadY, np), last)
	}
	for r := range nr {
		d := kernelBuilder("doitgen_kernel1", np/doitgenBlockX, nq/doitgenBlockY, doitgenBlockX, doitgenBlockY).iter(r, nr)
		rqp := slab(term(static.BlockX, doitgenBlockX))
		rqp.Terms = append(rqp.Terms, term(static.ThreadX, 1))
		d.op(2, memop("sum", static.Write, 4, rqp, 1))
		s := d.loop("s", np)
		d.op(0, memop("sum", static.Read, 4, rqp, 1))
		d.op(0, memop("A", static.Read, 4, slab(term(s, 1)), 1))
		d.op(0, memop("C4", static.Read, 4, affine(0, term(s, np), term(static.BlockX, doitgenBlockX), term(static.ThreadX, 1)), 1))
		d.op(2, memop("sum", static.Write, 4, rqp, 1))
		d.end()
		dw.launch(d)

		d = kernelBuilder("doitgen_kernel2", np/doitgenBlockX, nq/doitgenBlockY, doitgenBlockX, doitgenBlockY).iter(r, nr)
		d.op(2, memop("sum", static.Read, 4, rqp, 1))
		d.op(0, memop("A", static.Write, 4, rqp, 1))
		dw.launch(d)
	}
	return dw
}
