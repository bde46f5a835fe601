package incpage

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/rtl"
)

// Request pool states.
const (
	poolFree       = 0
	poolL2         = 1 // in the L2 TLB lookup until due
	poolWalkWait   = 2 // needs a walker
	poolWalking    = 3 // walking until due
	poolWalkMerged = 4 // waits for the walk of the same page under way
	poolNeedMig    = 5 // its unit is not in GPU memory: waits for an MRQ entry
)

// Stats are the GMMU's counters. L2RangeMisses and PTRangeMisses are the
// second translation step failing at the L2 TLB and at the page table;
// Requests are migration requests sent to the host, Merged the misses
// that extended a pending request, Attached the misses that waited for a
// request already covering their unit.
type Stats struct {
	L2Hits, L2Misses, L2RangeMisses   uint64
	Walks, PTRangeMisses              uint64
	Requests, Merged, Attached, Units uint64
	Completions, Suspended            uint64
}

// GMMU is the GPU memory management unit of the incomplete-pages system
// (Shen et al., Sections 3.2-3.4 and Figure 1): a shared L2 TLB of 2 MB
// entries with range records, page-table walkers over a page table of
// 2 MB PTEs each with an exact bitmap of its migrated units, and the
// migration request builder.
//
//	req ─► L2 TLB ─┬─ hit, unit present ───────────────► answer: fill L1 + replay
//	               ├─ hit, unit absent, record exact ──► suspend ─► MRQ ─► host
//	               └─ miss / unit absent (inexact) ──► walk ─┬─ present ─► answer
//	                                                          └─ absent ──► suspend
//	migration done ─► bitmap, L2 record, Landed broadcast to the L1 TLBs,
//	                  the suspended requests answered (they look up their
//	                  L1 TLB again)
//
// A request whose unit is absent is suspended alone: it leaves the request
// pool for the suspend table, and the other requests, of this page or
// any other, go on. The migration request queue (MRQ) holds requests
// {page, first, last}: a new one covers MinUnits from the missing unit
// (stopping before a unit already present or requested); a miss within
// GapUnits of a request not yet sent extends it, up to MaxUnits; a miss
// inside a request waits for it. One request is sent per cycle, oldest
// first, when the host takes it. A page's 2 MB frame is allocated whole
// when its first request is built (Section 4.1: no oversubscription).
type GMMU struct {
	rtl.Base
	Req     *rtl.Decoupled[ptw.Walk]
	Fills   []FillPort
	Replays []*rtl.Decoupled[ptw.Walk]
	Landed  Broadcast
	MigReq  *rtl.Decoupled[MigRequest]
	MigDone *rtl.Decoupled[uint16]

	cfg       Config
	unitBits  uint
	warpBits  uint
	ringDepth uint32

	// Request pool.
	pState  *rtl.Vec[uint8]
	pKey    *rtl.Vec[uint64]
	pWho    *rtl.Vec[uint16]
	pWrite  *rtl.Vec[uint8]
	pAge    *rtl.Vec[uint64]
	pDue    *rtl.Vec[uint64]
	pCount  *rtl.Reg[uint32]
	pSeq    *rtl.Reg[uint64]
	walking *rtl.Reg[uint32]

	// Suspend table.
	sValid *rtl.Vec[uint8]
	sKey   *rtl.Vec[uint64]
	sWho   *rtl.Vec[uint16]
	sWrite *rtl.Vec[uint8]
	sTag   *rtl.Vec[uint16]
	sCount *rtl.Reg[uint32]

	// Answers waiting for the fill/replay stage.
	aKey   *rtl.Vec[uint64]
	aWho   *rtl.Vec[uint16]
	aWrite *rtl.Vec[uint8]
	aHead  *rtl.Reg[uint32]
	aCount *rtl.Reg[uint32]

	// Fill/replay output register.
	oValid *rtl.Reg[bool]
	oKey   *rtl.Reg[uint64]
	oWho   *rtl.Reg[uint16]
	oWrite *rtl.Reg[bool]
	oPTE   *rtl.Reg[pte.PTE]
	oSpans *rtl.Vec[uint64]

	// Migration request queue.
	mValid *rtl.Vec[uint8]
	mSent  *rtl.Vec[uint8]
	mPage  *rtl.Vec[uint64]
	mFirst *rtl.Vec[uint16]
	mLast  *rtl.Vec[uint16]
	mAge   *rtl.Vec[uint64]
	mSeq   *rtl.Reg[uint64]
	qValid *rtl.Reg[bool]
	q      *rtl.Reg[MigRequest]
	lValid *rtl.Reg[bool]
	l      *rtl.Reg[Landed]

	// L2 TLB: set-associative, LRU.
	l2Tag   *rtl.Vec[uint64]
	l2PTE   *rtl.Vec[pte.PTE]
	l2Spans *rtl.Vec[uint64]
	l2Exact *rtl.Vec[uint8]
	l2Used  *rtl.Vec[uint64]
	l2Clock *rtl.Reg[uint64]

	// Page table: a 2 MB PTE and a unit bitmap per page.
	table  []*rtl.Reg[pte.PTE]
	bitmap []*rtl.Reg[uint64]
	frames *rtl.Reg[uint64] // next free 2 MB frame

	l2Hits, l2Misses, l2RangeMisses, walks, ptRangeMisses *rtl.Reg[uint64]
	requests, merged, attached, units, completions        *rtl.Reg[uint64]
	suspended                                             *rtl.Reg[uint64]

	scratch Bitmap
}

// Ports are the GMMU's wires besides the per-SM fill and replay ports.
type Ports struct {
	Req     *rtl.Decoupled[ptw.Walk]
	Landed  Broadcast
	MigReq  *rtl.Decoupled[MigRequest]
	MigDone *rtl.Decoupled[uint16]
}

// NewPorts makes the GMMU's own wires under path.
func NewPorts(s *rtl.Sim, path string) Ports {
	return Ports{
		Req:     rtl.NewDecoupledOf[ptw.Walk](s, path+".req", ptw.WalkBits),
		Landed:  NewBroadcast(s, path+".landed"),
		MigReq:  rtl.NewDecoupledOf[MigRequest](s, path+".mig_req", MigRequestBits),
		MigDone: rtl.NewDecoupled[uint16](s, path+".mig_done", mrqTagBits),
	}
}

// PageInit is a page's initial page-table entry: a remote PTE for managed
// data, or Present for data that starts in GPU memory.
type PageInit struct {
	PTE     pte.PTE
	Present bool
}

// NewGMMU builds the GMMU under path over the initial page table init (one
// entry per page from cfg.BasePage). fills and replays are per SM (SM i is
// requester tag i << warpBits and up).
func NewGMMU(s *rtl.Sim, path string, cfg Config, p Ports, fills []FillPort, replays []*rtl.Decoupled[ptw.Walk], warpBits int, init []PageInit) (*GMMU, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(fills) != cfg.SMs || len(replays) != cfg.SMs {
		return nil, fmt.Errorf("incpage: %d SMs but %d fill and %d replay ports", cfg.SMs, len(fills), len(replays))
	}
	g := &GMMU{Req: p.Req, Landed: p.Landed, MigReq: p.MigReq, MigDone: p.MigDone, Fills: fills, Replays: replays,
		cfg: cfg, unitBits: uint(cfg.UnitBits()), warpBits: uint(warpBits)}
	s.Add(g, path)
	b := &g.Base
	n, sus, k := cfg.Queue, cfg.Suspend, cfg.Ranges
	g.ringDepth = uint32(n + sus)
	g.pState = rtl.NewVec[uint8](b, "p_state", n, 3, poolFree)
	g.pKey = rtl.NewVec[uint64](b, "p_key", n, pte.VPNBits, 0)
	g.pWho = rtl.NewVec[uint16](b, "p_who", n, pte.RequesterBits, 0)
	g.pWrite = rtl.NewVec[uint8](b, "p_write", n, 1, 0)
	g.pAge = rtl.NewVec[uint64](b, "p_age", n, 64, 0)
	g.pDue = rtl.NewVec[uint64](b, "p_due", n, 64, 0)
	g.pCount = rtl.NewReg[uint32](b, "p_count", 13, 0)
	g.pSeq = rtl.NewReg[uint64](b, "p_seq", 64, 0)
	g.mSeq = rtl.NewReg[uint64](b, "m_seq", 64, 0)
	g.walking = rtl.NewReg[uint32](b, "walking", 11, 0)
	g.sValid = rtl.NewVec[uint8](b, "s_valid", sus, 1, 0)
	g.sKey = rtl.NewVec[uint64](b, "s_key", sus, pte.VPNBits, 0)
	g.sWho = rtl.NewVec[uint16](b, "s_who", sus, pte.RequesterBits, 0)
	g.sWrite = rtl.NewVec[uint8](b, "s_write", sus, 1, 0)
	g.sTag = rtl.NewVec[uint16](b, "s_tag", sus, mrqTagBits, 0)
	g.sCount = rtl.NewReg[uint32](b, "s_count", 17, 0)
	g.aKey = rtl.NewVec[uint64](b, "a_key", int(g.ringDepth), pte.VPNBits, 0)
	g.aWho = rtl.NewVec[uint16](b, "a_who", int(g.ringDepth), pte.RequesterBits, 0)
	g.aWrite = rtl.NewVec[uint8](b, "a_write", int(g.ringDepth), 1, 0)
	g.aHead = rtl.NewReg[uint32](b, "a_head", 18, 0)
	g.aCount = rtl.NewReg[uint32](b, "a_count", 18, 0)
	g.oValid = rtl.NewFlag(b, "o_valid", false)
	g.oKey = rtl.NewReg[uint64](b, "o_key", pte.VPNBits, 0)
	g.oWho = rtl.NewReg[uint16](b, "o_who", pte.RequesterBits, 0)
	g.oWrite = rtl.NewFlag(b, "o_write", false)
	g.oPTE = rtl.NewReg[pte.PTE](b, "o_pte", 64, 0)
	g.oSpans = rtl.NewVec[uint64](b, "o_spans", k, SpanBits, 0)
	m := cfg.MRQ
	g.mValid = rtl.NewVec[uint8](b, "m_valid", m, 1, 0)
	g.mSent = rtl.NewVec[uint8](b, "m_sent", m, 1, 0)
	g.mPage = rtl.NewVec[uint64](b, "m_page", m, 48-PageShift, 0)
	g.mFirst = rtl.NewVec[uint16](b, "m_first", m, unitFieldBits, 0)
	g.mLast = rtl.NewVec[uint16](b, "m_last", m, unitFieldBits, 0)
	g.mAge = rtl.NewVec[uint64](b, "m_age", m, 64, 0)
	g.qValid = rtl.NewFlag(b, "q_valid", false)
	g.q = rtl.NewRegOf(b, "q", MigRequestBits, MigRequest{})
	g.lValid = rtl.NewFlag(b, "l_valid", false)
	g.l = rtl.NewRegOf(b, "l", LandedBits, Landed{})
	e := cfg.L2Entries
	g.l2Tag = rtl.NewVec[uint64](b, "l2_tag", e, pte.VPNBits+1, 0)
	g.l2PTE = rtl.NewVec[pte.PTE](b, "l2_pte", e, 64, 0)
	g.l2Spans = rtl.NewVec[uint64](b, "l2_spans", e*k, SpanBits, 0)
	g.l2Exact = rtl.NewVec[uint8](b, "l2_exact", e, 1, 0)
	g.l2Used = rtl.NewVec[uint64](b, "l2_used", e, 64, 0)
	g.l2Clock = rtl.NewReg[uint64](b, "l2_clock", 64, 1)
	if len(init) != cfg.Pages {
		return nil, fmt.Errorf("incpage: %d initial PTEs for %d pages", len(init), cfg.Pages)
	}
	// The page table's reset contents are the initial mapping: managed
	// pages remote (in host memory, no frame yet), cudaMalloc'd pages in
	// whole frames with every unit present.
	frames := uint64(0)
	full := make(Bitmap, cfg.bitmapWords())
	full.Set(Span{First: 0, Last: uint16(cfg.UnitsPerPage() - 1)})
	for i, pi := range init {
		e := pi.PTE
		if pi.Present {
			e = pte.Local(frames << (PageShift - 12))
			frames++
		}
		g.table = append(g.table, rtl.NewReg(b, fmt.Sprintf("table%d", i), 64, e))
		for w := range full {
			v := uint64(0)
			if pi.Present {
				v = full[w]
			}
			g.bitmap = append(g.bitmap, rtl.NewReg(b, fmt.Sprintf("bitmap%d_%d", i, w), 64, v))
		}
	}
	g.frames = rtl.NewReg(b, "frames", 32, frames)
	g.l2Hits = rtl.NewReg[uint64](b, "l2_hits", 64, 0)
	g.l2Misses = rtl.NewReg[uint64](b, "l2_misses", 64, 0)
	g.l2RangeMisses = rtl.NewReg[uint64](b, "l2_range_misses", 64, 0)
	g.walks = rtl.NewReg[uint64](b, "walks", 64, 0)
	g.ptRangeMisses = rtl.NewReg[uint64](b, "pt_range_misses", 64, 0)
	g.requests = rtl.NewReg[uint64](b, "requests", 64, 0)
	g.merged = rtl.NewReg[uint64](b, "merged", 64, 0)
	g.attached = rtl.NewReg[uint64](b, "attached", 64, 0)
	g.units = rtl.NewReg[uint64](b, "units", 64, 0)
	g.completions = rtl.NewReg[uint64](b, "completions", 64, 0)
	g.suspended = rtl.NewReg[uint64](b, "suspended", 64, 0)
	g.scratch = make(Bitmap, cfg.bitmapWords())
	g.Req.Consumer(b)
	g.MigDone.Consumer(b)
	g.MigReq.Producer(b)
	for i := range fills {
		fills[i].Producer(b)
		replays[i].Producer(b)
	}
	return g, nil
}

// Config returns the configuration.
func (g *GMMU) Config() Config { return g.cfg }

// Drive presents the request pool's room, the fill/replay register to its
// SM, the Landed broadcast and the migration request register.
func (g *GMMU) Drive() {
	room := g.pCount.Q() < uint32(g.cfg.Queue) && g.pCount.Q()+g.sCount.Q()+g.aCount.Q() < g.ringDepth
	g.Req.Ready.Set(room)
	target := len(g.Fills)
	if g.oValid.Q() {
		target = int(g.oWho.Q() >> g.warpBits)
	}
	for i := range g.Fills {
		on := i == target
		g.Fills[i].Valid.Set(on)
		g.Replays[i].Valid.Set(on)
		if on {
			page := g.oKey.Q() >> g.unitBits
			g.Fills[i].Bits.Set(page)
			g.Fills[i].PTE.Set(g.oPTE.Q())
			for j, w := range g.Fills[i].Spans {
				w.Set(g.oSpans.At(j).Q())
			}
			g.Replays[i].Bits.Set(ptw.Walk{VPN: g.oKey.Q(), Requester: g.oWho.Q(), Write: g.oWrite.Q()})
		}
	}
	g.Landed.Valid.Set(g.lValid.Q())
	g.Landed.Bits.Set(g.l.Q())
	g.MigReq.Valid.Set(g.qValid.Q())
	g.MigReq.Bits.Set(g.q.Q())
	g.MigDone.Ready.Set(true)
}

// split is a key's page index (from BasePage) and unit.
func (g *GMMU) split(key uint64) (page uint64, unit uint16) {
	return key >> g.unitBits, uint16(key & (1<<g.unitBits - 1))
}

// words is page index i's bitmap words as they are this cycle (Q).
func (g *GMMU) words(i int) Bitmap {
	n := g.cfg.bitmapWords()
	for w := 0; w < n; w++ {
		g.scratch[w] = g.bitmap[i*n+w].Q()
	}
	return g.scratch
}

func (g *GMMU) index(page uint64) int {
	if page < g.cfg.BasePage || page-g.cfg.BasePage >= uint64(g.cfg.Pages) {
		return -1
	}
	return int(page - g.cfg.BasePage)
}

func (g *GMMU) present(page uint64, u uint16) bool {
	i := g.index(page)
	if i < 0 {
		return false
	}
	n := g.cfg.bitmapWords()
	return g.bitmap[i*n+int(u)>>6].Q()>>(u&63)&1 != 0
}

// answers is the cycle's view of the answer ring: pushes land after the
// entries there.
type answers struct {
	head, count uint32
}

func (g *GMMU) pushAnswer(a *answers, key uint64, who uint16, write uint8) {
	t := (a.head + a.count) % g.ringDepth
	g.aKey.At(int(t)).Set(key)
	g.aWho.At(int(t)).Set(who)
	g.aWrite.At(int(t)).Set(write)
	a.count++
}

// cycleState carries what earlier stages of Eval decided to later ones.
type cycleState struct {
	now      uint64
	ans      answers
	pCount   uint32
	sCount   uint32
	walking  uint32
	done     int // MRQ entry completing this cycle, or -1
	donePage uint64
	doneSpan Span
	sending  int // MRQ entry loaded into the request register this cycle, or -1
	walkPage uint64
	walkDone bool
	active   bool

	// The L2 TLB writes of the cycle, applied together at its end: the
	// completion's record update, the walk's fill and the lookup's LRU
	// touch (a fill of the same way supersedes the other two).
	recWay, fillWay, touchWay int
	rec, fillRec              Record
	fillPage                  uint64
	fillPTE                   pte.PTE
}

// Eval runs the stages in the order their decisions depend on each other;
// each reads the registers as they were at the start of the cycle.
func (g *GMMU) Eval() {
	c := cycleState{now: g.Now(), ans: answers{g.aHead.Q(), g.aCount.Q()}, pCount: g.pCount.Q(), sCount: g.sCount.Q(),
		walking: g.walking.Q(), done: -1, sending: -1, recWay: -1, fillWay: -1, touchWay: -1}
	g.complete(&c)
	g.answerStage(&c)
	g.l2Stage(&c)
	g.walkDone(&c)
	g.dispatch(&c)
	g.sendStage(&c)
	g.migrateStage(&c)
	if g.Req.Fire() {
		c.active = true
		g.accept(&c)
	}
	g.l2Apply(&c)
	setU32(g.aHead, c.ans.head)
	setU32(g.aCount, c.ans.count)
	setU32(g.pCount, c.pCount)
	setU32(g.sCount, c.sCount)
	setU32(g.walking, c.walking)
	if c.active || c.ans.count > 0 || g.oValid.Q() || g.qValid.Q() || g.lValid.Q() {
		return
	}
	g.sleep(&c)
}

func setU32(r *rtl.Reg[uint32], v uint32) {
	if r.Q() != v {
		r.Set(v)
	}
}

// complete takes a finished migration: the page table's bitmap gains the
// span, the L2 record too, the L1 TLBs hear it on the Landed broadcast
// next cycle, and the requests suspended on it are answered.
func (g *GMMU) complete(c *cycleState) {
	landed := false
	if g.MigDone.Fire() {
		c.active = true
		t := int(g.MigDone.Bits.Get())
		if t >= g.cfg.MRQ || g.mValid.At(t).Q() == 0 || g.mSent.At(t).Q() == 0 {
			panic(fmt.Sprintf("incpage: %s: completion of MRQ entry %d that is not in flight", g.Path(), t))
		}
		c.done = t
		c.donePage = g.mPage.At(t).Q()
		c.doneSpan = Span{First: g.mFirst.At(t).Q(), Last: g.mLast.At(t).Q()}
		i := g.index(c.donePage)
		n := g.cfg.bitmapWords()
		bm := g.words(i)
		bm.Set(c.doneSpan)
		for w := 0; w < n; w++ {
			if r := g.bitmap[i*n+w]; r.Q() != bm[w] {
				r.Set(bm[w])
			}
		}
		g.mValid.At(t).Set(0)
		g.mSent.At(t).Set(0)
		g.completions.Set(g.completions.Q() + 1)
		if w := g.l2Find(c.donePage); w >= 0 {
			rec := g.l2Record(w)
			rec.Insert(c.doneSpan, g.cfg.Ranges)
			c.recWay, c.rec = w, rec
		}
		g.l.Set(Landed{Page: c.donePage, Span: c.doneSpan})
		landed = true
		if c.sCount > 0 {
			for s := range g.sValid.Len() {
				if g.sValid.At(s).Q() == 1 && g.sTag.At(s).Q() == uint16(t) {
					g.sValid.At(s).Set(0)
					c.sCount--
					g.pushAnswer(&c.ans, g.sKey.At(s).Q(), g.sWho.At(s).Q(), g.sWrite.At(s).Q())
				}
			}
		}
	}
	if landed != g.lValid.Q() {
		g.lValid.Set(landed)
	}
}

// answerStage loads the next answer into the fill/replay register once
// the one there is taken. The L1 gets the L2's record when it holds the
// unit, otherwise the record the page table's bitmap gives around it.
func (g *GMMU) answerStage(c *cycleState) {
	free := !g.oValid.Q()
	if g.oValid.Q() {
		sm := int(g.oWho.Q() >> g.warpBits)
		if g.Fills[sm].Fire() && g.Replays[sm].Fire() {
			free = true
			c.active = true
		}
	}
	if !free {
		return
	}
	if g.aCount.Q() == 0 {
		if g.oValid.Q() {
			g.oValid.Set(false)
		}
		return
	}
	c.active = true
	h := int(g.aHead.Q())
	key := g.aKey.At(h).Q()
	page, u := g.split(key)
	var rec Record
	if w := g.l2Find(page); w >= 0 && g.l2Contains(w, u) {
		rec = g.l2Record(w)
	} else {
		rec = g.words(g.index(page)).RecordAround(u, g.cfg.Ranges)
	}
	for j := 0; j < g.cfg.Ranges; j++ {
		v := uint64(0)
		if j < rec.N {
			v = rec.Spans[j].Pack()
		}
		if r := g.oSpans.At(j); r.Q() != v {
			r.Set(v)
		}
	}
	g.oValid.Set(true)
	g.oKey.Set(key)
	g.oWho.Set(g.aWho.At(h).Q())
	g.oWrite.Set(g.aWrite.At(h).Q() == 1)
	g.oPTE.Set(g.table[g.index(page)].Q())
	c.ans.head = (c.ans.head + 1) % g.ringDepth
	c.ans.count--
}

// oldest returns the pool entry in state st with the smallest age whose
// due cycle has come (when timed), or -1.
func (g *GMMU) oldest(st uint8, timed bool, now uint64) int {
	best, bestAge := -1, uint64(0)
	if g.pCount.Q() == 0 {
		return -1
	}
	for e := range g.pState.Len() {
		if g.pState.At(e).Q() != st || (timed && g.pDue.At(e).Q() > now) {
			continue
		}
		if a := g.pAge.At(e).Q(); best < 0 || a < bestAge {
			best, bestAge = e, a
		}
	}
	return best
}

func (g *GMMU) free(c *cycleState, e int) {
	g.pState.At(e).Set(poolFree)
	c.pCount--
}

// l2Stage finishes the oldest L2 lookup that is due: both steps of the
// translation at the L2 TLB.
func (g *GMMU) l2Stage(c *cycleState) {
	e := g.oldest(poolL2, true, c.now)
	if e < 0 {
		return
	}
	c.active = true
	key := g.pKey.At(e).Q()
	page, u := g.split(key)
	w := g.l2Find(page)
	switch {
	case w < 0:
		g.l2Misses.Set(g.l2Misses.Q() + 1)
		g.pState.At(e).Set(poolWalkWait)
	case g.l2Contains(w, u):
		g.l2Hits.Set(g.l2Hits.Q() + 1)
		c.touchWay = w
		g.pushAnswer(&c.ans, key, g.pWho.At(e).Q(), g.pWrite.At(e).Q())
		g.free(c, e)
	default:
		g.l2RangeMisses.Set(g.l2RangeMisses.Q() + 1)
		c.touchWay = w
		if g.l2Exact.At(w).Q() == 1 {
			g.pState.At(e).Set(poolNeedMig)
		} else {
			g.pState.At(e).Set(poolWalkWait)
		}
	}
}

// walkDone finishes the oldest walk that is due: the walker reads the
// 2 MB PTE and the page's bitmap, fills the L2 TLB, and answers or
// suspends the walk's request and those merged into it.
func (g *GMMU) walkDone(c *cycleState) {
	e := g.oldest(poolWalking, true, c.now)
	if e < 0 {
		return
	}
	c.active = true
	c.walking--
	key := g.pKey.At(e).Q()
	page, u := g.split(key)
	c.walkPage, c.walkDone = page, true
	i := g.index(page)
	var rec Record
	var entry pte.PTE
	if i >= 0 {
		bm := g.words(i)
		if c.done >= 0 && c.donePage == page {
			bm.Set(c.doneSpan)
		}
		rec = bm.RecordAround(u, g.cfg.Ranges)
		entry = g.table[i].Q()
		c.fillWay, c.fillPage, c.fillPTE, c.fillRec = g.l2Victim(page), page, entry, rec
	}
	misses := uint64(0)
	for f := range g.pState.Len() {
		st := g.pState.At(f).Q()
		if f != e && (st != poolWalkMerged || g.pKey.At(f).Q()>>g.unitBits != page) {
			continue
		}
		_, fu := g.split(g.pKey.At(f).Q())
		if i >= 0 && (g.present(page, fu) || (c.done >= 0 && c.donePage == page && c.doneSpan.Contains(fu))) {
			g.pushAnswer(&c.ans, g.pKey.At(f).Q(), g.pWho.At(f).Q(), g.pWrite.At(f).Q())
			g.free(c, f)
		} else {
			misses++
			g.pState.At(f).Set(poolNeedMig)
		}
	}
	if misses > 0 {
		g.ptRangeMisses.Set(g.ptRangeMisses.Q() + misses)
	}
}

// dispatch starts the oldest request waiting for a walker, or merges it
// into the walk of its page already under way.
func (g *GMMU) dispatch(c *cycleState) {
	e := g.oldest(poolWalkWait, false, 0)
	if e < 0 {
		return
	}
	page := g.pKey.At(e).Q() >> g.unitBits
	if c.walkDone && c.walkPage == page {
		return // that walk's answer is being read now: walk again next cycle
	}
	for f := range g.pState.Len() {
		if g.pState.At(f).Q() == poolWalking && g.pKey.At(f).Q()>>g.unitBits == page {
			c.active = true
			g.pState.At(e).Set(poolWalkMerged)
			return
		}
	}
	if c.walking >= uint32(g.cfg.Walkers) {
		return
	}
	c.active = true
	c.walking++
	g.walks.Set(g.walks.Q() + 1)
	g.pState.At(e).Set(poolWalking)
	g.pDue.At(e).Set(c.now + uint64(g.cfg.WalkCycles))
}

// sendStage loads the oldest request not yet sent into the request
// register once the host has taken the one there.
func (g *GMMU) sendStage(c *cycleState) {
	if g.qValid.Q() && !g.MigReq.Fire() {
		return
	}
	best, bestAge := -1, uint64(0)
	for m := range g.mValid.Len() {
		if g.mValid.At(m).Q() == 1 && g.mSent.At(m).Q() == 0 && m != c.done {
			if a := g.mAge.At(m).Q(); best < 0 || a < bestAge {
				best, bestAge = m, a
			}
		}
	}
	if best < 0 {
		if g.qValid.Q() {
			g.qValid.Set(false)
		}
		return
	}
	c.active = true
	c.sending = best
	first, last := g.mFirst.At(best).Q(), g.mLast.At(best).Q()
	g.q.Set(MigRequest{Tag: uint16(best), Page: g.mPage.At(best).Q(), First: first, Count: last - first + 1})
	g.qValid.Set(true)
	g.mSent.At(best).Set(1)
	g.requests.Set(g.requests.Q() + 1)
	g.units.Set(g.units.Q() + uint64(last-first+1))
}

// migrateStage handles the oldest request whose unit is absent: answered
// if the unit has landed since, suspended on a migration request that
// covers it, on a pending one it extends, or on a new one.
func (g *GMMU) migrateStage(c *cycleState) {
	e := g.oldest(poolNeedMig, false, 0)
	if e < 0 {
		return
	}
	key := g.pKey.At(e).Q()
	page, u := g.split(key)
	if g.present(page, u) || (c.done >= 0 && c.donePage == page && c.doneSpan.Contains(u)) {
		c.active = true
		g.pushAnswer(&c.ans, key, g.pWho.At(e).Q(), g.pWrite.At(e).Q())
		g.free(c, e)
		return
	}
	slot := -1
	if c.sCount < uint32(g.cfg.Suspend) {
		for s := range g.sValid.Len() {
			if g.sValid.At(s).Q() == 0 {
				slot = s
				break
			}
		}
	}
	if slot < 0 {
		return
	}
	tag, merge, freeEntry := -1, -1, -1
	var mergeSpan Span
	gap := g.cfg.GapUnits
	for m := range g.mValid.Len() {
		if g.mValid.At(m).Q() == 0 {
			if freeEntry < 0 {
				freeEntry = m
			}
			continue
		}
		if m == c.done || g.mPage.At(m).Q() != page {
			continue
		}
		s := Span{First: g.mFirst.At(m).Q(), Last: g.mLast.At(m).Q()}
		if s.Contains(u) {
			tag = m
			break
		}
		if merge >= 0 || g.mSent.At(m).Q() == 1 || m == c.sending {
			continue
		}
		lo, hi := min(s.First, u), max(s.Last, u)
		d := int(s.First) - int(u) - 1
		if u > s.Last {
			d = int(u) - int(s.Last) - 1
		}
		if d <= gap && int(hi-lo)+1 <= g.cfg.MaxUnits {
			merge, mergeSpan = m, Span{First: lo, Last: hi}
		}
	}
	switch {
	case tag >= 0:
		g.attached.Set(g.attached.Q() + 1)
	case merge >= 0:
		tag = merge
		g.mFirst.At(merge).Set(mergeSpan.First)
		g.mLast.At(merge).Set(mergeSpan.Last)
		g.merged.Set(g.merged.Q() + 1)
	case freeEntry >= 0:
		tag = freeEntry
		g.mValid.At(tag).Set(1)
		g.mSent.At(tag).Set(0)
		g.mPage.At(tag).Set(page)
		g.mFirst.At(tag).Set(u)
		g.mLast.At(tag).Set(g.newLast(page, u))
		g.mAge.At(tag).Set(g.mSeq.Q())
		g.mSeq.Set(g.mSeq.Q() + 1)
		if i := g.index(page); g.table[i].Q().IsRemote() {
			// First touch: the page's whole 2 MB frame.
			f := g.frames.Q()
			g.frames.Set(f + 1)
			g.table[i].Set(pte.Local(f << (PageShift - 12)))
		}
	default:
		return
	}
	c.active = true
	g.sValid.At(slot).Set(1)
	g.sKey.At(slot).Set(key)
	g.sWho.At(slot).Set(g.pWho.At(e).Q())
	g.sWrite.At(slot).Set(g.pWrite.At(e).Q())
	g.sTag.At(slot).Set(uint16(tag))
	c.sCount++
	g.suspended.Set(g.suspended.Q() + 1)
	g.free(c, e)
}

// newLast is the last unit of a new request from unit u: MinUnits long,
// within the page, stopping before a present unit or another request's
// first unit.
func (g *GMMU) newLast(page uint64, u uint16) uint16 {
	last := min(int(u)+g.cfg.MinUnits-1, g.cfg.UnitsPerPage()-1)
	for m := range g.mValid.Len() {
		if g.mValid.At(m).Q() == 1 && g.mPage.At(m).Q() == page {
			if f := int(g.mFirst.At(m).Q()); f > int(u) && f <= last {
				last = f - 1
			}
		}
	}
	for v := int(u) + 1; v <= last; v++ {
		if g.present(page, uint16(v)) {
			return uint16(v - 1)
		}
	}
	return uint16(last)
}

// accept takes a new request into the pool for the L2 TLB lookup.
func (g *GMMU) accept(c *cycleState) {
	r := g.Req.Bits.Get()
	for e := range g.pState.Len() {
		if g.pState.At(e).Q() == poolFree {
			g.pState.At(e).Set(poolL2)
			g.pKey.At(e).Set(r.VPN)
			g.pWho.At(e).Set(r.Requester)
			g.pWrite.At(e).Set(b2u(r.Write))
			g.pAge.At(e).Set(g.pSeq.Q())
			g.pSeq.Set(g.pSeq.Q() + 1)
			g.pDue.At(e).Set(c.now + uint64(g.cfg.L2Latency))
			c.pCount++
			return
		}
	}
	panic(fmt.Sprintf("incpage: %s accepted a request with no free pool entry", g.Path()))
}

func b2u(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

// sleep waits for the next due lookup or walk; inputs wake the GMMU.
func (g *GMMU) sleep(c *cycleState) {
	wake := rtl.Never
	for e := range g.pState.Len() {
		switch g.pState.At(e).Q() {
		case poolL2, poolWalking:
			wake = min(wake, max(g.pDue.At(e).Q(), c.now+1))
		case poolWalkWait:
			if g.walking.Q() < uint32(g.cfg.Walkers) {
				wake = c.now + 1
			}
		}
	}
	g.SleepUntil(wake)
}

// l2Set is the L2 set of page: its first way.
func (g *GMMU) l2Set(page uint64) int {
	sets := g.cfg.L2Entries / g.cfg.L2Ways
	return int(page&uint64(sets-1)) * g.cfg.L2Ways
}

// l2Find returns the way holding page, or -1.
func (g *GMMU) l2Find(page uint64) int {
	base := g.l2Set(page)
	for w := base; w < base+g.cfg.L2Ways; w++ {
		if g.l2Tag.At(w).Q() == validTag|page {
			return w
		}
	}
	return -1
}

// l2Victim is the way a fill of page writes: the page's own, an invalid
// one, or the set's least recently used.
func (g *GMMU) l2Victim(page uint64) int {
	if w := g.l2Find(page); w >= 0 {
		return w
	}
	base := g.l2Set(page)
	best, oldest := base, g.l2Used.At(base).Q()
	for w := base; w < base+g.cfg.L2Ways; w++ {
		if g.l2Tag.At(w).Q()&validTag == 0 {
			return w
		}
		if u := g.l2Used.At(w).Q(); u < oldest {
			best, oldest = w, u
		}
	}
	return best
}

func (g *GMMU) l2Contains(w int, u uint16) bool {
	k := g.cfg.Ranges
	for i := 0; i < k; i++ {
		if s, ok := UnpackSpan(g.l2Spans.At(w*k + i).Q()); ok && s.Contains(u) {
			return true
		}
	}
	return false
}

func (g *GMMU) l2Record(w int) Record {
	k := g.cfg.Ranges
	r := Record{Exact: g.l2Exact.At(w).Q() == 1}
	for i := 0; i < k; i++ {
		if s, ok := UnpackSpan(g.l2Spans.At(w*k + i).Q()); ok {
			r.Spans[r.N] = s
			r.N++
		}
	}
	return r
}

func (g *GMMU) l2WriteRecord(w int, r *Record) {
	k := g.cfg.Ranges
	for i := 0; i < k; i++ {
		v := uint64(0)
		if i < r.N {
			v = r.Spans[i].Pack()
		}
		if reg := g.l2Spans.At(w*k + i); reg.Q() != v {
			reg.Set(v)
		}
	}
	if x := b2u(r.Exact); g.l2Exact.At(w).Q() != x {
		g.l2Exact.At(w).Set(x)
	}
}

// l2Apply makes the cycle's L2 writes. The walk's fill record already
// holds a span completing in the same cycle, so a fill of the way the
// completion updates replaces that update.
func (g *GMMU) l2Apply(c *cycleState) {
	stamp := g.l2Clock.Q()
	if c.recWay >= 0 && c.recWay != c.fillWay {
		g.l2WriteRecord(c.recWay, &c.rec)
	}
	if c.fillWay >= 0 {
		g.l2Tag.At(c.fillWay).Set(validTag | c.fillPage)
		g.l2PTE.At(c.fillWay).Set(c.fillPTE)
		g.l2WriteRecord(c.fillWay, &c.fillRec)
		g.l2Used.At(c.fillWay).Set(stamp + 1)
	}
	if c.touchWay >= 0 && c.touchWay != c.fillWay {
		g.l2Used.At(c.touchWay).Set(stamp)
	}
	if c.fillWay >= 0 || c.touchWay >= 0 {
		g.l2Clock.Set(stamp + 2)
	}
}

// PageRecord reads page's PTE and a copy of its bitmap between cycles.
func (g *GMMU) PageRecord(page uint64) (pte.PTE, Bitmap) {
	i := g.index(page)
	if i < 0 {
		return 0, nil
	}
	n := g.cfg.bitmapWords()
	bm := make(Bitmap, n)
	for w := 0; w < n; w++ {
		bm[w] = g.bitmap[i*n+w].Q()
	}
	return g.table[i].Q(), bm
}

// L2Probe reads page's L2 entry between cycles.
func (g *GMMU) L2Probe(page uint64) (Record, bool) {
	if w := g.l2Find(page); w >= 0 {
		return g.l2Record(w), true
	}
	return Record{}, false
}

// L2Pages lists the pages the L2 TLB holds, in way order.
func (g *GMMU) L2Pages() []uint64 {
	var ps []uint64
	for w := range g.l2Tag.Len() {
		if v := g.l2Tag.At(w).Q(); v&validTag != 0 {
			ps = append(ps, v&^validTag)
		}
	}
	return ps
}

// Frames is the 2 MB frames allocated so far.
func (g *GMMU) Frames() uint64 { return g.frames.Q() }

// Stats reads the counters between cycles.
func (g *GMMU) Stats() Stats {
	return Stats{
		L2Hits: g.l2Hits.Q(), L2Misses: g.l2Misses.Q(), L2RangeMisses: g.l2RangeMisses.Q(),
		Walks: g.walks.Q(), PTRangeMisses: g.ptRangeMisses.Q(),
		Requests: g.requests.Q(), Merged: g.merged.Q(), Attached: g.attached.Q(), Units: g.units.Q(),
		Completions: g.completions.Q(), Suspended: g.suspended.Q(),
	}
}

// Busy describes the work the GMMU holds, for the watchdog.
func (g *GMMU) Busy() string {
	inFlight := 0
	for m := range g.mValid.Len() {
		if g.mValid.At(m).Q() == 1 {
			inFlight++
		}
	}
	return fmt.Sprintf("%d requests in the pool, %d suspended, %d answers queued, %d migration requests pending or in flight",
		g.pCount.Q(), g.sCount.Q(), g.aCount.Q(), inFlight)
}
