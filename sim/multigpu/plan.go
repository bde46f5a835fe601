package multigpu

import (
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/sim/gpu"
)

// opKind is one step of the host driver's service of a fault.
type opKind uint8

const (
	// opWait: the batch's handling latency (multigpu.fault_latency_us) if
	// op.latency, then op.stall cycles.
	opWait opKind = iota
	// opWrite: write op.pte[g] into the local page table of every GPU g in
	// op.mask, all in one cycle (each GMMU has its own update port); the
	// GPU's data caches drop the page's lines when the PTE leaves local
	// memory.
	opWrite
	// opShoot: invalidate the page's entry in every L1 TLB of the GPUs in
	// op.mask, and wait for every acknowledgement.
	opShoot
	// opCopy: move the 4 KB page from op.src to op.dst (a GPU, or Host)
	// over NVLink or PCIe, and wait for its last byte.
	opCopy
	// opAnswer: hand the faulting walk its new PTE (the router fills the
	// SM's L1 TLB and replays the lookup).
	opAnswer
)

// op is one step; a plan is a short list of them, run in order.
type op struct {
	kind     opKind
	mask     uint16
	vpn      uint64
	pte      [MaxGPUs]pte.PTE
	src, dst int8
	// stall lengthens an opWait by the cycles the fault waited for the
	// Decider (Staller).
	stall uint64
	// latency: an opWait that pays the fault batch's handling latency.
	latency bool
	// async: an opCopy that books its link and ends at once; the next
	// copy that waits (the plan's last) waits for it too, so that the
	// pages of one prefetch batch cross their links back to back.
	async bool
}

// plan is the driver's list of steps for one fault, built from the
// centralized table when the fault is taken; the table already holds the
// outcome, and the steps make the GPUs' tables and data match it. Its
// slices are reused from fault to fault.
type plan struct {
	ops  []op
	busy []int // pages whose local tables the steps change: the page, its prefetched neighbours, victims
	// Counters of the plan's effect, added to the driver's statistics.
	migrations, replicas, collapsed, invalidations, evictions, prefetched uint64
}

func (pl *plan) add(o op) { pl.ops = append(pl.ops, o) }

// notPresent is the PTE of a page a GPU neither holds nor maps: the remote
// aperture bit with the valid bit clear, so that a walk reaching it goes
// to the host driver through the router's remote port.
func notPresent(s pte.Scheme) pte.PTE { return pte.PTE(1 << 1).WithScheme(s) }

// remoteFrame is the frame field of a remote mapping: the owner GPU above
// its frame number, where the SMs read it (gpu.RemoteOwnerShift).
func remoteFrame(owner int, frame int32) uint64 {
	return uint64(owner)<<gpu.RemoteOwnerShift | uint64(frame)
}

// planner builds plans on the centralized table.
type planner struct {
	t       *Table
	gpus    int
	baseVPN uint64
	policy  Policy
	latency bool // begin the plan with the batch's handling latency (the driver sets it per plan)
	// busy marks the pages of the plan under way (plan.busy), which
	// eviction passes over and whose local tables may lag the table.
	busy []bool
	// blocks[b]: 64 KB block b (from baseVPN) belongs to an allocation,
	// a leaf the tree prefetcher may fill.
	blocks []bool
	batch  []int // the prefetch batch being planned
}

// begin empties plan pl for a fault on page i: the previous plan's pages
// are no longer busy.
func (pn *planner) begin(pl *plan, i int) {
	for _, j := range pl.busy {
		pn.busy[j] = false
	}
	ops, busy := pl.ops[:0], pl.busy[:0]
	*pl = plan{ops: ops, busy: busy}
	pn.markBusy(pl, i)
}

func (pn *planner) markBusy(pl *plan, i int) {
	if !pn.busy[i] {
		pn.busy[i] = true
		pl.busy = append(pl.busy, i)
	}
}

// localPTE is GPU g's PTE of page i as the table holds it.
func (pn *planner) localPTE(i, g int) pte.PTE {
	p := pn.t.Page(i)
	switch {
	case p.Has(g):
		e := pte.Local(uint64(pn.t.Frame(i, g))).WithScheme(p.Scheme)
		if !p.Writable {
			e = e.AsReadOnly()
		}
		return e
	case p.MapsRemote(g):
		return pte.Remote(remoteFrame(int(p.Owner), pn.t.Frame(i, int(p.Owner)))).WithScheme(p.Scheme)
	}
	return notPresent(p.Scheme)
}

// Satisfied reports whether GPU g's access (a store if write) to page i
// needs nothing from the driver: g holds a copy it may use, or maps the
// page remotely.
func (pn *planner) satisfied(i, g int, write bool) bool {
	p := pn.t.Page(i)
	return p.MapsRemote(g) || (p.Has(g) && (p.Writable || !write))
}

// build plans fault f under scheme s and applies the outcome to the table.
func (pn *planner) build(pl *plan, f Fault, s pte.Scheme) {
	pn.begin(pl, f.Page)
	t, g, i := pn.t, f.GPU, f.Page
	p := t.Page(i)
	cold := p.Holders == 0
	if pn.latency && !(pn.policy.Ideal && !cold) {
		pl.add(op{kind: opWait, latency: true})
	}
	switch {
	case pn.policy.Ideal:
		pn.own(pl, f, s, !cold, false)
	case pn.policy.Prefetch && f.Kind == LocalFault && s == pte.SchemeOnTouch:
		pn.ownPrefetching(pl, f, s)
	case f.Kind == Promotion:
		pn.ownBatch(pl, f, s, pn.promotionBatch(f.GPU, f.Page))
	case s == pte.SchemeOnTouch:
		pn.own(pl, f, s, false, true)
	case s == pte.SchemeDuplication && !f.Write:
		pn.replicate(pl, f, s)
	case s == pte.SchemeDuplication:
		pn.own(pl, f, s, false, true)
	case cold:
		// Access-counter and first-touch: a page in host memory moves to
		// its first requester, every later one maps it remotely.
		pn.own(pl, f, s, false, true)
	case p.Has(g):
		// A replica left by another scheme: the write collapses the
		// others, as under duplication.
		pn.own(pl, f, s, false, true)
	default:
		pn.mapRemote(pl, f, s)
	}
}

// evictFor makes room on GPU g for a page of the plan: its least recently
// placed page outside the plan leaves g. The last copy goes back to host memory over PCIe;
// every GPU that maps it remotely (or maps g's copy) is invalidated.
func (pn *planner) evictFor(pl *plan, g int) {
	t := pn.t
	if !t.Full(g) || pn.policy.Ideal {
		return
	}
	v := t.Victim(g, pn.busy)
	p := t.Page(v)
	pn.markBusy(pl, v)
	mask := uint16(1) << g
	last := p.Copies() == 1
	if last || int(p.Owner) == g {
		mask |= p.Mapped
		p.Mapped = 0
	}
	var o op
	o.kind, o.mask, o.vpn = opWrite, mask, pn.baseVPN+uint64(v)
	for m := mask; m != 0; m &= m - 1 {
		o.pte[bits.TrailingZeros16(m)] = notPresent(p.Scheme)
	}
	pl.add(o)
	pl.add(op{kind: opShoot, mask: mask, vpn: o.vpn})
	pl.invalidations += uint64(bits.OnesCount16(mask))
	if last {
		pl.add(op{kind: opCopy, src: int8(g), dst: Host, vpn: o.vpn})
	}
	pl.evictions++
	t.drop(v, g)
	p.Holders &^= 1 << g
	switch {
	case p.Holders == 0:
		p.Owner, p.Writable = -1, true
	case int(p.Owner) == g:
		p.Owner = int8(bits.TrailingZeros16(p.Holders))
	}
	t.setPage(v, p)
}

// source is the location page i is copied from: its owner, else its
// lowest-numbered holder, else host memory.
func source(p Page) int8 {
	switch {
	case p.Owner >= 0 && p.Has(int(p.Owner)):
		return p.Owner
	case p.Holders != 0:
		return int8(bits.TrailingZeros16(p.Holders))
	}
	return Host
}

// own makes GPU g the page's only writable holder (on-touch migration, a
// promotion, a write collapse), or under the ideal policy (shared) one
// more writable holder without touching the others and without a copy.
func (pn *planner) own(pl *plan, f Fault, s pte.Scheme, shared, invalidate bool) {
	t, g, i := pn.t, f.GPU, f.Page
	p := t.Page(i)
	vpn := pn.baseVPN + uint64(i)
	mask := uint16(0)
	if invalidate {
		// Every other GPU with a copy or a mapping, and the requester's
		// own remote mapping (a promotion): its TLBs hold remote entries.
		mask = (p.Holders|p.Mapped)&^(1<<g) | p.Mapped&(1<<g)
	}
	if mask != 0 {
		var o op
		o.kind, o.mask, o.vpn = opWrite, mask, vpn
		for m := mask; m != 0; m &= m - 1 {
			o.pte[bits.TrailingZeros16(m)] = notPresent(s)
		}
		pl.add(o)
		pl.add(op{kind: opShoot, mask: mask, vpn: vpn})
		pl.invalidations += uint64(bits.OnesCount16(mask))
	}
	src := source(p)
	had := p.Has(g)
	if !had {
		pn.evictFor(pl, g)
		if !shared {
			pl.add(op{kind: opCopy, src: src, dst: int8(g), vpn: vpn})
		}
		pl.migrations++
	}
	if p.Copies() > 1 && mask&p.Holders != 0 {
		pl.collapsed++
	}
	// The table's outcome.
	p = t.Page(i) // the eviction may not touch page i, but reread it
	for m := mask & p.Holders; m != 0; m &= m - 1 {
		t.drop(i, bits.TrailingZeros16(m))
	}
	p.Holders &^= mask &^ (1 << g)
	p.Mapped &^= mask
	p.Mapped &^= 1 << g
	if !shared {
		p.Version++
		p.Owner = int8(g)
	} else if p.Owner < 0 {
		p.Owner = int8(g)
	}
	p.Holders |= 1 << g
	p.Writable, p.Scheme = true, s
	t.setPage(i, p)
	if had {
		t.touch(i, g)
		t.version[i*t.gpus+g] = p.Version
	} else {
		t.place(i, g, p.Version)
	}
	pn.install(pl, f, vpn)
}

// replicate gives GPU g a read-only replica (a duplication read fault):
// a writable holder is downgraded to read-only first.
func (pn *planner) replicate(pl *plan, f Fault, s pte.Scheme) {
	t, g, i := pn.t, f.GPU, f.Page
	p := t.Page(i)
	vpn := pn.baseVPN + uint64(i)
	if p.Has(g) {
		// A read fault on a page g holds only after a scheme change left
		// it mapped otherwise: reinstall.
		pn.install(pl, f, vpn)
		return
	}
	// Downgrade the writable copy and drop remote mappings (left by
	// another scheme) before the copies diverge in permission.
	down := uint16(0)
	if p.Writable {
		down = p.Holders
	}
	if mask := down | p.Mapped; mask != 0 {
		var o op
		o.kind, o.mask, o.vpn = opWrite, mask, vpn
		for m := mask; m != 0; m &= m - 1 {
			h := bits.TrailingZeros16(m)
			if p.Has(h) {
				o.pte[h] = pte.Local(uint64(t.Frame(i, h))).WithScheme(s).AsReadOnly()
			} else {
				o.pte[h] = notPresent(s)
			}
		}
		pl.add(o)
		pl.add(op{kind: opShoot, mask: mask, vpn: vpn})
		pl.invalidations += uint64(bits.OnesCount16(p.Mapped))
	}
	src := source(p)
	pn.evictFor(pl, g)
	pl.add(op{kind: opCopy, src: src, dst: int8(g), vpn: vpn})
	p = t.Page(i)
	if p.Holders != 0 {
		pl.replicas++
	} else {
		pl.migrations++
	}
	p.Mapped = 0
	if p.Owner < 0 {
		p.Owner = int8(g)
	}
	p.Holders |= 1 << g
	p.Writable, p.Scheme = false, s
	t.setPage(i, p)
	t.place(i, g, p.Version)
	pn.install(pl, f, vpn)
}

// mapRemote maps page i remotely on GPU g at its owner (the
// access-counter scheme's and first-touch's peer access); replicas left by
// duplication collapse to the owner first.
func (pn *planner) mapRemote(pl *plan, f Fault, s pte.Scheme) {
	t, g, i := pn.t, f.GPU, f.Page
	p := t.Page(i)
	vpn := pn.baseVPN + uint64(i)
	owner := int(source(p))
	// The owner's PTE is rewritten when the others collapse onto it, and
	// when its copy is the last read-only replica (evictions took the
	// others): the page becomes writable.
	rewrite := p.Holders&(1<<owner) != 0 && !p.Writable
	if others := p.Holders &^ (1 << owner); others != 0 || rewrite {
		var o op
		o.kind, o.mask, o.vpn = opWrite, others|1<<owner, vpn
		for m := others; m != 0; m &= m - 1 {
			o.pte[bits.TrailingZeros16(m)] = notPresent(s)
		}
		o.pte[owner] = pte.Local(uint64(t.Frame(i, owner))).WithScheme(s)
		pl.add(o)
	}
	if others := p.Holders &^ (1 << owner); others != 0 {
		pl.add(op{kind: opShoot, mask: others, vpn: vpn})
		pl.invalidations += uint64(bits.OnesCount16(others))
		pl.collapsed++
		for m := others; m != 0; m &= m - 1 {
			t.drop(i, bits.TrailingZeros16(m))
		}
		p.Holders = 1 << owner
		p.Version++
		t.version[i*t.gpus+owner] = p.Version
	}
	p.Owner, p.Writable, p.Scheme = int8(owner), true, s
	p.Mapped |= 1 << g
	t.setPage(i, p)
	pn.install(pl, f, vpn)
}

// install writes GPU g's new PTE of the page and answers the walk (a
// promotion has no walk to answer).
func (pn *planner) install(pl *plan, f Fault, vpn uint64) {
	var o op
	o.kind, o.mask, o.vpn = opWrite, 1<<f.GPU, vpn
	o.pte[f.GPU] = pn.localPTE(f.Page, f.GPU)
	pl.add(o)
	if f.Kind != Promotion {
		a := op{kind: opAnswer, mask: 1 << f.GPU, vpn: vpn}
		a.pte[f.GPU] = o.pte[f.GPU]
		pl.add(a)
	}
}

// promotionBatch fills pn.batch with the pages that a promotion of page i
// to GPU g moves with it, ascending, i excluded: every other page of its
// 64 KB group (the access counters' granularity, groupPages from baseVPN
// as Counters counts) whose only copy is at page i's owner and whose
// scheme is access-counter migration. The counter counts the group, not
// the page (GRIT II-B2 step 3), and NVIDIA's driver services a
// notification of a 64 KB counter by migrating the whole 64 KB region
// resident where the notified page is (NVIDIA/open-gpu-kernel-modules
// kernel-open/nvidia-uvm/uvm_gpu_access_counters.c,
// service_phys_notification: at 64 KB granularity the sub-granularity
// mask is the whole region; service_phys_notification_translation takes
// the reverse mappings of the region at the resident GPU, and
// service_phys_single_va_block migrates all of them). Like a prefetch
// batch, it takes at most half of the GPU's frames, the faulting page
// included.
func (pn *planner) promotionBatch(g, i int) []int {
	t := pn.t
	pn.batch = pn.batch[:0]
	owner := t.Page(i).Owner
	if owner < 0 || int(owner) == g {
		return pn.batch
	}
	first := i - i%groupPages
	for j := first; j < min(first+groupPages, t.pages); j++ {
		if p := t.Page(j); j != i && p.Holders == 1<<owner && p.Scheme == pte.SchemeAccessCounter {
			pn.batch = append(pn.batch, j)
		}
	}
	pn.batch = pn.batch[:max(min(len(pn.batch), t.frames/2-1), 0)]
	return pn.batch
}
