package workload

// grit-c2d: the forward pass of MGPUSim's convolution layer (DNN-Mark's
// convolution as MGPUSim runs it; amd/benchmarks/dnn/layers/conv2d.go:
// 160-195): im2col unrolls the input into a (C*R*S) x (N*P*Q) matrix, and
// gemm multiplies the K x (C*R*S) weights by it and adds the bias matrix.
//
// im2col (gputensor/native/im2col.cl:2-52): work-item tid is output column
// tid = (batch, block_y, block_x); for each of the C*R*S rows i it reads
// input[batch*C*H*W + c*H*W + (block_y+y)*W + block_x+x] and writes
// output[i*(N*P*Q) + tid]. MGPUSim launches the 2-D variant im2col_2d on
// 8x8 groups (gputensor/operator.go:976); the model runs the 1-D kernel on
// groups of 64, which touches the same elements in the same per-thread
// order. gemm is grit-gemm's kernel with m = K, n = N*P*Q, k = C*R*S
// (gemm.cl). The bias matrix is prepared by Repeat and Transpose kernels
// before gemm (conv2d.go:169-171); the model declares it read-only input.
// Consecutive groups of both kernels cover consecutive output columns, so a
// GPU's groups share with the neighbouring GPU's only the input rows at the
// seam and the columns at the band edges (adjacent, GRIT Table II).
//
// Batch 16 of 3 x 208 x 208 images, 3 output channels, a 3x3 kernel, no
// padding, stride 1: 93.4 MiB (GRIT Table II: 94). Scale multiplies the
// batch.

const (
	c2dBatch    = 16
	c2dChannels = 3
	c2dHeight   = 208
	c2dWidth    = 208
	c2dOutputs  = 3
	c2dKernel   = 3
	c2dBlock    = 64
	// ALU instructions: batch/block ids (4); per row the channel, x, y,
	// the input and output indices and the bounds test.
	c2dIndexOps = 4
	c2dRowOps   = 6
)

func newGritC2D(p Params, scale float64) (*builtin, error) {
	batch := scaled(c2dBatch, scale, 1, 1)
	outH, outW := c2dHeight-c2dKernel+1, c2dWidth-c2dKernel+1
	cols := batch * outH * outW                 // N*P*Q
	rows := c2dChannels * c2dKernel * c2dKernel // C*R*S
	if err := checkIndexRange("grit-c2d", uint64(rows)*uint64(cols)); err != nil {
		return nil, err
	}
	frame := c2dHeight * c2dWidth
	w := &builtin{name: "grit-c2d", class: Regular}
	iIn := w.alloc("input", uint64(batch*c2dChannels*frame)*4, Managed, true)
	iW := w.alloc("weights", uint64(c2dOutputs*rows)*4, Managed, true)
	iCol := w.alloc("im2col", uint64(rows*cols)*4, Managed, false)
	iBias := w.alloc("bias", uint64(c2dOutputs*cols)*4, Managed, true)
	iOut := w.alloc("output", uint64(c2dOutputs*cols)*4, Managed, false)
	Layout(w.allocs)
	in, col := w.base(iIn), w.base(iCol)
	w.kernel(&Kernel{Name: "im2col", Blocks: ceilDiv(cols, c2dBlock), ThreadsPerBlock: c2dBlock,
		NewWarp: func(b, wp int) WarpStream {
			tid0 := b*c2dBlock + wp*WarpSize
			// index math; per row i: compute, input load, im2col store.
			return &stepWarp{n: 1 + 3*rows, step: func(pc int, op *Op) {
				if pc == 0 {
					op.compute(c2dIndexOps)
					return
				}
				i, part := (pc-1)/3, (pc-1)%3
				if part == 0 {
					op.compute(c2dRowOps)
					return
				}
				op.mem(OpLoad, 4)
				if part == 2 {
					op.Kind = OpStore
				}
				ch, y, x := i/(c2dKernel*c2dKernel), i%(c2dKernel*c2dKernel)/c2dKernel, i%c2dKernel
				for l := 0; l < WarpSize; l++ {
					tid := tid0 + l
					if tid >= cols {
						break
					}
					if part == 2 {
						op.lane(col + 4*uint64(i*cols+tid))
						continue
					}
					n, blk := tid/(outH*outW), tid%(outH*outW)
					bx, by := blk%outW, blk/outW
					op.lane(in + 4*uint64(n*c2dChannels*frame+ch*frame+(by+y)*c2dWidth+bx+x))
				}
			}}
		}})
	g := &gemmShape{m: c2dOutputs, n: cols, k: rows, a: w.base(iW), b: col, c: w.base(iBias), d: w.base(iOut)}
	w.kernel(g.kernel())
	return w, nil
}
