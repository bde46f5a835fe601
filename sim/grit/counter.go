package grit

import (
	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/rtl"
)

// Counter is the fault counter of GRIT Fig. 20's "PA-Table only"
// configuration: no PA-Cache, so every fault reads its PA-Table record
// and writes it back (or deletes it at the threshold) through the
// host-memory port. It has the PA-Cache's ports and answers with the
// PA-Cache's response semantics (SPEC 8.3), so either drives the
// Initiator; only the timing differs.
//
// A fault accepted in cycle c offers the lookup in c+1; with the port
// free it is answered in c+1+L and the response is on resp in c+2+L (as
// a PA-Cache miss). The write-back or delete is offered in that cycle, and
// req_ready returns the cycle after it is accepted: with one port, which
// the lookup frees in c+1+L, in c+3+L. The write then holds the port until
// c+2+2L, so the next fault's lookup waits for it: back-to-back faults
// cost 2L+1 cycles each.
type Counter struct {
	rtl.Base
	pacache.Ports

	cfg   Config
	state *rtl.Reg[pacache.State]
	vpn   *rtl.Reg[uint64]
	write *rtl.Reg[bool]
	// tblReq is the operation offered in StateTblReq; after the lookup's
	// answer it is the record's write-back or delete.
	tblReq    *rtl.Reg[pacache.TableReq]
	respValid *rtl.Reg[bool]
	resp      *rtl.Reg[pacache.Response]
}

// NewCounter makes a PA-Table-only counter named path on p.
func NewCounter(s *rtl.Sim, path string, cfg Config, p pacache.Ports) (*Counter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Counter{Ports: p, cfg: cfg}
	s.Add(c, path)
	c.state = rtl.NewReg[pacache.State](&c.Base, "state_q", pacache.StateBits, pacache.StateIdle)
	c.vpn = rtl.NewReg[uint64](&c.Base, "vpn_q", cfg.VPNBits, 0)
	c.write = rtl.NewFlag(&c.Base, "write_q", false)
	c.tblReq = rtl.NewRegOf[pacache.TableReq](&c.Base, "tbl_req_q", pacache.TableReqBits, pacache.TableReq{})
	c.respValid = rtl.NewFlag(&c.Base, "resp_valid_q", false)
	c.resp = rtl.NewRegOf[pacache.Response](&c.Base, "resp_q", pacache.ResponseBits, pacache.Response{})
	p.Req.Consumer(&c.Base)
	p.TblReq.Producer(&c.Base)
	p.TblResp.Consumer(&c.Base)
	return c, nil
}

// Drive sets the outputs from registers.
func (c *Counter) Drive() {
	st := c.state.Q()
	c.Req.Ready.Set(st == pacache.StateIdle)
	c.Resp.Valid.Set(c.respValid.Q())
	c.Resp.Set(c.resp.Q())
	c.TblReq.Valid.Set(st == pacache.StateTblReq)
	c.TblReq.Set(c.tblReq.Q())
}

// Eval runs the read-modify-write of one fault's record.
func (c *Counter) Eval() {
	respond := false
	switch c.state.Q() {
	case pacache.StateIdle:
		if c.Req.Fire() {
			r := c.Req.Get()
			c.vpn.Set(r.VPN)
			c.write.Set(r.Write)
			c.tblReq.Set(pacache.TableReq{Op: pacache.OpLookup, VPN: r.VPN})
			c.state.Set(pacache.StateTblReq)
		}
	case pacache.StateTblReq:
		if c.TblReq.Fire() {
			if c.tblReq.Q().Op == pacache.OpLookup {
				c.state.Set(pacache.StateTblWait)
			} else {
				c.state.Set(pacache.StateIdle)
			}
		}
	case pacache.StateTblWait:
		if c.TblResp.Valid.Get() {
			t := c.TblResp.Get()
			count, write := uint8(1), c.write.Q()
			if t.Found {
				count, write = t.Count+2, write || t.RW
			}
			trigger := int(count) >= c.cfg.Threshold
			c.resp.Set(pacache.Response{Trigger: trigger, Write: write, Count: count})
			respond = true
			vpn := c.vpn.Q()
			switch {
			case trigger && !t.Found:
				c.state.Set(pacache.StateIdle)
			case trigger:
				c.tblReq.Set(pacache.TableReq{Op: pacache.OpDelete, VPN: vpn})
				c.state.Set(pacache.StateTblReq)
			default:
				c.tblReq.Set(pacache.TableReq{Op: pacache.OpWriteBack, VPN: vpn, RW: write, Count: count - 1})
				c.state.Set(pacache.StateTblReq)
			}
		}
	}
	if respond != c.respValid.Q() {
		c.respValid.Set(respond)
	}
}
