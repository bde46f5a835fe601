package workload

// ra: the random-access microbenchmark shipped with the UVMSmart simulator
// (benchmarks/Managed/ra): N = 2^20 floats in each of input, output and
// table, all cudaMallocManaged, one kernel of N/256 blocks of 256 threads.
// Only threads whose global id is a multiple of 100 work, so a warp has at
// most one active lane and consecutive workers read input 400 B apart. A
// worker reads input[id], a uniform random number in [0, 1] (rand()/RAND_MAX
// on the host), turns its fractional part into table_index in [0, N), reads
// table[table_index] and writes output[table_index]. The model draws
// table_index uniformly from (Seed, id).
//
// Scale multiplies N.

const (
	raElements = 1 << 20 // N
	raBlock    = 256     // blockSize
	raStride   = 100     // x_id % 100 == 0

	// ALU instructions per thread: x_id, the bounds test and the modulo
	// (an integer division sequence); floor, the fraction, the scale to N
	// and the conversion; the product t[0] * in_f.
	raIndexOps   = 8
	raConvertOps = 5
	raProductOps = 1
)

type ra struct {
	n                    int
	seed                 uint64
	input, output, table uint64
}

func newRA(p Params, scale float64) (*builtin, error) {
	r := &ra{n: scaled(raElements, scale, 1, raStride+1), seed: p.Seed}
	size := uint64(r.n) * 4
	w := &builtin{name: "ra", class: Irregular}
	iIn := w.alloc("input", size, Managed, true)
	iOut := w.alloc("output", size, Managed, false)
	iTable := w.alloc("table", size, Managed, true)
	Layout(w.allocs)
	r.input, r.output, r.table = w.base(iIn), w.base(iOut), w.base(iTable)
	w.kernel(&Kernel{Name: "kernel", Blocks: ceilDiv(r.n, raBlock), ThreadsPerBlock: raBlock,
		NewWarp: func(b, wp int) WarpStream { return newRAWarp(r, b*raBlock+wp*WarpSize) }})
	return w, nil
}

// tableIndex is the table slot thread id picks.
func (r *ra) tableIndex(id int) uint64 {
	const streamIndex = 1
	return draw(r.seed, streamIndex, uint64(id), uint64(r.n))
}

type raWarp struct {
	r      *ra
	worker int // global id of the active lane, -1 if none
	pc     int
}

func newRAWarp(r *ra, id0 int) *raWarp {
	s := raWarpPool.fill(raWarp{r: r, worker: -1})
	// The kernel's guard is x_id > size, which lets x_id == N read one
	// element past input; that thread exists only when N is not a multiple
	// of the block size, and its out-of-allocation access is left out.
	if first := (id0 + raStride - 1) / raStride * raStride; first < id0+WarpSize && first < r.n {
		s.worker = first
	}
	return s
}

var raWarpPool warpPool[raWarp]

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *raWarp) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	raWarpPool.done(s)
	return false
}

func (s *raWarp) next(op *Op) bool {
	r := s.r
	pc := s.pc
	s.pc++
	if pc > 0 && s.worker < 0 {
		return false
	}
	id := uint64(s.worker)
	switch pc {
	case 0:
		op.compute(raIndexOps)
	case 1:
		op.mem(OpLoad, 4)
		op.lane(r.input + 4*id)
	case 2:
		op.compute(raConvertOps)
	case 3:
		op.mem(OpLoad, 4)
		op.lane(r.table + 4*r.tableIndex(s.worker))
	case 4:
		op.compute(raProductOps)
	case 5:
		op.mem(OpStore, 4)
		op.lane(r.output + 4*r.tableIndex(s.worker))
	default:
		return false
	}
	return true
}
