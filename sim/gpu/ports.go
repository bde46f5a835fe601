// Package gpu models the GPU's compute side at warp-instruction granularity
// (SPEC 6.1): the streaming multiprocessors, the thread-block dispatcher that
// launches kernels in order, and the GPU DRAM data path that serves the SMs'
// loads. Every part is an rtl block; the SMs reach address translation only
// through their translation ports, so the same cores run under every
// migration policy.
package gpu

// PageShift is log2 of the 4 KB page (SPEC 2).
const PageShift = 12

// WarpBits is the width of a warp slot index; an SM holds at most 64 warps
// (UVMMU Table I), so a slot set fits one 64-bit mask.
const WarpBits = 6

// MaxWarps is the largest warps-per-SM the slot masks can hold.
const MaxWarps = 1 << WarpBits

// DataReq is a load's data request to GPU DRAM: all distinct lines of one
// warp instruction, sent once every page of it is translated.
type DataReq struct {
	Warp  uint8
	Lines uint8 // 1..64: 32 lanes, each touching at most two lines
}

// DataReqWidth is DataReq's packed width.
const DataReqWidth = WarpBits + 7

// Pack places the line count above the warp slot.
func (d DataReq) Pack() uint64 { return uint64(d.Lines)<<WarpBits | uint64(d.Warp) }

// Launch asks an SM to start one thread block of a kernel.
type Launch struct {
	Kernel uint16 // index into the dispatcher's kernel list
	Block  uint32
}

// LaunchWidth is Launch's packed width.
const LaunchWidth = 16 + 32

// Pack places the kernel index above the block number.
func (l Launch) Pack() uint64 { return uint64(l.Kernel)<<32 | uint64(l.Block) }
