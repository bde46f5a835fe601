package workload

import "math"

// grit-mm: AMD APP SDK MatrixMultiplication as MGPUSim ships it
// (amd/benchmarks/amdappsdk/matrixmultiplication): C = A*B over float4
// elements, A X x Y, B Y x Z, C X x Z floats (mm.go:180-182), one launch of
// mmmKernel_local on 8x8 groups over (Z/4) x (X/4) work-items
// (mm.go:114-120), each work-item computing a 4x4 tile of C
// (MatrixMultiplication_Kernels.cl:24-112). For each of Y/4/8 blocks i it
// reads four float4 of A, rows 4*gIdY .. 4*gIdY+3 at column i*8+lIdX
// (kernels.cl:55-61), then for j = 0, 4, .., 28 four float4 of B, rows
// 32i+j .. 32i+j+3 at column gIdX (kernels.cl:66-81), and finally writes its
// four float4 of C (kernels.cl:107-110). The kernel as shipped indexes A
// with the local id lIdY where the AMD APP SDK original uses the global id
// gIdY, which would make every group read the same 32 rows of A; the model
// follows the original. Every group reads a row band of A and a column band
// of B held by other GPUs' groups (scatter-gather, GRIT Table II).
//
// Square matrices of 1696 floats give 32.9 MiB (GRIT Table II: 33).
// Scale multiplies the matrix area (the dimension grows by sqrt(Scale), a
// multiple of 32).

const (
	mmDim   = 1696
	mmLocal = 8 // mm.go:119-120
	mmTile  = 4 // TILEX, TILEY (kernels.cl:17-20)
	// ALU instructions per j step: 64 multiply-adds of the 4x4 tile update.
	mmStepOps = 64
)

func newGritMM(p Params, scale float64) (*builtin, error) {
	dim := scaled(mmDim, math.Sqrt(scale), mmTile*mmLocal, mmTile*mmLocal)
	if err := checkIndexRange("grit-mm", uint64(dim)*uint64(dim)); err != nil {
		return nil, err
	}
	size := uint64(dim*dim) * 4
	w := &builtin{name: "grit-mm", class: Regular}
	iA := w.alloc("matrixA", size, Managed, true)
	iB := w.alloc("matrixB", size, Managed, true)
	iC := w.alloc("matrixC", size, Managed, false)
	Layout(w.allocs)
	a, b, c := w.base(iA), w.base(iB), w.base(iC)
	vec := dim / mmTile // float4 per row: temp and gSizeX in the kernel
	grid := vec / mmLocal
	loops := vec / mmLocal
	const perLoop = mmTile + 8*(mmTile+1) // A loads, then 8 j steps of 4 B loads and the math
	w.kernel(&Kernel{Name: "mmmKernel_local", Blocks: grid * grid, ThreadsPerBlock: mmLocal * mmLocal,
		NewWarp: func(blk, wp int) WarpStream {
			bx, by := blk%grid, blk/grid
			return &stepWarp{n: loops*perLoop + mmTile, step: func(pc int, op *Op) {
				i, k := pc/perLoop, pc%perLoop
				if i == loops {
					op.mem(OpStore, 16)
				} else if k >= mmTile && (k-mmTile)%(mmTile+1) == mmTile {
					op.compute(mmStepOps)
					return
				} else {
					op.mem(OpLoad, 16)
				}
				for l := 0; l < WarpSize; l++ {
					lx, ly := block2D(wp, l, mmLocal)
					gx, gy := bx*mmLocal+lx, by*mmLocal+ly
					var idx int
					switch {
					case i == loops:
						idx = gx + (gy*mmTile+k)*vec
						op.lane(c + 16*uint64(idx))
						continue
					case k < mmTile:
						idx = i*mmLocal + lx + (gy*mmTile+k)*vec
						op.lane(a + 16*uint64(idx))
					default:
						j, q := (k-mmTile)/(mmTile+1)*mmTile, (k-mmTile)%(mmTile+1)
						idx = gx + (i*mmLocal*mmTile+j+q)*vec
						op.lane(b + 16*uint64(idx))
					}
				}
			}}
		}})
	return w, nil
}
