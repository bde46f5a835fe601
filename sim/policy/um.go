package policy

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/system"
)

// UM is the fault-based NVIDIA Unified Memory baseline as the UVMSmart
// simulator models it in its accurate-simulation mode (gpgpu-sim_UVMSmart,
// gmmu_t::cycle and do_hardware_prefetch in gpgpu-sim/gpu-sim.cc; UVMSmart
// paper Section II):
//
//   - a walk that finds a remote PTE raises a far fault into the fault
//     buffer, and the faulting SM's L1 TLB is frozen (new misses are
//     refused) until every fault of that SM is resolved;
//   - the driver handles one fault at a time: the fault latency (45 us,
//     UVMMU Table I), then the transfer of the faulting page's 64 KB basic
//     block extended by the tree-based neighbourhood prefetcher (a node of
//     the 2 MB tree is fetched whole once more than half of it is valid or
//     on its way), critical run first; the next fault's latency starts
//     after this transfer is in, as in the simulator's serial PCIe read
//     stage queue, where each fault is a PAGE_FAULT entry followed by its
//     transfer;
//   - faults on pages already valid or on their way are merged: they cost
//     no latency and are answered when their page lands;
//   - when the pages to fetch do not fit, the least recently migrated 2 MB
//     large page is evicted whole: its PTEs are made remote, its pages shot
//     down in every L1 TLB and written back (the simulator always writes the
//     whole chunk back), and the fetch waits for the write-back;
//   - every landed page's PTE is written and each fault on it is replayed:
//     the router fills the SM's L1 TLB and the lookup is retried.
//
// The driver's tables (page states, large-page LRU stamps) are registers of
// the driver block, as the host-side software's memory; the data moves
// through the same PME and PCIe link blocks as UVMMU's.
type UM struct {
	cfg    *config.Config
	sys    *system.System
	driver *umDriver
	PME    *pme.Engine
	Link   *pcie.Link
}

func newUM(cfg *config.Config) *UM { return &UM{cfg: cfg} }

// Name is "um".
func (*UM) Name() string { return "um" }

// Attach maps every managed page remote (in host memory, host frame equal
// to its page number) and every cudaMalloc'd page local, and builds the
// link, the PME and the driver.
func (p *UM) Attach(s *system.System) error {
	p.sys = s
	for _, r := range s.Layout.Managed {
		for g := 0; g < r.Count; g++ {
			if err := s.LoadGroup(r.First+uint64(g), r.First+uint64(g), true); err != nil {
				return err
			}
		}
	}
	// Device allocations take the frame-groups after the managed capacity.
	fg := uint64(s.Layout.ManagedCapacity)
	for _, r := range s.Layout.Device {
		for g := 0; g < r.Count; g++ {
			if err := s.LoadGroup(r.First+uint64(g), fg, false); err != nil {
				return err
			}
			fg++
		}
	}
	var err error
	if p.Link, p.PME, err = newLinkAndPME(s, p.cfg); err != nil {
		return err
	}
	p.driver = newUMDriver(s, p.cfg, p.PME)
	return nil
}

// Stats reports far faults, pages migrated and evicted, and link bytes.
func (p *UM) Stats() system.PolicyStats {
	d := p.driver
	return system.PolicyStats{
		FarFaults:    d.faults.Q(),
		Migrations:   d.migrations.Q(),
		Evictions:    d.evictions.Q(),
		PCIeH2DBytes: p.Link.H2D.Stats().Bytes,
		PCIeD2HBytes: p.Link.D2H.Stats().Bytes,
	}
}

// Busy names the driver while it holds faults.
func (p *UM) Busy() []string {
	d := p.driver
	var names []string
	if n := d.waiting.Q(); n > 0 {
		names = append(names, fmt.Sprintf("%s (%d faults waiting, state %d)", d.Path(), n, d.fsm.Q()))
	}
	return names
}

// Check verifies SPEC 6.5 between cycles: a page the driver holds valid has
// a local PTE with its own frame (or has it written this cycle), a page it holds remote a remote PTE with
// its host frame; the valid pages fit the managed capacity; and each large
// page's resident count matches its pages.
func (p *UM) Check() error {
	d := p.driver
	s := p.sys
	perRegion := make([]int, d.regions)
	total := 0
	for _, r := range s.Layout.Managed {
		lo := int(r.First*system.PagesPerGroup - d.base)
		for page := lo; page < lo+r.Count*system.PagesPerGroup; page++ {
			e := s.GMMU.Read(d.base + uint64(page))
			switch d.pageState(page) {
			case pageValid:
				perRegion[page/system.PagesPerRegion]++
				total++
				writing := d.updValid.Q() && int(d.updPage.Q()) == page
				if !writing && (e.IsRemote() || e.Frame() != uint64(page)) {
					return fmt.Errorf("page %#x is valid but its PTE is %#x", d.base+uint64(page), uint64(e))
				}
			case pageRemote:
				if !e.IsRemote() || e.Frame() != d.base+uint64(page) {
					return fmt.Errorf("page %#x is in host memory but its PTE is %#x", d.base+uint64(page), uint64(e))
				}
			case pageDevice:
				return fmt.Errorf("managed page %#x is marked cudaMalloc'd", d.base+uint64(page))
			}
		}
	}
	for r, n := range perRegion {
		if got := int(d.resident.At(r).Q()); got != n {
			return fmt.Errorf("large page %d counts %d resident pages, holds %d", r, got, n)
		}
	}
	if total > d.capacity {
		return fmt.Errorf("%d pages valid, more than the %d-page managed capacity", total, d.capacity)
	}
	return nil
}

// Page states in the driver's table (2 bits per page).
const (
	pageRemote   = 0
	pageInFlight = 1
	pageValid    = 2
	pageDevice   = 3 // cudaMalloc'd: never faults, never evicted
)

// Driver states.
const (
	drvIdle      = iota
	drvLatency   // the fault's handling latency
	drvEvictPTE  // unmapping the victim large page, one page per cycle
	drvEvictCmd  // handing the PME the write-back
	drvEvictWait // waiting for the write-back to reach the host
	drvFetchCmd  // handing the PME the fetch runs
	drvFetchWait // waiting for the last page of the fetch
	drvHostCmd   // host phase: reading the host's range back
	drvHostWait
	drvHostDone
)

// umDriver is the UM driver and the fault buffer in front of it.
type umDriver struct {
	rtl.Base

	remote   gpu.Resolved
	migrated gpu.Resolved
	frozen   []*rtl.Wire[bool]
	inval    []*rtl.Decoupled[tlb.Invalidate]
	invalAck []*rtl.Decoupled[tlb.Invalidate]
	update   ptw.PTEPort[uint64]
	cmd      *rtl.Decoupled[pme.Command]
	events   *rtl.Decoupled[pme.Event]
	host     *rtl.Decoupled[uint16]
	hostDone *rtl.Decoupled[uint16]

	base      uint64 // first VPN of the layout
	pages     int
	regions   int
	capacity  int // managed pages the GPU memory holds
	latency   uint64
	tree      bool
	bufSize   int
	hostPages []int  // per phase: pages the host reads back
	kind      []bool // per large page: true if it belongs to a managed allocation
	extent    []int  // per large page: pages of it inside its allocation

	// Fault buffer: faults waiting for the driver or for their page.
	reqValid *rtl.Vec[uint8]
	reqWalk  *rtl.Vec[ptw.Walk]
	reqSeq   *rtl.Vec[uint64] // arrival order
	seq      *rtl.Reg[uint64]
	waiting  *rtl.Reg[uint32]
	perSM    *rtl.Vec[uint16] // faults outstanding per SM: its TLB is frozen while non-zero

	// Driver tables.
	table    *rtl.Vec[uint64] // page states, 32 pages of 2 bits per word
	resident *rtl.Vec[uint16] // valid pages per large page
	stamp    *rtl.Vec[uint64] // per large page: last fetch into it (LRU)
	used     *rtl.Reg[uint32] // pages valid or on their way

	// Driver state machine.
	fsm       *rtl.Reg[uint8]
	until     *rtl.Reg[uint64] // end of the fault latency
	faultVPN  *rtl.Reg[uint64]
	victim    *rtl.Reg[uint32] // large page being evicted
	cursor    *rtl.Reg[uint32] // page index in the current loop
	sent      *rtl.Reg[uint64] // TLBs that took the current shootdown
	count     *rtl.Reg[uint32] // pages of the current write-back
	runStart  *rtl.Vec[uint64] // fetch runs: first page index, length, critical position
	runLen    *rtl.Vec[uint16]
	runFirst  *rtl.Vec[uint16]
	runs      *rtl.Reg[uint16]
	runNext   *rtl.Reg[uint16] // next run to hand to the PME
	runIssued *rtl.Reg[uint16] // runs handed to the PME
	runLanded *rtl.Reg[uint16] // runs whose last page is in
	hostPhase *rtl.Reg[uint16]
	hostChunk *rtl.Reg[uint32]

	// Landing: the page whose PTE is written, one per cycle.
	updValid *rtl.Reg[bool]
	updPage  *rtl.Reg[uint32]

	// Reply: the fault offered to the router.
	repValid *rtl.Reg[bool]
	repIndex *rtl.Reg[uint32]

	faults     *rtl.Reg[uint64]
	migrations *rtl.Reg[uint64]
	evictions  *rtl.Reg[uint64]

	plan []uint32 // combinational scratch of the prefetcher: pages to fetch
}

// maxRuns bounds the contiguous runs of one fetch: a 2 MB tree node of
// 512 pages has at most 256 runs of missing pages.
const maxRuns = system.PagesPerRegion / 2

func newUMDriver(s *system.System, cfg *config.Config, e *pme.Engine) *umDriver {
	l := &s.Layout
	d := &umDriver{
		remote: s.Router.Remote, migrated: s.Router.Migrated, update: s.GMMU.Update,
		cmd: e.Cmd, events: e.Events, host: s.Dispatcher.Host, hostDone: s.Dispatcher.HostDone,
		base:     l.BaseVPN,
		pages:    l.Pages,
		regions:  (l.Pages + system.PagesPerRegion - 1) / system.PagesPerRegion,
		capacity: l.ManagedCapacity * system.PagesPerGroup,
		latency:  cfg.FaultCycles(),
		tree:     cfg.UM.Prefetcher == "tree",
		bufSize:  cfg.UM.FaultBuffer,
		plan:     make([]uint32, 0, system.PagesPerRegion),
	}
	for _, t := range s.TLBs {
		d.frozen = append(d.frozen, t.Frozen)
		d.inval = append(d.inval, t.Inval)
		d.invalAck = append(d.invalAck, t.InvalAck)
	}
	for _, ph := range s.Phases {
		n := 0
		if ph.Host != nil {
			n = hostRangePages(ph.Host.Ranges)
		}
		d.hostPages = append(d.hostPages, n)
	}
	d.kind = make([]bool, d.regions)
	d.extent = make([]int, d.regions)
	for _, r := range l.Managed {
		lo := int(r.First*system.PagesPerGroup - l.BaseVPN)
		hi := lo + r.Count*system.PagesPerGroup
		for p := lo; p < hi; p += system.PagesPerRegion {
			reg := p / system.PagesPerRegion
			d.kind[reg] = true
			d.extent[reg] = min(hi-reg*system.PagesPerRegion, system.PagesPerRegion)
		}
	}
	s.Sim.Add(d, "um.driver")
	b := &d.Base
	d.reqValid = rtl.NewVec[uint8](b, "req_valid", d.bufSize, 1, 0)
	d.reqWalk = rtl.NewVecOf(b, "req_walk", d.bufSize, ptw.WalkBits, ptw.Walk{})
	d.reqSeq = rtl.NewVec[uint64](b, "req_seq", d.bufSize, 64, 0)
	d.seq = rtl.NewReg[uint64](b, "seq", 64, 0)
	d.waiting = rtl.NewReg[uint32](b, "waiting", 32, 0)
	d.perSM = rtl.NewVec[uint16](b, "per_sm", len(s.TLBs), 16, 0)
	d.table = rtl.NewVec[uint64](b, "page_state", (d.pages+31)/32, 64, 0)
	d.resident = rtl.NewVec[uint16](b, "resident", d.regions, 10, 0)
	d.stamp = rtl.NewVec[uint64](b, "lru", d.regions, 64, 0)
	d.used = rtl.NewReg[uint32](b, "used", 32, 0)
	d.fsm = rtl.NewReg[uint8](b, "state", 4, drvIdle)
	d.until = rtl.NewReg[uint64](b, "until", 64, 0)
	d.faultVPN = rtl.NewReg[uint64](b, "fault_vpn", pte.VPNBits, 0)
	d.victim = rtl.NewReg[uint32](b, "victim", 32, 0)
	d.cursor = rtl.NewReg[uint32](b, "cursor", 32, 0)
	d.sent = rtl.NewReg[uint64](b, "sent", 64, 0)
	d.count = rtl.NewReg[uint32](b, "count", 32, 0)
	d.runStart = rtl.NewVec[uint64](b, "run_start", maxRuns, 32, 0)
	d.runLen = rtl.NewVec[uint16](b, "run_len", maxRuns, 10, 0)
	d.runFirst = rtl.NewVec[uint16](b, "run_first", maxRuns, 10, 0)
	d.runs = rtl.NewReg[uint16](b, "runs", 10, 0)
	d.runNext = rtl.NewReg[uint16](b, "run_next", 10, 0)
	d.runIssued = rtl.NewReg[uint16](b, "run_issued", 10, 0)
	d.runLanded = rtl.NewReg[uint16](b, "run_landed", 10, 0)
	d.hostPhase = rtl.NewReg[uint16](b, "host_phase", 16, 0)
	d.hostChunk = rtl.NewReg[uint32](b, "host_chunk", 32, 0)
	d.updValid = rtl.NewFlag(b, "upd_valid", false)
	d.updPage = rtl.NewReg[uint32](b, "upd_page", 32, 0)
	d.repValid = rtl.NewFlag(b, "rep_valid", false)
	d.repIndex = rtl.NewReg[uint32](b, "rep_index", 32, 0)
	d.faults = rtl.NewReg[uint64](b, "faults", 64, 0)
	d.migrations = rtl.NewReg[uint64](b, "migrations", 64, 0)
	d.evictions = rtl.NewReg[uint64](b, "evictions", 64, 0)
	// cudaMalloc'd pages never fault: mark them in the table.
	for _, r := range l.Device {
		lo := int(r.First*system.PagesPerGroup - l.BaseVPN)
		for p := lo; p < lo+r.Count*system.PagesPerGroup; p++ {
			w := d.table.At(p / 32)
			w.Poke(w.Q() | pageDevice<<(2*(p%32)))
		}
	}
	d.remote.Consumer(b)
	d.migrated.Producer(b)
	d.update.Producer(b)
	d.cmd.Producer(b)
	d.events.Consumer(b)
	d.host.Consumer(b)
	d.hostDone.Producer(b)
	for i := range d.inval {
		d.inval[i].Producer(b)
		d.invalAck[i].Consumer(b)
	}
	return d
}

func (d *umDriver) pageState(page int) int {
	return int(d.table.At(page/32).Q() >> (2 * (page % 32)) & 3)
}

func (d *umDriver) Drive() {
	st := d.fsm.Q()
	d.remote.Ready.Set(d.waiting.Q() < uint32(d.bufSize))
	for i, f := range d.frozen {
		f.Set(d.perSM.At(i).Q() > 0)
	}
	// One PTE write per cycle: a landed page first, else an evicted page.
	switch {
	case d.updValid.Q():
		p := uint64(d.updPage.Q())
		d.update.Valid.Set(true)
		d.update.Bits.Set(d.base + p)
		d.update.PTE.Set(pte.Local(p))
	case st == drvEvictPTE:
		p := uint64(d.cursor.Q())
		d.update.Valid.Set(d.evicting(int(p)) && d.pageState(int(p)) == pageValid)
		d.update.Bits.Set(d.base + p)
		d.update.PTE.Set(pte.Remote(d.base + p))
	default:
		d.update.Valid.Set(false)
	}
	cur := int(d.cursor.Q())
	shoot := st == drvEvictPTE && d.evicting(cur) && d.pageState(cur) == pageRemote
	for i, in := range d.inval {
		in.Valid.Set(shoot && d.sent.Q()&(1<<i) == 0)
		in.Bits.Set(tlb.Invalidate{VPN: d.base + uint64(d.cursor.Q())})
		d.invalAck[i].Ready.Set(true)
	}
	switch st {
	case drvEvictCmd:
		d.cmd.Valid.Set(true)
		d.cmd.Bits.Set(pme.Command{Tag: evictTag, Op: pme.Evict, Pages: uint16(min(d.count.Q(), pme.MaxPagesLimit))})
	case drvFetchCmd:
		r := int(d.runNext.Q())
		d.cmd.Valid.Set(true)
		d.cmd.Bits.Set(pme.Command{Tag: uint16(r), Op: pme.Fetch, Pages: d.runLen.At(r).Q(), First: d.runFirst.At(r).Q()})
	case drvHostCmd:
		left := d.hostPages[d.hostPhase.Q()] - int(d.hostChunk.Q())*pme.MaxPagesLimit
		d.cmd.Valid.Set(true)
		d.cmd.Bits.Set(pme.Command{Tag: hostTag, Op: pme.Evict, Pages: uint16(min(left, pme.MaxPagesLimit))})
	default:
		d.cmd.Valid.Set(false)
	}
	d.events.Ready.Set(!d.updValid.Q())
	d.host.Ready.Set(st == drvIdle)
	d.hostDone.Valid.Set(st == drvHostDone)
	d.hostDone.Bits.Set(d.hostPhase.Q())
	i := int(d.repIndex.Q())
	d.migrated.Valid.Set(d.repValid.Q())
	w := d.reqWalk.At(i).Q()
	d.migrated.Bits.Set(w)
	d.migrated.PTE.Set(pte.Local(w.VPN - d.base))
}

// evicting reports that page is inside the large page being evicted.
func (d *umDriver) evicting(page int) bool {
	return page/system.PagesPerRegion == int(d.victim.Q()) && page < d.pages
}

// evictTag marks the PME command of an eviction; fetch runs use their run
// index and host read-backs hostTag.
const evictTag = hostTag - 1

func (d *umDriver) Eval() {
	now := d.Now()
	waiting := d.waiting.Q()
	busy := false
	arriveSM, replySM := -1, -1

	if d.remote.Fire() {
		w := d.remote.Bits.Get()
		i := d.freeEntry()
		d.reqValid.At(i).Set(1)
		d.reqWalk.At(i).Set(w)
		d.reqSeq.At(i).Set(d.seq.Q())
		d.seq.Set(d.seq.Q() + 1)
		waiting++
		arriveSM = int(w.Requester >> gpu.WarpBits)
		busy = true
	}

	// Reply: a fault whose page is valid goes back to its SM.
	skip := -1
	if d.repValid.Q() {
		if d.migrated.Fire() {
			skip = int(d.repIndex.Q())
			d.reqValid.At(skip).Set(0)
			waiting--
			w := d.reqWalk.At(skip).Q()
			replySM = int(w.Requester >> gpu.WarpBits)
			busy = true
			d.offerReply(skip)
		} else {
			busy = true
		}
	} else if d.offerReply(-1) {
		busy = true
	}
	// Each SM's outstanding fault count: its L1 TLB thaws at zero.
	if arriveSM != replySM {
		if arriveSM >= 0 {
			d.perSM.At(arriveSM).Set(d.perSM.At(arriveSM).Q() + 1)
		}
		if replySM >= 0 {
			d.perSM.At(replySM).Set(d.perSM.At(replySM).Q() - 1)
		}
	}

	// Landing: a PTE write retires; a PME event starts the next.
	if d.updValid.Q() && d.update.Fire() {
		d.updValid.Set(false)
		busy = true
	}
	stateWord := -1
	var stateVal uint64
	setState := func(page, st int) {
		wi := page / 32
		if stateWord != wi {
			if stateWord >= 0 {
				d.table.At(stateWord).Set(stateVal)
			}
			stateWord, stateVal = wi, d.table.At(wi).Q()
		}
		sh := 2 * (page % 32)
		stateVal = stateVal&^(3<<sh) | uint64(st)<<sh
	}
	landedRegion, landed := -1, false
	next := d.fsm.Q()
	if d.events.Fire() {
		busy = true
		ev := d.events.Bits.Get()
		switch {
		case ev.Tag == hostTag:
			c := d.hostChunk.Q() + 1
			d.hostChunk.Set(c)
			next = drvHostCmd
			if int(c)*pme.MaxPagesLimit >= d.hostPages[d.hostPhase.Q()] {
				next = drvHostDone
			}
		case ev.Tag == evictTag:
			c := d.count.Q()
			d.evictions.Set(d.evictions.Q() + uint64(c))
			d.used.Set(d.used.Q() - c)
			next = drvFetchCmd
			if d.overCapacity(d.used.Q() - c) {
				next = d.startEviction()
			}
		default:
			r := int(ev.Tag)
			page := int(d.runStart.At(r).Q()) + int(ev.Page)
			setState(page, pageValid)
			landedRegion, landed = page/system.PagesPerRegion, true
			d.updValid.Set(true)
			d.updPage.Set(uint32(page))
			d.migrations.Set(d.migrations.Q() + 1)
			if ev.Last {
				n := d.runLanded.Q() + 1
				d.runLanded.Set(n)
				if n == d.runs.Q() {
					next = drvIdle
				}
			}
		}
	}

	// The driver proper.
	switch st := d.fsm.Q(); st {
	case drvIdle:
		switch {
		case d.host.Fire():
			ph := d.host.Bits.Get()
			d.hostPhase.Set(ph)
			d.hostChunk.Set(0)
			next = drvHostDone
			if d.hostPages[ph] > 0 {
				next = drvHostCmd
			}
		default:
			if i := d.oldestRemote(); i >= 0 {
				d.faultVPN.Set(d.reqWalk.At(i).Q().VPN)
				d.until.Set(now + d.latency)
				d.faults.Set(d.faults.Q() + 1)
				next = drvLatency
			}
		}
	case drvLatency:
		if now >= d.until.Q() {
			busy = true
			next = drvIdle
			if d.plan = d.prefetch(int(d.faultVPN.Q() - d.base)); d.planFits() {
				d.startFetch(setState)
				next = drvFetchCmd
				if d.overCapacity(d.used.Q() + uint32(len(d.plan))) {
					next = d.startEviction()
				}
			}
		}
	case drvEvictPTE:
		busy = true
		d.evictStep(setState, &next)
	case drvEvictCmd:
		if d.cmd.Fire() {
			next = drvEvictWait
		}
	case drvFetchCmd:
		if d.cmd.Fire() {
			issued := d.runIssued.Q() + 1
			d.runIssued.Set(issued)
			d.runNext.Set((d.runNext.Q() + 1) % d.runs.Q())
			if issued == d.runs.Q() {
				next = drvFetchWait
			}
		}
	case drvHostCmd:
		if d.cmd.Fire() {
			next = drvHostWait
		}
	case drvHostDone:
		if d.hostDone.Fire() {
			next = drvIdle
		}
	}
	if stateWord >= 0 {
		d.table.At(stateWord).Set(stateVal)
	}
	if landed {
		d.resident.At(landedRegion).Set(d.resident.At(landedRegion).Q() + 1)
	}
	if next != d.fsm.Q() {
		d.fsm.Set(next)
		busy = true
	}
	if waiting != d.waiting.Q() {
		d.waiting.Set(waiting)
	}
	// A command or a host-done offered next cycle may be taken then: stay
	// awake to see it.
	switch next {
	case drvFetchCmd, drvEvictCmd, drvHostCmd, drvHostDone, drvEvictPTE:
		busy = true
	}
	if !busy {
		if next == drvLatency {
			d.SleepUntil(d.until.Q())
		} else {
			d.Sleep()
		}
	}
}

// startEviction picks the least recently fetched large page that holds
// valid pages, other than the one the fault is in, and starts unmapping
// it; with none left the fetch goes ahead.
func (d *umDriver) startEviction() uint8 {
	fault := int(d.faultVPN.Q()-d.base) / system.PagesPerRegion
	best := -1
	for r := 0; r < d.regions; r++ {
		if r == fault || d.resident.At(r).Q() == 0 {
			continue
		}
		if best < 0 || d.stamp.At(r).Q() < d.stamp.At(best).Q() {
			best = r
		}
	}
	if best < 0 {
		return drvFetchCmd
	}
	d.victim.Set(uint32(best))
	d.cursor.Set(uint32(d.nextValid(best * system.PagesPerRegion)))
	d.sent.Set(0)
	d.count.Set(0)
	return drvEvictPTE
}

// nextValid is the first valid page at or after page in its large page,
// or the large page's end.
func (d *umDriver) nextValid(page int) int {
	end := min((page/system.PagesPerRegion+1)*system.PagesPerRegion, d.pages)
	for p := page; p < end; p++ {
		if d.pageState(p) == pageValid {
			return p
		}
	}
	return end
}

// evictStep unmaps the victim large page's valid pages one at a time: the
// PTE becomes remote, then every L1 TLB drops the page; the write-back
// command follows the last page.
func (d *umDriver) evictStep(setState func(page, st int), next *uint8) {
	v := int(d.victim.Q())
	end := min((v+1)*system.PagesPerRegion, d.pages)
	page := int(d.cursor.Q())
	if page >= end {
		*next = drvEvictCmd
		if d.count.Q() == 0 {
			*next = drvFetchCmd
		}
		return
	}
	if d.pageState(page) == pageValid {
		// First the PTE: the page is remote from the next cycle on.
		if d.update.Fire() && !d.updValid.Q() {
			setState(page, pageRemote)
			d.resident.At(v).Set(d.resident.At(v).Q() - 1)
			d.count.Set(d.count.Q() + 1)
		}
		return
	}
	// Then the shootdown in every L1 TLB, after which no SM holds the
	// old translation.
	sent := d.sent.Q()
	for i, in := range d.inval {
		if in.Fire() {
			sent |= 1 << i
		}
	}
	all := uint64(1)<<len(d.inval) - 1
	if len(d.inval) == 64 {
		all = ^uint64(0)
	}
	if sent == all {
		sent = 0
		nextPage := end
		for p := page + 1; p < end; p++ {
			if d.pageState(p) == pageValid {
				nextPage = p
				break
			}
		}
		d.cursor.Set(uint32(nextPage))
	}
	if sent != d.sent.Q() {
		d.sent.Set(sent)
	}
}

// offerReply registers the first fault whose page is valid, other than
// skip, as the next reply.
func (d *umDriver) offerReply(skip int) bool {
	for i := range d.bufSize {
		if i == skip || d.reqValid.At(i).Q() == 0 {
			continue
		}
		if d.pageState(int(d.reqWalk.At(i).Q().VPN-d.base)) == pageValid && !(d.updValid.Q() && uint64(d.updPage.Q()) == d.reqWalk.At(i).Q().VPN-d.base) {
			d.repIndex.Set(uint32(i))
			if !d.repValid.Q() {
				d.repValid.Set(true)
			}
			return true
		}
	}
	if d.repValid.Q() {
		d.repValid.Set(false)
	}
	return false
}

func (d *umDriver) freeEntry() int {
	for i := range d.bufSize {
		if d.reqValid.At(i).Q() == 0 {
			return i
		}
	}
	return -1
}

// oldestRemote is the oldest fault whose page is still in host memory and
// not on its way: the next one the driver handles.
func (d *umDriver) oldestRemote() int {
	best := -1
	for i := range d.bufSize {
		if d.reqValid.At(i).Q() == 0 {
			continue
		}
		if d.pageState(int(d.reqWalk.At(i).Q().VPN-d.base)) != pageRemote {
			continue
		}
		if best < 0 || d.reqSeq.At(i).Q() < d.reqSeq.At(best).Q() {
			best = i
		}
	}
	return best
}

// prefetch lists the pages to fetch for a fault on page: its 64 KB basic
// block, and with the tree prefetcher every enclosing node of the 2 MB
// tree (128 KB up to the large page, capped at the allocation's end) that
// is more than half valid or on its way once the pages below are counted
// (UVMSmart paper Section II-B).
func (d *umDriver) prefetch(page int) []uint32 {
	plan := d.plan[:0]
	region := page / system.PagesPerRegion
	regionBase := region * system.PagesPerRegion
	extent := d.extent[region]
	add := func(lo, hi int) {
		for p := lo; p < hi && p < regionBase+extent; p++ {
			if d.pageState(p) == pageRemote && !planned(plan, p) {
				plan = append(plan, uint32(p))
			}
		}
	}
	leaf := page / system.PagesPerGroup * system.PagesPerGroup
	add(leaf, leaf+system.PagesPerGroup)
	if d.tree {
		for size := 2 * system.PagesPerGroup; size <= system.PagesPerRegion; size *= 2 {
			lo := page / size * size
			hi := min(lo+size, regionBase+extent)
			have := 0
			for p := lo; p < hi; p++ {
				if d.pageState(p) != pageRemote || planned(plan, p) {
					have++
				}
			}
			if 2*have <= hi-lo {
				break
			}
			add(lo, hi)
		}
	}
	return plan
}

func planned(plan []uint32, p int) bool {
	for _, q := range plan {
		if int(q) == p {
			return true
		}
	}
	return false
}

// planFits reports whether the plan fits GPU memory at all; a plan larger
// than the capacity is cut back to the faulting page's basic block.
func (d *umDriver) planFits() bool {
	if len(d.plan) > d.capacity {
		d.plan = d.plan[:min(d.capacity, system.PagesPerGroup)]
	}
	return len(d.plan) > 0
}

// overCapacity reports that used pages (valid or on their way, the plan
// included) exceed the managed capacity: a large page must go.
func (d *umDriver) overCapacity(used uint32) bool { return int(used) > d.capacity }

// startFetch marks the plan's pages on their way and splits it into
// contiguous runs, the faulting page's run first with the faulting page as
// its critical page.
func (d *umDriver) startFetch(setState func(page, st int)) {
	plan := d.plan
	sortPages(plan)
	fault := uint32(d.faultVPN.Q() - d.base)
	runs := 0
	critical := 0
	for i := 0; i < len(plan); {
		j := i + 1
		for j < len(plan) && plan[j] == plan[j-1]+1 && j-i < pme.MaxPagesLimit {
			j++
		}
		d.runStart.At(runs).Set(uint64(plan[i]))
		d.runLen.At(runs).Set(uint16(j - i))
		first := uint16(0)
		if fault >= plan[i] && fault < plan[i]+uint32(j-i) {
			first = uint16(fault - plan[i])
			critical = runs
		}
		d.runFirst.At(runs).Set(first)
		runs++
		i = j
	}
	for _, p := range plan {
		setState(int(p), pageInFlight)
	}
	d.runs.Set(uint16(runs))
	d.runNext.Set(uint16(critical))
	d.runIssued.Set(0)
	d.runLanded.Set(0)
	d.used.Set(d.used.Q() + uint32(len(plan)))
	region := int(fault) / system.PagesPerRegion
	d.stamp.At(region).Set(d.Now() + 1)
}

// sortPages is an insertion sort: plans are short and nearly sorted.
func sortPages(p []uint32) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j] < p[j-1]; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}
