package gpu

import (
	"fmt"

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

	held      []*rtl.Reg[ptw.Walk]
	heldValid *rtl.Reg[uint64] // bit i: held[i] is full
	next      *rtl.Reg[uint16] // the port favoured next
	outValid  *rtl.Reg[bool]
	out       *rtl.Reg[ptw.Walk]
}

// maxArbiterPorts bounds the arbiter to one 64-bit valid mask.
const maxArbiterPorts = 64

// NewWalkArbiter connects the SMs' walk request ports to out.
func NewWalkArbiter(s *rtl.Sim, path string, sms []*SM, out *rtl.Decoupled[ptw.Walk]) (*WalkArbiter, error) {
	if len(sms) < 1 || len(sms) > maxArbiterPorts {
		return nil, fmt.Errorf("gpu: walk arbiter serves 1..%d SMs, not %d", maxArbiterPorts, len(sms))
	}
	a := &WalkArbiter{Out: out}
	for _, m := range sms {
		a.In = append(a.In, m.WalkReq)
	}
	s.Add(a, path)
	b := &a.Base
	for i := range sms {
		a.held = append(a.held, rtl.NewRegOf(b, fmt.Sprintf("held%d", i), ptw.WalkBits, ptw.Walk{}))
		a.In[i].Consumer(b)
	}
	a.heldValid = rtl.NewReg[uint64](b, "held_valid", len(sms), 0)
	a.next = rtl.NewReg[uint16](b, "next", 7, 0)
	a.outValid = rtl.NewFlag(b, "out_valid", false)
	a.out = rtl.NewRegOf(b, "out", ptw.WalkBits, ptw.Walk{})
	out.Producer(b)
	return a, nil
}

// Drive shows which holding registers are free and the output register.
func (a *WalkArbiter) Drive() {
	hv := a.heldValid.Q()
	for i, in := range a.In {
		in.Ready.Set(hv&(1<<i) == 0)
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
		n := len(a.In)
		start := int(a.next.Q())
		for k := 0; k < n; k++ {
			i := (start + k) % n
			if hv&(1<<i) != 0 {
				a.out.Set(a.held[i].Q())
				hv &^= 1 << i
				a.next.Set(uint16((i + 1) % n))
				outFree = false
				break
			}
		}
		outValid = !outFree
		if outValid != a.outValid.Q() {
			a.outValid.Set(outValid)
		}
	}
	for i, in := range a.In {
		if in.Fire() {
			a.held[i].Set(in.Bits.Get())
			hv |= 1 << i
		}
	}
	if hv != orig {
		a.heldValid.Set(hv)
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
// migration policy. A local PTE is installed in the requesting SM's L1 TLB
// and the lookup is sent back to the SM on its replay port in the same
// cycle; a remote PTE goes to the policy on Remote. Both inputs feed one
// FIFO, so results leave in arrival order, one per cycle.
type Router struct {
	rtl.Base

	Walks    Resolved // from the GMMU
	Migrated Resolved // from the policy: translations it made local
	Remote   Resolved // to the policy: walks that found a remote PTE
	Fill     []tlb.FillPort
	Replay   []*rtl.Decoupled[ptw.Walk]

	depth  uint32
	walk   *rtl.Vec[ptw.Walk]
	entry  *rtl.Vec[pte.PTE]
	head   *rtl.Reg[uint32]
	count  *rtl.Reg[uint32]
	remote *rtl.Reg[uint64] // remote PTEs seen, for reports
}

// routerDepth is the result FIFO's size: two arrivals per cycle against one
// departure, so a handful of entries cover any burst the GMMU's one result
// per cycle and the policy's one completion per cycle can make.
const routerDepth = 16

// NewRouter connects the GMMU results, the SMs' L1 TLB fill ports and
// replay ports, and makes the policy-facing ports.
func NewRouter(s *rtl.Sim, path string, walks Resolved, sms []*SM, fills []tlb.FillPort) *Router {
	r := &Router{
		Walks:    walks,
		Migrated: NewResolvedPort(s, path+".migrated"),
		Remote:   NewResolvedPort(s, path+".remote"),
		Fill:     fills,
		depth:    routerDepth,
	}
	for _, m := range sms {
		r.Replay = append(r.Replay, m.Replay)
	}
	s.Add(r, path)
	b := &r.Base
	r.walk = rtl.NewVecOf(b, "walk", routerDepth, ptw.WalkBits, ptw.Walk{})
	r.entry = rtl.NewVec[pte.PTE](b, "pte", routerDepth, 64, 0)
	r.head = rtl.NewReg[uint32](b, "head", 5, 0)
	r.count = rtl.NewReg[uint32](b, "count", 5, 0)
	r.remote = rtl.NewReg[uint64](b, "remote", 64, 0)
	r.Walks.Consumer(b)
	r.Migrated.Consumer(b)
	r.Remote.Producer(b)
	for i := range sms {
		r.Fill[i].Producer(b)
		r.Replay[i].Producer(b)
	}
	return r
}

// Drive offers the head result to its SM or to the policy.
func (r *Router) Drive() {
	room := r.count.Q()+2 <= r.depth
	r.Walks.Ready.Set(room)
	r.Migrated.Ready.Set(room)
	valid := r.count.Q() > 0
	var w ptw.Walk
	var e pte.PTE
	if valid {
		h := int(r.head.Q())
		w, e = r.walk.At(h).Q(), r.entry.At(h).Q()
	}
	remote := valid && e.IsRemote()
	sm := int(w.Requester >> WarpBits)
	for i := range r.Fill {
		local := valid && !remote && i == sm
		r.Fill[i].Valid.Set(local)
		r.Replay[i].Valid.Set(local)
		if local {
			r.Fill[i].Bits.Set(w.VPN)
			r.Fill[i].PTE.Set(e)
			r.Replay[i].Bits.Set(w)
		}
	}
	r.Remote.Valid.Set(remote)
	r.Remote.Bits.Set(w)
	r.Remote.PTE.Set(e)
}

// Eval retires the head and appends arrivals.
func (r *Router) Eval() {
	head, count := r.head.Q(), r.count.Q()
	popped := r.Remote.Fire()
	if count > 0 && !popped {
		w := r.walk.At(int(head)).Q()
		sm := int(w.Requester >> WarpBits)
		popped = sm < len(r.Fill) && r.Fill[sm].Fire() && r.Replay[sm].Fire()
	}
	if popped {
		head = (head + 1) % r.depth
		count--
		r.head.Set(head)
		if r.Remote.Fire() {
			r.remote.Set(r.remote.Q() + 1)
		}
	}
	tail := (head + count) % r.depth
	tail, count = r.accept(r.Walks, tail, count)
	_, count = r.accept(r.Migrated, tail, count)
	if count != r.count.Q() {
		r.count.Set(count)
	}
	if count == 0 {
		r.Sleep()
	}
}

func (r *Router) accept(in Resolved, tail, count uint32) (uint32, uint32) {
	if !in.Fire() {
		return tail, count
	}
	r.walk.At(int(tail)).Set(in.Bits.Get())
	r.entry.At(int(tail)).Set(in.PTE.Get())
	return (tail + 1) % r.depth, count + 1
}

// RemoteSeen counts walks that found a remote PTE.
func (r *Router) RemoteSeen() uint64 { return r.remote.Q() }
