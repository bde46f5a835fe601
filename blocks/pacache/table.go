package pacache

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// Record is a PA-Table entry apart from its VPN (GRIT Section V-C: 48
// bits, VPN + R/W bit + 2-bit fault counter).
type Record struct {
	RW    bool
	Count uint8 // faults-1, as the PA-Cache writes it back
}

// TableConfig sets the timing of the behavioural PA-Table.
type TableConfig struct {
	// Latency is the number of cycles from the cycle a lookup is accepted
	// to the cycle its answer is valid; at least 1. GRIT Section V-C: a
	// PA-Table lookup is one host memory access.
	Latency int
	// StallSeed, when not zero, seeds a 16-bit LFSR that holds tbl_req_ready
	// low in about one cycle in four, to exercise back-pressure.
	StallSeed uint16
}

// MaxTableLatency bounds TableConfig.Latency (the wait counter's width).
const MaxTableLatency = 1<<16 - 1

// Validate reports a setting outside its range.
func (c TableConfig) Validate() error {
	if c.Latency < 1 || c.Latency > MaxTableLatency {
		return fmt.Errorf("pacache: table Latency = %d is outside 1..%d", c.Latency, MaxTableLatency)
	}
	return nil
}

// Table is a behavioural PA-Table for testbenches: a Go map behind the
// PA-Table port of a PA-Cache. It accepts one operation at a time; a write
// back or a delete takes effect in the cycle it is accepted, and a lookup
// is answered Latency cycles later with the record as it was when the
// lookup was accepted. The map is only indexed, never iterated, so the
// block is deterministic. The co-simulation testbench of grit_pa_cache
// serves the Verilog's PA-Table port with this same block.
type Table struct {
	rtl.Base
	Req  TblReqPort
	Resp TblRespPort

	cfg     TableConfig
	records map[uint64]Record

	busy      *rtl.Reg[bool]
	wait      *rtl.Reg[uint16]
	respValid *rtl.Reg[bool]
	resp      *rtl.Reg[TableResp]
	stall     *rtl.Reg[uint16]
	// accepted counts accepted operations. Being a register, it also
	// marks a cycle whose only effect is on the map as activity, so the
	// kernel never puts the table to sleep in such a cycle.
	accepted *rtl.Reg[uint64]

	// Lookups, WriteBacks and Deletes count accepted operations.
	Lookups, WriteBacks, Deletes uint64
}

// NewTable makes a PA-Table named path serving the PA-Cache ports p.
func NewTable(s *rtl.Sim, path string, cfg TableConfig, p Ports) (*Table, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Table{Req: p.TblReq, Resp: p.TblResp, cfg: cfg, records: map[uint64]Record{}}
	s.Add(t, path)
	t.busy = rtl.NewFlag(&t.Base, "busy", false)
	t.wait = rtl.NewReg[uint16](&t.Base, "wait", 16, 0)
	t.respValid = rtl.NewFlag(&t.Base, "resp_valid", false)
	t.resp = rtl.NewRegOf[TableResp](&t.Base, "resp", TableRespBits, TableResp{})
	t.stall = rtl.NewReg[uint16](&t.Base, "stall_lfsr", 16, cfg.StallSeed)
	t.accepted = rtl.NewReg[uint64](&t.Base, "accepted", 64, 0)
	p.TblReq.Consumer(&t.Base)
	return t, nil
}

// Drive presents readiness and the pending answer.
func (t *Table) Drive() {
	t.Req.Ready.Set(!t.busy.Q() && (t.cfg.StallSeed == 0 || t.stall.Q()&3 != 0))
	t.Resp.Valid.Set(t.respValid.Q())
	t.Resp.Set(t.resp.Q())
}

// Eval accepts an operation and counts down to a lookup's answer.
func (t *Table) Eval() {
	if t.cfg.StallSeed != 0 {
		s := t.stall.Q()
		t.stall.Set(s>>1 ^ -(s&1)&0xb400) // x^16 + x^14 + x^13 + x^11 + 1
	}
	if t.respValid.Q() {
		t.respValid.Set(false)
		t.busy.Set(false)
	}
	if w := t.wait.Q(); w > 0 {
		t.wait.Set(w - 1)
		if w == 1 {
			t.respValid.Set(true)
		}
	}
	if !t.Req.Fire() {
		return
	}
	r := t.Req.Get()
	t.accepted.Set(t.accepted.Q() + 1)
	switch r.Op {
	case OpLookup:
		t.Lookups++
		rec, found := t.records[r.VPN]
		t.resp.Set(TableResp{Found: found, RW: rec.RW, Count: rec.Count})
		t.busy.Set(true)
		if t.cfg.Latency == 1 {
			t.respValid.Set(true)
		} else {
			t.wait.Set(uint16(t.cfg.Latency - 1))
		}
	case OpWriteBack:
		t.WriteBacks++
		t.records[r.VPN] = Record{RW: r.RW, Count: r.Count}
	case OpDelete:
		t.Deletes++
		delete(t.records, r.VPN)
	}
}

// Lookup returns the record of vpn, if any: a testbench view.
func (t *Table) Lookup(vpn uint64) (Record, bool) {
	r, ok := t.records[vpn]
	return r, ok
}

// Store preloads a record: a testbench backdoor.
func (t *Table) Store(vpn uint64, r Record) { t.records[vpn] = r }

// Len is the number of records.
func (t *Table) Len() int { return len(t.records) }
