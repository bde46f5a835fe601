// Package pacache models GRIT's Page Attribute Cache (GRIT Section V-C,
// Fig. 12; SPEC 8.3): a small set-associative, write-allocate, write-back
// cache in front of the PA-Table in host memory that counts the faults on
// each page and reports when a page reaches the fault threshold, so the
// driver can change the page's placement scheme.
//
// The block's ports are those of the grit_pa_cache Verilog module, and the
// Verilog emitted by verilog/gen is checked against this model cycle for
// cycle. docs/pacache.md has the timing diagrams.
//
// Timing (T is the PA-Table's lookup latency, from the cycle the lookup
// is accepted on tbl_req to the cycle tbl_resp_valid is high):
//
//   - hit: the request accepted in cycle c is answered in cycle c+1, and
//     req_ready stays high, so hits stream at one per cycle (a hit that
//     reaches the threshold holds req_ready low until its delete is
//     accepted);
//   - miss: the lookup is offered on tbl_req in c+1, and the answer is on
//     resp in the cycle after tbl_resp_valid: c+2+T with a PA-Table that
//     is always ready; req_ready is low from c+1 until that cycle;
//   - a write-back of a dirty victim, or the delete that follows a
//     trigger, is offered on tbl_req in the cycle the response is on resp,
//     and req_ready returns the cycle after the PA-Table accepts it.
package pacache

import "github.com/uvmmu/uvmmu/rtl"

// State is the controller state.
type State uint8

const (
	// StateIdle accepts requests (req_ready is high).
	StateIdle State = iota
	// StateTblReq offers the operation held in the tbl_* registers on tbl_req.
	StateTblReq
	// StateTblWait waits for the PA-Table's answer to a lookup.
	StateTblWait
)

// StateBits is the width of the state register.
const StateBits = 2

// PACache is the PA-Cache block. Its registers carry the names RegList
// gives them, which are grit_pa_cache's.
type PACache struct {
	rtl.Base
	Ports

	cfg Config

	state *rtl.Reg[State]
	// The tag store: way w of set s is line s*Ways+w, packed as
	// Config.PackLine lays it out.
	lines *rtl.Vec[uint64]
	// ages[s] packs one LRU age per way of set s, way w in bits
	// w*AgeBits up: the number of ways of the set used more recently.
	// The ages of a set are always a permutation of 0..Ways-1.
	ages *rtl.Vec[uint64]

	// The miss being served: the request, the way it will fill, and that
	// way's line as it was when the miss was detected.
	missVPN    *rtl.Reg[uint64]
	missWrite  *rtl.Reg[bool]
	victimWay  *rtl.Reg[uint8]
	victimLine *rtl.Reg[uint64]

	// The PA-Table operation offered in StateTblReq.
	tblOp    *rtl.Reg[TableOp]
	tblVPN   *rtl.Reg[uint64]
	tblRW    *rtl.Reg[bool]
	tblCount *rtl.Reg[uint8]

	respValid   *rtl.Reg[bool]
	respTrigger *rtl.Reg[bool]
	respWrite   *rtl.Reg[bool]
	respCount   *rtl.Reg[uint8]
}

// New makes a PA-Cache named path on the given channels. It consumes Req
// and TblResp and produces Resp and TblReq.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*PACache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &PACache{Ports: p, cfg: cfg}
	s.Add(c, path)
	b := &c.Base
	w := func(name string) int { return Reg(name).Bits(cfg) }
	c.state = rtl.NewReg[State](b, RegState, w(RegState), StateIdle)
	c.lines = rtl.NewVec[uint64](b, RegLines, cfg.Entries(), cfg.LineBits(), 0)
	c.ages = rtl.NewVec[uint64](b, RegAges, cfg.Sets, cfg.AgesBits(), cfg.ResetAges())
	c.missVPN = rtl.NewReg[uint64](b, RegMissVPN, w(RegMissVPN), 0)
	c.missWrite = rtl.NewFlag(b, RegMissWrite, false)
	c.victimWay = rtl.NewReg[uint8](b, RegVictimWay, w(RegVictimWay), 0)
	c.victimLine = rtl.NewReg[uint64](b, RegVictimLine, w(RegVictimLine), 0)
	c.tblOp = rtl.NewReg[TableOp](b, RegTblOp, w(RegTblOp), OpLookup)
	c.tblVPN = rtl.NewReg[uint64](b, RegTblVPN, w(RegTblVPN), 0)
	c.tblRW = rtl.NewFlag(b, RegTblRW, false)
	c.tblCount = rtl.NewReg[uint8](b, RegTblCount, w(RegTblCount), 0)
	c.respValid = rtl.NewFlag(b, RegRespValid, false)
	c.respTrigger = rtl.NewFlag(b, RegRespTrigger, false)
	c.respWrite = rtl.NewFlag(b, RegRespWrite, false)
	c.respCount = rtl.NewReg[uint8](b, RegRespCount, w(RegRespCount), 0)
	p.Req.Consumer(b)
	p.TblReq.Producer(b)
	p.TblResp.Consumer(b)
	return c, nil
}

// Config is the block's configuration.
func (c *PACache) Config() Config { return c.cfg }

// Drive sets the outputs from registers.
func (c *PACache) Drive() {
	st := c.state.Q()
	c.Req.Ready.Set(st == StateIdle)
	c.Resp.Valid.Set(c.respValid.Q())
	c.Resp.Set(Response{Trigger: c.respTrigger.Q(), Write: c.respWrite.Q(), Count: c.respCount.Q()})
	c.TblReq.Valid.Set(st == StateTblReq)
	c.TblReq.Set(TableReq{Op: c.tblOp.Q(), VPN: c.tblVPN.Q(), RW: c.tblRW.Q(), Count: c.tblCount.Q()})
}

// Eval runs the controller for one cycle.
func (c *PACache) Eval() {
	respond := false
	switch c.state.Q() {
	case StateIdle:
		if c.Req.Fire() {
			respond = c.lookup(c.Req.Get())
		}
	case StateTblReq:
		if c.TblReq.Fire() {
			if c.tblOp.Q() == OpLookup {
				c.state.Set(StateTblWait)
			} else {
				c.state.Set(StateIdle)
			}
		}
	case StateTblWait:
		if c.TblResp.Valid.Get() {
			c.fill(c.TblResp.Get())
			respond = true
		}
	}
	if respond != c.respValid.Q() {
		c.respValid.Set(respond)
	}
}

// setResponse sets the response registers.
func (c *PACache) setResponse(r Response) {
	c.respTrigger.Set(r.Trigger)
	c.respWrite.Set(r.Write)
	c.respCount.Set(r.Count)
}

// offer sets the PA-Table operation registers and enters StateTblReq.
func (c *PACache) offer(t TableReq) {
	c.tblOp.Set(t.Op)
	c.tblVPN.Set(t.VPN)
	c.tblRW.Set(t.RW)
	c.tblCount.Set(t.Count)
	c.state.Set(StateTblReq)
}

// line is line i of the tag store.
func (c *PACache) line(i int) Entry { return c.cfg.UnpackLine(c.lines.At(i).Q()) }

// setLine writes line i.
func (c *PACache) setLine(i int, e Entry) { c.lines.At(i).Set(c.cfg.PackLine(e)) }

// lookup serves an accepted request: it answers a hit at once, or starts
// a PA-Table lookup for a miss. It reports whether a response was set.
func (c *PACache) lookup(r Request) bool {
	cfg := c.cfg
	set, tag := cfg.Set(r.VPN), cfg.Tag(r.VPN)
	base := set * cfg.Ways
	tagLo := uint(cfg.TagLo())
	for w := range cfg.Ways {
		packed := c.lines.At(base + w).Q()
		if packed>>ValidBit&1 == 0 || packed>>tagLo != tag {
			continue
		}
		line := cfg.UnpackLine(packed)
		count := line.Faults + 2
		write := line.Write || r.Write
		trigger := int(count) >= cfg.Threshold
		c.setResponse(Response{Trigger: trigger, Write: write, Count: count})
		if trigger {
			c.setLine(base+w, Entry{})
			c.offer(TableReq{Op: OpDelete, VPN: r.VPN})
			return true
		}
		c.setLine(base+w, Entry{Valid: true, Dirty: true, Write: write, Faults: line.Faults + 1, Tag: tag})
		c.touch(set, w)
		return true
	}
	victim := c.victim(set)
	c.missVPN.Set(r.VPN)
	c.missWrite.Set(r.Write)
	c.victimWay.Set(uint8(victim))
	c.victimLine.Set(c.lines.At(base + victim).Q())
	c.offer(TableReq{Op: OpLookup, VPN: r.VPN})
	return false
}

// victim is the way a miss fills: the lowest-numbered invalid way, or the
// least recently used way (the one whose age is Ways-1; the ages are a
// permutation, so there is exactly one) when the set is full.
func (c *PACache) victim(set int) int {
	base := set * c.cfg.Ways
	for w := range c.cfg.Ways {
		if c.lines.At(base+w).Q()>>ValidBit&1 == 0 {
			return w
		}
	}
	ages := c.ages.At(set).Q()
	for w := range c.cfg.Ways {
		if c.age(ages, w) == uint64(c.cfg.Ways-1) {
			return w
		}
	}
	return 0
}

// fill completes a miss with the PA-Table's answer: the record found there,
// or a new one, is updated by the fault and written into the victim way,
// unless the fault reaches the threshold.
func (c *PACache) fill(t TableResp) {
	cfg := c.cfg
	vpn := c.missVPN.Q()
	count, write := uint8(1), c.missWrite.Q()
	if t.Found {
		count, write = t.Count+2, write || t.RW
	}
	trigger := int(count) >= cfg.Threshold
	c.setResponse(Response{Trigger: trigger, Write: write, Count: count})
	switch {
	case trigger && t.Found:
		c.offer(TableReq{Op: OpDelete, VPN: vpn})
		return
	case trigger:
		c.state.Set(StateIdle)
		return
	}
	set, way := cfg.Set(vpn), int(c.victimWay.Q())
	c.setLine(set*cfg.Ways+way, Entry{Valid: true, Dirty: true, Write: write, Faults: count - 1, Tag: cfg.Tag(vpn)})
	c.touch(set, way)
	if old := cfg.UnpackLine(c.victimLine.Q()); old.Valid && old.Dirty {
		c.offer(TableReq{Op: OpWriteBack, VPN: cfg.VPN(old.Tag, set), RW: old.Write, Count: old.Faults})
		return
	}
	c.state.Set(StateIdle)
}

func (c *PACache) age(ages uint64, way int) uint64 {
	ab := uint(c.cfg.AgeBits())
	return ages >> (uint(way) * ab) & (1<<ab - 1)
}

// touch makes way the most recently used of its set: its age becomes 0 and
// every way that was more recent ages by one.
func (c *PACache) touch(set, way int) {
	ab := uint(c.cfg.AgeBits())
	ages := c.ages.At(set).Q()
	old := c.age(ages, way)
	var next uint64
	for w := range c.cfg.Ways {
		a := c.age(ages, w)
		switch {
		case w == way:
			a = 0
		case a < old:
			a++
		}
		next |= a << (uint(w) * ab)
	}
	if next != ages {
		c.ages.At(set).Set(next)
	}
}

// Line returns way w of set s as it is now: a testbench view of the tag
// store.
func (c *PACache) Line(set, way int) Entry { return c.line(set*c.cfg.Ways + way) }

// Ages returns the LRU ages of a set, way 0 first: a testbench view.
func (c *PACache) Ages(set int) []uint64 {
	a := make([]uint64, c.cfg.Ways)
	for w := range a {
		a[w] = c.age(c.ages.At(set).Q(), w)
	}
	return a
}
