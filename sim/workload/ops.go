package workload

import "math/bits"

// CyclesPerALUOp is the cost rule for the arithmetic between memory
// instructions: every ALU instruction a thread executes keeps its warp busy
// for this many issue cycles. The kernels' arithmetic is mostly dependent
// chains (index math feeding an address, a stencil sum), so each instruction
// waits for the previous result; four cycles is a short integer/FP pipeline.
// Each generator counts the ALU instructions of its kernel's straight-line
// code between memory instructions and multiplies by this constant.
const CyclesPerALUOp = 4

// compute makes op a compute instruction standing for aluOps ALU
// instructions.
func (op *Op) compute(aluOps int) {
	op.Kind = OpCompute
	op.Cycles = uint32(aluOps) * CyclesPerALUOp
	op.Lanes = 0
	op.Size = 0
}

// mem starts a memory instruction with no active lanes.
func (op *Op) mem(kind OpKind, size uint8) {
	op.Kind = kind
	op.Cycles = 0
	op.Lanes = 0
	op.Size = size
}

// lane adds the next active lane's address.
func (op *Op) lane(addr uint64) {
	op.Addr[op.Lanes] = addr
	op.Lanes++
}

// mix64 is the SplitMix64 finaliser: a bijective scramble used to draw
// per-element random numbers from (seed, index) without stored state.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// draw returns a uniform number in [0, n) for element i of random stream
// stream: the high word of a uniform 64-bit value times n (Lemire's
// reduction).
func draw(seed, stream, i, n uint64) uint64 {
	hi, _ := bits.Mul64(mix64(seed^mix64(stream<<40^i)), n)
	return hi
}

// block2D maps a warp lane of a 2-D thread block (dimX threads wide) to its
// threadIdx.x and threadIdx.y: CUDA numbers threads x-fastest and cuts warps
// from that linear order.
func block2D(warp, lane, dimX int) (tx, ty int) {
	t := warp*WarpSize + lane
	return t % dimX, t / dimX
}
