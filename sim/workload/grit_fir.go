package workload

// grit-fir: Hetero-Mark FIR as MGPUSim ships it
// (amd/benchmarks/heteromark/fir). The host allocates history (numTaps
// floats), input and output (Length floats each) and a coefficient array
// (fir.go:142-149, 166-175: a copy of the 16 coefficients per GPU the
// benchmark is given; one, shared by every GPU, in MGPUSim's unified-GPU
// mode, which spreads one kernel's blocks over the GPUs as GRIT III-B does:
// samples/runner/runner.go:112-124) and launches FIR once over Length
// work-items in groups of 256 (fir.go:179-215). Thread tid (kernels.cl:33-49)
// runs num_tap = 16 iterations i, each reading coeff[i] (the same word in
// every lane) and input[tid-i], or history[num_tap-(i-tid)] for the first
// taps of the first threads, then writes output[tid]: each warp streams a
// contiguous run of input and output, so blocks placed on one GPU touch
// pages no other GPU touches except at the 15-sample overlap.
//
// Scale multiplies Length (a multiple of 256).

const (
	firLength = 155 << 20 / 8 // two float arrays of 155 MiB together (GRIT Table II)
	firTaps   = 16            // fir.go:129
	firBlock  = 256           // fir.go:214
	// ALU instructions per tap: the tid >= i test, the index, the multiply-add.
	firTapOps = 3
)

func newGritFIR(p Params, scale float64) (*builtin, error) {
	n := scaled(firLength, scale, firBlock, firBlock)
	if err := checkIndexRange("grit-fir", uint64(n)); err != nil {
		return nil, err
	}
	w := &builtin{name: "grit-fir", class: Regular}
	iHist := w.alloc("history", firTaps*4, Managed, true)
	iIn := w.alloc("input", uint64(n)*4, Managed, true)
	iOut := w.alloc("output", uint64(n)*4, Managed, false)
	iCoeff := w.alloc("coeff", firTaps*4, Managed, true)
	Layout(w.allocs)
	hist, in, out, coeff := w.base(iHist), w.base(iIn), w.base(iOut), w.base(iCoeff)
	w.kernel(&Kernel{Name: "FIR", Blocks: n / firBlock, ThreadsPerBlock: firBlock,
		NewWarp: func(b, wp int) WarpStream {
			tid0 := uint64(b*firBlock + wp*WarpSize)
			// per tap: coeff load, input/history load, compute; then the store.
			return &stepWarp{n: 3*firTaps + 1, step: func(pc int, op *Op) {
				i, part := uint64(pc/3), pc%3
				switch {
				case pc == 3*firTaps:
					op.mem(OpStore, 4)
					for l := uint64(0); l < WarpSize; l++ {
						op.lane(out + 4*(tid0+l))
					}
				case part == 0:
					op.mem(OpLoad, 4)
					for l := 0; l < WarpSize; l++ {
						op.lane(coeff + 4*i)
					}
				case part == 1:
					op.mem(OpLoad, 4)
					for l := uint64(0); l < WarpSize; l++ {
						if tid := tid0 + l; tid >= i {
							op.lane(in + 4*(tid-i))
						} else {
							op.lane(hist + 4*(firTaps-(i-tid)))
						}
					}
				default:
					op.compute(firTapOps)
				}
			}}
		}})
	return w, nil
}
