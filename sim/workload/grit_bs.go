package workload

// grit-bs: AMD APP SDK BitonicSort as MGPUSim ships it
// (amd/benchmarks/amdappsdk/bitonicsort). One uint array of Length elements
// (bitonicsort.go:142) is sorted in place by log2(Length) stages of
// stage+1 passes each (bitonicsort.go:156-174), every pass one launch of
// BitonicSort over Length/2 work-items in groups of 64
// (bitonicsort.go:218-249). Thread t of pass p in stage s (kernels.cl:49-87)
// compares leftId = t % d + (t / d) * 2d with rightId = leftId + d, where
// d = 2^(s-p), reading both and writing both: early passes pair nearby
// elements, late passes elements up to half the array apart, so every GPU
// reads and writes pages all over the array.
//
// Scale multiplies Length, rounded to a power of two (at least 128).

const (
	bsLength = 1 << 23 // 32 MiB, the power of two nearest GRIT Table II's 30 MB
	bsBlock  = 64      // bitonicsort.go:240
	// ALU instructions: pair distance, leftId, rightId; direction test,
	// compare and select.
	bsIndexOps   = 6
	bsCompareOps = 5
)

func newGritBS(p Params, scale float64) (*builtin, error) {
	n := scaledPow2(bsLength, scale, 2*bsBlock)
	if err := checkIndexRange("grit-bs", uint64(n)); err != nil {
		return nil, err
	}
	w := &builtin{name: "grit-bs", class: Irregular}
	iArr := w.alloc("array", uint64(n)*4, Managed, false)
	Layout(w.allocs)
	arr := w.base(iArr)
	stages := 0
	for v := n; v > 1; v >>= 1 {
		stages++
	}
	for s := 0; s < stages; s++ {
		for pass := 0; pass <= s; pass++ {
			d := 1 << (s - pass)
			w.kernel(&Kernel{Name: "BitonicSort", Blocks: n / 2 / bsBlock, ThreadsPerBlock: bsBlock,
				NewWarp: func(b, wp int) WarpStream {
					t0 := b*bsBlock + wp*WarpSize
					return &stepWarp{n: 6, step: func(pc int, op *Op) {
						switch pc {
						case 0:
							op.compute(bsIndexOps)
							return
						case 3:
							op.compute(bsCompareOps)
							return
						case 1, 2:
							op.mem(OpLoad, 4)
						default:
							op.mem(OpStore, 4)
						}
						right := pc == 2 || pc == 5
						for l := 0; l < WarpSize; l++ {
							t := t0 + l
							left := t%d + t/d*2*d
							if right {
								left += d
							}
							op.lane(arr + 4*uint64(left))
						}
					}}
				}})
		}
	}
	return w, nil
}
