package incpage

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
)

// L1Config sizes a per-SM L1 TLB of 2 MB entries.
type L1Config struct {
	Entries    int // fully associative, LRU
	HitLatency int
	UnitShift  int
	Ranges     int
}

// L1Stats are an L1 TLB's counters: Misses are tag misses, RangeMisses
// tag hits whose unit the record lacks.
type L1Stats struct {
	Hits, Misses, RangeMisses, Fills, Updates uint64
}

// L1TLB is the per-SM L1 TLB of the incomplete-pages system (Shen et al.,
// Section 3.2, Figure 1): fully associative 2 MB entries, each with its
// PTE and a migrated-range record of K spans. A lookup's key is the
// accessed unit (VA >> UnitShift): the first step compares the 2 MB page
// tag, the second asks the record for the unit. Both a tag miss and a
// range miss answer tlb.Miss, and the SM sends the request on to the GMMU
// (the L2 TLB holds a record at least as recent; the GMMU suspends the
// request if the unit is not in GPU memory). Nothing freezes: a range miss
// costs only its own request. Fills come from the GMMU with a record; the
// GMMU's Landed broadcast adds a migrated span to a held page's record.
type L1TLB struct {
	rtl.Base
	Req    *rtl.Decoupled[tlb.Lookup]
	Resp   tlb.ResponsePort
	Fill   FillPort
	Landed Broadcast

	cfg      L1Config
	unitMask uint64

	tag   *rtl.Vec[uint64] // valid<<VPNBits | 2 MB page
	entry *rtl.Vec[pte.PTE]
	spans *rtl.Vec[uint64] // Ranges per way, packed Spans
	used  *rtl.Vec[uint64]
	clock *rtl.Reg[uint64]

	out    *rtl.Ring[tlb.Response]
	outPTE *rtl.Ring[pte.PTE]

	hits, misses, rangeMisses, fills, updates *rtl.Reg[uint64]

	// match is the tag compare as a map from page to way, derived from the
	// tag registers (as blocks/tlb's): updated once Eval is done.
	match    map[uint64]int
	unmapped []uint64
	mapped   []uint64
	mappedTo int
}

// NewL1TLB builds an L1 TLB under path. req, resp are the SM's lookup
// ports (tlb.NewPorts), fill and landed the GMMU's.
func NewL1TLB(s *rtl.Sim, path string, cfg L1Config, req *rtl.Decoupled[tlb.Lookup], resp tlb.ResponsePort, fill FillPort, landed Broadcast) (*L1TLB, error) {
	if err := (tlb.Config{Sets: 1, Ways: cfg.Entries, HitLatency: cfg.HitLatency}).Validate(); err != nil {
		return nil, err
	}
	if !UnitShiftRange.Has(int64(cfg.UnitShift)) || !RangesRange.Has(int64(cfg.Ranges)) {
		return nil, fmt.Errorf("incpage: L1 TLB unit shift %d or ranges %d out of range", cfg.UnitShift, cfg.Ranges)
	}
	t := &L1TLB{Req: req, Resp: resp, Fill: fill, Landed: landed, cfg: cfg, unitMask: 1<<(PageShift-cfg.UnitShift) - 1}
	s.Add(t, path)
	b, n := &t.Base, cfg.Entries
	t.tag = rtl.NewVec[uint64](b, "tag", n, pte.VPNBits+1, 0)
	t.entry = rtl.NewVec[pte.PTE](b, "entry", n, 64, 0)
	t.spans = rtl.NewVec[uint64](b, "spans", n*cfg.Ranges, SpanBits, 0)
	t.used = rtl.NewVec[uint64](b, "used", n, 64, 0)
	t.clock = rtl.NewReg[uint64](b, "clock", 64, 1)
	t.out = rtl.NewRingOf[tlb.Response](b, "out", cfg.HitLatency+1, tlb.ResponseBits, true)
	t.outPTE = rtl.NewRing[pte.PTE](b, "out_pte", cfg.HitLatency+1, 64, false)
	t.hits = rtl.NewReg[uint64](b, "hits", 64, 0)
	t.misses = rtl.NewReg[uint64](b, "misses", 64, 0)
	t.rangeMisses = rtl.NewReg[uint64](b, "range_misses", 64, 0)
	t.fills = rtl.NewReg[uint64](b, "fills", 64, 0)
	t.updates = rtl.NewReg[uint64](b, "updates", 64, 0)
	t.match = make(map[uint64]int, n)
	t.Req.Consumer(b)
	t.Fill.Consumer(b)
	b.Listen(landed.Valid, landed.Bits)
	t.Resp.Producer(b)
	return t, nil
}

const validTag = uint64(1) << pte.VPNBits

// Drive presents the response ring's head once due.
func (t *L1TLB) Drive() {
	t.Req.Ready.Set(!t.out.Full())
	t.Fill.Ready.Set(true)
	ready := t.out.Len() > 0 && t.out.HeadDue() <= t.Now()
	t.Resp.Valid.Set(ready)
	if ready {
		t.Resp.Bits.Set(t.out.Head())
		t.Resp.PTE.Set(t.outPTE.Head())
	}
}

func (t *L1TLB) find(page uint64) int {
	if w, ok := t.match[page]; ok && t.tag.At(w).Q() == validTag|page {
		return w
	}
	return -1
}

// record reads way w's record.
func (t *L1TLB) record(w int) Record {
	var r Record
	for i := 0; i < t.cfg.Ranges; i++ {
		if s, ok := UnpackSpan(t.spans.At(w*t.cfg.Ranges + i).Q()); ok {
			r.Spans[r.N] = s
			r.N++
		}
	}
	return r
}

func (t *L1TLB) writeRecord(w int, r *Record) {
	for i := 0; i < t.cfg.Ranges; i++ {
		v := uint64(0)
		if i < r.N {
			v = r.Spans[i].Pack()
		}
		if reg := t.spans.At(w*t.cfg.Ranges + i); reg.Q() != v {
			reg.Set(v)
		}
	}
}

// victim is an invalid way, or the least recently used.
func (t *L1TLB) victim() int {
	best, oldest := 0, t.used.At(0).Q()
	for w := range t.tag.Len() {
		if t.tag.At(w).Q()&validTag == 0 {
			return w
		}
		if u := t.used.At(w).Q(); u < oldest {
			best, oldest = w, u
		}
	}
	return best
}

// Eval serves one lookup, one fill and one Landed broadcast per cycle. A
// lookup reads the entries as they were at the start of the cycle; a fill
// writes its record and a broadcast of the same page then adds its span.
func (t *L1TLB) Eval() {
	now := t.Now()
	active := false
	stamp := t.clock.Q()
	push := t.Req.Fire()
	var r tlb.Response
	var e pte.PTE
	hitWay := -1
	if push {
		active = true
		l := t.Req.Bits.Get()
		r = tlb.Response{VPN: l.VPN, Requester: l.Requester, Write: l.Write, Status: tlb.Miss}
		page, unit := l.VPN>>(PageShift-t.cfg.UnitShift), uint16(l.VPN&t.unitMask)
		switch w := t.find(page); {
		case w < 0:
			t.misses.Set(t.misses.Q() + 1)
		case !t.contains(w, unit):
			t.rangeMisses.Set(t.rangeMisses.Q() + 1)
		default:
			hitWay = w
			r.Status, e = tlb.Hit, t.entry.At(w).Q()
			t.hits.Set(t.hits.Q() + 1)
		}
	}
	fillWay := -1
	var fillRec Record
	if t.Fill.Fire() {
		active = true
		page := t.Fill.Bits.Get()
		fillWay = t.find(page)
		if fillWay < 0 {
			fillWay = t.victim()
			if old := t.tag.At(fillWay).Q(); old&validTag != 0 {
				t.unmapped = append(t.unmapped, old&^validTag)
			}
			t.mapped = append(t.mapped, page)
			t.mappedTo = fillWay
		}
		t.tag.At(fillWay).Set(validTag | page)
		t.entry.At(fillWay).Set(t.Fill.PTE.Get())
		t.used.At(fillWay).Set(stamp + 1)
		for _, w := range t.Fill.Spans {
			if s, ok := UnpackSpan(w.Get()); ok {
				fillRec.Spans[fillRec.N] = s
				fillRec.N++
			}
		}
		t.fills.Set(t.fills.Q() + 1)
	}
	if t.Landed.Valid.Get() {
		l := t.Landed.Bits.Get()
		switch w := t.find(l.Page); {
		case fillWay >= 0 && t.Fill.Bits.Get() == l.Page:
			fillRec.Insert(l.Span, t.cfg.Ranges)
		case w >= 0 && w != fillWay:
			rec := t.record(w)
			rec.Insert(l.Span, t.cfg.Ranges)
			t.writeRecord(w, &rec)
			t.updates.Set(t.updates.Q() + 1)
			active = true
		}
	}
	if fillWay >= 0 {
		t.writeRecord(fillWay, &fillRec)
	}
	if hitWay >= 0 && hitWay != fillWay {
		t.used.At(hitWay).Set(stamp)
	}
	if hitWay >= 0 || fillWay >= 0 {
		t.clock.Set(stamp + 2)
	}
	for _, v := range t.unmapped {
		delete(t.match, v)
	}
	for _, v := range t.mapped {
		t.match[v] = t.mappedTo
	}
	t.unmapped, t.mapped = t.unmapped[:0], t.mapped[:0]

	pop := t.Resp.Fire()
	active = active || pop
	t.out.Update(push, r, now+uint64(t.cfg.HitLatency), pop)
	t.outPTE.Update(push, e, 0, pop)
	if !active {
		if t.out.Len() > 0 && t.out.HeadDue() > now {
			t.SleepUntil(t.out.HeadDue())
		} else {
			t.Sleep()
		}
	}
}

func (t *L1TLB) contains(w int, u uint16) bool {
	for i := 0; i < t.cfg.Ranges; i++ {
		if s, ok := UnpackSpan(t.spans.At(w*t.cfg.Ranges + i).Q()); ok && s.Contains(u) {
			return true
		}
	}
	return false
}

// Probe reads page's entry and record between cycles, for invariant
// checkers and testbenches.
func (t *L1TLB) Probe(page uint64) (pte.PTE, Record, bool) {
	if w := t.find(page); w >= 0 {
		return t.entry.At(w).Q(), t.record(w), true
	}
	return 0, Record{}, false
}

// Pages lists the pages the TLB holds, in way order, between cycles.
func (t *L1TLB) Pages() []uint64 {
	var ps []uint64
	for w := range t.tag.Len() {
		if v := t.tag.At(w).Q(); v&validTag != 0 {
			ps = append(ps, v&^validTag)
		}
	}
	return ps
}

// Stats reads the counters between cycles.
func (t *L1TLB) Stats() L1Stats {
	return L1Stats{Hits: t.hits.Q(), Misses: t.misses.Q(), RangeMisses: t.rangeMisses.Q(), Fills: t.fills.Q(), Updates: t.updates.Q()}
}
