package workload

// grit-st: SHOC Stencil2D as MGPUSim ships it (amd/benchmarks/shoc/
// stencil2d). Two float arrays of NumRows x numPaddedCols, the logical
// matrix plus a one-element halo, columns padded to a multiple of 16
// (stencil2d.go:219-236). Each of NumIteration iterations launches
// StencilKernel on groups of 1 x 64 work-items over (NumRows-2)/16 x
// (NumCols-2) and swaps the arrays (stencil2d.go:303-315). A work-item
// (stencil2d.cl:42-121) owns one column gCol of a 16-row strip starting at
// gRow = 16*gidRow: it reads data rows gRow-1 .. gRow+16 of its column into
// local memory, the first and last work-items of the group also the halo
// columns gCol-1 and gCol+1 (stencil2d.cl:76-96), and writes newData rows
// gRow .. gRow+15 of its column (stencil2d.cl:102-120). Groups are numbered
// row-strip first (OpenCL dimension 0 is rows): consecutive groups walk down
// a 64-column band.
//
// A 2048 x 2048 interior gives two 16.1 MiB arrays, 32.3 MiB (GRIT Table II:
// 33). SHOC's default iteration count (1000) is far beyond what the
// characterisation needs; the model runs 4, enough for both arrays to be
// read and written. Scale multiplies the interior rows (a multiple of 16).

const (
	stRows       = 2048
	stCols       = 2048
	stIterations = 4
	stLRows      = 16 // LROWS, stencil2d.cl:22
	stLCols      = 64 // localCols, stencil2d.go:160
	stAlign      = 16 // column padding b.pad, stencil2d.go:158
	// ALU instructions per output row: nine local loads and the weighted
	// sums.
	stRowOps = 14
)

func newGritST(p Params, scale float64) (*builtin, error) {
	rows := scaled(stRows, scale, stLRows, stLRows)
	numRows, numCols := rows+2, stCols+2
	pitch := ceilDiv(numCols, stAlign) * stAlign // numPaddedCols
	if err := checkIndexRange("grit-st", uint64(numRows)*uint64(pitch)); err != nil {
		return nil, err
	}
	size := uint64(numRows*pitch) * 4
	w := &builtin{name: "grit-st", class: Regular}
	i1 := w.alloc("data1", size, Managed, false)
	i2 := w.alloc("data2", size, Managed, false)
	Layout(w.allocs)
	cur, next := w.base(i1), w.base(i2)
	strips, bands := rows/stLRows, stCols/stLCols
	// flat index of logical (row, col) with the one-element halo: the
	// kernel's ToFlatHaloedIdx with gRowWidth = pitch - 2.
	flat := func(row, col int) uint64 { return 4 * uint64((row+1)*pitch+col+1) }
	const reads = stLRows + 2
	for it := 0; it < stIterations; it++ {
		data, newData := cur, next
		w.kernel(&Kernel{Name: "StencilKernel", Blocks: strips * bands, ThreadsPerBlock: stLCols,
			NewWarp: func(blk, wp int) WarpStream {
				gRow := blk % strips * stLRows
				col0 := blk/strips*stLCols + wp*WarpSize
				first, last := wp == 0, wp == stLCols/WarpSize-1
				// 18 coalesced reads, 18 halo reads (one lane), then per
				// output row the math and the store.
				return &stepWarp{n: 2*reads + 2*stLRows, step: func(pc int, op *Op) {
					switch {
					case pc < reads:
						op.mem(OpLoad, 4)
						for l := 0; l < WarpSize; l++ {
							op.lane(data + flat(gRow-1+pc, col0+l))
						}
					case pc < 2*reads:
						op.mem(OpLoad, 4)
						r := gRow - 1 + pc - reads
						if first {
							op.lane(data + flat(r, col0-1))
						}
						if last {
							op.lane(data + flat(r, col0+WarpSize))
						}
					case (pc-2*reads)%2 == 0:
						op.compute(stRowOps)
					default:
						op.mem(OpStore, 4)
						r := gRow + (pc-2*reads)/2
						for l := 0; l < WarpSize; l++ {
							op.lane(newData + flat(r, col0+l))
						}
					}
				}}
			}})
		cur, next = next, cur
	}
	return w, nil
}
