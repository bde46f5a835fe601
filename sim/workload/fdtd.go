package workload

// fdtd: PolyBench/GPU FDTD-2D as shipped with the UVMSmart simulator
// (benchmarks/Managed/FDTD-2D): NX = NY = 1200, tmax = 5, all four arrays
// cudaMallocManaged. Each time step launches three kernels on a
// ceil(NY/32) x ceil(NX/8) grid of 32x8 blocks; thread (i, j) updates one
// element, reading row-major neighbours, so a warp (one threadIdx.y) reads
// 32 consecutive floats of a row and every kernel sweeps whole arrays.
//
// Scale multiplies the number of rows NX; rows stay NY = 1200 floats long.

const (
	fdtdRows  = 1200 // NX
	fdtdCols  = 1200 // NY
	fdtdSteps = 5    // tmax
	fdtdDimX  = 32   // DIM_THREAD_BLOCK_X
	fdtdDimY  = 8    // DIM_THREAD_BLOCK_Y

	// ALU instructions per thread: i, j and bounds tests; the update
	// a - c*(b - d) (step 1, 2) or a - c*(b - d + e - f) (step 3).
	fdtdIndexOps   = 8
	fdtdUpdateOps  = 3
	fdtdUpdate3Ops = 5
)

type fdtd struct {
	nx, ny           int
	fict, ex, ey, hz uint64
	gridX, gridY     int
}

func newFDTD(p Params, scale float64) (*builtin, error) {
	f := &fdtd{nx: scaled(fdtdRows, scale, 1, 2), ny: fdtdCols}
	nx, ny := uint64(f.nx), uint64(f.ny)
	w := &builtin{name: "fdtd", class: Regular}
	iFict := w.alloc("_fict_", fdtdSteps*4, Managed, true)
	iEx := w.alloc("ex", nx*(ny+1)*4, Managed, false)
	iEy := w.alloc("ey", (nx+1)*ny*4, Managed, false)
	iHz := w.alloc("hz", nx*ny*4, Managed, false)
	Layout(w.allocs)
	f.fict, f.ex, f.ey, f.hz = w.base(iFict), w.base(iEx), w.base(iEy), w.base(iHz)
	f.gridX, f.gridY = ceilDiv(f.ny, fdtdDimX), ceilDiv(f.nx, fdtdDimY)
	names := [3]string{"fdtd_step1_kernel", "fdtd_step2_kernel", "fdtd_step3_kernel"}
	for t := 0; t < fdtdSteps; t++ {
		for step := 0; step < 3; step++ {
			w.kernel(&Kernel{Name: names[step], Blocks: f.gridX * f.gridY, ThreadsPerBlock: fdtdDimX * fdtdDimY,
				NewWarp: func(b, wp int) WarpStream {
					// Block b is blockIdx (b % gridX, b / gridX); warp wp is threadIdx.y.
					return fdtdWarpPool.fill(fdtdWarp{f: f, step: step, t: t, i: (b/f.gridX)*fdtdDimY + wp, j0: (b % f.gridX) * fdtdDimX})
				}})
		}
	}
	return w, nil
}

// fdtdWarp is one warp of one of the three kernels: row i, columns j0..j0+31.
type fdtdWarp struct {
	f     *fdtd
	step  int
	t     int
	i, j0 int
	pc    int
}

// fdtdAccess is one memory instruction of a kernel: the array, its row pitch in
// elements beyond NY, and the row and column offsets from (i, j).
type fdtdAccess struct {
	kind       OpKind
	array      int // 0 fict, 1 ex, 2 ey, 3 hz
	pitchExtra int // 1 for ex, whose rows are NY+1 long
	di, dj     int
}

const (
	fdtdFict = iota
	fdtdEx
	fdtdEy
	fdtdHz
)

var (
	// Step 1, row 0: ey[j] = _fict_[t].
	fdtdStep1Row0 = []fdtdAccess{{OpLoad, fdtdFict, 0, 0, 0}, {OpStore, fdtdEy, 0, 0, 0}}
	// Step 1: ey[i][j] -= 0.5*(hz[i][j] - hz[i-1][j]).
	fdtdStep1 = []fdtdAccess{{OpLoad, fdtdEy, 0, 0, 0}, {OpLoad, fdtdHz, 0, 0, 0}, {OpLoad, fdtdHz, 0, -1, 0}, {OpStore, fdtdEy, 0, 0, 0}}
	// Step 2 (j > 0): ex[i][j] -= 0.5*(hz[i][j] - hz[i][j-1]).
	fdtdStep2 = []fdtdAccess{{OpLoad, fdtdEx, 1, 0, 0}, {OpLoad, fdtdHz, 0, 0, 0}, {OpLoad, fdtdHz, 0, 0, -1}, {OpStore, fdtdEx, 1, 0, 0}}
	// Step 3: hz[i][j] -= 0.7*(ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]).
	fdtdStep3 = []fdtdAccess{{OpLoad, fdtdHz, 0, 0, 0}, {OpLoad, fdtdEx, 1, 0, 1}, {OpLoad, fdtdEx, 1, 0, 0},
		{OpLoad, fdtdEy, 0, 1, 0}, {OpLoad, fdtdEy, 0, 0, 0}, {OpStore, fdtdHz, 0, 0, 0}}
)

func (s *fdtdWarp) program() (list []fdtdAccess, mathOps int) {
	switch {
	case s.step == 0 && s.i == 0:
		return fdtdStep1Row0, 0
	case s.step == 0:
		return fdtdStep1, fdtdUpdateOps
	case s.step == 1:
		return fdtdStep2, fdtdUpdateOps
	}
	return fdtdStep3, fdtdUpdate3Ops
}

var fdtdWarpPool warpPool[fdtdWarp]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *fdtdWarp) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	fdtdWarpPool.done(s)
	return false
}

func (s *fdtdWarp) next(op *Op) bool {
	f := s.f
	if s.i >= f.nx { // rows past NX only compute their index and exit
		if s.pc == 0 {
			s.pc = 1
			op.compute(fdtdIndexOps)
			return true
		}
		return false
	}
	list, mathOps := s.program()
	loads := len(list) - 1
	// Program: index math, the loads, the update arithmetic, the store.
	for {
		pc := s.pc
		s.pc++
		switch {
		case pc == 0:
			op.compute(fdtdIndexOps)
			return true
		case pc <= loads:
			s.fill(op, list[pc-1])
		case pc == loads+1:
			if mathOps == 0 {
				continue
			}
			op.compute(mathOps)
			return true
		case pc == loads+2:
			s.fill(op, list[loads])
		default:
			return false
		}
		if op.Lanes > 0 {
			return true
		}
	}
}

func (s *fdtdWarp) fill(op *Op, a fdtdAccess) {
	f := s.f
	op.mem(a.kind, 4)
	for l := 0; l < WarpSize; l++ {
		j := s.j0 + l
		if j >= f.ny || (s.step == 1 && j == 0) {
			continue
		}
		var base uint64
		switch a.array {
		case fdtdFict:
			op.lane(f.fict + 4*uint64(s.t))
			continue
		case fdtdEx:
			base = f.ex
		case fdtdEy:
			base = f.ey
		case fdtdHz:
			base = f.hz
		}
		pitch := f.ny + a.pitchExtra
		op.lane(base + 4*uint64((s.i+a.di)*pitch+j+a.dj))
	}
}
