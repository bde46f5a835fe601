package workload

import "math"

// nw: Rodinia Needleman-Wunsch as shipped with the UVMSmart simulator
// (benchmarks/Managed/nw, run as "needle 1024 10"): two (1024+1)^2 int
// matrices, referrence (read-only) and itemsets, both cudaMallocManaged.
// The matrix is cut into 16x16 tiles processed along anti-diagonals: the
// top-left half launches needle_cuda_shared_1 with 1, 2, .., 64 blocks, the
// bottom-right half needle_cuda_shared_2 with 63, .., 1 blocks, 127 kernels
// in all. A block is one 16-thread warp; thread tx walks column tx of its
// tile, one matrix row (1025 ints = 4,100 B) per step: 16 loads of
// referrence, then the tile's west column (one element per thread, also
// 4,100 B apart), north row and north-west corner of itemsets, the
// wavefront over the tile in shared memory, and 16 stores of itemsets.
//
// Scale multiplies the matrix area: the dimension grows by sqrt(Scale),
// rounded to a multiple of 16.

const (
	nwDimension = 1024
	nwBlock     = 16 // BLOCK_SIZE

	// ALU instructions per thread: the four tile indices; per step of the
	// 31-step wavefront the range test, three adds and two max compares and
	// the shared-memory index arithmetic.
	nwIndexOps     = 10
	nwWavefrontOps = 31 * 8
)

type nw struct {
	cols       int // max_cols = dimension + 1
	blockWidth int
	ref, items uint64
}

func newNW(p Params, scale float64) (*builtin, error) {
	dim := scaled(nwDimension, math.Sqrt(scale), nwBlock, nwBlock)
	m := &nw{cols: dim + 1, blockWidth: dim / nwBlock}
	size := uint64(m.cols) * uint64(m.cols) * 4
	w := &builtin{name: "nw", class: Irregular}
	iRef := w.alloc("referrence", size, Managed, true)
	iItems := w.alloc("itemsets", size, Managed, false)
	Layout(w.allocs)
	m.ref, m.items = w.base(iRef), w.base(iItems)
	for i := 1; i <= m.blockWidth; i++ {
		w.kernel(&Kernel{Name: "needle_cuda_shared_1", Blocks: i, ThreadsPerBlock: nwBlock,
			NewWarp: func(b, _ int) WarpStream { return nwWarpPool.fill(nwWarp{m: m, first: true, bx: b, by: i - 1 - b}) }})
	}
	for i := m.blockWidth - 1; i >= 1; i-- {
		w.kernel(&Kernel{Name: "needle_cuda_shared_2", Blocks: i, ThreadsPerBlock: nwBlock,
			NewWarp: func(b, _ int) WarpStream {
				return nwWarpPool.fill(nwWarp{m: m, bx: b + m.blockWidth - i, by: m.blockWidth - b - 1})
			}})
	}
	return w, nil
}

// nwWarp is the single warp of one tile (bx, by) = (b_index_x, b_index_y).
type nwWarp struct {
	m      *nw
	first  bool // needle_cuda_shared_1 reads the corner before the tile
	bx, by int
	pc     int
}

// Instruction steps; shared_1 reads the north-west corner before the
// referrence tile, shared_2 after it.
const (
	nwIndex   = 0
	nwRefRows = 1 // 16 loads, steps 1..16
	nwTail    = nwRefRows + nwBlock
)

var nwWarpPool warpPool[nwWarp]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *nwWarp) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	nwWarpPool.done(s)
	return false
}

func (s *nwWarp) next(op *Op) bool {
	m := s.m
	c := uint64(m.cols)
	base := c*nwBlock*uint64(s.by) + nwBlock*uint64(s.bx)
	index := base + c + 1 // index of thread 0; thread tx adds tx
	pc := s.pc
	s.pc++
	// Program of shared_1: index, corner, 16 ref rows, west, north, wavefront, 16 stores.
	// Program of shared_2: index, 16 ref rows, corner, west, north, wavefront, 16 stores.
	step := pc
	if s.first && pc >= 1 {
		switch {
		case pc == 1:
			step = nwTail // corner
		case pc <= nwBlock+1:
			step = pc - 1
		}
	}
	switch {
	case step == nwIndex:
		op.compute(nwIndexOps)
	case step < nwTail:
		op.mem(OpLoad, 4)
		row := uint64(step - nwRefRows)
		for tx := uint64(0); tx < nwBlock; tx++ {
			op.lane(m.ref + 4*(index+c*row+tx))
		}
	case step == nwTail: // if (tx == 0) temp[0][0] = matrix_cuda[index_nw]
		op.mem(OpLoad, 4)
		op.lane(m.items + 4*base)
	case step == nwTail+1: // temp[tx+1][0] = matrix_cuda[index_w + cols*tx]
		op.mem(OpLoad, 4)
		for tx := uint64(0); tx < nwBlock; tx++ {
			op.lane(m.items + 4*(base+c+c*tx))
		}
	case step == nwTail+2: // temp[0][tx+1] = matrix_cuda[index_n]
		op.mem(OpLoad, 4)
		for tx := uint64(0); tx < nwBlock; tx++ {
			op.lane(m.items + 4*(base+1+tx))
		}
	case step == nwTail+3:
		op.compute(nwWavefrontOps)
	case step < nwTail+4+nwBlock: // matrix_cuda[index + ty*cols] = temp[ty+1][tx+1]
		op.mem(OpStore, 4)
		row := uint64(step - nwTail - 4)
		for tx := uint64(0); tx < nwBlock; tx++ {
			op.lane(m.items + 4*(index+c*row+tx))
		}
	default:
		return false
	}
	return true
}
