package ptw

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// pwcShift is how many VPN bits one leaf page-table page covers (512 PTEs
// of 8 B in a 4 KB table page): the page-walk cache holds leaf-table
// pointers, one per 2 MB region.
const pwcShift = 9

// Stats are the GMMU's activity counters.
type Stats struct {
	Walks, Merged, PWCHits, Updates uint64
}

// GMMU is the walk queue, the walker pool, the optional page-walk cache and
// the page table they walk.
type GMMU struct {
	rtl.Base
	Ports

	cfg   Config
	depth uint32

	// Walk queue: a pool of requests, served oldest first. An entry is in
	// at most one state, each a bit vector over the entries; an entry in
	// none is free.
	waitingSet *rtl.BitVec // needs a walker
	mergedSet  *rtl.BitVec // waits for the walk of the same VPN already under way
	answerSet  *rtl.BitVec // that walk finished; answered when the result port is free
	vpn        *rtl.Vec[uint64]
	who        *rtl.Vec[uint16]
	write      *rtl.Vec[uint8] // the request's own write bit, kept when merged
	age        *rtl.Vec[uint64]
	count      *rtl.Reg[uint32] // entries in use
	waiting    *rtl.Reg[uint32] // entries in state waiting
	answers    *rtl.Reg[uint32] // entries in state answer
	seq        *rtl.Reg[uint64] // age of the next request
	// The waiting and answered entries in age order, derived from the
	// state vectors and ages (ageOrder): the oldest-first picks.
	waitOrder, answerOrder ageOrder

	// Walkers.
	busy   *rtl.BitVec
	wVPN   *rtl.Vec[uint64]
	wWho   *rtl.Vec[uint16]
	wWrite *rtl.Vec[uint8]
	wAge   *rtl.Vec[uint64]
	doneAt *rtl.Vec[uint64] // cycle in which the walk reads its leaf PTE
	active *rtl.Reg[uint32] // walkers busy
	// firstDone is derived from busy and doneAt, never a source of truth:
	// no walker reaches its leaf read in a cycle before it. A dispatch
	// lowers it to its walk's doneAt, and a pass over the walkers that
	// looks for a finished walk raises it to the earliest cycle in which a
	// walker still busy after this cycle is done. Before it, the search
	// for a finished walk would find none and is skipped: the walkers'
	// done comparators have nothing to report.
	firstDone uint64
	// The busy walkers in dispatch order, one order per walk latency
	// (walkOrder), the class of each walker's last dispatch, and a filter
	// on their VPNs: derived from busy and the walkers' registers, like
	// the age orders, so that the search for a finished walk reads the
	// orders' fronts and an accept whose VPN no walker has skips the
	// search for a walk to merge into.
	walkOrders [walkClasses]walkOrder
	walkClass  []uint8
	walkVPNs   vpnFilter

	// Page-walk cache: leaf-table pointer tags with last-use stamps.
	pwcTag  *rtl.Vec[uint64] // valid<<VPNBits | VPN>>pwcShift
	pwcUsed *rtl.Vec[uint64]
	pwcTick *rtl.Reg[uint64]

	// The page table, one PTE per page of the managed range. Port 0 reads
	// leaf PTEs for results; port 1 takes updates.
	table *rtl.SRAM[pte.PTE]

	// Result stage: the header of the result whose PTE is on the table's
	// read port.
	outValid *rtl.Reg[bool]
	out      *rtl.Reg[Walk]
	outMiss  *rtl.Reg[bool] // VPN outside the managed range: answered with PTE 0
	// A page-table write to the result's VPN from the cycle its PTE is read
	// on is forwarded here, so the result never carries a PTE that has
	// since been replaced (the unmapped PTE of an evicted page, say).
	outFwd    *rtl.Reg[bool]
	outFwdPTE *rtl.Reg[pte.PTE]

	walks, merged, pwcHits, updates *rtl.Reg[uint64]
	errSeen                         *rtl.Reg[bool]
	errVPN                          *rtl.Reg[uint64]
}

const tableRead, tableWrite = 0, 1

// Ports are the GMMU's wires.
type Ports struct {
	Req    *rtl.Decoupled[Walk] // walk requests in
	Resp   PTEPort[Walk]        // results out: the request and its leaf PTE
	Update PTEPort[uint64]      // page-table writes in: VPN + new PTE; always ready
}

// NewPorts makes the wires under path (path.req, path.resp, path.update).
func NewPorts(s *rtl.Sim, path string) Ports {
	return Ports{
		Req:    rtl.NewDecoupledOf[Walk](s, path+".req", WalkBits),
		Resp:   PTEPort[Walk]{rtl.NewDecoupledOf[Walk](s, path+".resp", WalkBits), rtl.NewWire[pte.PTE](s, path+".resp.pte", 64)},
		Update: PTEPort[uint64]{rtl.NewDecoupled[uint64](s, path+".update", pte.VPNBits), rtl.NewWire[pte.PTE](s, path+".update.pte", 64)},
	}
}

// New builds a GMMU under path on ports p (NewPorts).
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*GMMU, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &GMMU{Ports: p, cfg: cfg, depth: uint32(cfg.QueueDepth)}
	s.Add(g, path)
	b := &g.Base
	q, w := cfg.QueueDepth, cfg.Walkers
	g.waitingSet = rtl.NewBitVec(b, "q_waiting_set", q)
	g.mergedSet = rtl.NewBitVec(b, "q_merged_set", q)
	g.answerSet = rtl.NewBitVec(b, "q_answer_set", q)
	g.vpn = rtl.NewVec[uint64](b, "q_vpn", q, pte.VPNBits, 0)
	g.who = rtl.NewVec[uint16](b, "q_who", q, pte.RequesterBits, 0)
	g.write = rtl.NewVec[uint8](b, "q_write", q, 1, 0)
	g.age = rtl.NewVec[uint64](b, "q_age", q, 64, 0)
	g.count = rtl.NewReg[uint32](b, "q_count", 13, 0)
	g.waiting = rtl.NewReg[uint32](b, "q_waiting", 13, 0)
	g.answers = rtl.NewReg[uint32](b, "q_answers", 13, 0)
	g.seq = rtl.NewReg[uint64](b, "seq", 64, 0)
	g.waitOrder = make(ageOrder, 0, q)
	g.answerOrder = make(ageOrder, 0, q)
	g.busy = rtl.NewBitVec(b, "w_busy", w)
	g.wVPN = rtl.NewVec[uint64](b, "w_vpn", w, pte.VPNBits, 0)
	g.wWho = rtl.NewVec[uint16](b, "w_who", w, pte.RequesterBits, 0)
	g.wWrite = rtl.NewVec[uint8](b, "w_write", w, 1, 0)
	g.wAge = rtl.NewVec[uint64](b, "w_age", w, 64, 0)
	g.doneAt = rtl.NewVec[uint64](b, "w_done_at", w, 64, 0)
	g.active = rtl.NewReg[uint32](b, "w_active", 11, 0)
	for c := range g.walkOrders {
		g.walkOrders[c] = newWalkOrder(w)
	}
	g.walkClass = make([]uint8, w)
	g.walkVPNs = newVPNFilter(w)
	if cfg.PWCEntries > 0 {
		g.pwcTag = rtl.NewVec[uint64](b, "pwc_tag", cfg.PWCEntries, pte.VPNBits+1, 0)
		g.pwcUsed = rtl.NewVec[uint64](b, "pwc_used", cfg.PWCEntries, 64, 0)
		g.pwcTick = rtl.NewReg[uint64](b, "pwc_tick", 64, 1)
	}
	g.table = rtl.NewSRAM[pte.PTE](b, "table", rtl.SRAMConfig{Depth: cfg.Pages, Width: 64, Ports: 2, ReadLatency: 1})
	g.outValid = rtl.NewFlag(b, "out_valid", false)
	g.out = rtl.NewRegOf(b, "out", WalkBits, Walk{})
	g.outMiss = rtl.NewFlag(b, "out_miss", false)
	g.outFwd = rtl.NewFlag(b, "out_fwd", false)
	g.outFwdPTE = rtl.NewReg[pte.PTE](b, "out_fwd_pte", 64, 0)
	g.walks = rtl.NewReg[uint64](b, "walks", 64, 0)
	g.merged = rtl.NewReg[uint64](b, "merged", 64, 0)
	g.pwcHits = rtl.NewReg[uint64](b, "pwc_hits", 64, 0)
	g.updates = rtl.NewReg[uint64](b, "updates", 64, 0)
	g.errSeen = rtl.NewFlag(b, "err_seen", false)
	g.errVPN = rtl.NewReg[uint64](b, "err_vpn", pte.VPNBits, 0)
	g.Req.Consumer(b)
	g.Update.Consumer(b)
	g.Resp.Producer(b)
	return g, nil
}

// Config returns the GMMU's configuration.
func (g *GMMU) Config() Config { return g.cfg }

// Drive presents the result stage and the queue's room. The result's PTE
// is the table's registered read data.
func (g *GMMU) Drive() {
	g.Req.Ready.Set(g.count.Q() < g.depth)
	g.Update.Ready.Set(true)
	g.Resp.Valid.Set(g.outValid.Q())
	if g.outValid.Q() {
		g.Resp.Bits.Set(g.out.Q())
		e := g.table.RData(tableRead)
		if g.outFwd.Q() {
			e = g.outFwdPTE.Q()
		}
		if g.outMiss.Q() {
			e = 0
		}
		g.Resp.PTE.Set(e)
	}
}

// index maps a VPN to its table word, or -1 outside the managed range.
func (g *GMMU) index(vpn uint64) int {
	if vpn < g.cfg.BaseVPN || vpn-g.cfg.BaseVPN >= uint64(g.cfg.Pages) {
		return -1
	}
	return int(vpn - g.cfg.BaseVPN)
}

// Eval, in order: picks the oldest finished request (a completed walk or a
// merged request whose walk has completed) for the result stage and reads
// its PTE; marks the requests merged into a completing walk as answered;
// dispatches the oldest waiting request to a free walker; accepts a new
// request, merging it into a walk of the same VPN already under way or
// queued; applies a page-table update, forwarding it to the result stage
// when it writes the result's PTE.
func (g *GMMU) Eval() {
	now := g.Now()
	active := false
	fire := g.Resp.Fire()
	if fire {
		active = true
	}
	nextCount, nextWaiting, nextAnswers, nextActive := g.count.Q(), g.waiting.Q(), g.answers.Q(), g.active.Q()
	accept := g.Req.Fire()
	var r Walk
	if accept {
		r = g.Req.Bits.Get()
	}
	// Each search looks only for what this cycle can use: a result when
	// the result stage is free, a walker for a waiting request, and the
	// places and merges of an accepted request.
	outFree := !g.outValid.Q() || fire
	ws := g.searchWalkers(now, outFree, g.waiting.Q() > 0, accept, r.VPN)
	es := g.searchEntries(outFree && g.answers.Q() > 0, ws.free >= 0 && g.waiting.Q() > 0, accept, r.VPN)

	// Result stage.
	doneWalker, answerEntry := -1, -1
	if !g.outValid.Q() || fire {
		doneWalker, answerEntry = ws.done, es.answer
		var w Walk
		switch {
		case answerEntry >= 0 && (doneWalker < 0 || g.age.At(answerEntry).Q() < g.wAge.At(doneWalker).Q()):
			doneWalker = -1
			w = Walk{VPN: g.vpn.At(answerEntry).Q(), Requester: g.who.At(answerEntry).Q(), Write: g.write.At(answerEntry).Q() == 1}
			g.takeAnswer(answerEntry)
			nextCount--
			nextAnswers--
		case doneWalker >= 0:
			answerEntry = -1
			w = Walk{VPN: g.wVPN.At(doneWalker).Q(), Requester: g.wWho.At(doneWalker).Q(), Write: g.wWrite.At(doneWalker).Q() == 1}
			g.busy.Put(doneWalker, false)
			g.endWalk(doneWalker, w.VPN)
			nextActive--
			nextAnswers += g.answerMerged(w.VPN)
		}
		if doneWalker >= 0 || answerEntry >= 0 {
			active = true
			i := g.index(w.VPN)
			if i >= 0 {
				g.table.Read(tableRead, i)
			}
			g.out.Set(w)
			g.outMiss.Set(i < 0)
			g.outValid.Set(true)
			g.forward(w.VPN, false)
		} else if fire {
			g.outValid.Set(false)
		}
	}

	// Dispatch.
	if w := ws.free; w >= 0 {
		if e := es.waiting; e >= 0 {
			active = true
			v := g.vpn.At(e).Q()
			g.busy.Put(w, true)
			g.wVPN.At(w).Set(v)
			g.wWho.At(w).Set(g.who.At(e).Q())
			g.wWrite.At(w).Set(g.write.At(e).Q())
			g.wAge.At(w).Set(g.age.At(e).Q())
			g.doneAt.At(w).Set(g.walkDone(now, w, v, g.age.At(e).Q()))
			g.takeWaiting(e)
			g.walks.Set(g.walks.Q() + 1)
			nextCount--
			nextWaiting--
			nextActive++
		}
	}

	// Accept. The request merges into a walk of its VPN that is queued or
	// under way and reads its PTE after this cycle: the walker finishing
	// now does not count.
	if accept {
		active = true
		e := es.free
		if e < 0 {
			panic(fmt.Sprintf("ptw: %s accepted a request with no free queue entry", g.Path()))
		}
		if (ws.match >= 0 && ws.match != doneWalker) || ws.matches > 1 || es.match {
			g.mergedSet.Put(e, true)
			g.merged.Set(g.merged.Q() + 1)
		} else {
			g.addWaiting(e)
			nextWaiting++
		}
		g.vpn.At(e).Set(r.VPN)
		g.who.At(e).Set(r.Requester)
		g.write.At(e).Set(b2u(r.Write))
		g.age.At(e).Set(g.seq.Q())
		g.seq.Set(g.seq.Q() + 1)
		nextCount++
	}
	g.waitingSet.Flush()
	g.mergedSet.Flush()
	g.answerSet.Flush()
	g.busy.Flush()
	setIfChanged(g.count, nextCount)
	setIfChanged(g.waiting, nextWaiting)
	setIfChanged(g.answers, nextAnswers)
	setIfChanged(g.active, nextActive)

	if g.Update.Fire() {
		active = true
		v := g.Update.Bits.Get()
		if i := g.index(v); i >= 0 {
			g.table.Write(tableWrite, i, g.Update.PTE.Get())
			g.updates.Set(g.updates.Q() + 1)
			if g.outValid.Q() && !fire {
				g.forward(g.out.Q().VPN, true)
			}
		} else if !g.errSeen.Q() {
			g.errSeen.Set(true)
			g.errVPN.Set(v)
		}
	}

	if !active {
		g.sleep(now)
	}
}

// forward sets the result stage's forwarded PTE for a result of vpn: the
// PTE the update port writes this cycle when it writes vpn (the table's
// read of the same cycle returns the old one), or none for a new result
// read with no such write; a held result keeps what it has.
func (g *GMMU) forward(vpn uint64, held bool) {
	if g.Update.Fire() && g.Update.Bits.Get() == vpn && g.index(vpn) >= 0 {
		g.outFwd.Set(true)
		g.outFwdPTE.Set(g.Update.PTE.Get())
	} else if !held && g.outFwd.Q() {
		g.outFwd.Set(false)
	}
}

func b2u(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

func setIfChanged(r *rtl.Reg[uint32], v uint32) {
	if v != r.Q() {
		r.Set(v)
	}
}

// walkerSearch is what one pass over the walkers finds.
type walkerSearch struct {
	done    int // the oldest walker whose walk has reached its leaf read, or -1
	free    int // the first idle walker, or -1
	match   int // the first busy walker of the VPN searched for, or -1
	matches int // busy walkers of that VPN
}

// searchWalkers looks for the oldest finished walk, a free walker (the
// lowest idle one), and, if want, the walks of vpn. Without wantDone and
// want, it looks only for a free walker, if wantFree; the fields not asked
// for are then meaningless. Before firstDone no walk is finished and it
// does not look for one; then it reads the fronts of the walker orders.
// It visits the busy walkers only for an accept whose VPN passes the
// filter.
func (g *GMMU) searchWalkers(now uint64, wantDone, wantFree, want bool, vpn uint64) walkerSearch {
	g.checkWalks()
	r := walkerSearch{done: -1, free: -1, match: -1}
	if wantFree || wantDone || want {
		r.free = rtl.FirstClear(g.busy.Len(), g.busy)
	}
	wantDone = wantDone && now >= g.firstDone
	if g.active.Q() == 0 || (!wantDone && !want) {
		return r
	}
	if wantDone {
		// The oldest finished walk is the oldest of the finished fronts.
		// Without one, every front is unfinished and the earliest front
		// is the next firstDone; while a finished walk is not yet taken
		// (this cycle's may be older than an answered request), it is
		// the next cycle.
		doneAge, nextDone := uint64(0), rtl.Never
		for c := range g.walkOrders {
			o := &g.walkOrders[c]
			if o.n == 0 {
				continue
			}
			if p := o.front(); p.doneAt > now {
				nextDone = min(nextDone, p.doneAt)
			} else if r.done < 0 || p.age < doneAge {
				r.done, doneAge = int(p.walker), p.age
			}
		}
		g.firstDone = nextDone
		if r.done >= 0 {
			g.firstDone = now + 1
		}
	}
	if want && g.walkVPNs.mayHold(vpn) {
		for wi := range g.busy.Words() {
			for set := g.busy.Word(wi); set != 0; set &= set - 1 {
				if w := wi*64 + bits.TrailingZeros64(set); g.wVPN.At(w).Q() == vpn {
					if r.match < 0 {
						r.match = w
					}
					r.matches++
				}
			}
		}
	}
	return r
}

// entrySearch is what one search of the walk queue finds.
type entrySearch struct {
	answer  int  // the oldest answered merged request, or -1
	waiting int  // the oldest request waiting for a walker, or -1
	free    int  // the lowest free entry, or -1
	match   bool // a request of the VPN searched for waits for a walker
}

// searchEntries finds the oldest answered request if wantAnswer, the
// oldest waiting one if wantWaiting, and, if want, a free entry and
// whether a waiting request is of vpn; it visits only the entries in the
// states asked about. The entry chosen as free is free at the start of
// the cycle, so it never collides with one freed in the same cycle.
func (g *GMMU) searchEntries(wantAnswer, wantWaiting, want bool, vpn uint64) entrySearch {
	g.checkOrders()
	r := entrySearch{answer: -1, waiting: -1, free: -1}
	if want {
		r.free = rtl.FirstClear(g.waitingSet.Len(), g.waitingSet, g.mergedSet, g.answerSet)
	}
	if wantAnswer {
		r.answer = g.answerOrder.front()
	}
	if wantWaiting {
		r.waiting = g.waitOrder.front()
	}
	if want {
		r.match = g.waitingFor(vpn)
	}
	return r
}

// waitingFor reports whether a request of vpn waits for a walker.
func (g *GMMU) waitingFor(vpn uint64) bool {
	if g.waiting.Q() == 0 {
		return false
	}
	for wi := range g.waitingSet.Words() {
		for set := g.waitingSet.Word(wi); set != 0; set &= set - 1 {
			if g.vpn.At(wi*64+bits.TrailingZeros64(set)).Q() == vpn {
				return true
			}
		}
	}
	return false
}

// answerMerged marks every request merged into the walk of vpn as answered;
// they read their PTE when they reach the result stage. At most one walk
// per VPN is pending at a time, so every merged request of vpn belongs to
// this walk.
func (g *GMMU) answerMerged(vpn uint64) uint32 {
	var n uint32
	if g.count.Q() == g.waiting.Q()+g.answers.Q() {
		return 0 // no merged entries
	}
	for wi := range g.mergedSet.Words() {
		for set := g.mergedSet.Word(wi); set != 0; set &= set - 1 {
			if e := wi*64 + bits.TrailingZeros64(set); g.vpn.At(e).Q() == vpn {
				g.mergedSet.Put(e, false)
				g.addAnswer(e)
				n++
			}
		}
	}
	return n
}

// pwcLookup reports whether the page-walk cache holds vpn's leaf-table
// pointer, and records it (replacing the least recently used pointer) so
// later walks in the same 2 MB region skip the upper levels.
func (g *GMMU) pwcLookup(vpn uint64) bool {
	if g.pwcTag == nil {
		return false
	}
	want := 1<<pte.VPNBits | vpn>>pwcShift
	tick := g.pwcTick.Q()
	g.pwcTick.Set(tick + 1)
	victim := 0
	for i := range g.pwcTag.Len() {
		t := g.pwcTag.At(i).Q()
		if t == want {
			g.pwcUsed.At(i).Set(tick)
			g.pwcHits.Set(g.pwcHits.Q() + 1)
			return true
		}
		if g.pwcUsed.At(i).Q() < g.pwcUsed.At(victim).Q() {
			victim = i
		}
	}
	g.pwcTag.At(victim).Set(want)
	g.pwcUsed.At(victim).Set(tick)
	return false
}

// sleep lets an idle GMMU skip to the next walk that reaches its leaf read.
func (g *GMMU) sleep(now uint64) {
	wake := rtl.Never
	for wi := range g.busy.Words() {
		for set := g.busy.Word(wi); set != 0; set &= set - 1 {
			if t := g.doneAt.At(wi*64 + bits.TrailingZeros64(set)).Q(); t > now {
				wake = min(wake, t)
			}
		}
	}
	g.SleepUntil(wake)
}

// Read returns the page table's entry for vpn between cycles, for
// invariant checkers; a VPN outside the managed range reads as 0.
func (g *GMMU) Read(vpn uint64) pte.PTE {
	if i := g.index(vpn); i >= 0 {
		return g.table.Peek(i)
	}
	return 0
}

// Load sets the page table's entry for vpn before the run (the initial
// mapping the driver builds); during a run, PTEs change only through the
// Update port.
func (g *GMMU) Load(vpn uint64, e pte.PTE) error {
	i := g.index(vpn)
	if i < 0 {
		return fmt.Errorf("ptw: Load of VPN %#x outside the managed range %#x..%#x", vpn, g.cfg.BaseVPN, g.cfg.BaseVPN+uint64(g.cfg.Pages)-1)
	}
	g.table.Load(i, e)
	return nil
}

// Stats reads the activity counters between cycles.
func (g *GMMU) Stats() Stats {
	return Stats{Walks: g.walks.Q(), Merged: g.merged.Q(), PWCHits: g.pwcHits.Q(), Updates: g.updates.Q()}
}

// Err reports the first update the GMMU dropped for naming a VPN outside
// the managed range.
func (g *GMMU) Err() error {
	if !g.errSeen.Q() {
		return nil
	}
	return fmt.Errorf("ptw: %s update of VPN %#x dropped; VPN must be in %#x..%#x",
		g.Path(), g.errVPN.Q(), g.cfg.BaseVPN, g.cfg.BaseVPN+uint64(g.cfg.Pages)-1)
}

// walkDone is the cycle in which walker w's walk of vpn and age age,
// dispatched now, reads its leaf PTE; the walker finishing earliest may
// now be this one (firstDone).
func (g *GMMU) walkDone(now uint64, w int, vpn, age uint64) uint64 {
	hit := g.pwcLookup(vpn)
	done := now + g.cfg.WalkCycles(hit) - 1
	g.firstDone = min(g.firstDone, done)
	g.startWalk(w, vpn, age, done, hit)
	return done
}
