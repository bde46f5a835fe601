package multigpu

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
)

// DriverPorts are the host driver's wires, all of them other blocks'
// ports, per GPU in GPU order.
type DriverPorts struct {
	Remote   []ptw.PTEPort[ptw.Walk]            // in: walks the router passes on (remote, not-present or protection)
	Migrated []ptw.PTEPort[ptw.Walk]            // out: the walks' answers
	Update   []ptw.PTEPort[uint64]              // out: the GMMUs' page-table writes
	Promote  []*rtl.Decoupled[ptw.Walk]         // in: access-counter promotions; nil entries without counters
	Clear    []*rtl.Decoupled[ptw.Walk]         // out: a served promotion's group counter is cleared; nil entries without counters
	Inval    [][]*rtl.Decoupled[tlb.Invalidate] // out: per GPU, per SM: L1 TLB shootdowns
	InvalAck [][]*rtl.Decoupled[tlb.Invalidate] // in: their acknowledgements
	// Under FlowMGPUSim, per GPU: its caches' whole-cache flush request
	// and answer (nil for a GPU without caches), and its SMs' issue hold.
	Flush, Flushed []*rtl.Decoupled[uint8]
	Hold           []*rtl.Wire[bool]
	Host           *rtl.Decoupled[uint16] // in: a host phase starts
	HostDone       *rtl.Decoupled[uint16] // out: it is over
	// Channels are the directed links a page copy takes, each one
	// direction of a blocks/pcie link (Channel; ChannelIndex numbers them).
	Channels []Channel
}

// Channel is one direction of a link, as the driver uses it: it sends a
// page as one 4 KB packet on In and takes it from Out at the far end.
type Channel struct {
	In, Out *rtl.Decoupled[pcie.Packet]
}

// ChannelIndex numbers the directed links of n GPUs: host to GPU g (PCIe
// host-to-device) is g, GPU g to host n+g, GPU a to GPU b (NVLink)
// 2n+a*n+b; the entries a = b are unused. src and dst are GPUs or Host.
func ChannelIndex(n, src, dst int) int {
	switch {
	case src == Host:
		return dst
	case dst == Host:
		return n + src
	}
	return 2*n + src*n + dst
}

// DriverConfig is the driver's timing.
type DriverConfig struct {
	GPUs    int
	BaseVPN uint64
	// FaultCycles is the handling latency of a fault batch before the
	// driver acts on its first fault (multigpu.fault_latency_us).
	FaultCycles uint64
	// Batch is the most faults and promotions one batch takes from the
	// GPUs' buffers (multigpu.fault_batch); 1 serves them one at a time,
	// each paying FaultCycles.
	Batch int
	// Flow is the driver's fault-handling flow (multigpu.fault_flow).
	Flow Flow
	// FaultQueue is each GPU's fault buffer entries.
	FaultQueue int
	// Blocks[b]: the 64 KB block b from BaseVPN belongs to an
	// allocation (the prefetcher's leaves).
	Blocks []bool
}

// Flow is how the driver's work on a fault is timed (multigpu.fault_flow).
type Flow uint8

const (
	// FlowUVM is the UVM driver's: faults are taken in batches, the
	// handling latency paid once per batch (doc.go, "The host driver").
	FlowUVM Flow = iota
	// FlowMGPUSim is MGPUSim's: one fault at a time with no software
	// latency, every shootdown holding the SMs of the GPUs it reaches and
	// flushing their whole L1 and L2 data caches (doc.go, "MGPUSim's
	// flow").
	FlowMGPUSim
)

// Flows are the multigpu.fault_flow values, indexed by Flow.
var Flows = [...]string{FlowUVM: "uvm", FlowMGPUSim: "mgpusim"}

// ParseFlow is the Flow named s.
func ParseFlow(s string) (Flow, error) {
	for f, name := range Flows {
		if name == s {
			return Flow(f), nil
		}
	}
	return 0, fmt.Errorf("multigpu: unknown fault flow %q (one of %v)", s, Flows)
}

// MaxBatch is the largest multigpu.fault_batch: every entry of sixteen
// GPUs' 256-entry fault buffers.
const MaxBatch = MaxGPUs * FaultQueue

// FaultQueue is each GPU's fault buffer entries in the system (System).
const FaultQueue = 256

// PromotionQueue is each GPU's buffer of access-counter promotions: as
// many as NVIDIA's driver fetches from a GPU's access-counter
// notification buffer in one batch (UVM_PERF_ACCESS_COUNTER_BATCH_COUNT_DEFAULT
// = 256, uvm_gpu_access_counters.c). A group raises at most one promotion
// until it is served (Counters), so the buffer holds distinct groups.
const PromotionQueue = 256

// GPUStats are one GPU's counts of the driver's work.
type GPUStats struct {
	LocalFaults      uint64 `json:"local_faults"`
	ProtectionFaults uint64 `json:"protection_faults"`
	Promotions       uint64 `json:"promotions"`
	Migrations       uint64 `json:"migrations"`         // pages moved into this GPU
	ReplicasMade     uint64 `json:"replicas_made"`      // read-only replicas made in this GPU
	ReplicasCollapse uint64 `json:"replicas_collapsed"` // write collapses this GPU's stores caused
	Invalidations    uint64 `json:"invalidations"`      // invalidation messages this GPU received
	Evictions        uint64 `json:"evictions"`          // pages this GPU gave up for room
	NVLinkBytes      uint64 `json:"nvlink_bytes"`       // bytes received over NVLink: pages, and remote lines (System's results)
	PCIeH2DBytes     uint64 `json:"pcie_h2d_bytes"`
	PCIeD2HBytes     uint64 `json:"pcie_d2h_bytes"`
	FastAnswers      uint64 `json:"remote_walks_answered"` // walks to remote mappings answered without the host
	Prefetched       uint64 `json:"prefetched_pages"`      // pages moved into this GPU by the prefetcher (counted in Migrations too)
}

// Driver is the host's UVM driver for N GPUs (GRIT Section II-B): it
// keeps the centralized page table, takes each GPU's local faults,
// protection faults and access-counter promotions into per-GPU fault
// buffers, and serves them one at a time: the fault-handling latency, the
// scheme's decision (Decider), then the steps of a plan (plan.go) that
// invalidate other GPUs' PTEs, TLB entries and cached lines, evict for
// room, copy the page over NVLink or PCIe, install the new PTE and answer
// the walk.
//
// A walk whose GPU already maps the page (a remote mapping, or a copy
// the driver has just installed) is answered at once from the GPU's side
// of the fault path without the host: its GMMU walked a remote PTE, which
// it hands back to the TLB.
//
// The driver's timed state (fault buffers, the step counter, the link
// budgets, the shootdown masks, the answers offered) is registers; the
// centralized table and the statistics are the host software's memory,
// changed only in Eval.
type Driver struct {
	rtl.Base
	DriverPorts

	cfg     DriverConfig
	table   *Table
	planner planner
	policy  Policy
	cur     plan
	stats   []GPUStats
	flight  int // this cycle's packets in flight (inFlight, less arrivals, plus the one sent)
	// clears: this cycle's next clear_valid (cleared as the counters take
	// them, set as promotions are served).
	clears uint16
	sms    int

	faults   []*rtl.Ring[ptw.Walk] // per GPU: the fault buffer
	promos   []*rtl.Ring[ptw.Walk] // per GPU: promotions waiting
	clear    *rtl.Reg[uint16]      // bit g: a served promotion's clear is offered to GPU g's counters
	clearVPN *rtl.Vec[uint64]      // its VPN
	promo    *rtl.Reg[bool]        // the plan under way serves a promotion
	batch    *rtl.Vec[uint16]      // per GPU: buffered requests of the current batch not yet taken
	paid     *rtl.Reg[bool]        // the current batch's handling latency is planned
	fast     *rtl.Reg[uint16]      // bit g: a fast answer is offered to GPU g
	fastWalk *rtl.Vec[uint64]      // its walk (Walk.Pack)
	fastPTE  *rtl.Vec[pte.PTE]

	running     *rtl.Reg[bool]   // a plan is being carried out
	step        *rtl.Reg[uint16] // its current step
	started     *rtl.Reg[bool]   // the current step's start actions are done
	until       *rtl.Reg[uint64] // a timed step ends at this cycle
	inFlight    *rtl.Reg[uint16] // page packets sent and not yet arrived
	tag         *rtl.Reg[uint64] // the next packet's tag: packets in a row differ
	walk        *rtl.Reg[uint64] // the fault being served (Walk.Pack)
	gpu         *rtl.Reg[uint8]  // its GPU
	next        *rtl.Reg[uint8]  // the buffer favoured next
	answer      *rtl.Reg[bool]   // the fault's answer is offered on Migrated[gpu]
	ansPTE      *rtl.Reg[pte.PTE]
	inval       *rtl.Vec[uint64] // per GPU: TLBs still to receive the shootdown
	acks        *rtl.Vec[uint64] // per GPU: TLBs whose acknowledgement is due
	hostPending *rtl.Reg[bool]
	hostPhase   *rtl.Reg[uint16]
	flushReq    *rtl.Reg[uint16] // bit g: a cache flush is offered to GPU g (FlowMGPUSim)
	held        *rtl.Reg[uint16] // bit g: GPU g's SMs are held until its flush is over
}

// NewDriver builds the driver under path over table t for policy p.
func NewDriver(s *rtl.Sim, path string, cfg DriverConfig, t *Table, p Policy, ports DriverPorts) (*Driver, error) {
	n := cfg.GPUs
	if cfg.Batch < 1 || cfg.Batch > MaxBatch {
		return nil, fmt.Errorf("multigpu: fault batch %d outside 1..%d", cfg.Batch, MaxBatch)
	}
	if cfg.Flow == FlowMGPUSim {
		// MGPUSim's MMU sends the driver one migration at a time
		// (akita v4.0.0 mem/vm/mmu/mmu.go:196-212) and its driver adds
		// no handling time (mgpusim amd/driver/driver.go:530-551).
		cfg.Batch, cfg.FaultCycles = 1, 0
	}
	if n < 1 || n > MaxGPUs || len(ports.Remote) != n || len(ports.Migrated) != n || len(ports.Update) != n || len(ports.Inval) != n || len(ports.InvalAck) != n {
		return nil, fmt.Errorf("multigpu: driver needs 1..%d GPUs with every port, got %d", MaxGPUs, n)
	}
	d := &Driver{DriverPorts: ports, cfg: cfg, table: t, policy: p, stats: make([]GPUStats, n), sms: len(ports.Inval[0])}
	d.planner = planner{t: t, gpus: n, baseVPN: cfg.BaseVPN, policy: p, latency: true, busy: make([]bool, t.pages), blocks: cfg.Blocks}
	s.Add(d, path)
	b := &d.Base
	for g := range n {
		d.faults = append(d.faults, rtl.NewRingOf[ptw.Walk](b, fmt.Sprintf("gpu%d.faults", g), cfg.FaultQueue, ptw.WalkBits, false))
		d.promos = append(d.promos, rtl.NewRingOf[ptw.Walk](b, fmt.Sprintf("gpu%d.promotions", g), PromotionQueue, ptw.WalkBits, false))
		ports.Remote[g].Consumer(b)
		ports.Migrated[g].Producer(b)
		ports.Update[g].Producer(b)
		if ports.Promote != nil && ports.Promote[g] != nil {
			ports.Promote[g].Consumer(b)
			ports.Clear[g].Producer(b)
		}
		for k := range ports.Inval[g] {
			ports.Inval[g][k].Producer(b)
			ports.InvalAck[g][k].Consumer(b)
		}
	}
	d.batch = rtl.NewVec[uint16](b, "batch", n, bits.Len(uint(MaxBatch)), 0)
	d.paid = rtl.NewFlag(b, "batch_paid", false)
	d.clear = rtl.NewReg[uint16](b, "clear_valid", n, 0)
	d.clearVPN = rtl.NewVec[uint64](b, "clear_vpn", n, ptw.WalkBits, 0)
	d.promo = rtl.NewFlag(b, "promotion", false)
	d.fast = rtl.NewReg[uint16](b, "fast_valid", n, 0)
	d.fastWalk = rtl.NewVec[uint64](b, "fast_walk", n, ptw.WalkBits, 0)
	d.fastPTE = rtl.NewVec[pte.PTE](b, "fast_pte", n, 64, 0)
	d.running = rtl.NewFlag(b, "running", false)
	d.step = rtl.NewReg[uint16](b, "step", 16, 0)
	d.started = rtl.NewFlag(b, "started", false)
	d.until = rtl.NewReg[uint64](b, "until", 64, 0)
	d.inFlight = rtl.NewReg[uint16](b, "in_flight", 16, 0)
	d.tag = rtl.NewReg[uint64](b, "tag", pcie.TagBits, 0)
	d.walk = rtl.NewReg[uint64](b, "walk", ptw.WalkBits, 0)
	d.gpu = rtl.NewReg[uint8](b, "gpu", 4, 0)
	d.next = rtl.NewReg[uint8](b, "next", 5, 0)
	d.answer = rtl.NewFlag(b, "answer_valid", false)
	d.ansPTE = rtl.NewReg[pte.PTE](b, "answer_pte", 64, 0)
	d.inval = rtl.NewVec[uint64](b, "inval", n, d.sms, 0)
	d.acks = rtl.NewVec[uint64](b, "acks", n, d.sms, 0)
	if len(ports.Channels) != 2*n+n*n {
		return nil, fmt.Errorf("multigpu: driver needs %d link channels for %d GPUs, got %d", 2*n+n*n, n, len(ports.Channels))
	}
	for _, c := range ports.Channels {
		if c.In != nil {
			c.In.Producer(b)
			c.Out.Consumer(b)
		}
	}
	if cfg.Flow == FlowMGPUSim {
		if len(ports.Flush) != n || len(ports.Flushed) != n || len(ports.Hold) != n {
			return nil, fmt.Errorf("multigpu: the mgpusim flow needs every GPU's flush and hold ports")
		}
		for g := range n {
			if ports.Flush[g] != nil {
				ports.Flush[g].Producer(b)
				ports.Flushed[g].Consumer(b)
			}
		}
		d.flushReq = rtl.NewReg[uint16](b, "flush_valid", n, 0)
		d.held = rtl.NewReg[uint16](b, "held", n, 0)
	}
	d.hostPending = rtl.NewFlag(b, "host_pending", false)
	d.hostPhase = rtl.NewReg[uint16](b, "host_phase", 16, 0)
	ports.Host.Consumer(b)
	ports.HostDone.Producer(b)
	return d, nil
}

func unpackWalk(p uint64) ptw.Walk {
	vpn, req, w := pte.UnpackRequest(p)
	return ptw.Walk{VPN: vpn, Requester: req, Write: w}
}

// Drive offers the answers, the current step's page-table writes and
// shootdowns, and the buffers' room.
func (d *Driver) Drive() {
	running := d.running.Q()
	var cur *op
	if running && int(d.step.Q()) < len(d.cur.ops) {
		cur = &d.cur.ops[d.step.Q()]
	}
	for g := range d.cfg.GPUs {
		fast := d.fast.Q()>>g&1 != 0
		d.Remote[g].Ready.Set(!fast && !d.faults[g].Full())
		m := d.Migrated[g]
		host := d.answer.Q() && int(d.gpu.Q()) == g
		m.Valid.Set(fast || host)
		if fast {
			m.Bits.Set(unpackWalk(d.fastWalk.At(g).Q()))
			m.PTE.Set(d.fastPTE.At(g).Q())
		} else if host {
			m.Bits.Set(unpackWalk(d.walk.Q()))
			m.PTE.Set(d.ansPTE.Q())
		}
		if d.Promote != nil && d.Promote[g] != nil {
			d.Promote[g].Ready.Set(!d.promos[g].Full())
			d.Clear[g].Valid.Set(d.clear.Q()>>g&1 != 0)
			d.Clear[g].Bits.Set(ptw.Walk{VPN: d.clearVPN.At(g).Q()})
		}
		if d.held != nil {
			d.Hold[g].Set(d.held.Q()>>g&1 != 0)
			if d.Flush[g] != nil {
				d.Flush[g].Valid.Set(d.flushReq.Q()>>g&1 != 0)
				d.Flushed[g].Ready.Set(true)
			}
		}
		write := cur != nil && cur.kind == opWrite && cur.mask>>g&1 != 0
		u := d.Update[g]
		u.Valid.Set(write)
		if write {
			u.Bits.Set(cur.vpn)
			u.PTE.Set(cur.pte[g])
		}
		// The shootdown wires change only during a shootdown step: its
		// requests are all taken before its last acknowledgement, so they
		// are low again when it ends.
		if cur == nil || cur.kind != opShoot || cur.mask>>g&1 == 0 {
			continue
		}
		pending := d.inval.At(g).Q()
		for k, p := range d.Inval[g] {
			p.Valid.Set(pending>>k&1 != 0)
			if pending>>k&1 != 0 {
				p.Bits.Set(tlb.Invalidate{VPN: cur.vpn})
			}
			d.InvalAck[g][k].Ready.Set(true)
		}
	}
	// The current copy's packet, offered until its link takes it; the
	// driver takes every packet that arrives.
	send := -1
	if cur != nil && cur.kind == opCopy && !d.started.Q() {
		send = ChannelIndex(d.cfg.GPUs, int(cur.src), int(cur.dst))
	}
	for i, c := range d.Channels {
		if c.In == nil {
			continue
		}
		c.In.Valid.Set(i == send)
		if i == send {
			c.In.Bits.Set(pcie.Packet{Tag: d.tag.Q(), Bytes: 1 << gpu.PageShift})
		}
		c.Out.Ready.Set(true)
	}
	d.Host.Ready.Set(!d.hostPending.Q())
	d.HostDone.Valid.Set(d.hostPending.Q())
	d.HostDone.Bits.Set(d.hostPhase.Q())
}

// Eval takes walks and promotions, answers, and advances the plan.
func (d *Driver) Eval() {
	now := d.Now()
	running := d.running.Q()
	answer := d.answer.Q()
	if answer && d.Migrated[d.gpu.Q()].Fire() && d.fast.Q()>>d.gpu.Q()&1 == 0 {
		answer = false
	}
	// The buffer served next: round robin over the GPUs from next, among
	// those with requests left in the current batch.
	sel, fresh := -1, false
	if !running && !answer {
		sel, fresh = d.selectNext()
	}
	stay, waiting := false, false
	d.clears = d.clear.Q()
	for m := d.clears; m != 0; m &= m - 1 {
		if g := trailing(m); d.Clear[g].Fire() {
			d.clears &^= 1 << g
		}
	}
	fastMask := d.fast.Q()
	for g := range d.cfg.GPUs {
		fast := fastMask>>g&1 != 0
		if fast && d.Migrated[g].Fire() {
			fast = false
		}
		var push bool
		var w ptw.Walk
		if d.Remote[g].Fire() {
			w = d.Remote[g].Bits.Get()
			i := d.pageOf(w.VPN)
			if !fast && d.planner.satisfied(i, g, w.Write) && !d.busyPage(i) {
				fast = true
				d.fastWalk.At(g).Set(w.Pack())
				d.fastPTE.At(g).Set(d.planner.localPTE(i, g))
				d.stats[g].FastAnswers++
			} else {
				push = true
			}
		}
		fastMask = fastMask&^(1<<g) | uint16(b2i(fast))<<g
		pop := sel == g && d.faults[g].Len() > 0
		if push || pop {
			d.faults[g].Update(push, w, 0, pop)
		}
		var pw ptw.Walk
		ppush := d.Promote != nil && d.Promote[g] != nil && d.Promote[g].Fire()
		if ppush {
			pw = d.Promote[g].Bits.Get()
		}
		ppop := sel == g && !pop
		if ppush || ppop {
			d.promos[g].Update(ppush, pw, 0, ppop)
		}
		faults := int(d.faults[g].Len()) + b2i(push) - b2i(pop)
		promos := int(d.promos[g].Len()) + b2i(ppush) - b2i(ppop)
		if faults+promos > 0 {
			waiting = true
		}
		// A walk or promotion offered while the driver will take it keeps
		// the driver awake: the next one may carry the same bits and wake
		// nothing. One it cannot take waits for Ready, which only the
		// driver raises.
		takesWalk := !fast && faults < int(d.faults[g].Depth())
		takesPromo := d.Promote != nil && d.Promote[g] != nil && promos < int(d.promos[g].Depth())
		stay = stay || fast || d.Remote[g].Valid.Get() && takesWalk || takesPromo && d.Promote[g].Valid.Get()
	}
	if fastMask != d.fast.Q() {
		d.fast.Set(fastMask)
	}
	if sel >= 0 {
		if d.faults[sel].Len() > 0 {
			answer = d.take(sel, d.faults[sel].Head(), false, fresh, now)
		} else {
			answer = d.take(sel, d.promos[sel].Head(), true, fresh, now)
		}
		d.next.Set(uint8((sel + 1) % d.cfg.GPUs))
		running = len(d.cur.ops) > 0 && !answer
		stay = true
	}
	d.flight = int(d.inFlight.Q())
	for _, c := range d.Channels {
		if c.Out != nil && c.Out.Fire() {
			d.flight--
		}
	}
	wake := rtl.Never
	if d.running.Q() {
		var busy bool
		busy, wake, answer, running = d.advance(now, answer)
		stay = stay || busy
	}
	if answer != d.answer.Q() {
		d.answer.Set(answer)
	}
	if d.clears != d.clear.Q() {
		d.clear.Set(d.clears)
		stay = stay || d.clears != 0
	}
	if d.flight != int(d.inFlight.Q()) {
		d.inFlight.Set(uint16(d.flight))
	}
	pending := d.hostPending.Q()
	switch {
	case d.Host.Fire():
		pending = true
		d.hostPending.Set(true)
		d.hostPhase.Set(d.Host.Bits.Get())
	case d.HostDone.Fire():
		pending = false
		d.hostPending.Set(false)
	}
	if stay || answer || pending || (waiting && !running) {
		return // awake next cycle: it read the time
	}
	d.SleepUntil(wake)
}

// selectNext picks the GPU whose request the driver takes this cycle, -1
// for none, and counts it out of the batch; fresh: it starts a batch.
// When the current batch is used up the next one takes the requests
// waiting now, up to cfg.Batch of them: each GPU's in full, in GPU order
// from next, until the batch is full. Its handling latency is not yet
// planned. A request that arrives during a batch waits for the next.
func (d *Driver) selectNext() (sel int, fresh bool) {
	n := d.cfg.GPUs
	var left [MaxGPUs]uint16
	queued := false
	for g := range n {
		left[g] = d.batch.At(g).Q()
		queued = queued || left[g] != 0
	}
	if !queued {
		room := d.cfg.Batch
		for k := range n {
			g := (int(d.next.Q()) + k) % n
			take := min(int(d.faults[g].Len()+d.promos[g].Len()), room)
			left[g] = uint16(take)
			room -= take
		}
		if room == d.cfg.Batch {
			return -1, false
		}
		fresh = true
	}
	sel = -1
	for k := range n {
		if g := (int(d.next.Q()) + k) % n; left[g] > 0 {
			sel = g
			break
		}
	}
	left[sel]--
	for g := range n {
		if left[g] != d.batch.At(g).Q() {
			d.batch.At(g).Set(left[g])
		}
	}
	return sel, fresh
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (d *Driver) pageOf(vpn uint64) int { return int(vpn - d.cfg.BaseVPN) }

// busyPage reports whether the plan under way still changes page i's
// local tables.
func (d *Driver) busyPage(i int) bool {
	return d.running.Q() && d.planner.busy[i]
}

// take starts serving walk w of GPU g (a promotion if promo): a walk the
// table already satisfies is answered at once (take reports it), anything
// else gets a plan. The first plan of a batch (fresh, or the batch's
// requests so far needed none) begins with the batch's handling latency.
func (d *Driver) take(g int, w ptw.Walk, promo, fresh bool, now uint64) bool {
	i := d.pageOf(w.VPN)
	t := d.table
	p := t.Page(i)
	f := Fault{Kind: LocalFault, GPU: g, Page: i, VPN: w.VPN, Write: w.Write}
	paid := !fresh && d.paid.Q() // the batch's latency is in an earlier plan
	switch {
	case promo && (p.Has(g) || !p.MapsRemote(g)):
		// The page came to this GPU, or its mapping went, since the
		// counter raised: nothing to promote; its group counts again.
		d.cur.ops = d.cur.ops[:0]
		d.setPaid(paid)
		d.offerClear(g, w.VPN)
		return false
	case promo:
		f.Kind = Promotion
	case d.planner.satisfied(i, g, w.Write):
		// Another fault of the batch brought the page (faults on one
		// page merge), or a mapping did: answered, at no cost.
		d.walk.Set(w.Pack())
		d.gpu.Set(uint8(g))
		d.ansPTE.Set(d.planner.localPTE(i, g))
		d.cur.ops = d.cur.ops[:0]
		d.setPaid(paid)
		return true
	case p.Has(g) && w.Write && !p.Writable:
		f.Kind = ProtectionFault
	}
	s := d.policy.Decider.Decide(f, p, now)
	d.planner.latency = d.cfg.Flow == FlowUVM && !paid
	d.planner.build(&d.cur, f, s)
	waits := len(d.cur.ops) > 0 && d.cur.ops[0].kind == opWait
	d.setPaid(paid || waits)
	if st, ok := d.policy.Decider.(Staller); ok && len(d.cur.ops) > 0 {
		// The decision's own delay, after the batch's latency if this
		// plan pays it, else as a step of its own.
		if stall := st.Stall(); waits {
			d.cur.ops[0].stall = stall
		} else if stall > 0 {
			d.cur.ops = append(d.cur.ops, op{})
			copy(d.cur.ops[1:], d.cur.ops)
			d.cur.ops[0] = op{kind: opWait, stall: stall}
		}
	}
	st := &d.stats[g]
	switch f.Kind {
	case LocalFault:
		st.LocalFaults++
	case ProtectionFault:
		st.ProtectionFaults++
	case Promotion:
		st.Promotions++
	}
	st.Migrations += d.cur.migrations
	st.ReplicasMade += d.cur.replicas
	st.ReplicasCollapse += d.cur.collapsed
	st.Evictions += d.cur.evictions
	st.Prefetched += d.cur.prefetched
	d.walk.Set(w.Pack())
	d.gpu.Set(uint8(g))
	d.running.Set(true)
	d.step.Set(0)
	if promo != d.promo.Q() {
		d.promo.Set(promo)
	}
	return false
}

// offerClear offers GPU g's counters the clear of VPN vpn's group: the
// driver has served its promotion (Counters).
func (d *Driver) offerClear(g int, vpn uint64) {
	d.clears |= 1 << g
	d.clearVPN.At(g).Set(vpn)
}

func (d *Driver) setPaid(v bool) {
	if v != d.paid.Q() {
		d.paid.Set(v)
	}
}

// advance carries out the current step, answer being whether an answer
// is offered after this cycle. It reports whether the driver must run next
// cycle, else the cycle it next has work at, and the answer and running
// state after this cycle.
func (d *Driver) advance(now uint64, answer bool) (busy bool, wake uint64, answerOut, running bool) {
	k := int(d.step.Q())
	o := &d.cur.ops[k]
	done := false
	wake = rtl.Never
	switch o.kind {
	case opCopy:
		// Sent when its link takes the packet; an asynchronous copy is
		// then done, the others wait for every packet in flight.
		if !d.started.Q() {
			if !d.Channels[ChannelIndex(d.cfg.GPUs, int(o.src), int(o.dst))].In.Fire() {
				return false, wake, answer, true
			}
			d.sent(o)
			if !o.async {
				d.started.Set(true)
				return true, wake, answer, true
			}
			done = true
			break
		}
		if done = d.flight == 0; !done {
			return false, wake, answer, true
		}
	case opWait:
		if !d.started.Q() {
			end := now + o.stall
			if o.latency {
				end += d.cfg.FaultCycles
			}
			d.started.Set(true)
			d.until.Set(end)
			return end <= now+1, end, answer, true
		}
		done = now >= d.until.Q()
		if !done {
			return false, d.until.Q(), answer, true
		}
	case opWrite:
		done = true // the GMMUs' update ports are always ready
	case opShoot:
		done = d.shoot(o)
	case opAnswer:
		if answer {
			return true, wake, answer, true
		}
		answer = true
		d.ansPTE.Set(o.pte[d.gpu.Q()])
		done = true
	}
	if !done {
		return true, wake, answer, true
	}
	if d.started.Q() {
		d.started.Set(false)
	}
	d.step.Set(uint16(k + 1))
	if k+1 >= len(d.cur.ops) {
		d.running.Set(false)
		if d.promo.Q() {
			d.offerClear(int(d.gpu.Q()), unpackWalk(d.walk.Q()).VPN)
		}
		return true, wake, answer, false
	}
	return true, wake, answer, true
}

// shoot runs a shootdown step: it arms every TLB of the masked GPUs, then
// clears each as its request and its acknowledgement fire.
func (d *Driver) shoot(o *op) bool {
	all := uint64(1)<<d.sms - 1
	if !d.started.Q() {
		d.started.Set(true)
		for m := o.mask; m != 0; m &= m - 1 {
			g := trailing(m)
			d.inval.At(g).Set(all)
			d.acks.At(g).Set(all)
			d.stats[g].Invalidations++
		}
		if d.held != nil {
			// MGPUSim's shootdown drains the GPUs' CU pipelines and
			// flushes and invalidates their whole L1 and L2 caches
			// (amd/timing/cp/ctrlMiddleware.go:164-240): the SMs hold
			// issue until their caches answer the flush.
			d.held.Set(d.held.Q() | o.mask)
			req := uint16(0)
			for m := o.mask; m != 0; m &= m - 1 {
				if d.Flush[trailing(m)] != nil {
					req |= 1 << trailing(m)
				}
			}
			d.flushReq.Set(d.flushReq.Q() | req)
		}
		return false
	}
	left := false
	if d.held != nil {
		req, held := d.flushReq.Q(), d.held.Q()
		for m := o.mask; m != 0; m &= m - 1 {
			g := trailing(m)
			f := d.Flush[g]
			if f == nil {
				if d.acks.At(g).Q() == 0 {
					held &^= 1 << g // no caches: the hold lasts the TLB shootdown
				}
				continue
			}
			if req>>g&1 != 0 && f.Fire() {
				req &^= 1 << g
			}
			if held>>g&1 != 0 && d.Flushed[g].Fire() {
				held &^= 1 << g
			}
		}
		update(d.flushReq, req)
		update(d.held, held)
		left = held&o.mask != 0
	}
	for m := o.mask; m != 0; m &= m - 1 {
		g := trailing(m)
		inv, ack := d.inval.At(g).Q(), d.acks.At(g).Q()
		ni, na := inv, ack
		for k := range d.sms {
			if inv>>k&1 != 0 && d.Inval[g][k].Fire() {
				ni &^= 1 << k
			}
			if ack>>k&1 != 0 && d.InvalAck[g][k].Fire() {
				na &^= 1 << k
			}
		}
		if ni != inv {
			d.inval.At(g).Set(ni)
		}
		if na != ack {
			d.acks.At(g).Set(na)
		}
		left = left || na != 0
	}
	return !left
}

// sent counts the page packet its link has just taken.
func (d *Driver) sent(o *op) {
	const page = 1 << gpu.PageShift
	switch {
	case o.src == Host:
		d.stats[o.dst].PCIeH2DBytes += page
	case o.dst == Host:
		d.stats[o.src].PCIeD2HBytes += page
	default:
		d.stats[o.dst].NVLinkBytes += page
	}
	d.flight++
	d.tag.Set((d.tag.Q() + 1) & (1<<pcie.TagBits - 1))
}

func trailing(m uint16) int {
	for k := 0; k < 16; k++ {
		if m>>k&1 != 0 {
			return k
		}
	}
	return 16
}

// Stats are the per-GPU counts so far.
func (d *Driver) Stats() []GPUStats { return d.stats }

// Table is the centralized page table.
func (d *Driver) Table() *Table { return d.table }

// Busy describes the driver's unfinished work for the watchdog.
func (d *Driver) Busy() []string {
	var lines []string
	if d.running.Q() {
		k := int(d.step.Q())
		w := unpackWalk(d.walk.Q())
		what := "done"
		if k < len(d.cur.ops) {
			what = [...]string{"fault latency", "page-table write", "TLB shootdown", "page copy", "answer"}[d.cur.ops[k].kind]
		}
		line := fmt.Sprintf("%s: serving GPU %d's fault on VPN %#x, step %d of %d (%s)", d.Path(), d.gpu.Q(), w.VPN, k+1, len(d.cur.ops), what)
		if k < len(d.cur.ops) && d.cur.ops[k].kind == opShoot {
			for g := range d.cfg.GPUs {
				if a := d.acks.At(g).Q(); a != 0 {
					line += fmt.Sprintf("; gpu%d TLBs %#x not acknowledged", g, a)
				}
				if d.held != nil && d.held.Q()>>g&1 != 0 {
					line += fmt.Sprintf("; gpu%d SMs held, its cache flush not answered", g)
				}
			}
		}
		lines = append(lines, line)
	}
	for g := range d.cfg.GPUs {
		if n := d.faults[g].Len() + d.promos[g].Len(); n > 0 {
			lines = append(lines, fmt.Sprintf("%s.gpu%d.faults: %d faults and promotions waiting", d.Path(), g, n))
		}
	}
	if d.answer.Q() {
		lines = append(lines, fmt.Sprintf("%s: answer to gpu%d not taken by its router", d.Path(), d.gpu.Q()))
	}
	return lines
}
