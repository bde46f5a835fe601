package tlb

import (
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// Stats are the TLB's activity counters. Invalidations counts entries
// removed by shootdowns.
type Stats struct {
	Hits, Misses, Refused, Fills, Evictions, Invalidations uint64
}

// TLB is a set-associative translation cache with true LRU replacement per
// set; one set of Ways entries makes it fully associative.
type TLB struct {
	rtl.Base
	Ports

	cfg     Config
	setMask uint64

	tag   *rtl.Vec[uint64]  // per way: valid<<VPNBits | VPN
	entry *rtl.Vec[pte.PTE] // per way
	used  *rtl.Vec[uint64]  // per way: last-use stamp; the set's oldest is its LRU way
	clock *rtl.Reg[uint64]  // next use stamp
	// invalid counts the ways whose tag is not valid, in all sets: while it
	// is zero a fill needs no search for a free way.
	invalid *rtl.Reg[uint32]

	// The response delay line, HitLatency+1 deep: each lookup's response,
	// timed to appear HitLatency cycles after its lookup, and beside it
	// (at the ring's indices: one set of head, tail and fill registers for
	// both) its PTE, which does not fit the response's register.
	out    *rtl.Ring[Response]
	outPTE *rtl.Vec[pte.PTE]

	ackPending *rtl.Reg[bool]
	ack        *rtl.Reg[Invalidate]

	hits, misses, refused, fills, evictions, invals *rtl.Reg[uint64]

	// match is the tag compare of every way at once, as a lookup from VPN
	// to way. It is derived from the tag registers, never a source of
	// truth: Eval collects the tag changes it makes and applies them to
	// match once it is done, so that within a cycle match shows the
	// registers' current values, as the compare logic sees them.
	match    wayIndex
	unmapped []uint64 // VPNs whose tags Eval cleared this cycle
	mapped   []uint64 // VPNs Eval wrote into way mappedTo this cycle
	mappedTo int
	flushAll bool

	// lru is the replacement order of the ways, derived from used, clock
	// and the tags' valid bits as match is from the tags.
	lru lruOrder
}

const validTag = uint64(1) << pte.VPNBits

// New builds a TLB under path on ports p (NewPorts).
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*TLB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &TLB{Ports: p, cfg: cfg, setMask: uint64(cfg.Sets - 1)}
	s.Add(t, path)
	n := cfg.Entries()
	t.tag = rtl.NewVec[uint64](&t.Base, "tag", n, pte.VPNBits+1, 0)
	t.match = newWayIndex(n)
	t.unmapped = make([]uint64, 0, 2)
	t.mapped = make([]uint64, 0, 1)
	t.lru = newLRUOrder(cfg.Sets, cfg.Ways)
	t.entry = rtl.NewVec[pte.PTE](&t.Base, "entry", n, 64, 0)
	t.used = rtl.NewVec[uint64](&t.Base, "used", n, 64, 0)
	t.clock = rtl.NewReg[uint64](&t.Base, "clock", 64, 1)
	t.invalid = rtl.NewReg(&t.Base, "invalid", 27, uint32(n))
	t.out = rtl.NewRingOf[Response](&t.Base, "out", cfg.HitLatency+1, ResponseBits, true)
	t.outPTE = rtl.NewVec[pte.PTE](&t.Base, "out_pte", cfg.HitLatency+1, 64, 0)
	t.ackPending = rtl.NewFlag(&t.Base, "ack_pending", false)
	t.ack = rtl.NewRegOf(&t.Base, "ack", InvalidateBits, Invalidate{})
	t.hits = rtl.NewReg[uint64](&t.Base, "hits", 64, 0)
	t.misses = rtl.NewReg[uint64](&t.Base, "misses", 64, 0)
	t.refused = rtl.NewReg[uint64](&t.Base, "refused", 64, 0)
	t.fills = rtl.NewReg[uint64](&t.Base, "fills", 64, 0)
	t.evictions = rtl.NewReg[uint64](&t.Base, "evictions", 64, 0)
	t.invals = rtl.NewReg[uint64](&t.Base, "invalidations", 64, 0)
	t.Req.Consumer(&t.Base)
	t.Fill.Consumer(&t.Base)
	t.Base.Listen(t.Frozen)
	t.Inval.Consumer(&t.Base)
	t.Resp.Producer(&t.Base)
	t.InvalAck.Producer(&t.Base)
	return t, nil
}

// Config returns the TLB's configuration.
func (t *TLB) Config() Config { return t.cfg }

// Drive presents the response ring's head once due, the pending
// shootdown acknowledgement, and the ports' readiness.
func (t *TLB) Drive() {
	t.Req.Ready.Set(!t.out.Full())
	t.Fill.Ready.Set(true)
	t.Inval.Ready.Set(!t.ackPending.Q())
	t.InvalAck.Valid.Set(t.ackPending.Q())
	t.InvalAck.Bits.Set(t.ack.Q())
	ready := t.out.Len() > 0 && t.out.HeadDue() <= t.Now()
	t.Resp.Valid.Set(ready)
	if ready {
		t.Resp.Bits.Set(t.out.Head())
		t.Resp.PTE.Set(t.outPTE.At(t.out.HeadIndex()).Q())
	}
}

// find returns the way holding vpn, or -1. The way match names is checked
// against its tag register, which stays the source of truth (after a
// Sim.Reset, for one, the registers are cleared but match is not).
func (t *TLB) find(vpn uint64) int {
	if w := t.match.get(vpn); w >= 0 && t.tag.At(w).Q() == validTag|vpn {
		return w
	}
	return -1
}

// applyMatch brings the tag compare up to date with the tag registers'
// next values.
func (t *TLB) applyMatch() {
	if t.flushAll {
		t.match.clear()
		t.flushAll = false
	}
	for _, v := range t.unmapped {
		t.match.remove(v)
	}
	for _, v := range t.mapped {
		if t.match.full() {
			t.match.keep(t.holds)
		}
		t.match.put(v, t.mappedTo)
	}
	t.unmapped, t.mapped = t.unmapped[:0], t.mapped[:0]
}

// holds reports whether way w's tag register holds vpn: false for an entry
// of match that a Sim.Reset left behind.
func (t *TLB) holds(vpn uint64, w int) bool { return t.tag.At(w).Q() == validTag|vpn }

// victim returns the way a fill of vpn replaces: an invalid way of its set
// if there is one (the lowest), otherwise the least recently used (the
// lowest stamp, the lowest way among equal ones).
func (t *TLB) victim(vpn uint64) int {
	s := int(vpn & t.setMask)
	if w := t.lru.firstInvalid(s); w >= 0 {
		return w
	}
	return int(t.lru.first[s])
}

// rebuildLRU derives the replacement order from the registers.
func (t *TLB) rebuildLRU() {
	t.lru.rebuild(t.clock.Q(),
		func(w int) uint64 { return t.used.At(w).Q() },
		func(w int) bool { return t.tag.At(w).Q()&validTag != 0 })
}

// Eval serves one lookup, one fill and one shootdown per cycle. Within a
// cycle, lookups read the entries as they were at the start of the cycle,
// and a shootdown cancels a fill of the same VPN (or any fill, for All):
// the filled translation is the one being changed.
func (t *TLB) Eval() {
	now := t.Now()
	active := false
	stamp := t.clock.Q()
	if stamp != t.lru.clock {
		t.rebuildLRU()
	}

	hitWay := -1
	push := t.Req.Fire()
	var r Response
	var e pte.PTE
	if push {
		active = true
		l := t.Req.Bits.Get()
		r = Response{VPN: l.VPN, Requester: l.Requester, Write: l.Write, Status: Miss}
		// A store that finds a read-only entry misses, as a protection
		// fault would: it walks the page table and reaches the policy
		// that owns the page (a zero-copy mapping is read-only, UVMSmart
		// Section III-C, so the store migrates the page).
		if hitWay = t.find(l.VPN); hitWay >= 0 && l.Write && t.entry.At(hitWay).Q().ReadOnly() {
			hitWay = -1
		}
		switch {
		case hitWay >= 0:
			r.Status, e = Hit, t.entry.At(hitWay).Q()
			t.hits.Set(t.hits.Q() + 1)
		case t.Frozen.Get():
			r.Status = Refused
			t.refused.Set(t.refused.Q() + 1)
		default:
			t.misses.Set(t.misses.Q() + 1)
		}
	}

	var inv Invalidate
	shootdown := t.Inval.Fire()
	if shootdown {
		active = true
		inv = t.Inval.Bits.Get()
	}

	invalid := t.invalid.Q()
	fillWay := -1
	if t.Fill.Fire() {
		active = true
		vpn := t.Fill.Bits.Get()
		if !shootdown || !(inv.All || inv.VPN == vpn) {
			fillWay = t.find(vpn)
			if fillWay < 0 {
				fillWay = t.victim(vpn)
				if old := t.tag.At(fillWay).Q(); old&validTag != 0 {
					t.evictions.Set(t.evictions.Q() + 1)
					t.unmapped = append(t.unmapped, old&^validTag)
				} else {
					invalid--
				}
				t.mapped = append(t.mapped, vpn)
				t.mappedTo = fillWay
			}
			t.tag.At(fillWay).Set(validTag | vpn)
			t.lru.setInvalid(fillWay, false)
			t.entry.At(fillWay).Set(t.Fill.PTE.Get())
			t.used.At(fillWay).Set(stamp + 1)
			t.fills.Set(t.fills.Q() + 1)
		}
	}
	if hitWay >= 0 && hitWay != fillWay {
		t.used.At(hitWay).Set(stamp)
		t.lru.touch(hitWay)
	}
	if fillWay >= 0 {
		t.lru.touch(fillWay)
	}
	if hitWay >= 0 || fillWay >= 0 {
		t.clock.Set(stamp + 2)
		t.lru.clock = stamp + 2
	}

	if shootdown {
		invalid += t.shoot(inv, fillWay)
	}
	if invalid != t.invalid.Q() {
		t.invalid.Set(invalid)
	}
	if t.flushAll || len(t.unmapped) != 0 || len(t.mapped) != 0 {
		t.applyMatch()
	}
	if t.InvalAck.Fire() {
		active = true
		t.ackPending.Set(false)
	}

	pop := t.Resp.Fire()
	if push || pop {
		if push {
			t.outPTE.At(t.out.TailIndex()).Set(e)
		}
		t.out.Update(push, r, now+uint64(t.cfg.HitLatency), pop)
		return
	}
	if !active {
		if t.out.Len() > 0 && t.out.HeadDue() > now {
			t.SleepUntil(t.out.HeadDue())
		} else {
			t.Sleep()
		}
	}
}

// shoot clears the entries a shootdown names, leaving alone the way a fill
// writes this cycle (a full flush cancels every fill), raises the
// acknowledgement, and returns the number of entries cleared.
func (t *TLB) shoot(inv Invalidate, fillWay int) uint32 {
	var n uint64
	if inv.All {
		for w := range t.tag.Len() {
			if t.tag.At(w).Q()&validTag != 0 {
				t.tag.At(w).Set(0)
				t.lru.setInvalid(w, true)
				n++
			}
		}
		t.flushAll = true
	} else if w := t.find(inv.VPN); w >= 0 && w != fillWay {
		t.tag.At(w).Set(0)
		t.lru.setInvalid(w, true)
		t.unmapped = append(t.unmapped, inv.VPN)
		n++
	}
	t.invals.Set(t.invals.Q() + n)
	t.ack.Set(inv)
	t.ackPending.Set(true)
	return uint32(n)
}

// Probe reads the entry for vpn between cycles, for invariant checkers and
// testbenches; it does not touch the LRU order.
func (t *TLB) Probe(vpn uint64) (pte.PTE, bool) {
	if w := t.find(vpn); w >= 0 {
		return t.entry.At(w).Q(), true
	}
	return 0, false
}

// Stats reads the activity counters between cycles.
func (t *TLB) Stats() Stats {
	return Stats{
		Hits: t.hits.Q(), Misses: t.misses.Q(), Refused: t.refused.Q(),
		Fills: t.fills.Q(), Evictions: t.evictions.Q(), Invalidations: t.invals.Q(),
	}
}
