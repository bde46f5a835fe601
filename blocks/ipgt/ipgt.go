// Package ipgt defines the inverted page-group table (IPgT) entry layout of
// SPEC 5.1 (UVMMU paper Section IV-B1) and the IPgT memory port of the
// Destination Allocator (SPEC 5.3, the mem_* ports of uvmmu_da). The model,
// the Verilog generator and the documentation all take the layout from
// here.
package ipgt

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// Bit positions and widths of the fields of a 64-bit little-endian IPgT
// entry (SPEC 5.1).
const (
	FreeBit      = 0 // F: holds no page-group and is not reserved
	ProtectedBit = 1 // P: not migratable (cudaMalloc'd), never a victim
	MappedBit    = 2 // M: holds page-group VPgN of context CID
	BusyBit      = 3 // B: sits in the DCQ or is being migrated
	CIDLSB       = 4
	CIDWidth     = 12
	VPgNLSB      = 16
	VPgNWidth    = 48

	// EntryBytes is the size of one entry in GPU memory.
	EntryBytes = 8
)

// Entry is an unpacked IPgT entry.
type Entry struct {
	F, P, M, B bool
	CID        uint16 // CIDWidth bits
	VPgN       uint64 // VPgNWidth bits
}

func bit(v bool, pos int) uint64 {
	if v {
		return 1 << pos
	}
	return 0
}

// Pack returns the 64-bit memory word of the entry.
func (e Entry) Pack() uint64 {
	return bit(e.F, FreeBit) | bit(e.P, ProtectedBit) | bit(e.M, MappedBit) | bit(e.B, BusyBit) |
		uint64(e.CID&(1<<CIDWidth-1))<<CIDLSB | (e.VPgN&(1<<VPgNWidth-1))<<VPgNLSB
}

// Unpack splits a 64-bit memory word into its fields.
func Unpack(w uint64) Entry {
	return Entry{
		F:    w>>FreeBit&1 != 0,
		P:    w>>ProtectedBit&1 != 0,
		M:    w>>MappedBit&1 != 0,
		B:    w>>BusyBit&1 != 0,
		CID:  uint16(w >> CIDLSB & (1<<CIDWidth - 1)),
		VPgN: w >> VPgNLSB & (1<<VPgNWidth - 1),
	}
}

// Flag masks on the packed word, for logic that tests single bits.
const (
	F uint64 = 1 << FreeBit
	P uint64 = 1 << ProtectedBit
	M uint64 = 1 << MappedBit
	B uint64 = 1 << BusyBit
)

// Reservable reports an entry the AFM may reserve: F=1, P=0, B=0 (SPEC 5.2
// step 2). It is also what the FrAB invariant calls a free frame-group.
func Reservable(w uint64) bool { return w&(F|P|B) == F }

// Victim reports an entry the victim picker may take: M=1, P=0, B=0 (SPEC
// 5.2 step 3).
func Victim(w uint64) bool { return w&(M|P|B) == M }

// Address is the byte address of the entry of frame-group pfgn:
// IPGT_BASE + 8*PFgN (SPEC 5.1).
func Address(base, pfgn uint64) uint64 { return base + EntryBytes*pfgn }

// Default width of the IPgT memory address (ADDR_W in SPEC 5.3).
const DefaultAddrBits = 40

// MinAddrBits and MaxAddrBits bound ADDR_W.
const (
	MinAddrBits = 4
	MaxAddrBits = 64
)

// MemPorts are the wires of the IPgT memory port, named as the mem_* ports
// of uvmmu_da: one 64-bit entry per request; a read gets exactly one
// response, in request order, with no back-pressure; a write gets none.
// The requester holds a request stable while ReqValid is high and ReqReady
// low.
type MemPorts struct {
	ReqValid  *rtl.Wire[bool]   // requester -> memory
	ReqReady  *rtl.Wire[bool]   // memory -> requester
	ReqWrite  *rtl.Wire[bool]   // requester -> memory
	ReqAddr   *rtl.Wire[uint64] // requester -> memory, AddrBits wide
	ReqWData  *rtl.Wire[uint64] // requester -> memory
	RespValid *rtl.Wire[bool]   // memory -> requester
	RespData  *rtl.Wire[uint64] // memory -> requester
}

// NewMemPorts makes the wires under path (path.mem_req_valid, ...).
func NewMemPorts(s *rtl.Sim, path string, addrBits int) MemPorts {
	n := func(name string) string { return path + "." + name }
	return MemPorts{
		ReqValid:  rtl.NewBit(s, n("mem_req_valid")),
		ReqReady:  rtl.NewBit(s, n("mem_req_ready")),
		ReqWrite:  rtl.NewBit(s, n("mem_req_write")),
		ReqAddr:   rtl.NewWire[uint64](s, n("mem_req_addr"), addrBits),
		ReqWData:  rtl.NewWire[uint64](s, n("mem_req_wdata"), 64),
		RespValid: rtl.NewBit(s, n("mem_resp_valid")),
		RespData:  rtl.NewWire[uint64](s, n("mem_resp_data"), 64),
	}
}

// ReqFire reports a request transfer in this cycle.
func (p MemPorts) ReqFire() bool { return p.ReqValid.Get() && p.ReqReady.Get() }

// CheckAddrBits validates an address width.
func CheckAddrBits(addrBits int) error {
	if addrBits < MinAddrBits || addrBits > MaxAddrBits {
		return fmt.Errorf("ipgt: AddrBits %d outside %d..%d", addrBits, MinAddrBits, MaxAddrBits)
	}
	return nil
}

// The exact IPgT writes of SPEC 5.2 ("Exact IPgT writes").

// Reserve is the write-back of a reserved entry: F=0, B=1, others kept.
func Reserve(w uint64) uint64 { return w&^F | B }

// PickVictim is the write-back of a picked victim: B=1, others kept.
func PickVictim(w uint64) uint64 { return w | B }

// Mapped is the map write {M=1, CID, VPgN} with F=P=B=0.
func Mapped(cid uint16, vpgn uint64) uint64 { return Entry{M: true, CID: cid, VPgN: vpgn}.Pack() }

// Freed is the FREE and UNPROTECT write of an entry that is not busy:
// {F=1}, every other field zero.
const Freed = F

// FreedBusy is the FREE and UNPROTECT write of an entry whose B bit is set
// (it sits in the DCQ or is being migrated): {F=1, B=1}. The AFM does not
// reserve it and the picker does not pick it, so it is handed out at most
// once, by the DCQ entry or migration that already holds it.
const FreedBusy = F | B

// Protected is the PROTECT write: {P=1}, every other field zero.
const Protected = P
