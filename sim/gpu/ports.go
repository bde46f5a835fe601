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

// RemoteOwnerShift places the owner in a remote PTE's frame number: a
// remote mapping of the multi-GPU system names the GPU whose memory holds
// the page in the frame's bits from RemoteOwnerShift up, above the
// owner's frame (sim/multigpu).
const RemoteOwnerShift = 32

// OwnerBits is the width of a remote line's owner: a GPU of up to 16.
const OwnerBits = 4

// RemoteReq is the lines of one warp instruction on one remote page, sent
// to the page's owner (SMConfig.RemoteLines): the SM sends one as soon as
// the page's translation hits, with the owner read from the PTE. A load's
// lines come back on RemoteResp; a store's carry its data to the owner and
// need no answer.
type RemoteReq struct {
	Warp  uint8
	Owner uint8 // the GPU holding the page, OwnerBits wide
	Lines uint8 // 1..64: the instruction's lines on the page
	Write bool
}

// RemoteReqWidth is RemoteReq's packed width.
const RemoteReqWidth = WarpBits + OwnerBits + countBits + 1

// Pack lays the request out as {Write, Lines, Owner, Warp} from the top
// bit down.
func (r RemoteReq) Pack() uint64 {
	p := uint64(r.Warp) | uint64(r.Owner)<<WarpBits | uint64(r.Lines)<<(WarpBits+OwnerBits)
	if r.Write {
		p |= 1 << (WarpBits + OwnerBits + countBits)
	}
	return p
}

// UnpackRemoteReq is Pack's inverse.
func UnpackRemoteReq(p uint64) RemoteReq {
	return RemoteReq{
		Warp:  uint8(p & (MaxWarps - 1)),
		Owner: uint8(p >> WarpBits & (1<<OwnerBits - 1)),
		Lines: uint8(p >> (WarpBits + OwnerBits) & (1<<countBits - 1)),
		Write: p>>(WarpBits+OwnerBits+countBits)&1 != 0,
	}
}

// RemoteResp reports lines of a warp's remote load that have arrived.
type RemoteResp struct {
	Warp  uint8
	Lines uint8 // 1..64
}

// RemoteRespWidth is RemoteResp's packed width.
const RemoteRespWidth = WarpBits + countBits

// Pack lays the response out as {Lines, Warp} from the top bit down.
func (r RemoteResp) Pack() uint64 { return uint64(r.Warp) | uint64(r.Lines)<<WarpBits }

// Launch asks an SM to start one thread block of a kernel.
type Launch struct {
	Kernel uint16 // index into the dispatcher's kernel list
	Block  uint32
}

// LaunchWidth is Launch's packed width.
const LaunchWidth = 16 + 32

// Pack places the kernel index above the block number.
func (l Launch) Pack() uint64 { return uint64(l.Kernel)<<32 | uint64(l.Block) }

// LineReq is one line of a memory instruction on its way to the data
// caches (SMConfig.StreamLines): the SM's load/store unit sends the lines
// of a translated instruction one per cycle. Count is the instruction's
// line total and First marks its first line, so the caches know when a
// load's data is complete; a Write line needs no answer.
type LineReq struct {
	Warp    uint8
	Line    uint64 // virtual line address: byte address / line size
	Sectors uint8  // 32 B sectors touched, bit i = sector i
	Write   bool
	First   bool
	Count   uint8 // lines of the instruction, 1..64
}

// Widths of LineReq's fields.
const (
	lineAddrBits = 48 - 5 // a 48-bit virtual address in lines of 32 B and up
	sectorBits   = 4
	countBits    = 7
	// LineReqWidth is LineReq's packed width.
	LineReqWidth = WarpBits + lineAddrBits + sectorBits + 2 + countBits
)

// Pack lays the request out as {Count, First, Write, Sectors, Line, Warp}
// from the top bit down.
func (l LineReq) Pack() uint64 {
	p := uint64(l.Warp) | l.Line<<WarpBits | uint64(l.Sectors)<<(WarpBits+lineAddrBits)
	o := WarpBits + lineAddrBits + sectorBits
	if l.Write {
		p |= 1 << o
	}
	if l.First {
		p |= 1 << (o + 1)
	}
	return p | uint64(l.Count)<<(o+2)
}

// UnpackLineReq is Pack's inverse.
func UnpackLineReq(p uint64) LineReq {
	o := WarpBits + lineAddrBits + sectorBits
	return LineReq{
		Warp:    uint8(p & (MaxWarps - 1)),
		Line:    p >> WarpBits & (1<<lineAddrBits - 1),
		Sectors: uint8(p >> (WarpBits + lineAddrBits) & (1<<sectorBits - 1)),
		Write:   p>>o&1 != 0,
		First:   p>>(o+1)&1 != 0,
		Count:   uint8(p >> (o + 2) & (1<<countBits - 1)),
	}
}
