package workload

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-checked lane addresses for specific (block, warp, instruction) of
// every built-in workload, at the shipped sizes.

func kinds(ops []Op) []OpKind {
	var ks []OpKind
	for _, op := range ops {
		ks = append(ks, op.Kind)
	}
	return ks
}

func TestBackpropBlockStreamsContiguousRun(t *testing.T) {
	wl := mustNew(t, "backprop", Params{})
	W := allocByName(t, wl, "input_weights").Base
	in := allocByName(t, wl, "input_units").Base
	fwd := kernels(wl)[0]
	const by = 5
	ops := collect(fwd, by, 0)
	require.Equal(t, []OpKind{OpCompute, OpLoad, OpLoad, OpCompute, OpStore, OpStore}, kinds(ops))
	// tx == 0 threads (lanes 0 and 16: ty 0 and 1) read input_cuda[16*by+ty+1].
	assert.Equal(t, []uint64{in + 4*(16*by+1), in + 4*(16*by+2)}, lanes(ops[1]))
	// index = 17*16*by + 17*ty + tx + 18: lane 0 and lane 16 are one 17-float row apart.
	assert.Equal(t, W+4*(17*16*by+18), ops[2].Addr[0])
	assert.Equal(t, W+4*(17*16*by+18+15), ops[2].Addr[15])
	assert.Equal(t, W+4*(17*16*by+18+17), ops[2].Addr[16])
	assert.Equal(t, lanes(ops[2]), lanes(ops[4]), "the reduced weight is written back in place")

	// The whole block covers rows 16*by+1 .. 16*by+16 (columns 1..16) of
	// the 17-float-wide matrix: a contiguous run of 16 x 17 floats.
	lo, hi := W+4*17*(16*by+1), W+4*17*(16*by+17)
	seen := map[uint64]bool{}
	for w := 0; w < fwd.WarpsPerBlock(); w++ {
		for _, a := range collect(fwd, by, w)[2].Addr[:WarpSize] {
			assert.True(t, a >= lo && a < hi, "%#x outside the block's run", a)
			seen[a] = true
		}
	}
	assert.Len(t, seen, 256)

	// Kernel 2 read-modify-writes input_weights2 at the same index, and
	// input_prev_weights likewise.
	w2 := allocByName(t, wl, "input_weights2")
	prev := allocByName(t, wl, "input_prev_weights")
	inside := func(a Alloc, addr uint64) bool { return addr >= a.Base && addr < a.Base+a.Bytes }
	adj := collect(kernels(wl)[1], by, 3)
	var loadW, storeW, loadPrev, storePrev []uint64
	for _, op := range adj {
		switch {
		case op.Kind == OpLoad && inside(w2, op.Addr[0]):
			loadW = lanes(op)
		case op.Kind == OpStore && inside(w2, op.Addr[0]):
			storeW = lanes(op)
		case op.Kind == OpLoad && inside(prev, op.Addr[0]):
			loadPrev = lanes(op)
		case op.Kind == OpStore && inside(prev, op.Addr[0]):
			storePrev = lanes(op)
		}
	}
	require.NotEmpty(t, storeW)
	assert.Equal(t, w2.Base+4*(17*16*by+17*6+18), storeW[0], "warp 3 starts at ty = 6")
	assert.Empty(t, cmp.Diff(storeW, loadW))
	assert.Empty(t, cmp.Diff(storePrev, loadPrev))
	// Only block 0's first row updates the bias weights w[1..16].
	assert.Len(t, collect(kernels(wl)[1], 0, 0), len(adj)+9)
	assert.Len(t, collect(kernels(wl)[1], 0, 1), len(adj))
}

func TestFDTDRowMajorNeighbours(t *testing.T) {
	wl := mustNew(t, "fdtd", Params{})
	ex, ey, hz := allocByName(t, wl, "ex").Base, allocByName(t, wl, "ey").Base, allocByName(t, wl, "hz").Base
	ks := kernels(wl)
	// step 3 of t = 0, block (bx 1, by 2), warp 3: i = 19, j = 32..63.
	b := 2*38 + 1
	ops := collect(ks[2], b, 3)
	require.Equal(t, []OpKind{OpCompute, OpLoad, OpLoad, OpLoad, OpLoad, OpLoad, OpCompute, OpStore}, kinds(ops))
	const i, j = 19, 32
	assert.Equal(t, hz+4*(i*1200+j), ops[1].Addr[0])
	assert.Equal(t, ex+4*(i*1201+j+1), ops[2].Addr[0])
	assert.Equal(t, ex+4*(i*1201+j), ops[3].Addr[0])
	assert.Equal(t, ey+4*((i+1)*1200+j), ops[4].Addr[0])
	assert.Equal(t, ey+4*(i*1200+j), ops[5].Addr[0])
	assert.Equal(t, hz+4*(i*1200+j+31), ops[7].Addr[31], "32 consecutive floats per warp")
	// The last block column holds columns 1184..1215: only 16 are inside NY.
	assert.EqualValues(t, 16, collect(ks[2], 37, 0)[1].Lanes)
	// step 2 skips j == 0.
	assert.EqualValues(t, 31, collect(ks[1], 0, 0)[1].Lanes)
	// step 1, row 0 writes _fict_[t] into ey.
	fict := allocByName(t, wl, "_fict_").Base
	row0 := collect(ks[3], 0, 0) // step 1 of t = 1
	assert.Equal(t, []OpKind{OpCompute, OpLoad, OpStore}, kinds(row0))
	assert.Equal(t, fict+4, row0[1].Addr[0])
}

func TestHotspotTileGeometry(t *testing.T) {
	wl := mustNew(t, "hotspot", Params{})
	t0, t1 := allocByName(t, wl, "MatrixTemp0").Base, allocByName(t, wl, "MatrixTemp1").Base
	ks := kernels(wl)
	const b = 86 + 1 // bx = by = 1: tile origin (10, 10)
	ops := collect(ks[0], b, 0)
	require.Equal(t, []OpKind{OpCompute, OpLoad, OpLoad, OpCompute}, kinds(ops), "tile rows 0-1 are halo: no store")
	// A warp is two tile rows of 16 floats (64 B), one grid row (4 KB) apart.
	assert.Equal(t, t0+4*(1024*10+10), ops[1].Addr[0])
	assert.Equal(t, t0+4*(1024*10+10)+60, ops[1].Addr[15])
	assert.Equal(t, t0+4*(1024*10+10)+4096, ops[1].Addr[16])
	// Warp 1 (tile rows 2-3) writes the 12 interior columns of both rows.
	st := collect(ks[0], b, 1)[4]
	require.Equal(t, OpStore, st.Kind)
	assert.EqualValues(t, 24, st.Lanes)
	assert.Equal(t, t1+4*(1024*12+12), st.Addr[0])
	assert.Equal(t, t1+4*(1024*13+12), st.Addr[12])
	// One tile touches 16 pages of the source grid.
	pages := map[uint64]bool{}
	for w := 0; w < 8; w++ {
		for _, a := range lanes(collect(ks[0], b, w)[1]) {
			pages[a>>12] = true
		}
	}
	assert.Len(t, pages, 16)
	// Ping-pong: the second launch reads MatrixTemp1 and writes MatrixTemp0.
	second := collect(ks[1], b, 1)
	assert.Equal(t, t1+4*(1024*10+10)+2*4096, second[1].Addr[0])
	assert.Equal(t, t0+4*(1024*12+12), second[4].Addr[0])
	// Block (0, 0) starts at grid (-2, -2): only in-grid lanes load.
	corner := collect(ks[0], 0, 1) // tile rows 2, 3 = grid rows 0, 1
	assert.EqualValues(t, 28, corner[1].Lanes)
	assert.Equal(t, t0, corner[1].Addr[0])
}

func TestSRADHalosAndHostRegion(t *testing.T) {
	wl := mustNew(t, "srad", Params{})
	J := allocByName(t, wl, "J_shared").Base
	C := allocByName(t, wl, "C_cuda").Base
	phases := wl.Phases()
	require.NotNil(t, phases[0].Host)
	h := phases[0].Host
	assert.Equal(t, "J_shared", h.Alloc)
	assert.False(t, h.Write)
	require.Len(t, h.Ranges, 128)
	assert.Equal(t, [2]uint64{J, J + 512}, h.Ranges[0])
	assert.Equal(t, [2]uint64{J + 127*4096, J + 127*4096 + 512}, h.Ranges[127])

	ks := kernels(wl)
	// Block (bx 1, by 1), warp 0 (ty 0, 1): base = 1024*16 + 16.
	const b, base = 64 + 1, 1024*16 + 16
	ops := collect(ks[0], b, 0)
	require.Equal(t, []OpKind{OpCompute, OpLoad, OpLoad, OpLoad, OpLoad, OpLoad, OpCompute,
		OpStore, OpStore, OpStore, OpStore, OpStore}, kinds(ops))
	// North halo: the row above the tile, the same 16 floats for every ty.
	assert.Equal(t, J+4*(base-1024), ops[1].Addr[0])
	assert.Equal(t, ops[1].Addr[0], ops[1].Addr[16])
	// South halo: the row below the tile.
	assert.Equal(t, J+4*(base+16*1024), ops[2].Addr[0])
	// West halo: one float left of each tile row, the same for all tx.
	assert.Equal(t, J+4*(base-1), ops[3].Addr[0])
	assert.Equal(t, J+4*(base-1), ops[3].Addr[15])
	assert.Equal(t, J+4*(base+1024-1), ops[3].Addr[16])
	// East halo.
	assert.Equal(t, J+4*(base+16), ops[4].Addr[0])
	// Own element, then the five coefficient stores.
	assert.Equal(t, J+4*(base+1024+3), ops[5].Addr[19])
	assert.Equal(t, C+4*base, ops[7].Addr[0])

	// Top-left block: no north halo (index_n < 0), then the clamped top row
	// and left column reloads.
	corner := collect(ks[0], 0, 0)
	assert.Equal(t, J+4*16*1024, corner[1].Addr[0], "south halo first")
	assert.Equal(t, J, corner[2].Addr[0], "clamped north = row 0")

	// Kernel 2's south halo of the last tile row would read past C: those
	// lanes are left out, and the clamped reload follows.
	last := collect(ks[1], 63*64+5, 0)
	assert.Equal(t, OpLoad, last[2].Kind)
	assert.Equal(t, C+4*(63*16*1024+5*16+15*1024), last[2].Addr[0], "clamped south row")
}

func TestConv2DStencilRows(t *testing.T) {
	wl := mustNew(t, "2dconv", Params{})
	A, B := allocByName(t, wl, "A").Base, allocByName(t, wl, "B").Base
	k := kernels(wl)[0]
	ops := collect(k, 32+1, 0) // bx 1, by 1, warp 0: i = 8, j = 32..63
	require.Len(t, ops, 12)
	for r := 0; r < 3; r++ {
		for c := 0; c < 3; c++ {
			assert.Equal(t, A+4*uint64((7+r)*1024+31+c), ops[1+3*r+c].Addr[0], "row %d col %d", r, c)
		}
	}
	assert.Equal(t, OpStore, ops[11].Kind)
	assert.Equal(t, B+4*(8*1024+32), ops[11].Addr[0])
	// Border: row 0 does nothing but index math; column 0 and 1023 are idle.
	assert.Len(t, collect(k, 0, 0), 1)
	assert.EqualValues(t, 31, collect(k, 32, 1)[1].Lanes)
	assert.EqualValues(t, 31, collect(k, 32+31, 1)[1].Lanes)
}

func TestNWTileColumnsWalk4100ByteStride(t *testing.T) {
	wl := mustNew(t, "nw", Params{})
	ref, items := allocByName(t, wl, "referrence").Base, allocByName(t, wl, "itemsets").Base
	ks := kernels(wl)
	// Third anti-diagonal (i = 3), block 1: tile (bx 1, by 1).
	const base = 1025*16 + 16
	ops := collect(ks[2], 1, 0)
	require.Len(t, ops, 1+1+16+2+1+16)
	assert.Equal(t, []uint64{items + 4*base}, lanes(ops[1]), "north-west corner, thread 0")
	for r := 0; r < 16; r++ {
		assert.Equal(t, ref+4*uint64(base+1025+1+1025*r), ops[2+r].Addr[0])
		assert.EqualValues(t, 16, ops[2+r].Lanes)
	}
	assert.EqualValues(t, 4100, ops[3].Addr[5]-ops[2].Addr[5], "a thread's column steps one 4,100 B row")
	west := ops[18]
	assert.EqualValues(t, 4100, west.Addr[1]-west.Addr[0])
	assert.Equal(t, items+4*(base+1025), west.Addr[0])
	assert.Equal(t, items+4*(base+1), ops[19].Addr[0])
	assert.Equal(t, OpCompute, ops[20].Kind)
	assert.Equal(t, items+4*(base+1025+1+1025*15), ops[36].Addr[0])
	// needle_cuda_shared_2 reads the corner after the referrence tile; its
	// first launch (63 blocks) starts at tile (1, 63).
	second := collect(ks[64], 0, 0)
	assert.Equal(t, items+4*uint64(1025*16*63+16), second[17].Addr[0])
}

func TestRAOnlyEveryHundredthThreadWorks(t *testing.T) {
	wl := mustNew(t, "ra", Params{Seed: 9})
	input, out, table := allocByName(t, wl, "input").Base, allocByName(t, wl, "output").Base, allocByName(t, wl, "table").Base
	k := kernels(wl)[0]
	// Warp 3 of block 0 holds ids 96..127: lane 4 is id 100.
	ops := collect(k, 0, 3)
	require.Equal(t, []OpKind{OpCompute, OpLoad, OpCompute, OpLoad, OpCompute, OpStore}, kinds(ops))
	assert.Equal(t, input+400, ops[1].Addr[0])
	assert.Equal(t, input+800, collect(k, 0, 6)[1].Addr[0], "id 200: the next worker, 400 B on")
	idx := ops[3].Addr[0] - table
	assert.Equal(t, out+idx, ops[5].Addr[0], "output is written at the table index")
	assert.Len(t, collect(k, 0, 1), 1, "ids 32..63 hold no multiple of 100")
	// Every worker is found, each alone in its warp, and table indices
	// spread over the whole table.
	workers := 0
	var pages [1024]bool
	for b := 0; b < k.Blocks; b++ {
		for w := 0; w < 8; w++ {
			o := collect(k, b, w)
			if len(o) == 1 {
				continue
			}
			workers++
			require.EqualValues(t, 1, o[1].Lanes)
			id := (o[1].Addr[0] - input) / 4
			require.Zero(t, id%100)
			pages[(o[3].Addr[0]-table)>>12] = true
		}
	}
	assert.Equal(t, (1<<20+99)/100, workers)
	touched := 0
	for _, p := range pages {
		if p {
			touched++
		}
	}
	assert.Greater(t, touched, 1000, "10,486 uniform draws over 1,024 pages touch nearly all")
}
