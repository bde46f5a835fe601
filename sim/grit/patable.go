package grit

import (
	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/rtl"
)

// Entry is one PA-Table record (GRIT Section V-C, Fig. 12): the page's VPN,
// its R/W bit (the OR of the write bits of the counted faults) and its
// fault counter, which holds count-1 as the PA-Cache's line does
// (blocks/pacache.Entry). At GRIT's configuration (45-bit VPN, threshold
// 4, a 2-bit counter) it is 48 bits.
type Entry struct {
	VPN   uint64
	RW    bool
	Count uint8 // faults-1
}

// Bit positions of a packed Entry, least significant first: the counter
// (CountBits wide), the R/W bit above it, the VPN above that.
const CountLo = 0

// RWBit is the R/W bit's position in a packed entry at cfg.
func RWBit(cfg Config) int { return CountLo + cfg.Cache().CountBits() }

// VPNLo is the VPN's lowest bit in a packed entry at cfg.
func VPNLo(cfg Config) int { return RWBit(cfg) + 1 }

// EntryBits is a packed entry's width at cfg: 45 + 1 + 2 = 48 at GRIT's.
func EntryBits(cfg Config) int { return VPNLo(cfg) + cfg.VPNBits }

// Pack lays e out as {vpn, rw, count} at cfg.
func (e Entry) Pack(cfg Config) uint64 {
	return e.VPN<<uint(VPNLo(cfg)) | b2u(e.RW)<<uint(RWBit(cfg)) | uint64(e.Count)<<CountLo
}

// UnpackEntry is the inverse of Entry.Pack.
func UnpackEntry(cfg Config, v uint64) Entry {
	cb := uint(cfg.Cache().CountBits())
	return Entry{VPN: v >> uint(VPNLo(cfg)), RW: v>>uint(RWBit(cfg))&1 == 1, Count: uint8(v >> CountLo & (1<<cb - 1))}
}

// PATable is the PA-Table in host memory behind its host-memory port: the
// records, one packed Entry per page with a record, and the port's timing.
// It serves the PA-Table port of SPEC 8.3 (pacache.Ports' tbl_req and
// tbl_resp), so the PA-Cache and the PA-Table-only Counter drive it alike.
//
// Timing: every operation, lookup, write-back or delete, is one host-memory
// access of Config.Table.Latency cycles (L) and holds one of the
// Config.Table.Ports ports for those cycles; tbl_req_ready is low while no
// port is free, so accesses contend and queue in order. An operation
// accepted in cycle c frees its port in c+L; a lookup's answer is on
// tbl_resp in c+L, with the record as it was in c. A write-back or delete
// takes effect in c (the port still pays its L cycles). The map of records
// is only indexed, never iterated.
type PATable struct {
	rtl.Base
	Req  pacache.TblReqPort
	Resp pacache.TblRespPort

	cfg     Config
	records map[uint64]uint64 // VPN -> packed Entry

	// freeAt[i] is the first cycle port i is free again; answerAt the
	// cycle the outstanding lookup's answer is on tbl_resp (noAnswer
	// when none), resp that answer. The table sleeps between these
	// cycles.
	freeAt   *rtl.Vec[uint64]
	answerAt *rtl.Reg[uint64]
	resp     *rtl.Reg[pacache.TableResp]

	// Reads counts lookups, Writes write-backs and deletes.
	Reads, Writes uint64
}

// noAnswer is answerAt with no lookup outstanding.
const noAnswer = ^uint64(0)

// NewPATable makes the PA-Table named path on the PA-Table channels of p.
func NewPATable(s *rtl.Sim, path string, cfg Config, p pacache.Ports) (*PATable, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &PATable{Req: p.TblReq, Resp: p.TblResp, cfg: cfg, records: map[uint64]uint64{}}
	s.Add(t, path)
	t.freeAt = rtl.NewVec[uint64](&t.Base, "free_at", cfg.Table.Ports, 64, 0)
	t.answerAt = rtl.NewReg[uint64](&t.Base, "answer_at", 64, noAnswer)
	t.resp = rtl.NewRegOf[pacache.TableResp](&t.Base, "resp", pacache.TableRespBits, pacache.TableResp{})
	p.TblReq.Consumer(&t.Base)
	return t, nil
}

// freePort is the lowest port free in cycle now, or -1.
func (t *PATable) freePort(now uint64) int {
	for i := range t.cfg.Table.Ports {
		if t.freeAt.At(i).Q() <= now {
			return i
		}
	}
	return -1
}

// Drive presents readiness and the lookup's answer.
func (t *PATable) Drive() {
	now := t.Now()
	t.Req.Ready.Set(t.freePort(now) >= 0)
	t.Resp.Valid.Set(t.answerAt.Q() == now)
	t.Resp.Set(t.resp.Q())
}

// Eval accepts an operation on the lowest free port and sleeps until the
// next cycle an output changes: a port frees, an answer appears or goes.
func (t *PATable) Eval() {
	now := t.Now()
	answerAt := t.answerAt.Q()
	if t.Req.Fire() {
		port := t.freePort(now)
		r := t.Req.Get()
		done := now + uint64(t.cfg.Table.Latency)
		t.freeAt.At(port).Set(done)
		switch r.Op {
		case pacache.OpLookup:
			t.Reads++
			v, found := t.records[r.VPN]
			e := UnpackEntry(t.cfg, v)
			t.resp.Set(pacache.TableResp{Found: found, RW: e.RW, Count: e.Count})
			t.answerAt.Set(done)
			answerAt = done
		case pacache.OpWriteBack:
			t.Writes++
			t.records[r.VPN] = Entry{VPN: r.VPN, RW: r.RW, Count: r.Count}.Pack(t.cfg)
		case pacache.OpDelete:
			t.Writes++
			delete(t.records, r.VPN)
		}
		// the port's new free cycle is not visible through Q yet
		t.SleepUntil(t.next(now, answerAt, done))
		return
	}
	t.SleepUntil(t.next(now, answerAt, rtl.Never))
}

// next is the first cycle after now at which an output changes: a port
// frees (pending is a free cycle written this cycle), the answer appears
// at answerAt or drops after it.
func (t *PATable) next(now, answerAt, pending uint64) uint64 {
	n := rtl.Never
	consider := func(c uint64) {
		if c > now && c < n {
			n = c
		}
	}
	consider(pending)
	if answerAt != noAnswer {
		consider(answerAt)
		consider(answerAt + 1)
	}
	for i := range t.cfg.Table.Ports {
		consider(t.freeAt.At(i).Q())
	}
	return n
}

// Record returns vpn's record, if any: a testbench view.
func (t *PATable) Record(vpn uint64) (Entry, bool) {
	v, ok := t.records[vpn]
	return UnpackEntry(t.cfg, v), ok
}

// Len is the number of records.
func (t *PATable) Len() int { return len(t.records) }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
