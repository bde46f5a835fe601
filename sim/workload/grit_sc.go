package workload

// grit-sc: AMD APP SDK SimpleConvolution as MGPUSim ships it
// (amd/benchmarks/amdappsdk/simpleconvolution). The host allocates the
// padded input ((Width+maskSize-1) x (Height+maskSize-1) uints), the output
// (Width x Height ints) and the mask (simpleconvolution.go:131-176: a mask
// per GPU the benchmark is given; one, shared by every GPU, in MGPUSim's
// unified-GPU mode, which spreads one kernel's blocks over the GPUs as GRIT
// III-B does: samples/runner/runner.go:112-124) and launches
// simpleNonSeparableConvolution over every padded element in groups of 64
// (simpleconvolution.go:231-243). Thread tid (SimpleConvolution_Kernels.cl:
// 38-79) is pixel (x, y) = (tid % Width, tid / Width); threads with
// y >= Height return; the others read the maskSize x maskSize window
// input[(y+j)*nExWidth + x+i] row by row with mask[j*maskSize+i], and write
// output[tid].
//
// Width = Height = 4096 and maskSize 3 give 128.1 MiB (GRIT Table II: 131).
// Scale multiplies Height.

const (
	scWidth  = 4096
	scHeight = 4096
	scMask   = 3
	scBlock  = 64 // simpleconvolution.go:235
	// ALU instructions per mask element: the two indices, the convert and
	// the multiply-add; per thread: x, y and the bounds test.
	scTapOps   = 4
	scIndexOps = 3
)

func newGritSC(p Params, scale float64) (*builtin, error) {
	width, height := scWidth, scaled(scHeight, scale, 1, 1)
	exW, exH := width+scMask-1, height+scMask-1
	if err := checkIndexRange("grit-sc", uint64(exW)*uint64(exH)); err != nil {
		return nil, err
	}
	w := &builtin{name: "grit-sc", class: Regular}
	iIn := w.alloc("input", uint64(exW*exH)*4, Managed, true)
	iOut := w.alloc("output", uint64(width*height)*4, Managed, false)
	iMask := w.alloc("mask", scMask*scMask*4, Managed, true)
	Layout(w.allocs)
	in, out, mask := w.base(iIn), w.base(iOut), w.base(iMask)
	taps := scMask * scMask
	w.kernel(&Kernel{Name: "simpleNonSeparableConvolution", Blocks: ceilDiv(exW*exH, scBlock), ThreadsPerBlock: scBlock,
		NewWarp: func(b, wp int) WarpStream {
			tid0 := b*scBlock + wp*WarpSize
			// index math, then per tap: input load, mask load, compute; the store.
			return &stepWarp{n: 2 + 3*taps, step: func(pc int, op *Op) {
				if pc == 0 {
					op.compute(scIndexOps)
					return
				}
				pc--
				t, part := pc/3, pc%3
				kind, size := OpLoad, uint8(4)
				if t == taps {
					kind = OpStore
				} else if part == 2 {
					op.compute(scTapOps)
					return
				}
				op.mem(kind, size)
				for l := 0; l < WarpSize; l++ {
					tid := tid0 + l
					x, y := tid%width, tid/width
					if y >= height {
						continue
					}
					switch {
					case t == taps:
						op.lane(out + 4*uint64(tid))
					case part == 0:
						op.lane(in + 4*uint64((y+t/scMask)*exW+x+t%scMask))
					default:
						op.lane(mask + 4*uint64(t))
					}
				}
			}}
		}})
	return w, nil
}
