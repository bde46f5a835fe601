package gpu

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
)

// WalkArbiter merges the SMs' L1 TLB misses into the GMMU's single walk
// request port. Each SM port has a one-entry holding register (its Ready is
// high while the register is empty), and a round-robin pointer moves one
// held request per cycle into the output register that drives the GMMU.
type WalkArbiter struct {
	rtl.Base

	In  []*rtl.Decoupled[ptw.Walk]
	Out *rtl.Decoupled[ptw.Walk]

	inValid *rtl.BitBus // the In channels' Valid wires

	held      []*rtl.Reg[ptw.Walk]
	heldValid *rtl.Reg[uint64] // bit i: held[i] is full
	// heldValid before its last change: Drive updates only the Ready wires
	// of the ports whose bit changed then, the others hold their value.
	shown    *rtl.Reg[uint64]
	next     *rtl.Reg[uint16] // the port favoured next
	outValid *rtl.Reg[bool]
	out      *rtl.Reg[ptw.Walk]
}

// maxArbiterPorts bounds the arbiter to one 64-bit valid mask.
const maxArbiterPorts = 64

// WalkReqs lists the SMs' walk request ports.
func WalkReqs(sms []*SM) []*rtl.Decoupled[ptw.Walk] {
	var ins []*rtl.Decoupled[ptw.Walk]
	for _, m := range sms {
		ins = append(ins, m.WalkReq)
	}
	return ins
}

// NewWalkArbiter connects walk request ports (the SMs', WalkReqs) to out.
func NewWalkArbiter(s *rtl.Sim, path string, ins []*rtl.Decoupled[ptw.Walk], out *rtl.Decoupled[ptw.Walk]) (*WalkArbiter, error) {
	if len(ins) < 1 || len(ins) > maxArbiterPorts {
		return nil, fmt.Errorf("gpu: walk arbiter serves 1..%d ports, not %d", maxArbiterPorts, len(ins))
	}
	a := &WalkArbiter{In: ins, Out: out}
	s.Add(a, path)
	b := &a.Base
	for i := range ins {
		a.held = append(a.held, rtl.NewRegOf(b, fmt.Sprintf("held%d", i), ptw.WalkBits, ptw.Walk{}))
		a.In[i].Consumer(b)
	}
	a.inValid = rtl.ValidBus(s, path+".in_valid", ins)
	a.heldValid = rtl.NewReg[uint64](b, "held_valid", len(ins), 0)
	a.shown = rtl.NewReg(b, "shown", len(ins), ^uint64(0)>>(64-len(ins)))
	a.next = rtl.NewReg[uint16](b, "next", 7, 0)
	a.outValid = rtl.NewFlag(b, "out_valid", false)
	a.out = rtl.NewRegOf(b, "out", ptw.WalkBits, ptw.Walk{})
	out.Producer(b)
	return a, nil
}

// Drive shows which holding registers are free and the output register.
func (a *WalkArbiter) Drive() {
	hv := a.heldValid.Q()
	for set := hv ^ a.shown.Q(); set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		a.In[i].Ready.Set(hv&(1<<i) == 0)
	}
	a.Out.Valid.Set(a.outValid.Q())
	a.Out.Bits.Set(a.out.Q())
}

// Eval latches new requests and moves one held request to the output.
func (a *WalkArbiter) Eval() {
	hv := a.heldValid.Q()
	orig := hv
	outValid := a.outValid.Q()
	outFree := !outValid || a.Out.Fire()
	if outFree {
		// Round robin: the lowest held port at or after next, else the
		// lowest held one.
		if hv != 0 {
			i := bits.TrailingZeros64(hv)
			if late := hv >> a.next.Q() << a.next.Q(); late != 0 {
				i = bits.TrailingZeros64(late)
			}
			a.out.Set(a.held[i].Q())
			hv &^= 1 << i
			a.next.Set(uint16((i + 1) % len(a.In)))
			outFree = false
		}
		outValid = !outFree
		if outValid != a.outValid.Q() {
			a.outValid.Set(outValid)
		}
	}
	for set := a.inValid.Get() &^ orig; set != 0; set &= set - 1 { // only ports whose holding register was empty show Ready
		i := bits.TrailingZeros64(set)
		if in := a.In[i]; in.Fire() {
			a.held[i].Set(in.Bits.Get())
			hv |= 1 << i
		}
	}
	if hv != orig {
		a.heldValid.Set(hv)
		a.shown.Set(orig)
	}
	if hv == 0 && !outValid {
		a.Sleep()
	}
}

// Resolved is a translation the GMMU side hands back to an SM: the walk
// request and its PTE.
type Resolved = ptw.PTEPort[ptw.Walk]

// NewResolvedPort makes a walk-result channel (header plus PTE wire).
func NewResolvedPort(s *rtl.Sim, path string) Resolved {
	return Resolved{
		Decoupled: rtl.NewDecoupledOf[ptw.Walk](s, path, ptw.WalkBits),
		PTE:       rtl.NewWire[pte.PTE](s, path+".pte", 64),
	}
}

// Router takes walk results from the GMMU and resolved migrations from the
// migration policy. A local PTE goes to the fill queue: it is installed in
// the requesting SM's L1 TLB and the lookup is sent back to the SM on its
// replay port in the same cycle, one per cycle. A remote PTE from the GMMU
// goes to the remote queue, whose head the policy takes on Remote. The two
// queues are separate so that a policy that stops taking remote walks
// never blocks the translations it has resolved.
//
// With Watch, the router snoops the GMMU's page-table update port: a local
// PTE in the fill queue (or arriving) whose VPN is written is stale, since
// the write may be the unmapping of an evicted page whose shootdown has
// already passed the TLBs. A stale entry is not filled; its lookup is
// replayed alone, misses, and walks the page table again.
type Router struct {
	rtl.Base
	RouterPorts

	updates ptw.PTEPort[uint64] // snooped page-table writes (Watch)

	local  routerQueue
	remote resolvedRing
	// The SM offered the fill queue's head before the queue last changed,
	// or len(Fill): the one SM besides the current head's whose fill and
	// replay Valid Drive may have to lower.
	shown      *rtl.Reg[uint8]
	stale      *rtl.Reg[uint32] // bit i: fill queue slot i holds a replaced PTE
	migStale   *rtl.Reg[bool]   // the offered policy completion's PTE was replaced
	remoteSeen *rtl.Reg[uint64] // remote PTEs seen, for reports
}

// routerQueue is the fill queue of walk results. It takes up to two
// arrivals a cycle (a GMMU result and a policy completion) and its stale
// mask marks slots by position, so it keeps its own pointers where
// rtl.Ring pushes one entry a cycle.
type routerQueue struct {
	walk  *rtl.Vec[ptw.Walk]
	entry *rtl.Vec[pte.PTE]
	head  *rtl.Reg[uint32]
	count *rtl.Reg[uint32]
}

// routerDepth is each queue's size: a handful of entries cover the bursts
// one GMMU result and one policy completion per cycle can make.
const routerDepth = 16

func newRouterQueue(b *rtl.Base, name string) routerQueue {
	return routerQueue{
		walk:  rtl.NewVecOf(b, name+"_walk", routerDepth, ptw.WalkBits, ptw.Walk{}),
		entry: rtl.NewVec[pte.PTE](b, name+"_pte", routerDepth, 64, 0),
		head:  rtl.NewReg[uint32](b, name+"_head", 5, 0),
		count: rtl.NewReg[uint32](b, name+"_count", 5, 0),
	}
}

func (q *routerQueue) front() (ptw.Walk, pte.PTE, bool) {
	if q.count.Q() == 0 {
		return ptw.Walk{}, 0, false
	}
	h := int(q.head.Q())
	return q.walk.At(h).Q(), q.entry.At(h).Q(), true
}

// step retires the head if popped and appends the given arrivals.
func (q *routerQueue) step(popped bool, arrivals ...Resolved) bool {
	head, count := q.head.Q(), q.count.Q()
	if popped {
		head = (head + 1) % routerDepth
		count--
		q.head.Set(head)
	}
	for _, in := range arrivals {
		tail := (head + count) % routerDepth
		q.walk.At(int(tail)).Set(in.Bits.Get())
		q.entry.At(int(tail)).Set(in.PTE.Get())
		count++
	}
	if count != q.count.Q() {
		q.count.Set(count)
	}
	return count > 0
}

// resolvedRing is the remote queue: a FIFO of walk results, each walk and
// its PTE pushed and popped together, at most one of each a cycle.
type resolvedRing struct {
	walk *rtl.Ring[ptw.Walk]
	pte  *rtl.Ring[pte.PTE]
}

func newResolvedRing(b *rtl.Base, name string) resolvedRing {
	return resolvedRing{
		walk: rtl.NewRingOf[ptw.Walk](b, name+"_walk", routerDepth, ptw.WalkBits, false),
		pte:  rtl.NewRing[pte.PTE](b, name+"_pte", routerDepth, 64, false),
	}
}

func (q resolvedRing) front() (ptw.Walk, pte.PTE, bool) {
	if q.walk.Len() == 0 {
		return ptw.Walk{}, 0, false
	}
	return q.walk.Head(), q.pte.Head(), true
}

// step retires the head if popped and appends the arrival, if any; it
// reports whether the queue holds an entry afterwards.
func (q resolvedRing) step(popped bool, arrivals ...Resolved) bool {
	var w ptw.Walk
	var e pte.PTE
	push := len(arrivals) > 0
	if push {
		w, e = arrivals[0].Bits.Get(), arrivals[0].PTE.Get()
	}
	n := q.walk.Len()
	q.walk.Update(push, w, 0, popped)
	q.pte.Update(push, e, 0, popped)
	if popped {
		n--
	}
	return n > 0 || push
}

// RouterPorts are the router's wires.
type RouterPorts struct {
	Walks    Resolved // from the GMMU
	Migrated Resolved // from the policy: translations it made local
	Remote   Resolved // to the policy: walks that found a remote PTE
	Fill     []tlb.FillPort
	Replay   []*rtl.Decoupled[ptw.Walk]
}

// NewRouterPorts makes the policy-facing ports under path; the others are
// the GMMU's results and, per SM, its L1 TLB fill port and its replay port.
func NewRouterPorts(s *rtl.Sim, path string, walks Resolved, fills []tlb.FillPort, replays []*rtl.Decoupled[ptw.Walk]) RouterPorts {
	return RouterPorts{
		Walks:    walks,
		Migrated: NewResolvedPort(s, path+".migrated"),
		Remote:   NewResolvedPort(s, path+".remote"),
		Fill:     fills,
		Replay:   replays,
	}
}

// NewRouter builds the router under path on ports p (NewRouterPorts).
func NewRouter(s *rtl.Sim, path string, p RouterPorts) *Router {
	r := &Router{RouterPorts: p}
	s.Add(r, path)
	b := &r.Base
	r.local = newRouterQueue(b, "local")
	r.remote = newResolvedRing(b, "remote")
	r.shown = rtl.NewReg(b, "shown", 7, uint8(len(p.Fill)))
	r.stale = rtl.NewReg[uint32](b, "local_stale", routerDepth, 0)
	r.migStale = rtl.NewFlag(b, "migrated_stale", false)
	r.remoteSeen = rtl.NewReg[uint64](b, "remote_seen", 64, 0)
	r.Walks.Consumer(b)
	r.Migrated.Consumer(b)
	r.Remote.Producer(b)
	for i := range p.Fill {
		r.Fill[i].Producer(b)
		r.Replay[i].Producer(b)
	}
	return r
}

// Watch makes the router snoop the page-table update port p (the GMMU's
// Update, driven by the policy) to drop fills of replaced PTEs.
func (r *Router) Watch(p ptw.PTEPort[uint64]) {
	r.updates = p
	r.Base.Listen(p.Valid, p.Ready, p.Bits)
}

// replaced returns the VPN the update port writes this cycle, if any.
func (r *Router) replaced() (uint64, bool) {
	if r.updates.Decoupled == nil || !r.updates.Fire() {
		return 0, false
	}
	return r.updates.Bits.Get(), true
}

// Drive offers the fill queue's head to its SM and the remote queue's
// head to the policy. A GMMU result is taken while both queues have room
// (its kind is known only once taken), a policy completion while the fill
// queue has room for it and a GMMU result in the same cycle.
func (r *Router) Drive() {
	localRoom := r.local.count.Q()+2 <= routerDepth
	r.Walks.Ready.Set(localRoom && !r.remote.walk.Full())
	r.Migrated.Ready.Set(localRoom)
	w, e, ok := r.local.front()
	sm := r.target(w, ok)
	if p := int(r.shown.Q()); p < len(r.Fill) && p != sm {
		r.Fill[p].Valid.Set(false)
		r.Replay[p].Valid.Set(false)
	}
	if sm < len(r.Fill) {
		stale := r.stale.Q()>>r.local.head.Q()&1 != 0
		r.Fill[sm].Valid.Set(!stale)
		r.Replay[sm].Valid.Set(true)
		r.Fill[sm].Bits.Set(w.VPN)
		r.Fill[sm].PTE.Set(e)
		r.Replay[sm].Bits.Set(w)
	}
	w, e, ok = r.remote.front()
	r.Remote.Valid.Set(ok)
	r.Remote.Bits.Set(w)
	r.Remote.PTE.Set(e)
}

// target is the SM the fill queue's head (w, if ok) is offered to, or
// len(Fill) for none.
func (r *Router) target(w ptw.Walk, ok bool) int {
	if sm := int(w.Requester >> WarpBits); ok && sm < len(r.Fill) {
		return sm
	}
	return len(r.Fill)
}

// Eval retires the heads taken and sorts the arrivals.
func (r *Router) Eval() {
	filled := false
	w, _, ok := r.local.front()
	sm := r.target(w, ok)
	if sm < len(r.Fill) {
		stale := r.stale.Q()>>r.local.head.Q()&1 != 0
		filled = (r.Fill[sm].Fire() || stale) && r.Replay[sm].Fire()
	}
	r.markStale(filled)
	var toLocal, toRemote [2]Resolved
	nl, nr := 0, 0
	if r.Walks.Fire() {
		if r.Walks.PTE.Get().IsRemote() {
			toRemote[nr] = r.Walks
			nr++
			r.remoteSeen.Set(r.remoteSeen.Q() + 1)
		} else {
			toLocal[nl] = r.Walks
			nl++
		}
	}
	if r.Migrated.Fire() {
		toLocal[nl] = r.Migrated
		nl++
	}
	if (filled || nl > 0) && uint8(sm) != r.shown.Q() {
		r.shown.Set(uint8(sm))
	}
	busy := r.local.step(filled, toLocal[:nl]...)
	busy = r.remote.step(r.Remote.Fire(), toRemote[:nr]...) || busy
	if !busy {
		r.Sleep()
	}
}

// markStale records, before the queue steps, which fill queue entries
// hold a PTE the update port writes this cycle: those already queued,
// the arrivals, and a policy completion that was offered while an update
// replaced its PTE.
func (r *Router) markStale(popped bool) {
	vpn, upd := r.replaced()
	stale := r.stale.Q()
	head, count := r.local.head.Q(), r.local.count.Q()
	if popped {
		stale &^= 1 << head
		head = (head + 1) % routerDepth
		count--
	}
	if upd {
		for k := uint32(0); k < count; k++ {
			if i := (head + k) % routerDepth; r.local.walk.At(int(i)).Q().VPN == vpn {
				stale |= 1 << i
			}
		}
	}
	tail := (head + count) % routerDepth
	if r.Walks.Fire() && !r.Walks.PTE.Get().IsRemote() {
		stale = setBit(stale, tail, upd && r.Walks.Bits.Get().VPN == vpn)
		tail = (tail + 1) % routerDepth
	}
	hit := upd && r.Migrated.Valid.Get() && r.Migrated.Bits.Get().VPN == vpn
	if r.Migrated.Fire() {
		stale = setBit(stale, tail, hit || r.migStale.Q())
		hit = false
	} else {
		hit = hit || (r.Migrated.Valid.Get() && r.migStale.Q())
	}
	if hit != r.migStale.Q() {
		r.migStale.Set(hit)
	}
	if stale != r.stale.Q() {
		r.stale.Set(stale)
	}
}

func setBit(m, i uint32, v bool) uint32 {
	if v {
		return m | 1<<i
	}
	return m &^ (1 << i)
}

// RemoteSeen counts walks that found a remote PTE.
func (r *Router) RemoteSeen() uint64 { return r.remoteSeen.Q() }
