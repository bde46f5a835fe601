package multigpu

import (
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
)

// L2TLB is a GPU's shared L2 TLB (GRIT Table I: 512 entries, 16-way, a
// 10-cycle lookup, LRU; tlb.GRITL2Config) between the walk arbiter and the
// GMMU. It is the single-GPU TLB block (blocks/tlb) with a stage around it:
//
//	walk arbiter ─► in ─► TLB lookup ─┬─ hit ──► hits ──┬─► out (to the
//	                                  └─ miss ─► misses ─► GMMU   protection
//	GMMU results ─► walked ───────────────────────────────┘      check)
//	             └─► fill the TLB (valid PTEs)
//
// An L1 TLB miss is looked up here first; a hit goes back towards the
// router as a walk result would, HitLatency cycles after the lookup, and a
// miss (or a store to a read-only entry, which the TLB block answers Miss)
// continues to the GMMU. Every valid GMMU result fills the TLB the cycle
// after it arrives. The host driver's shootdowns reach it with the L1 TLBs'
// (its Inval/InvalAck are one more TLB of the GPU).
//
// A hit may carry a PTE the driver has rewritten while the lookup was in
// flight, before its shootdown reached the TLB: the stage snoops the
// GMMU's page-table update port and sends such a hit to the GMMU instead.
// A write up to two cycles before the lookup counts (the shootdown lands
// two cycles after its write: Driver, opWrite then opShoot), so the stage
// keeps the VPNs written in the last HitLatency+3 cycles. A GMMU result
// whose VPN is written in its arrival cycle does not fill the TLB.
//
// Each queue holds two entries; one walk a cycle passes each way.
type L2TLB struct {
	rtl.Base
	In      *rtl.Decoupled[ptw.Walk] // L1 misses from the walk arbiter
	TLB     *tlb.TLB
	Miss    *rtl.Decoupled[ptw.Walk] // to the GMMU (its Req)
	Walked  gpu.Resolved             // the GMMU's results (its Resp)
	Out     gpu.Resolved             // to the protection check
	updates ptw.PTEPort[uint64]      // snooped: the GMMU's Update

	latency uint64
	in      *rtl.Ring[ptw.Walk]
	misses  *rtl.Ring[ptw.Walk]
	hits    resolvedFIFO
	walked  resolvedFIFO
	fill    *rtl.Reg[bool]
	fillVPN *rtl.Reg[uint64]
	fillPTE *rtl.Reg[pte.PTE]
	// The VPNs written in the last len cycles: entry c mod len holds the
	// write of cycle stamp (VPN+1; 0 none).
	written *rtl.Vec[uint64]
	stamp   *rtl.Vec[uint64]
}

// NewL2TLB builds the TLB (cfg) and its stage under path between in (the
// walk arbiter's output) and the GMMU g, with out towards the router.
func NewL2TLB(s *rtl.Sim, path string, cfg tlb.Config, in *rtl.Decoupled[ptw.Walk], g *ptw.GMMU, out gpu.Resolved) (*L2TLB, error) {
	t, err := tlb.New(s, path, cfg, tlb.NewPorts(s, path))
	if err != nil {
		return nil, err
	}
	l := &L2TLB{In: in, TLB: t, Miss: g.Req, Walked: g.Resp, Out: out, updates: g.Update, latency: uint64(cfg.HitLatency)}
	s.Add(l, path+".stage")
	b := &l.Base
	l.in = rtl.NewRingOf[ptw.Walk](b, "in", 2, ptw.WalkBits, false)
	l.misses = rtl.NewRingOf[ptw.Walk](b, "misses", 2, ptw.WalkBits, false)
	l.hits = newResolvedFIFO(b, "hits")
	l.walked = newResolvedFIFO(b, "walked")
	l.fill = rtl.NewFlag(b, "fill_valid", false)
	l.fillVPN = rtl.NewReg[uint64](b, "fill_vpn", pte.VPNBits, 0)
	l.fillPTE = rtl.NewReg[pte.PTE](b, "fill_pte", 64, 0)
	window := cfg.HitLatency + 3
	l.written = rtl.NewVec[uint64](b, "written", window, pte.VPNBits+1, 0)
	l.stamp = rtl.NewVec[uint64](b, "written_at", window, 64, 0)
	in.Consumer(b)
	t.Req.Producer(b)
	t.Resp.Consumer(b)
	t.Fill.Producer(b)
	l.Miss.Producer(b)
	l.Walked.Consumer(b)
	out.Producer(b)
	b.Listen(g.Update.Valid, g.Update.Ready, g.Update.Bits)
	return l, nil
}

// Drive offers the next lookup, the next miss to the GMMU, the fill, and
// the oldest result (the GMMU's first).
func (l *L2TLB) Drive() {
	l.In.Ready.Set(!l.in.Full())
	l.TLB.Req.Valid.Set(l.in.Len() > 0)
	if l.in.Len() > 0 {
		w := l.in.Head()
		l.TLB.Req.Bits.Set(tlb.Lookup{VPN: w.VPN, Requester: w.Requester, Write: w.Write})
	}
	l.TLB.Resp.Ready.Set(!l.hits.full() && !l.misses.Full())
	l.Miss.Valid.Set(l.misses.Len() > 0)
	if l.misses.Len() > 0 {
		l.Miss.Bits.Set(l.misses.Head())
	}
	l.Walked.Ready.Set(!l.walked.full())
	l.TLB.Fill.Valid.Set(l.fill.Q())
	l.TLB.Fill.Bits.Set(l.fillVPN.Q())
	l.TLB.Fill.PTE.Set(l.fillPTE.Q())
	w, e, ok := l.walked.front()
	if !ok {
		var stale bool
		w, e, stale, ok = l.hits.frontHit()
		ok = ok && !stale
	}
	l.Out.Valid.Set(ok)
	if ok {
		l.Out.Bits.Set(w)
		l.Out.PTE.Set(e)
	}
}

// Eval moves the walks along.
//
// It reads the time only when a page-table write or a lookup result
// arrives, so a stage with nothing moving sleeps until a port changes,
// results held for a stalled router included.
func (l *L2TLB) Eval() {
	uvpn, written := uint64(0), l.updates.Fire()
	if written {
		now := l.Now()
		uvpn = l.updates.Bits.Get()
		k := int(now % uint64(l.written.Len()))
		l.written.At(k).Set(uvpn + 1)
		l.stamp.At(k).Set(now)
	}
	// Lookups in.
	var inW ptw.Walk
	push := l.In.Fire()
	if push {
		inW = l.In.Bits.Get()
	}
	if pop := l.TLB.Req.Fire(); push || pop {
		l.in.Update(push, inW, 0, pop)
	}
	// The result offered: the GMMU's first, else a current hit; a stale
	// hit at the head turns into a walk.
	outFired := l.Out.Fire()
	walkedPop := outFired && l.walked.count.Q() > 0
	hitPop := outFired && !walkedPop
	_, _, stale, hasHit := l.hits.frontHit()
	redo := false
	if hasHit && stale && !hitPop {
		hitPop, redo = true, true
	}
	// Lookup results.
	var missW ptw.Walk
	missPush := false
	var hitW ptw.Walk
	var hitE pte.PTE
	hitPush := false
	if l.TLB.Resp.Fire() {
		r := l.TLB.Resp.Bits.Get()
		w := ptw.Walk{VPN: r.VPN, Requester: r.Requester, Write: r.Write}
		if r.Status == tlb.Hit && !(written && uvpn == r.VPN) && !l.writtenSince(r.VPN, l.Now()) {
			hitW, hitE, hitPush = w, l.TLB.Resp.PTE.Get(), true
		} else {
			missW, missPush = w, true
		}
	}
	if redo {
		if missPush || l.misses.Full() {
			hitPop, redo = false, false // the stale hit waits a cycle
		} else {
			missW, missPush = l.hits.headWalk(), true
		}
	}
	l.hits.step(hitPop, hitPush, hitW, hitE, written, uvpn)
	if pop := l.Miss.Fire(); missPush || pop {
		l.misses.Update(missPush, missW, 0, pop)
	}
	// GMMU results: onwards, and into the TLB.
	fill := false
	if l.Walked.Fire() {
		w, e := l.Walked.Bits.Get(), l.Walked.PTE.Get()
		l.walked.step(walkedPop, true, w, e, false, 0)
		if e.Valid() && !(written && uvpn == w.VPN) {
			fill = true
			l.fillVPN.Set(w.VPN)
			l.fillPTE.Set(e)
		}
	} else if walkedPop {
		l.walked.step(true, false, ptw.Walk{}, 0, false, 0)
	}
	if fill != l.fill.Q() {
		l.fill.Set(fill)
	}
}

// writtenSince reports whether vpn was written since two cycles before
// the lookup now answering was accepted (now - latency).
func (l *L2TLB) writtenSince(vpn, now uint64) bool {
	for k := range l.written.Len() {
		if l.written.At(k).Q() == vpn+1 && l.stamp.At(k).Q()+l.latency+2 >= now {
			return true
		}
	}
	return false
}

// resolvedFIFO is a two-entry queue of walk results (walk, PTE), each
// marked stale when its VPN is written while it waits.
type resolvedFIFO struct {
	walk  *rtl.Vec[uint64] // Walk.Pack
	entry *rtl.Vec[pte.PTE]
	stale *rtl.Vec[uint8]
	head  *rtl.Reg[uint8]
	count *rtl.Reg[uint8]
}

func newResolvedFIFO(b *rtl.Base, name string) resolvedFIFO {
	return resolvedFIFO{
		walk:  rtl.NewVec[uint64](b, name+"_walk", 2, ptw.WalkBits, 0),
		entry: rtl.NewVec[pte.PTE](b, name+"_pte", 2, 64, 0),
		stale: rtl.NewVec[uint8](b, name+"_stale", 2, 1, 0),
		head:  rtl.NewReg[uint8](b, name+"_head", 1, 0),
		count: rtl.NewReg[uint8](b, name+"_count", 2, 0),
	}
}

func (q *resolvedFIFO) full() bool { return q.count.Q() == 2 }

func (q *resolvedFIFO) front() (ptw.Walk, pte.PTE, bool) {
	w, e, _, ok := q.frontHit()
	return w, e, ok
}

func (q *resolvedFIFO) frontHit() (ptw.Walk, pte.PTE, bool, bool) {
	if q.count.Q() == 0 {
		return ptw.Walk{}, 0, false, false
	}
	h := int(q.head.Q())
	return unpackWalk(q.walk.At(h).Q()), q.entry.At(h).Q(), q.stale.At(h).Q() != 0, true
}

func (q *resolvedFIFO) headWalk() ptw.Walk { return unpackWalk(q.walk.At(int(q.head.Q())).Q()) }

// step pops the head and pushes (w, e), each when asked, and marks the
// entries that stay stale when written (the VPN uvpn written this cycle).
func (q *resolvedFIFO) step(pop, push bool, w ptw.Walk, e pte.PTE, written bool, uvpn uint64) {
	n, h := q.count.Q(), q.head.Q()
	if written {
		for k := uint8(0); k < n; k++ {
			i := int(h+k) & 1
			if unpackWalk(q.walk.At(i).Q()).VPN == uvpn {
				q.stale.At(i).Set(1)
			}
		}
	}
	if pop {
		n--
		h ^= 1
		q.head.Set(h)
	}
	if push {
		tail := int(h+n) & 1
		q.walk.At(tail).Set(w.Pack())
		q.entry.At(tail).Set(e)
		q.stale.At(tail).Set(0)
		n++
	}
	if n != q.count.Q() {
		q.count.Set(n)
	}
}
