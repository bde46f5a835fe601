package workload

// backprop: Rodinia back-propagation as shipped with the UVMSmart simulator
// (benchmarks/Managed/backprop, run as "backprop 131056"). One training pass
// over a net with in inputs, 16 hidden units and 1 output; every array is
// cudaMallocManaged. Two kernels on a (1, in/16) grid of 16x16 blocks: block
// by owns input rows 16*by+1 .. 16*by+16 of the (in+1) x 17 float weight
// matrix, a contiguous run of 16 rows x 17 floats.
//
// Scale multiplies the number of inputs (rounded to a multiple of 16).

const (
	backpropInputs = 131056 // SPEC 7 / the benchmark's run script
	backpropHidden = 16     // fixed by the benchmark (bpnn_create(in, 16, 1))
	backpropOutput = 1
	backpropTile   = 16 // WIDTH = HEIGHT = 16 in backprop.h

	// ALU instructions per thread, counted from the kernels:
	// layerforward: index and index_in arithmetic; one multiply plus the
	// log2(16) = 4-step shared-memory reduction (power, modulo test, add per
	// step).
	backpropForwardIndexOps  = 8
	backpropForwardReduceOps = 21
	// adjust_weights: index arithmetic; ETA*delta*ly + MOMENTUM*oldw.
	backpropAdjustIndexOps = 8
	backpropAdjustMathOps  = 4
)

type backprop struct {
	in, hid int
	// base addresses
	inputUnits, hiddenDelta, inputWeights, inputWeights2, inputPrevWeights, partialSum uint64
}

func newBackprop(p Params, scale float64) (*builtin, error) {
	bp := &backprop{in: scaled(backpropInputs, scale, backpropTile, backpropTile), hid: backpropHidden}
	in, hid, out := uint64(bp.in), uint64(bp.hid), uint64(backpropOutput)
	blocks := bp.in / backpropTile
	w := &builtin{name: "backprop", class: Regular}
	// Declaration order of bpnn_internal_create, then bpnn_train_cuda.
	iInput := w.alloc("input_units", (in+1)*4, Managed, true)
	iHidden := w.alloc("hidden_units", (hid+1)*4, Managed, true)
	iOutput := w.alloc("output_units", (out+1)*4, Managed, true)
	iHiddenDelta := w.alloc("hidden_delta", (hid+1)*4, Managed, true)
	iOutputDelta := w.alloc("output_delta", (out+1)*4, Managed, true)
	iTarget := w.alloc("target", (out+1)*4, Managed, true)
	iWeights := w.alloc("input_weights", (in+1)*(hid+1)*4, Managed, false)
	iWeights2 := w.alloc("input_weights2", (in+1)*(hid+1)*4, Managed, false)
	iHiddenWeights := w.alloc("hidden_weights", (hid+1)*(out+1)*4, Managed, true)
	iPrev := w.alloc("input_prev_weights", (in+1)*(hid+1)*4, Managed, false)
	iHiddenPrev := w.alloc("hidden_prev_weights", (hid+1)*(out+1)*4, Managed, true)
	w.alloc("output_hidden_cuda", (hid+1)*4, Managed, true)
	iPartial := w.alloc("hidden_partial_sum", uint64(blocks)*backpropTile*4, Managed, false)
	Layout(w.allocs)
	bp.inputUnits, bp.hiddenDelta = w.base(iInput), w.base(iHiddenDelta)
	bp.inputWeights, bp.inputWeights2 = w.base(iWeights), w.base(iWeights2)
	bp.inputPrevWeights, bp.partialSum = w.base(iPrev), w.base(iPartial)

	w.kernel(&Kernel{Name: "bpnn_layerforward_CUDA", Blocks: blocks, ThreadsPerBlock: backpropTile * backpropTile,
		NewWarp: func(b, wp int) WarpStream { return backpropForwardPool.fill(backpropForward{bp: bp, by: b, warp: wp}) }})

	// Host work between the kernels (bpnn_train_cuda): sum the partial sums
	// and the bias row of input_weights, then the output layer, the errors
	// and the hidden-weight update, all on the host.
	whole := func(i int, write bool) {
		a := w.allocs[i]
		w.host(&HostAccess{Alloc: a.Name, Ranges: [][2]uint64{{a.Base, a.Base + a.Bytes}}, Write: write})
	}
	whole(iPartial, false)
	w.host(&HostAccess{Alloc: "input_weights", Ranges: [][2]uint64{{bp.inputWeights + 4, bp.inputWeights + 4*(hid+1)}}})
	whole(iHidden, true)
	whole(iHiddenWeights, true)
	whole(iOutput, true)
	whole(iTarget, false)
	whole(iOutputDelta, true)
	whole(iHiddenDelta, true)
	whole(iHiddenPrev, true)

	w.kernel(&Kernel{Name: "bpnn_adjust_weights_cuda", Blocks: blocks, ThreadsPerBlock: backpropTile * backpropTile,
		NewWarp: func(b, wp int) WarpStream { return backpropAdjustPool.fill(backpropAdjust{bp: bp, by: b, warp: wp}) }})
	return w, nil
}

// weightIndex is the kernels' index = (hid+1)*HEIGHT*by + (hid+1)*ty + tx + 1 + (hid+1).
func (bp *backprop) weightIndex(by, tx, ty int) uint64 {
	h := uint64(bp.hid + 1)
	return h*backpropTile*uint64(by) + h*uint64(ty) + uint64(tx) + 1 + h
}

type backpropForward struct {
	bp       *backprop
	by, warp int
	pc       int
}

var backpropForwardPool warpPool[backpropForward]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *backpropForward) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	backpropForwardPool.done(s)
	return false
}

func (s *backpropForward) next(op *Op) bool {
	bp := s.bp
	pc := s.pc
	s.pc++
	switch pc {
	case 0:
		op.compute(backpropForwardIndexOps)
	case 1: // if (tx == 0) input_node[ty] = input_cuda[index_in]
		op.mem(OpLoad, 4)
		for l := 0; l < WarpSize; l++ {
			if tx, ty := block2D(s.warp, l, backpropTile); tx == 0 {
				op.lane(bp.inputUnits + 4*uint64(backpropTile*s.by+ty+1))
			}
		}
	case 2, 4: // weight_matrix[ty][tx] = input_hidden_cuda[index]; ... input_hidden_cuda[index] = weight_matrix[ty][tx]
		kind := OpLoad
		if pc == 4 {
			kind = OpStore
		}
		op.mem(kind, 4)
		for l := 0; l < WarpSize; l++ {
			tx, ty := block2D(s.warp, l, backpropTile)
			op.lane(bp.inputWeights + 4*bp.weightIndex(s.by, tx, ty))
		}
	case 3:
		op.compute(backpropForwardReduceOps)
	case 5: // if (tx == 0) hidden_partial_sum[by * hid + ty] = ...
		op.mem(OpStore, 4)
		for l := 0; l < WarpSize; l++ {
			if tx, ty := block2D(s.warp, l, backpropTile); tx == 0 {
				op.lane(bp.partialSum + 4*uint64(s.by*bp.hid+ty))
			}
		}
	default:
		return false
	}
	return true
}

// backpropAdjust is bpnn_adjust_weights_cuda: w[index] += new_dw and
// oldw[index] = new_dw for the thread's weight, reading delta[tx+1] and
// ly[16*by+ty+1]. The pointers are not restrict-qualified, so after the
// store to w the compiler reloads delta, ly and oldw for the second
// statement. Block 0's first row (ty == 0) then updates the bias weights
// w[tx+1] the same way.
type backpropAdjust struct {
	bp       *backprop
	by, warp int
	pc       int
}

// backpropArray names the arrays bpnn_adjust_weights_cuda touches.
type backpropArray uint8

const (
	bpDelta backpropArray = iota // delta = hidden_delta, at index_x = tx + 1
	bpLy                         // ly = input_units, at index_y = 16*by + ty + 1
	bpOldW                       // oldw = input_prev_weights, at index
	bpW                          // w = input_weights2, at index
)

// backpropStep is one instruction of the adjust kernel; bias steps index
// w and oldw at index_x and run only for block 0's first row (ty == 0).
type backpropStep struct {
	kind   OpKind
	array  backpropArray
	aluOps int
	bias   bool
}

var backpropAdjustProgram = []backpropStep{
	{kind: OpCompute, aluOps: backpropAdjustIndexOps},
	{kind: OpLoad, array: bpDelta},
	{kind: OpLoad, array: bpLy},
	{kind: OpLoad, array: bpOldW},
	{kind: OpLoad, array: bpW},
	{kind: OpCompute, aluOps: backpropAdjustMathOps},
	{kind: OpStore, array: bpW},
	{kind: OpLoad, array: bpDelta},
	{kind: OpLoad, array: bpLy},
	{kind: OpLoad, array: bpOldW},
	{kind: OpCompute, aluOps: backpropAdjustMathOps},
	{kind: OpStore, array: bpOldW},
	{kind: OpLoad, array: bpDelta, bias: true},
	{kind: OpLoad, array: bpOldW, bias: true},
	{kind: OpLoad, array: bpW, bias: true},
	{kind: OpCompute, aluOps: backpropAdjustMathOps, bias: true},
	{kind: OpStore, array: bpW, bias: true},
	{kind: OpLoad, array: bpDelta, bias: true},
	{kind: OpLoad, array: bpOldW, bias: true},
	{kind: OpCompute, aluOps: backpropAdjustMathOps, bias: true},
	{kind: OpStore, array: bpOldW, bias: true},
}

var backpropAdjustPool warpPool[backpropAdjust]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *backpropAdjust) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	backpropAdjustPool.done(s)
	return false
}

func (s *backpropAdjust) next(op *Op) bool {
	bp := s.bp
	if s.pc >= len(backpropAdjustProgram) {
		return false
	}
	st := backpropAdjustProgram[s.pc]
	s.pc++
	if st.bias && !(s.by == 0 && s.warp == 0) {
		return false
	}
	if st.kind == OpCompute {
		op.compute(st.aluOps)
		return true
	}
	op.mem(st.kind, 4)
	for l := 0; l < WarpSize; l++ {
		tx, ty := block2D(s.warp, l, backpropTile)
		if st.bias && ty != 0 {
			continue
		}
		switch {
		case st.array == bpDelta:
			op.lane(bp.hiddenDelta + 4*uint64(tx+1))
		case st.array == bpLy:
			op.lane(bp.inputUnits + 4*uint64(backpropTile*s.by+ty+1))
		case st.bias && st.array == bpOldW:
			op.lane(bp.inputPrevWeights + 4*uint64(tx+1))
		case st.bias:
			op.lane(bp.inputWeights2 + 4*uint64(tx+1))
		case st.array == bpOldW:
			op.lane(bp.inputPrevWeights + 4*bp.weightIndex(s.by, tx, ty))
		default:
			op.lane(bp.inputWeights2 + 4*bp.weightIndex(s.by, tx, ty))
		}
	}
	return true
}
