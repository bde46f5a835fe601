package workload

// srad: Rodinia SRAD v2 as shipped with the UVMSmart simulator
// (benchmarks/Managed/srad_v2, run as "srad 1024 1024 0 127 0 127 0.5 4"):
// a 1024 x 1024 image, 4 iterations of two kernels on a grid of 16x16 tiles.
// Only the image J is cudaMallocManaged; the coefficient arrays C, E, W, S, N
// are cudaMalloc'd. Before each iteration the host reads the 128 x 128
// speckle region (rows 0..127, columns 0..127) of J to compute q0sqr.
//
// srad_cuda_1 loads its tile of J plus the N/S/E/W halos (each halo load is
// guarded by a flat-index range check; the tile edges then reload the
// clamped border row or column), and writes C, E, W, S, N. srad_cuda_2
// reloads J and C with its south and east halos, reads N, S, W, E and
// writes J. srad_cuda_2's south and east halo loads are unguarded in the
// benchmark and read past the end of C for the last tile row; those lanes,
// whose values the kernel then overwrites, fall outside every allocation
// and are left out.
//
// Scale multiplies the number of image rows (rounded to a multiple of 16);
// rows stay 1024 floats long.

const (
	sradRows  = 1024
	sradCols  = 1024
	sradIters = 4   // niter
	sradROI   = 128 // speckle region r1..r2 = c1..c2 = 0..127
	sradBlock = 16  // BLOCK_SIZE

	// ALU instructions per thread: the five tile indices; the diffusion
	// coefficient (four differences, g2, l, num, den, qsqr, c with three
	// divisions and the saturation) for kernel 1; the four-term divergence
	// and the image update for kernel 2.
	sradIndexOps  = 14
	sradCoeffOps  = 36
	sradUpdateOps = 10
)

type srad struct {
	rows, cols       int
	gridX, gridY     int
	c, e, w, s, n, j uint64
}

func newSRAD(p Params, scale float64) (*builtin, error) {
	sr := &srad{rows: scaled(sradRows, scale, sradBlock, sradBlock), cols: sradCols}
	size := uint64(sr.rows) * uint64(sr.cols) * 4
	w := &builtin{name: "srad", class: Regular}
	iC := w.alloc("C_cuda", size, Device, false)
	iE := w.alloc("E_C", size, Device, false)
	iW := w.alloc("W_C", size, Device, false)
	iS := w.alloc("S_C", size, Device, false)
	iN := w.alloc("N_C", size, Device, false)
	iJ := w.alloc("J_shared", size, Managed, false)
	Layout(w.allocs)
	sr.c, sr.e, sr.w, sr.s, sr.n, sr.j = w.base(iC), w.base(iE), w.base(iW), w.base(iS), w.base(iN), w.base(iJ)
	sr.gridX, sr.gridY = sr.cols/sradBlock, sr.rows/sradBlock

	roiRows := min(sradROI, sr.rows)
	roi := make([][2]uint64, roiRows)
	for i := range roi {
		start := sr.j + 4*uint64(i*sr.cols)
		roi[i] = [2]uint64{start, start + 4*sradROI}
	}
	blocks := sr.gridX * sr.gridY
	for it := 0; it < sradIters; it++ {
		w.host(&HostAccess{Alloc: "J_shared", Ranges: roi})
		w.kernel(&Kernel{Name: "srad_cuda_1", Blocks: blocks, ThreadsPerBlock: sradBlock * sradBlock,
			NewWarp: func(b, wp int) WarpStream { return sr.newWarp(sradStep1, b, wp) }})
		w.kernel(&Kernel{Name: "srad_cuda_2", Blocks: blocks, ThreadsPerBlock: sradBlock * sradBlock,
			NewWarp: func(b, wp int) WarpStream { return sr.newWarp(sradStep2, b, wp) }})
	}
	return w, nil
}

// sradRef names one element the kernels address, relative to the thread.
type sradRef uint8

const (
	sradIndex     sradRef = iota // own element: base + cols*ty + tx
	sradNorth                    // row above the tile: base + tx - cols
	sradSouth                    // row below the tile: base + 16*cols + tx
	sradWest                     // column left of the tile: base + cols*ty - 1
	sradEast                     // column right of the tile: base + cols*ty + 16
	sradTopRow                   // tile row 0 of block (bx, 0)
	sradBottomRow                // tile row 15 of the last block row
	sradLeftCol                  // tile column 0 of block (0, by)
	sradRightCol                 // tile column 15 of the last block column
)

// sradInstr is one instruction of a kernel program.
type sradInstr struct {
	kind   OpKind
	alloc  int // sradJ .. sradN
	ref    sradRef
	edge   sradEdge
	aluOps int
}

// sradEdge restricts an instruction to the blocks on one edge of the grid.
type sradEdge uint8

const (
	sradAll        sradEdge = iota
	sradTop                 // if (by == 0)
	sradBottomElse          // else if (by == gridDim.y - 1), after sradTop
	sradLeft                // if (bx == 0)
	sradRightElse           // else if (bx == gridDim.x - 1), after sradLeft
	sradBottom              // if (by == gridDim.y - 1)
	sradRight               // if (bx == gridDim.x - 1)
)

const (
	sradJ = iota
	sradC
	sradE
	sradW
	sradS
	sradN
)

var (
	sradStep1 = []sradInstr{
		{kind: OpCompute, aluOps: sradIndexOps},
		{kind: OpLoad, alloc: sradJ, ref: sradNorth},
		{kind: OpLoad, alloc: sradJ, ref: sradSouth},
		{kind: OpLoad, alloc: sradJ, ref: sradTopRow, edge: sradTop},
		{kind: OpLoad, alloc: sradJ, ref: sradBottomRow, edge: sradBottomElse},
		{kind: OpLoad, alloc: sradJ, ref: sradWest},
		{kind: OpLoad, alloc: sradJ, ref: sradEast},
		{kind: OpLoad, alloc: sradJ, ref: sradLeftCol, edge: sradLeft},
		{kind: OpLoad, alloc: sradJ, ref: sradRightCol, edge: sradRightElse},
		{kind: OpLoad, alloc: sradJ, ref: sradIndex},
		{kind: OpCompute, aluOps: sradCoeffOps},
		{kind: OpStore, alloc: sradC, ref: sradIndex},
		{kind: OpStore, alloc: sradE, ref: sradIndex},
		{kind: OpStore, alloc: sradW, ref: sradIndex},
		{kind: OpStore, alloc: sradS, ref: sradIndex},
		{kind: OpStore, alloc: sradN, ref: sradIndex},
	}
	sradStep2 = []sradInstr{
		{kind: OpCompute, aluOps: sradIndexOps},
		{kind: OpLoad, alloc: sradJ, ref: sradIndex},
		{kind: OpLoad, alloc: sradC, ref: sradSouth},
		{kind: OpLoad, alloc: sradC, ref: sradBottomRow, edge: sradBottom},
		{kind: OpLoad, alloc: sradC, ref: sradEast},
		{kind: OpLoad, alloc: sradC, ref: sradRightCol, edge: sradRight},
		{kind: OpLoad, alloc: sradC, ref: sradIndex},
		{kind: OpLoad, alloc: sradN, ref: sradIndex},
		{kind: OpLoad, alloc: sradS, ref: sradIndex},
		{kind: OpLoad, alloc: sradW, ref: sradIndex},
		{kind: OpLoad, alloc: sradE, ref: sradIndex},
		{kind: OpCompute, aluOps: sradUpdateOps},
		{kind: OpStore, alloc: sradJ, ref: sradIndex},
	}
)

func (sr *srad) array(i int) uint64 {
	switch i {
	case sradC:
		return sr.c
	case sradE:
		return sr.e
	case sradW:
		return sr.w
	case sradS:
		return sr.s
	case sradN:
		return sr.n
	}
	return sr.j
}

func (sr *srad) newWarp(prog []sradInstr, b, wp int) *sradWarp {
	return sradWarpPool.fill(sradWarp{sr: sr, prog: prog, bx: b % sr.gridX, by: b / sr.gridX, warp: wp})
}

type sradWarp struct {
	sr           *srad
	prog         []sradInstr
	bx, by, warp int
	pc           int
}

var sradWarpPool warpPool[sradWarp]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *sradWarp) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	sradWarpPool.done(s)
	return false
}

func (s *sradWarp) next(op *Op) bool {
	sr := s.sr
	for s.pc < len(s.prog) {
		in := s.prog[s.pc]
		s.pc++
		if in.kind == OpCompute {
			op.compute(in.aluOps)
			return true
		}
		if !s.onEdge(in.edge) {
			continue
		}
		op.mem(in.kind, 4)
		total := sr.rows * sr.cols
		base := sr.array(in.alloc)
		for l := 0; l < WarpSize; l++ {
			idx := s.index(in.ref, l)
			if idx < 0 || idx >= total {
				continue
			}
			op.lane(base + 4*uint64(idx))
		}
		if op.Lanes > 0 {
			return true
		}
	}
	return false
}

func (s *sradWarp) onEdge(e sradEdge) bool {
	lastY, lastX := s.by == s.sr.gridY-1, s.bx == s.sr.gridX-1
	switch e {
	case sradTop:
		return s.by == 0
	case sradBottomElse:
		return s.by != 0 && lastY
	case sradLeft:
		return s.bx == 0
	case sradRightElse:
		return s.bx != 0 && lastX
	case sradBottom:
		return lastY
	case sradRight:
		return lastX
	}
	return true
}

// index evaluates the benchmark's flat index expression for a lane.
func (s *sradWarp) index(ref sradRef, lane int) int {
	sr := s.sr
	tx, ty := block2D(s.warp, lane, sradBlock)
	c := sr.cols
	base := c*sradBlock*s.by + sradBlock*s.bx
	switch ref {
	case sradNorth:
		return base + tx - c
	case sradSouth:
		return base + c*sradBlock + tx
	case sradWest:
		return base + c*ty - 1
	case sradEast:
		return base + c*ty + sradBlock
	case sradTopRow:
		return sradBlock*s.bx + tx
	case sradBottomRow:
		return c*sradBlock*(sr.gridY-1) + sradBlock*s.bx + c*(sradBlock-1) + tx
	case sradLeftCol:
		return c*sradBlock*s.by + c*ty
	case sradRightCol:
		return c*sradBlock*s.by + sradBlock*(sr.gridX-1) + c*ty + sradBlock - 1
	}
	return base + c*ty + tx
}
