package pacache

import "github.com/uvmmu/uvmmu/rtl"

// Request is a fault lookup: the faulting page and whether the fault was a
// write (a page protection fault) or a read (a local page fault), GRIT
// Section V-B.
type Request struct {
	VPN   uint64
	Write bool
}

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

// Ports are grit_pa_cache's ports (SPEC 8.3), one wire each, named and
// sized by PortList, grouped by channel.
type Ports struct {
	Req     ReqPort
	Resp    RespPort
	TblReq  TblReqPort
	TblResp TblRespPort
}

// ReqPort is the fault lookup channel: req_valid, req_ready, req_vpn,
// req_write.
type ReqPort struct {
	Valid, Ready *rtl.Wire[bool]
	VPN          *rtl.Wire[uint64]
	Write        *rtl.Wire[bool]
}

// Fire reports a transfer in this cycle.
func (p ReqPort) Fire() bool { return p.Valid.Get() && p.Ready.Get() }

// Get is the offered request.
func (p ReqPort) Get() Request { return Request{VPN: p.VPN.Get(), Write: p.Write.Get()} }

// Set drives the request's payload.
func (p ReqPort) Set(r Request) {
	p.VPN.Set(r.VPN)
	p.Write.Set(r.Write)
}

// Consumer makes b listen to the channel's inputs.
func (p ReqPort) Consumer(b *rtl.Base) { b.Listen(p.Valid, p.VPN, p.Write) }

// Producer makes b listen to req_ready.
func (p ReqPort) Producer(b *rtl.Base) { b.Listen(p.Ready) }

// RespPort is the response channel, without back-pressure: resp_valid,
// resp_trigger, resp_write, resp_count.
type RespPort struct {
	Valid, Trigger, Write *rtl.Wire[bool]
	Count                 *rtl.Wire[uint8]
}

// Get is the response's payload.
func (p RespPort) Get() Response {
	return Response{Trigger: p.Trigger.Get(), Write: p.Write.Get(), Count: p.Count.Get()}
}

// Set drives the payload.
func (p RespPort) Set(r Response) {
	p.Trigger.Set(r.Trigger)
	p.Write.Set(r.Write)
	p.Count.Set(r.Count)
}

// TblReqPort is the PA-Table request channel: tbl_req_valid,
// tbl_req_ready, tbl_req_op, tbl_req_vpn, tbl_req_rw, tbl_req_count.
type TblReqPort struct {
	Valid, Ready *rtl.Wire[bool]
	Op           *rtl.Wire[TableOp]
	VPN          *rtl.Wire[uint64]
	RW           *rtl.Wire[bool]
	Count        *rtl.Wire[uint8]
}

// Fire reports a transfer in this cycle.
func (p TblReqPort) Fire() bool { return p.Valid.Get() && p.Ready.Get() }

// Get is the offered operation.
func (p TblReqPort) Get() TableReq {
	return TableReq{Op: p.Op.Get(), VPN: p.VPN.Get(), RW: p.RW.Get(), Count: p.Count.Get()}
}

// Set drives the operation's payload.
func (p TblReqPort) Set(t TableReq) {
	p.Op.Set(t.Op)
	p.VPN.Set(t.VPN)
	p.RW.Set(t.RW)
	p.Count.Set(t.Count)
}

// Consumer makes b listen to the channel's inputs.
func (p TblReqPort) Consumer(b *rtl.Base) { b.Listen(p.Valid, p.Op, p.VPN, p.RW, p.Count) }

// Producer makes b listen to tbl_req_ready.
func (p TblReqPort) Producer(b *rtl.Base) { b.Listen(p.Ready) }

// TblRespPort is the PA-Table's answer to a lookup, without
// back-pressure: tbl_resp_valid, tbl_resp_found, tbl_resp_rw,
// tbl_resp_count.
type TblRespPort struct {
	Valid, Found, RW *rtl.Wire[bool]
	Count            *rtl.Wire[uint8]
}

// Get is the answer's payload.
func (p TblRespPort) Get() TableResp {
	return TableResp{Found: p.Found.Get(), RW: p.RW.Get(), Count: p.Count.Get()}
}

// Set drives the payload.
func (p TblRespPort) Set(t TableResp) {
	p.Found.Set(t.Found)
	p.RW.Set(t.RW)
	p.Count.Set(t.Count)
}

// Consumer makes b listen to the channel.
func (p TblRespPort) Consumer(b *rtl.Base) { b.Listen(p.Valid, p.Found, p.RW, p.Count) }

// NewPorts makes the wires of a PA-Cache named path for cfg, each named
// path.<port> and sized as PortList declares it.
func NewPorts(s *rtl.Sim, path string, cfg Config) Ports {
	bit := func(name string) *rtl.Wire[bool] { return rtl.NewBit(s, path+"."+Port(name).Name) }
	u8 := func(name string) *rtl.Wire[uint8] {
		return rtl.NewWire[uint8](s, path+"."+name, Port(name).Bits(cfg))
	}
	u64 := func(name string) *rtl.Wire[uint64] {
		return rtl.NewWire[uint64](s, path+"."+name, Port(name).Bits(cfg))
	}
	return Ports{
		Req:  ReqPort{Valid: bit(PortReqValid), Ready: bit(PortReqReady), VPN: u64(PortReqVPN), Write: bit(PortReqWrite)},
		Resp: RespPort{Valid: bit(PortRespValid), Trigger: bit(PortRespTrigger), Write: bit(PortRespWrite), Count: u8(PortRespCount)},
		TblReq: TblReqPort{Valid: bit(PortTblReqValid), Ready: bit(PortTblReqReady),
			Op:  rtl.NewWire[TableOp](s, path+"."+PortTblReqOp, Port(PortTblReqOp).Bits(cfg)),
			VPN: u64(PortTblReqVPN), RW: bit(PortTblReqRW), Count: u8(PortTblReqCount)},
		TblResp: TblRespPort{Valid: bit(PortTblRespValid), Found: bit(PortTblRespFound), RW: bit(PortTblRespRW), Count: u8(PortTblRespCount)},
	}
}
