package workload

import "math"

// grit-gemm: the tiled GEMM kernel MGPUSim ships
// (amd/benchmarks/dnn/gputensor/native/gemm.cl:1-46), D = alpha*A*B +
// beta*C with A m x k, B k x n, C and D m x n, launched on 16x16 groups
// over a grid rounded up to multiples of 16 (gputensor/operator.go:864-887).
// Thread (tx, ty) of group (bx, by) computes Row = by*16+ty, Col = bx*16+tx:
// it zeroes D[Row*n+Col], then for each of ceil(k/16) tiles i reads
// A[Row*k + 16i+tx] (when 16i+tx < k and Row < m) and B[(16i+ty)*n + Col]
// (when 16i+ty < k and Col < n) into local memory, and finally reads
// C[Row*n+Col] and writes D[Row*n+Col]. A warp is two rows ty of the group:
// the rows of A and C/D a group touches belong to its by, the columns of B
// to its bx, so every group reads a whole row band of A and column band of
// B (scatter-gather, GRIT Table II). The kernel's first store to D has no
// bounds test; the model keeps it inside D (Row < m, Col < n).
//
// grit-gemm is square with m = n = k = 1024: four 4 MiB matrices, 16 MiB
// (GRIT Table II). Scale multiplies the matrix area (the dimension grows by
// sqrt(Scale), a multiple of 16).

const (
	gemmDim  = 1024
	gemmTile = 16 // gemm.cl:4, operator.go:868
	// ALU instructions: Row, Col, the store index; per tile the two
	// indices and bounds tests, then 16 multiply-adds; at the end
	// alpha*P + beta*C.
	gemmIndexOps = 3
	gemmTileOps  = 4 + gemmTile
	gemmEndOps   = 2
)

// gemmShape is one launch of the gemm kernel.
type gemmShape struct {
	m, n, k    int
	a, b, c, d uint64
}

func (g *gemmShape) kernel() *Kernel {
	gridX, gridY := ceilDiv(g.n, gemmTile), ceilDiv(g.m, gemmTile)
	tiles := ceilDiv(g.k, gemmTile)
	return &Kernel{Name: "gemm", Blocks: gridX * gridY, ThreadsPerBlock: gemmTile * gemmTile,
		NewWarp: func(blk, wp int) WarpStream {
			bx, by := blk%gridX, blk/gridX
			// index math, the zeroing store; per tile: A load, B load,
			// compute; then the C load, compute and the D store.
			return &stepWarp{n: 2 + 3*tiles + 3, step: func(pc int, op *Op) {
				end := 2 + 3*tiles
				switch {
				case pc == 0:
					op.compute(gemmIndexOps)
					return
				case pc == end+1:
					op.compute(gemmEndOps)
					return
				case pc > 1 && pc < end && (pc-2)%3 == 2:
					op.compute(gemmTileOps)
					return
				case pc == 1 || pc == end+2:
					op.mem(OpStore, 4)
				default:
					op.mem(OpLoad, 4)
				}
				i, part := (pc-2)/3, (pc-2)%3
				for l := 0; l < WarpSize; l++ {
					tx, ty := block2D(wp, l, gemmTile)
					row, col := by*gemmTile+ty, bx*gemmTile+tx
					switch {
					case pc == 1 || pc >= end:
						if row < g.m && col < g.n {
							base := g.d
							if pc == end {
								base = g.c
							}
							op.lane(base + 4*uint64(row*g.n+col))
						}
					case part == 0:
						if kk := i*gemmTile + tx; kk < g.k && row < g.m {
							op.lane(g.a + 4*uint64(row*g.k+kk))
						}
					default:
						if kk := i*gemmTile + ty; kk < g.k && col < g.n {
							op.lane(g.b + 4*uint64(kk*g.n+col))
						}
					}
				}
			}}
		}}
}

func newGritGEMM(p Params, scale float64) (*builtin, error) {
	dim := scaled(gemmDim, math.Sqrt(scale), gemmTile, gemmTile)
	if err := checkIndexRange("grit-gemm", uint64(dim)*uint64(dim)); err != nil {
		return nil, err
	}
	size := uint64(dim*dim) * 4
	w := &builtin{name: "grit-gemm", class: Regular}
	iA := w.alloc("a", size, Managed, true)
	iB := w.alloc("b", size, Managed, true)
	iC := w.alloc("c", size, Managed, true)
	iD := w.alloc("d", size, Managed, false)
	Layout(w.allocs)
	g := &gemmShape{m: dim, n: dim, k: dim, a: w.base(iA), b: w.base(iB), c: w.base(iC), d: w.base(iD)}
	w.kernel(g.kernel())
	return w, nil
}
