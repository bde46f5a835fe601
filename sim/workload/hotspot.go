package workload

import "math/bits"

// hotspot: Rodinia HotSpot as shipped with the UVMSmart simulator
// (benchmarks/Managed/hotspot, run as "hotspot 1024 2 8"): a 1024 x 1024
// float grid, pyramid height 2, 8 simulated steps, so 8/2 = 4 launches of
// calculate_temp that ping-pong between two temperature grids. Blocks are
// 16x16 tiles computing a 12x12 interior (a 2-cell halo per pyramid level);
// a warp covers two tile rows of 16 floats (64 B each), and tile rows are one
// grid row (4 KB) apart, so one tile touches 16 pages. Every array is
// cudaMallocManaged.
//
// Scale multiplies the number of grid rows; rows stay 1024 floats long, so
// the tile-to-page geometry is unchanged.

const (
	hotspotSize     = 1024 // grid_rows = grid_cols
	hotspotPyramid  = 2    // pyramid_height
	hotspotSimTime  = 8    // total_iterations
	hotspotBlock    = 16   // BLOCK_SIZE
	hotspotExpand   = 2    // EXPAND_RATE
	hotspotBorder   = hotspotPyramid * hotspotExpand / 2
	hotspotInterior = hotspotBlock - hotspotPyramid*hotspotExpand

	// ALU instructions per thread: the step/Cap and 1/R reciprocals, block
	// and thread coordinates, the valid-range bounds and clamped N/S/E/W
	// indices; per pyramid iteration the range tests and the 5-point update.
	hotspotSetupOps     = 24
	hotspotIterationOps = 18
)

type hotspot struct {
	rows, cols int
	blockCols  int
	temp       [2]uint64
	power      uint64
}

func newHotspot(p Params, scale float64) (*builtin, error) {
	h := &hotspot{rows: scaled(hotspotSize, scale, 1, hotspotBlock), cols: hotspotSize}
	size := uint64(h.rows) * uint64(h.cols) * 4
	w := &builtin{name: "hotspot", class: Regular}
	iT0 := w.alloc("MatrixTemp0", size, Managed, false)
	iT1 := w.alloc("MatrixTemp1", size, Managed, false)
	iPower := w.alloc("MatrixPower", size, Managed, true)
	Layout(w.allocs)
	h.temp = [2]uint64{w.base(iT0), w.base(iT1)}
	h.power = w.base(iPower)
	h.blockCols = ceilDiv(h.cols, hotspotInterior)
	blockRows := ceilDiv(h.rows, hotspotInterior)
	// compute_tran_temp: src = 1, dst = 0, swapped before every launch.
	src, dst := 1, 0
	for t := 0; t < hotspotSimTime; t += hotspotPyramid {
		src, dst = dst, src
		iterations := min(hotspotPyramid, hotspotSimTime-t)
		in, out := h.temp[src], h.temp[dst]
		w.kernel(&Kernel{Name: "calculate_temp", Blocks: h.blockCols * blockRows, ThreadsPerBlock: hotspotBlock * hotspotBlock,
			NewWarp: func(b, wp int) WarpStream {
				return newHotspotWarp(h, in, out, iterations, b%h.blockCols, b/h.blockCols, wp)
			}})
	}
	return w, nil
}

type hotspotWarp struct {
	h            *hotspot
	src, dst     uint64
	iterations   int
	bx, by, warp int
	// Lane l addresses grid element origin + cols*(l/16) + l%16; the masks
	// hold the lanes that load (inside the grid) and store (computed).
	origin              int
	loadMask, storeMask uint32
	pc                  int
}

func newHotspotWarp(h *hotspot, src, dst uint64, iterations, bx, by, warp int) *hotspotWarp {
	s := hotspotWarpPool.fill(hotspotWarp{h: h, src: src, dst: dst, iterations: iterations, bx: bx, by: by, warp: warp})
	y, x, _, _ := s.cell(0)
	s.origin = y*h.cols + x
	for l := 0; l < WarpSize; l++ {
		_, _, inGrid, computed := s.cell(l)
		if inGrid {
			s.loadMask |= 1 << l
		}
		if computed {
			s.storeMask |= 1 << l
		}
	}
	return s
}

// cell returns the grid coordinates of a lane and whether they are inside
// the grid (the load condition) and whether the lane writes a result (the
// "computed" flag of the last pyramid iteration).
func (s *hotspotWarp) cell(lane int) (y, x int, inGrid, computed bool) {
	h := s.h
	tx, ty := block2D(s.warp, lane, hotspotBlock)
	small := hotspotBlock - s.iterations*hotspotExpand
	blkY := small*s.by - hotspotBorder
	blkX := small*s.bx - hotspotBorder
	y, x = blkY+ty, blkX+tx
	inGrid = y >= 0 && y < h.rows && x >= 0 && x < h.cols
	validYmin, validXmin := max(-blkY, 0), max(-blkX, 0)
	validYmax := min(hotspotBlock-1, hotspotBlock-1-(blkY+hotspotBlock-1-(h.rows-1)))
	validXmax := min(hotspotBlock-1, hotspotBlock-1-(blkX+hotspotBlock-1-(h.cols-1)))
	last := s.iterations - 1
	lo, hi := last+1, hotspotBlock-last-2
	computed = tx >= lo && tx <= hi && ty >= lo && ty <= hi &&
		tx >= validXmin && tx <= validXmax && ty >= validYmin && ty <= validYmax
	return y, x, inGrid, computed
}

var hotspotWarpPool warpPool[hotspotWarp]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *hotspotWarp) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	hotspotWarpPool.done(s)
	return false
}

func (s *hotspotWarp) next(op *Op) bool {
	for {
		pc := s.pc
		s.pc++
		switch pc {
		case 0:
			op.compute(hotspotSetupOps)
			return true
		case 1, 2: // temp_on_cuda = temp_src[index]; power_on_cuda = power[index]
			base := s.src
			if pc == 2 {
				base = s.h.power
			}
			s.fill(op, OpLoad, base, false)
		case 3:
			op.compute(hotspotIterationOps * s.iterations)
			return true
		case 4: // if (computed) temp_dst[index] = temp_t[ty][tx]
			s.fill(op, OpStore, s.dst, true)
		default:
			return false
		}
		if op.Lanes > 0 {
			return true
		}
	}
}

func (s *hotspotWarp) fill(op *Op, kind OpKind, base uint64, onlyComputed bool) {
	op.mem(kind, 4)
	mask := s.loadMask
	if onlyComputed {
		mask = s.storeMask
	}
	for ; mask != 0; mask &= mask - 1 {
		l := bits.TrailingZeros32(mask)
		op.lane(base + 4*uint64(s.origin+s.h.cols*(l/hotspotBlock)+l%hotspotBlock))
	}
}
