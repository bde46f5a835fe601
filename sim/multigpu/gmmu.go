package multigpu

import (
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
)

// ProtectionCheck is the GMMU's last stage in a multi-GPU GPU: a store
// whose walk ends at a read-only local PTE (a duplication replica) is a
// page protection fault (GRIT Section II-B3), so its result leaves with the
// remote aperture bit set and the valid bit clear, and the router hands it
// to the host driver instead of filling the TLB. Every other result passes
// unchanged. Two registers hold results, so one result a cycle passes with
// one cycle of latency.
type ProtectionCheck struct {
	rtl.Base
	In  gpu.Resolved // the GMMU's results
	Out gpu.Resolved // to the router

	walk  *rtl.Vec[uint64] // Walk.Pack
	entry *rtl.Vec[pte.PTE]
	head  *rtl.Reg[uint8]
	count *rtl.Reg[uint8]
}

// NewProtectionCheck builds the stage under path between in and out.
func NewProtectionCheck(s *rtl.Sim, path string, in, out gpu.Resolved) *ProtectionCheck {
	c := &ProtectionCheck{In: in, Out: out}
	s.Add(c, path)
	b := &c.Base
	c.walk = rtl.NewVec[uint64](b, "walk", 2, ptw.WalkBits, 0)
	c.entry = rtl.NewVec[pte.PTE](b, "pte", 2, 64, 0)
	c.head = rtl.NewReg[uint8](b, "head", 1, 0)
	c.count = rtl.NewReg[uint8](b, "count", 2, 0)
	in.Consumer(b)
	out.Producer(b)
	return c
}

// Drive offers the oldest result.
func (c *ProtectionCheck) Drive() {
	n, h := c.count.Q(), int(c.head.Q())
	c.In.Ready.Set(n < 2)
	c.Out.Valid.Set(n > 0)
	if n > 0 {
		c.Out.Bits.Set(unpackWalk(c.walk.At(h).Q()))
		c.Out.PTE.Set(c.entry.At(h).Q())
	}
}

// Eval retires the offered result and marks an arriving protection fault.
func (c *ProtectionCheck) Eval() {
	n, h := c.count.Q(), c.head.Q()
	if c.Out.Fire() {
		n--
		h ^= 1
		c.head.Set(h)
	}
	if c.In.Fire() {
		w, e := c.In.Bits.Get(), c.In.PTE.Get()
		if w.Write && e.Valid() && !e.IsRemote() && e.ReadOnly() {
			e = (e | 1<<1) &^ 1 // remote aperture, not valid
		}
		tail := int(h+n) & 1
		c.walk.At(tail).Set(w.Pack())
		c.entry.At(tail).Set(e)
		n++
	}
	if n != c.count.Q() {
		c.count.Set(n)
	}
	if n == 0 {
		c.Sleep()
	}
}

// Counters taps a GPU's L1 TLB responses (GRIT Section II-B2): every hit
// is an access, local or remote by its PTE; with a threshold, each remote
// hit counts against its 64 KB group, and the hit that reaches the
// threshold raises a promotion of its page to the host driver. The group
// then stays notified, counting nothing and raising nothing, until the
// driver has served the promotion and clears it on Clear, after which it
// counts from zero: NVIDIA's counters notify once at the threshold and
// the driver clears a notification's counter after servicing it
// (NVIDIA/open-gpu-kernel-modules kernel-open/nvidia-uvm/
// uvm_gpu_access_counters.c: service_virt_notifications and
// service_phys_notifications call access_counter_clear_targeted after
// each serviced notification), so a hot group is not notified again while
// its migration is pending. A group that reaches the threshold while an
// earlier promotion is still offered stays one short of it, and its next
// hit raises.
type Counters struct {
	rtl.Base
	Resp    []tlb.ResponsePort
	Promote *rtl.Decoupled[ptw.Walk]
	// Clear: the driver has served a promotion of this VPN's group (always
	// taken).
	Clear *rtl.Decoupled[ptw.Walk]

	baseVPN   uint64
	threshold uint32

	local, remote *rtl.Reg[uint64]
	groups        *rtl.Vec[uint32]
	notified      *rtl.Vec[uint8] // per group: 1 while its promotion is pending
	raise         *rtl.Reg[bool]
	raised        *rtl.Reg[uint64] // Walk.Pack of the promotion offered

	// Scratch of one cycle's remote hits: their groups' new counts, one
	// register write per group.
	hitGroup []int
	hitCount []uint32
}

// NewCounters taps resps; threshold 0 counts accesses only.
func NewCounters(s *rtl.Sim, path string, resps []tlb.ResponsePort, baseVPN uint64, pages int, threshold uint32) *Counters {
	c := &Counters{Resp: resps, baseVPN: baseVPN, threshold: threshold,
		hitGroup: make([]int, 0, len(resps)), hitCount: make([]uint32, 0, len(resps))}
	s.Add(c, path)
	b := &c.Base
	c.local = rtl.NewReg[uint64](b, "local", 64, 0)
	c.remote = rtl.NewReg[uint64](b, "remote", 64, 0)
	if threshold > 0 {
		c.groups = rtl.NewVec[uint32](b, "group", (pages+groupPages-1)/groupPages, 17, 0)
		c.raise = rtl.NewFlag(b, "promote_valid", false)
		c.raised = rtl.NewReg[uint64](b, "promote", ptw.WalkBits, 0)
		c.Promote = rtl.NewDecoupledOf[ptw.Walk](s, path+".promote", ptw.WalkBits)
		c.Promote.Producer(b)
		c.notified = rtl.NewVec[uint8](b, "notified", (pages+groupPages-1)/groupPages, 1, 0)
		c.Clear = rtl.NewDecoupledOf[ptw.Walk](s, path+".clear", ptw.WalkBits)
		c.Clear.Consumer(b)
	}
	for _, r := range resps {
		b.Listen(r.Valid, r.Ready, r.Bits, r.PTE)
	}
	return c
}

// groupPages is the access counters' granularity: 64 KB (GRIT II-B2).
const groupPages = 16

// Drive offers the raised promotion and takes every clear.
func (c *Counters) Drive() {
	if c.Promote != nil {
		c.Promote.Valid.Set(c.raise.Q())
		c.Promote.Bits.Set(unpackWalk(c.raised.Q()))
		c.Clear.Ready.Set(true)
	}
}

// Eval counts this cycle's hits.
func (c *Counters) Eval() {
	local, remote := uint64(0), uint64(0)
	seen := false
	raise := c.threshold > 0 && c.raise.Q() && !c.Promote.Fire()
	for _, r := range c.Resp {
		if !r.Valid.Get() {
			continue
		}
		res := r.Bits.Get()
		if !r.Ready.Get() {
			continue // Ready rising wakes the tap
		}
		seen = true
		if res.Status != tlb.Hit {
			continue
		}
		if !r.PTE.Get().IsRemote() {
			local++
			continue
		}
		remote++
		if c.threshold == 0 {
			continue
		}
		gi := int(res.VPN-c.baseVPN) / groupPages
		if c.notified.At(gi).Q() != 0 {
			continue // its promotion is pending: not counted
		}
		k := 0
		for k < len(c.hitGroup) && c.hitGroup[k] != gi {
			k++
		}
		if k == len(c.hitGroup) {
			c.hitGroup = append(c.hitGroup, gi)
			c.hitCount = append(c.hitCount, c.groups.At(gi).Q())
		}
		if c.hitCount[k] == c.threshold {
			continue // raised by an earlier hit this cycle
		}
		n := c.hitCount[k] + 1
		if n == c.threshold && raise {
			n-- // another promotion is offered: the next hit raises
		}
		if n == c.threshold {
			raise = true
			c.raised.Set(ptw.Walk{VPN: res.VPN, Requester: res.Requester, Write: res.Write}.Pack())
			c.notified.At(gi).Set(1)
		}
		c.hitCount[k] = n
	}
	clear := -1
	if c.threshold > 0 && c.Clear.Fire() {
		clear = int(c.Clear.Bits.Get().VPN-c.baseVPN) / groupPages
		c.notified.At(clear).Set(0)
		c.groups.At(clear).Set(0)
	}
	for k, gi := range c.hitGroup {
		if g := c.groups.At(gi); gi != clear && c.hitCount[k] != g.Q() {
			g.Set(c.hitCount[k])
		}
	}
	c.hitGroup, c.hitCount = c.hitGroup[:0], c.hitCount[:0]
	if c.threshold > 0 && raise != c.raise.Q() {
		c.raise.Set(raise)
	}
	if local > 0 {
		c.local.Set(c.local.Q() + local)
	}
	if remote > 0 {
		c.remote.Set(c.remote.Q() + remote)
	}
	if seen {
		// A response taken this cycle may be followed by one with the
		// same bits, which wakes nothing: look again next cycle.
		c.Now()
	}
}

// Accesses are the hits counted so far, local and remote.
func (c *Counters) Accesses() (local, remote uint64) { return c.local.Q(), c.remote.Q() }
