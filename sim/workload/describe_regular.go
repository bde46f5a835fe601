package workload

import "github.com/uvmmu/uvmmu/sim/workload/static"

// describeConv2D: Convolution2D_kernel (PolyBench/GPU 2DCONV). Thread
// (i, j) = (by*8 + ty, bx*32 + tx) reads A[(i+di)*NJ + j+dj] for di, dj in
// -1..1 and writes B[i*NJ + j] when 0 < i < NI-1 and 0 < j < NJ-1: the
// condition uses only launch values, so the host evaluates its fraction.
func describeConv2D(wl *builtin, scale float64) *static.Program {
	ni, nj := scaled(conv2DRows, scale, 1, 3), conv2DCols
	gridX, gridY := ceilDiv(nj, conv2DDimX), ceilDiv(ni, conv2DDimY)
	interior := frac(ni-2, gridY*conv2DDimY) * frac(nj-2, gridX*conv2DDimX)
	at := func(di, dj int64) static.Affine {
		n := int64(nj)
		return affine(di*n+dj, term(static.ThreadY, n), term(static.BlockY, conv2DDimY*n),
			term(static.ThreadX, 1), term(static.BlockX, conv2DDimX))
	}
	k := static.Kernel{Name: "Convolution2D_kernel", GridX: int64(gridX), GridY: int64(gridY), BlockX: conv2DDimX, BlockY: conv2DDimY}
	for di := int64(-1); di <= 1; di++ {
		for dj := int64(-1); dj <= 1; dj++ {
			k.Ops = append(k.Ops, memop("A", static.Read, 4, at(di, dj), interior))
		}
	}
	k.Ops = append(k.Ops, memop("B", static.Write, 4, at(0, 0), interior))
	p := staticProgram(wl)
	p.Kernels = []static.Kernel{k}
	return p
}

// describeFDTD: the three kernels of PolyBench/GPU FDTD-2D per time step t
// (the host loop variable, passed to step 1 as the index of _fict_). Thread
// (i, j) = (by*8 + ty, bx*32 + tx) works when i < NX and j < NY; step 1 row 0
// writes ey[j] = _fict_[t], other rows and steps follow fdtdStep1..3.
func describeFDTD(wl *builtin, scale float64) *static.Program {
	nx, ny := scaled(fdtdRows, scale, 1, 2), fdtdCols
	gridX, gridY := ceilDiv(ny, fdtdDimX), ceilDiv(nx, fdtdDimY)
	rowsIn := frac(nx, gridY*fdtdDimY)
	colsIn := frac(ny, gridX*fdtdDimX)
	threads := gridY * fdtdDimY
	pitch := map[int]int64{fdtdFict: 0, fdtdEx: int64(ny) + 1, fdtdEy: int64(ny), fdtdHz: int64(ny)}
	name := map[int]string{fdtdFict: "_fict_", fdtdEx: "ex", fdtdEy: "ey", fdtdHz: "hz"}
	acc := map[OpKind]static.Access{OpLoad: static.Read, OpStore: static.Write}
	// ops turns a generator access list into memory operations reached by
	// fraction f of the threads.
	ops := func(list []fdtdAccess, f float64) []static.MemOp {
		var out []static.MemOp
		for _, a := range list {
			var idx static.Affine
			if a.array == fdtdFict {
				idx = affine(0, term(static.HostIter, 1))
			} else {
				n := pitch[a.array]
				idx = affine(int64(a.di)*n+int64(a.dj), term(static.ThreadY, n), term(static.BlockY, fdtdDimY*n),
					term(static.ThreadX, 1), term(static.BlockX, fdtdDimX))
			}
			out = append(out, memop(name[a.array], acc[a.kind], 4, idx, f))
		}
		return out
	}
	steps := [3][]static.MemOp{
		append(ops(fdtdStep1Row0, frac(1, threads)*colsIn), ops(fdtdStep1, frac(nx-1, threads)*colsIn)...),
		ops(fdtdStep2, rowsIn*frac(ny-1, gridX*fdtdDimX)),
		ops(fdtdStep3, rowsIn*colsIn),
	}
	names := [3]string{"fdtd_step1_kernel", "fdtd_step2_kernel", "fdtd_step3_kernel"}
	p := staticProgram(wl)
	for t := 0; t < fdtdSteps; t++ {
		for s := 0; s < 3; s++ {
			p.Kernels = append(p.Kernels, static.Kernel{Name: names[s], GridX: int64(gridX), GridY: int64(gridY),
				BlockX: fdtdDimX, BlockY: fdtdDimY, HostIter: int64(t), HostIters: fdtdSteps, Ops: steps[s]})
		}
	}
	return p
}

// describeHotspot: calculate_temp (Rodinia HotSpot), one launch per pyramid
// step, source and destination grids swapped before each. Thread (tx, ty) of
// block (bx, by) loads temp_src and power at y*cols + x, y = 12*by - 2 + ty,
// x = 12*bx - 2 + tx, when (y, x) is in the grid (a launch-value condition,
// counted per dimension), and the 12x12 computed cells store temp_dst at the
// same index: the 12x12 tiles cover every grid cell once, so the store's
// fraction is rows*cols over the launched threads.
func describeHotspot(wl *builtin, scale float64) *static.Program {
	rows, cols := scaled(hotspotSize, scale, 1, hotspotBlock), hotspotSize
	blockCols, blockRows := ceilDiv(cols, hotspotInterior), ceilDiv(rows, hotspotInterior)
	threads := blockCols * blockRows * hotspotBlock * hotspotBlock
	inRange := func(n, blocks int) int {
		count := 0
		for b := 0; b < blocks; b++ {
			for t := 0; t < hotspotBlock; t++ {
				if v := hotspotInterior*b - hotspotBorder + t; v >= 0 && v < n {
					count++
				}
			}
		}
		return count
	}
	inGrid := frac(inRange(rows, blockRows), blockRows*hotspotBlock) * frac(inRange(cols, blockCols), blockCols*hotspotBlock)
	computed := frac(rows*cols, threads)
	c := int64(cols)
	index := affine(-hotspotBorder*c-hotspotBorder, term(static.ThreadY, c), term(static.BlockY, hotspotInterior*c),
		term(static.ThreadX, 1), term(static.BlockX, hotspotInterior))
	temp := [2]string{"MatrixTemp0", "MatrixTemp1"}
	p := staticProgram(wl)
	src, dst := 1, 0
	for t := 0; t < hotspotSimTime; t += hotspotPyramid {
		src, dst = dst, src
		p.Kernels = append(p.Kernels, static.Kernel{Name: "calculate_temp", GridX: int64(blockCols), GridY: int64(blockRows),
			BlockX: hotspotBlock, BlockY: hotspotBlock, Ops: []static.MemOp{
				memop(temp[src], static.Read, 4, index, inGrid),
				memop("MatrixPower", static.Read, 4, index, inGrid),
				memop(temp[dst], static.Write, 4, index, computed),
			}})
	}
	return p
}

// describeBackprop: bpnn_layerforward_CUDA and bpnn_adjust_weights_cuda on a
// (1, in/16) grid of 16x16 blocks. With h = hid+1 = 17, thread (tx, ty) of
// block by uses the weight index h*16*by + h*ty + tx + 1 + h and the input
// index 16*by + ty + 1. Forward: (tx == 0: 1/16) read input_units; read and
// write input_weights; (tx == 0) write hidden_partial_sum[by*hid + ty].
// Adjust, in backpropAdjustProgram's order: delta = hidden_delta[tx+1],
// ly = input_units, oldw = input_prev_weights and w = input_weights2 at the
// weight index, twice; then the bias update (by == 0 && ty == 0: 16 threads
// of the grid) at index tx+1.
func describeBackprop(wl *builtin, scale float64) *static.Program {
	in := scaled(backpropInputs, scale, backpropTile, backpropTile)
	blocks := in / backpropTile
	h := int64(backpropHidden + 1)
	weight := affine(1+h, term(static.BlockY, h*backpropTile), term(static.ThreadY, h), term(static.ThreadX, 1))
	input := affine(1, term(static.BlockY, backpropTile), term(static.ThreadY, 1))
	bias := affine(1, term(static.ThreadX, 1))
	oneCol := frac(1, backpropTile)
	biasRow := frac(backpropTile, blocks*backpropTile*backpropTile)
	arrays := map[backpropArray]string{bpDelta: "hidden_delta", bpLy: "input_units", bpOldW: "input_prev_weights", bpW: "input_weights2"}
	acc := map[OpKind]static.Access{OpLoad: static.Read, OpStore: static.Write}
	var adjust []static.MemOp
	for _, st := range backpropAdjustProgram {
		switch {
		case st.kind == OpCompute:
		case st.bias:
			adjust = append(adjust, memop(arrays[st.array], acc[st.kind], 4, bias, biasRow))
		case st.array == bpDelta:
			adjust = append(adjust, memop(arrays[st.array], acc[st.kind], 4, bias, 1))
		case st.array == bpLy:
			adjust = append(adjust, memop(arrays[st.array], acc[st.kind], 4, input, 1))
		default:
			adjust = append(adjust, memop(arrays[st.array], acc[st.kind], 4, weight, 1))
		}
	}
	p := staticProgram(wl)
	geometry := static.Kernel{GridX: 1, GridY: int64(blocks), BlockX: backpropTile, BlockY: backpropTile}
	forward, adj := geometry, geometry
	forward.Name, forward.Ops = "bpnn_layerforward_CUDA", []static.MemOp{
		memop("input_units", static.Read, 4, input, oneCol),
		memop("input_weights", static.Read, 4, weight, 1),
		memop("input_weights", static.Write, 4, weight, 1),
		memop("hidden_partial_sum", static.Write, 4, affine(0, term(static.BlockY, backpropHidden), term(static.ThreadY, 1)), oneCol),
	}
	adj.Name, adj.Ops = "bpnn_adjust_weights_cuda", adjust
	p.Kernels = []static.Kernel{forward, adj}
	return p
}

// describeSRAD: srad_cuda_1 and srad_cuda_2 per iteration on a grid of 16x16
// tiles. With base = 16*cols*by + 16*bx, the generator's sradRef indices are
// affine in the thread and block indices (sradRefIndex). The halo loads'
// flat-index guards are counted as reached by every thread (fraction 1, an
// overestimate by the halo's share); the edge-block conditions (by == 0,
// bx == gridDim.x-1, ...) reach one block row or column. The host loop
// counter reaches no kernel.
func describeSRAD(wl *builtin, scale float64) *static.Program {
	rows, cols := scaled(sradRows, scale, sradBlock, sradBlock), sradCols
	gridX, gridY := cols/sradBlock, rows/sradBlock
	names := map[int]string{sradJ: "J_shared", sradC: "C_cuda", sradE: "E_C", sradW: "W_C", sradS: "S_C", sradN: "N_C"}
	acc := map[OpKind]static.Access{OpLoad: static.Read, OpStore: static.Write}
	edgeFraction := map[sradEdge]float64{sradAll: 1, sradTop: frac(1, gridY), sradBottomElse: frac(1, gridY),
		sradBottom: frac(1, gridY), sradLeft: frac(1, gridX), sradRightElse: frac(1, gridX), sradRight: frac(1, gridX)}
	ops := func(prog []sradInstr) []static.MemOp {
		var out []static.MemOp
		for _, in := range prog {
			if in.kind == OpCompute {
				continue
			}
			out = append(out, memop(names[in.alloc], acc[in.kind], 4, sradRefIndex(in.ref, int64(cols), int64(gridX), int64(gridY)), edgeFraction[in.edge]))
		}
		return out
	}
	first, second := ops(sradStep1), ops(sradStep2)
	p := staticProgram(wl)
	for it := 0; it < sradIters; it++ {
		for _, k := range []struct {
			name string
			ops  []static.MemOp
		}{{"srad_cuda_1", first}, {"srad_cuda_2", second}} {
			p.Kernels = append(p.Kernels, static.Kernel{Name: k.name, GridX: int64(gridX), GridY: int64(gridY),
				BlockX: sradBlock, BlockY: sradBlock, Ops: k.ops})
		}
	}
	return p
}

// sradRefIndex is sradWarp.index as an affine expression.
func sradRefIndex(ref sradRef, c, gridX, gridY int64) static.Affine {
	const b = sradBlock
	base := func(k int64, extra ...static.Term) static.Affine {
		return affine(k, append([]static.Term{term(static.BlockY, b*c), term(static.BlockX, b)}, extra...)...)
	}
	switch ref {
	case sradNorth:
		return base(-c, term(static.ThreadX, 1))
	case sradSouth:
		return base(b*c, term(static.ThreadX, 1))
	case sradWest:
		return base(-1, term(static.ThreadY, c))
	case sradEast:
		return base(b, term(static.ThreadY, c))
	case sradTopRow:
		return affine(0, term(static.BlockX, b), term(static.ThreadX, 1))
	case sradBottomRow:
		return affine(b*c*(gridY-1)+c*(b-1), term(static.BlockX, b), term(static.ThreadX, 1))
	case sradLeftCol:
		return affine(0, term(static.BlockY, b*c), term(static.ThreadY, c))
	case sradRightCol:
		return affine(b*(gridX-1)+b-1, term(static.BlockY, b*c), term(static.ThreadY, c))
	}
	return base(0, term(static.ThreadY, c), term(static.ThreadX, 1))
}
