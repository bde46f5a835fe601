package workload

// 2dconv: PolyBench/GPU 2D convolution as shipped with the UVMSmart simulator
// (benchmarks/Managed/2DCONV): NI = NJ = 1024, A and B cudaMallocManaged, one
// launch of Convolution2D_kernel on 32x8 blocks. Interior thread (i, j)
// reads the 3x3 neighbourhood of A (rows i-1, i, i+1) and writes B[i][j]; a
// warp is one row segment of 32 columns.
//
// Scale multiplies the number of rows NI; rows stay NJ = 1024 floats long.
// The benchmark sizes the grid as (ceil(NI/32), ceil(NJ/8)), which equals
// (ceil(NJ/32), ceil(NI/8)) only for a square problem; the model uses the
// latter, the one that covers every (i, j) when NI differs from NJ.

const (
	conv2DRows = 1024 // NI
	conv2DCols = 1024 // NJ
	conv2DDimX = 32   // DIM_THREAD_BLOCK_X
	conv2DDimY = 8    // DIM_THREAD_BLOCK_Y

	// ALU instructions per thread: i, j and the four bounds tests; nine
	// multiply-adds of the stencil.
	conv2DIndexOps   = 8
	conv2DStencilOps = 9
)

type conv2D struct {
	ni, nj int
	gridX  int
	a, b   uint64
}

func newConv2D(p Params, scale float64) (*builtin, error) {
	c := &conv2D{ni: scaled(conv2DRows, scale, 1, 3), nj: conv2DCols}
	size := uint64(c.ni) * uint64(c.nj) * 4
	w := &builtin{name: "2dconv", class: Regular}
	iA := w.alloc("A", size, Managed, true)
	iB := w.alloc("B", size, Managed, false)
	Layout(w.allocs)
	c.a, c.b = w.base(iA), w.base(iB)
	c.gridX = ceilDiv(c.nj, conv2DDimX)
	gridY := ceilDiv(c.ni, conv2DDimY)
	w.kernel(&Kernel{Name: "Convolution2D_kernel", Blocks: c.gridX * gridY, ThreadsPerBlock: conv2DDimX * conv2DDimY,
		NewWarp: func(b, wp int) WarpStream {
			return conv2DWarpPool.fill(conv2DWarp{c: c, i: (b/c.gridX)*conv2DDimY + wp, j0: (b % c.gridX) * conv2DDimX})
		}})
	return w, nil
}

// conv2DWarp: row i, columns j0 .. j0+31.
type conv2DWarp struct {
	c     *conv2D
	i, j0 int
	pc    int
}

// Program: index math, nine loads of A in the kernel's expression order
// (row i-1, i, i+1; column j-1, j, j+1), the stencil arithmetic, the store.
const (
	conv2DLoads     = 9
	conv2DMath      = conv2DLoads + 1
	conv2DStore     = conv2DLoads + 2
	conv2DProgramLn = conv2DLoads + 3
)

var conv2DWarpPool warpPool[conv2DWarp]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *conv2DWarp) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	conv2DWarpPool.done(s)
	return false
}

func (s *conv2DWarp) next(op *Op) bool {
	c := s.c
	if s.i <= 0 || s.i >= c.ni-1 {
		if s.pc == 0 {
			s.pc = conv2DProgramLn
			op.compute(conv2DIndexOps)
			return true
		}
		return false
	}
	for s.pc < conv2DProgramLn {
		pc := s.pc
		s.pc++
		switch {
		case pc == 0:
			op.compute(conv2DIndexOps)
			return true
		case pc == conv2DMath:
			op.compute(conv2DStencilOps)
			return true
		case pc == conv2DStore:
			s.fill(op, OpStore, c.b, 0, 0)
		default:
			k := pc - 1
			s.fill(op, OpLoad, c.a, k/3-1, k%3-1)
		}
		if op.Lanes > 0 {
			return true
		}
	}
	return false
}

func (s *conv2DWarp) fill(op *Op, kind OpKind, base uint64, di, dj int) {
	c := s.c
	op.mem(kind, 4)
	for l := 0; l < WarpSize; l++ {
		j := s.j0 + l
		if j <= 0 || j >= c.nj-1 {
			continue
		}
		op.lane(base + 4*uint64((s.i+di)*c.nj+j+dj))
	}
}
