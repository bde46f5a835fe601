// Package gpu models the GPU's compute side at warp-instruction granularity
// (SPEC 6.1): the streaming multiprocessors, the thread-block dispatcher that
// launches kernels in order, and the GPU DRAM data path that serves the SMs'
// loads. Every part is an rtl block; the SMs reach address translation only
// through their translation ports, so the same cores run under every
// migration policy.
package gpu

import "github.com/uvmmu/uvmmu/rtl"

// PageShift is log2 of the 4 KB page (SPEC 2).
const PageShift = 12

// WarpBits is the width of a warp slot index; an SM holds at most 64 warps
// (UVMMU Table I), so a slot set fits one 64-bit mask.
const WarpBits = 6

// MaxWarps is the largest warps-per-SM the slot masks can hold.
const MaxWarps = 1 << WarpBits

// WarpsRange is the SMConfig.Warps NewSM accepts.
var WarpsRange = rtl.Range{Min: 1, Max: MaxWarps}

// DataReq is a load's data request: all distinct lines of one warp
// instruction, sent once every page of it is translated. Remote marks a
// load that touches a page mapped zero-copy in host memory: its lines
// cross PCIe (UVMSmart Section IV, remote access).
type DataReq struct {
	Warp   uint8
	Lines  uint8 // 1..64: 32 lanes, each touching at most two lines
	Remote bool
}

// DataReqWidth is DataReq's packed width.
const DataReqWidth = WarpBits + 7 + 1

// Pack lays the request out as {Remote, Lines, Warp} from the top bit down.
func (d DataReq) Pack() uint64 {
	p := uint64(d.Lines)<<WarpBits | uint64(d.Warp)
	if d.Remote {
		p |= 1 << (WarpBits + 7)
	}
	return p
}

// UnpackDataReq is Pack's inverse.
func UnpackDataReq(p uint64) DataReq {
	return DataReq{Warp: uint8(p & (MaxWarps - 1)), Lines: uint8(p >> WarpBits & 127), Remote: p>>(WarpBits+7)&1 != 0}
}

// Launch asks an SM to start one thread block of a kernel.
type Launch struct {
	Kernel uint16 // index into the dispatcher's kernel list
	Block  uint32
}

// LaunchWidth is Launch's packed width.
const LaunchWidth = 16 + 32

// Pack places the kernel index above the block number.
func (l Launch) Pack() uint64 { return uint64(l.Kernel)<<32 | uint64(l.Block) }
