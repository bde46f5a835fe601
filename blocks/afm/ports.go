package afm

import "github.com/uvmmu/uvmmu/rtl"

// SWOp is a software operation on the sw_* port of uvmmu_da (SPEC 5.3).
type SWOp uint8

// Software operation codes, in the encoding of sw_op.
const (
	OpFree      SWOp = 0 // cudaFree of managed memory: F=1, FrAB bit set
	OpProtect   SWOp = 1 // cudaMalloc after taking a destination: P=1
	OpUnprotect SWOp = 2 // cudaFree of a cudaMalloc'd frame: F=1, FrAB bit set
)

// SWOpBits is the width of sw_op.
const SWOpBits = 2

// CIDBits and VPgNBits are the widths of map_cid and map_vpgn (SPEC 5.3).
const (
	CIDBits  = 12
	VPgNBits = 48
)

// MapPorts are the map_* wires of uvmmu_da: the UVMMU writes the mapping of
// a frame-group when a migration into it completes.
type MapPorts struct {
	Valid *rtl.Wire[bool]   // in
	Ready *rtl.Wire[bool]   // out
	PFgN  *rtl.Wire[uint64] // in
	VPgN  *rtl.Wire[uint64] // in
	CID   *rtl.Wire[uint16] // in
}

// NewMapPorts makes the wires under path (path.map_valid, ...).
func NewMapPorts(s *rtl.Sim, path string, fgBits int) MapPorts {
	n := func(name string) string { return path + "." + name }
	return MapPorts{
		Valid: rtl.NewBit(s, n("map_valid")),
		Ready: rtl.NewBit(s, n("map_ready")),
		PFgN:  rtl.NewWire[uint64](s, n("map_pfgn"), fgBits),
		VPgN:  rtl.NewWire[uint64](s, n("map_vpgn"), VPgNBits),
		CID:   rtl.NewWire[uint16](s, n("map_cid"), CIDBits),
	}
}

// Fire reports a map transfer in this cycle.
func (p MapPorts) Fire() bool { return p.Valid.Get() && p.Ready.Get() }

// SWPorts are the sw_* wires of uvmmu_da: the driver's MMIO path.
type SWPorts struct {
	Valid *rtl.Wire[bool]   // in
	Ready *rtl.Wire[bool]   // out
	Op    *rtl.Wire[uint8]  // in: SWOp
	PFgN  *rtl.Wire[uint64] // in
}

// NewSWPorts makes the wires under path (path.sw_valid, ...).
func NewSWPorts(s *rtl.Sim, path string, fgBits int) SWPorts {
	n := func(name string) string { return path + "." + name }
	return SWPorts{
		Valid: rtl.NewBit(s, n("sw_valid")),
		Ready: rtl.NewBit(s, n("sw_ready")),
		Op:    rtl.NewWire[uint8](s, n("sw_op"), SWOpBits),
		PFgN:  rtl.NewWire[uint64](s, n("sw_pfgn"), fgBits),
	}
}

// Fire reports a software-op transfer in this cycle.
func (p SWPorts) Fire() bool { return p.Valid.Get() && p.Ready.Get() }
