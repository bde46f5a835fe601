package pacache

import "github.com/uvmmu/uvmmu/rtl"

// Request is a fault lookup: the faulting page and whether the fault was a
// write (a page protection fault) or a read (a local page fault), GRIT
// Section V-B. Packed as {vpn, write}.
type Request struct {
	VPN   uint64
	Write bool
}

// Pack is {vpn, write}.
func (r Request) Pack() uint64 { return r.VPN<<1 | b2u(r.Write) }

// Response answers one Request (SPEC 8.3 response semantics). Packed as
// {trigger, write, count}.
type Response struct {
	Trigger bool  // Count reached the threshold; the record is deleted
	Write   bool  // OR of the write bits of the counted faults
	Count   uint8 // faults since the record was last deleted, 1..Threshold
}

// RespCountBits is the widest resp_count (SPEC 8.3: RESP_W at THRESHOLD
// 16); Config.RespBits is the width at a configuration.
const RespCountBits = 5

// ResponseBits is the packed width of a Response.
const ResponseBits = 2 + RespCountBits

// Pack is {trigger, write, count}.
func (r Response) Pack() uint64 {
	return b2u(r.Trigger)<<(RespCountBits+1) | b2u(r.Write)<<RespCountBits | uint64(r.Count)
}

// TableOp is the operation on the PA-Table port (SPEC 8.3).
type TableOp uint8

const (
	// OpLookup asks for the record of a VPN; it is the only operation
	// answered on the response channel.
	OpLookup TableOp = 0
	// OpWriteBack stores {vpn, rw, count} (count as the entry holds it,
	// faults-1).
	OpWriteBack TableOp = 1
	// OpDelete removes the record of a VPN.
	OpDelete TableOp = 2
)

// TableOpBits is the width of tbl_req_op.
const TableOpBits = 2

func (o TableOp) String() string {
	switch o {
	case OpLookup:
		return "lookup"
	case OpWriteBack:
		return "write-back"
	case OpDelete:
		return "delete"
	}
	return "invalid"
}

// TableReq is one PA-Table operation. Packed as {op, vpn, rw, count}.
type TableReq struct {
	Op    TableOp
	VPN   uint64
	RW    bool
	Count uint8 // faults-1, as the entry and the PA-Table store it
}

// Pack is {op, vpn, rw, count}; the VPN field is MaxVPNBits wide so the
// layout does not depend on the configuration.
func (t TableReq) Pack() uint64 {
	return uint64(t.Op)<<(MaxVPNBits+1+FaultCounterBits) | t.VPN<<(1+FaultCounterBits) | b2u(t.RW)<<FaultCounterBits | uint64(t.Count)
}

// TableReqBits is the packed width of a TableReq.
const TableReqBits = TableOpBits + MaxVPNBits + 1 + FaultCounterBits

// TableResp answers an OpLookup. Packed as {found, rw, count}.
type TableResp struct {
	Found bool
	RW    bool
	Count uint8 // faults-1
}

// TableRespBits is the packed width of a TableResp.
const TableRespBits = 2 + FaultCounterBits

// Pack is {found, rw, count}.
func (t TableResp) Pack() uint64 {
	return b2u(t.Found)<<(FaultCounterBits+1) | b2u(t.RW)<<FaultCounterBits | uint64(t.Count)
}

// ValidOut is a channel without back-pressure: the producer drives Valid
// and Bits, and the consumer takes the payload in every cycle Valid is
// high. The response channels of SPEC 8.3 have no ready signal.
type ValidOut[T interface {
	comparable
	rtl.Packer
}] struct {
	Valid *rtl.Wire[bool]
	Bits  *rtl.Wire[T]
}

func newValidOut[T interface {
	comparable
	rtl.Packer
}](s *rtl.Sim, name string, width int) ValidOut[T] {
	return ValidOut[T]{Valid: rtl.NewBit(s, name+".valid"), Bits: rtl.NewWireOf[T](s, name+".bits", width)}
}

// Ports are the PA-Cache's channels, named after the grit_pa_cache ports
// of SPEC 8.3: req_*, resp_*, tbl_req_* and tbl_resp_*.
type Ports struct {
	Req     *rtl.Decoupled[Request]
	Resp    ValidOut[Response]
	TblReq  *rtl.Decoupled[TableReq]
	TblResp ValidOut[TableResp]
}

// NewPorts makes the channels of a PA-Cache named path for cfg.
func NewPorts(s *rtl.Sim, path string, cfg Config) Ports {
	return Ports{
		Req:     rtl.NewDecoupledOf[Request](s, path+".req", cfg.VPNBits+1),
		Resp:    newValidOut[Response](s, path+".resp", ResponseBits),
		TblReq:  rtl.NewDecoupledOf[TableReq](s, path+".tbl_req", TableReqBits),
		TblResp: newValidOut[TableResp](s, path+".tbl_resp", TableRespBits),
	}
}
