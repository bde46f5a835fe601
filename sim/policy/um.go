package policy

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/accessctr"
	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// UM is the fault-based NVIDIA Unified Memory driver as the UVMSmart
// simulator models it in its accurate-simulation mode (gpgpu-sim_UVMSmart,
// gmmu_t::cycle in gpgpu-sim/gpu-sim.cc; UVMSmart paper Section II), with
// its prefetching, eviction and remote-access decisions taken from the
// shared policy menu (package sim/uvm, docs/uvm-menu.md). The um policy
// runs it with the [um] section of the configuration (defaults: tree
// prefetcher, LRU 2 MB eviction, no remote access: the baseline), the
// uvmsmart policy with the [uvmsmart] section (uvmsmart.go).
//
//   - Every translated access is counted where the GMMU's access counters
//     count it, at the L1 TLB lookup (UVMSmart Section IV): the driver taps
//     the L1 TLBs' response ports and counts each hit, local or remote, in
//     sim/uvm (Count: the 64 KB block's access counter, LFU, recency),
//     with the response's write bit, so that LFU eviction knows the 2 MB
//     regions that were written and prefers read-only ones (Section IV,
//     "Access Counter Based Page Replacement"). A miss is counted at the
//     hit of its replayed lookup, so each access counts once.
//   - A walk that finds a remote PTE comes to the driver. If the page is in
//     host memory, the access is a read and the menu says to serve it
//     remotely (sim/uvm Decide on the block's counter with this access
//     included: remote access mode, Eq. 1), it is a zero-copy access: the
//     driver answers at once with the remote PTE marked read-only, which
//     the router installs in the SM's L1 TLB as a zero-copy mapping; every
//     load through the mapping then takes the data path's remote side, the
//     remote access latency (200 cycles, UVMSmart Table I) after its lines
//     have crossed PCIe (gpu.Memory). A write
//     always migrates (Section III-C: the page is invalidated in host
//     memory and copied to the device exclusively): a store walks with its
//     write bit and becomes a far fault whatever the count, and a store
//     that finds a zero-copy mapping in its L1 TLB misses on the read-only
//     bit, walks, and faults the same way.
//   - Otherwise it is a far fault into the fault buffer, and the faulting
//     SM's L1 TLB is frozen (new misses are refused) until every fault of
//     that SM is resolved.
//   - An access through a zero-copy mapping is counted at its TLB hit like
//     any other. The hit that brings the block's count to the threshold
//     raises a migration of the page (UVMSmart Section IV: the counters
//     decide at every access whether a block migrates): a fault-buffer
//     entry that is handled as a far fault but answers no SM, since the
//     access itself was served remotely. Its page's mappings are shot
//     down once the fetch is in, as for any fetched page.
//   - The driver handles one fault at a time: the fault latency (45 us,
//     UVMMU Table I), then sim/uvm HandleFaults picks the pages to fetch
//     (the prefetcher's) and the victims; victims are unmapped (PTE remote,
//     then a shootdown in every L1 TLB) and written back, then the fetch
//     moves as contiguous runs, critical run first. The next fault's
//     latency starts after this transfer is in, as in the simulator's
//     serial PCIe read stage queue, where each fault is a PAGE_FAULT entry
//     followed by its transfer.
//   - Faults on pages already valid or on their way are merged: they cost
//     no latency and are answered when their page lands.
//   - Every landed page's PTE is written and each fault on it is replayed:
//     the router fills the SM's L1 TLB and the lookup is retried. Once a
//     fetch is in, the zero-copy mappings of its pages that L1 TLBs may
//     hold are shot down.
//
// The driver block's page table, fault buffer and state machine are
// registers, as the host-side software's memory; the menu's state (resident
// set, counters, eviction order) is the sim/uvm Driver, software consulted
// by the block and changed only in its Eval. The data moves through the
// same PME and PCIe link blocks as UVMMU's.
type UM struct {
	cfg     *config.Config
	name    string
	section *config.UM
	sys     *system.System
	driver  *umDriver
	PME     *pme.Engine
	Link    *pcie.Link
}

func newUM(cfg *config.Config) *UM { return &UM{cfg: cfg, name: "um", section: &cfg.UM} }

// Name is the policy's registry name: "um", or "uvmsmart".
func (p *UM) Name() string { return p.name }

// Attach maps every managed page remote (in host memory, host frame equal
// to its page number) and every cudaMalloc'd page local, and builds the
// link, the PME, the menu and the driver.
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
	menu, err := uvm.New(p.section.Menu(p.cfg.Run.Seed), s.Layout.Pages, s.Layout.ManagedPages)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.driver = newUMDriver(s, p.cfg, p.section, p.name, p.PME, menu)
	// Loads through a zero-copy mapping: UVMSmart Table I's 200 cycles per
	// remote access after the lines cross PCIe.
	s.Memory.SetRemoteTiming(uint64(p.section.RemoteLatencyCycles), p.cfg.TransferTime(p.cfg.PCIe.BandwidthGBs))
	// Evictions unmap pages whose local PTEs may be queued for a fill.
	s.Router.Watch(s.GMMU.Update)
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

// ZeroCopyMappings is the number of walks the driver answered with a
// zero-copy mapping instead of migrating.
func (p *UM) ZeroCopyMappings() uint64 { return p.driver.zeroCopy.Q() }

// Menu is the driver's menu state: resident set, access counters,
// oversubscription.
func (p *UM) Menu() *uvm.Driver { return p.driver.menu }

// Busy names the driver while it holds faults or zero-copy accesses.
func (p *UM) Busy() []string {
	d := p.driver
	var names []string
	if n := d.waiting.Q(); n > 0 {
		names = append(names, fmt.Sprintf("%s (%d faults and zero-copy accesses waiting, state %d)", d.Path(), n, d.fsm.Q()))
	}
	return names
}

// Check verifies SPEC 6.5 between cycles: a page the driver holds valid has
// a local PTE with its own frame (or has it written this cycle), a page it
// holds remote a remote PTE with its host frame; the pages valid or on
// their way are the menu's resident set (but for victims still being
// unmapped) and fit the managed capacity; and each large page's resident
// count matches its pages.
func (p *UM) Check() error {
	d := p.driver
	s := p.sys
	perRegion := make([]int, d.regions)
	total := 0
	space := d.menu.Space()
	// Victims the menu has dropped and the driver has not unmapped yet.
	unmapping := map[int]bool{}
	if d.fsm.Q() == drvUnmap {
		for _, v := range d.victims[min(int(d.cursor.Q()), len(d.victims)):] {
			unmapping[v] = true
		}
	}
	for _, r := range s.Layout.Managed {
		lo := int(r.First*system.PagesPerGroup - d.base)
		for page := lo; page < lo+r.Count*system.PagesPerGroup; page++ {
			e := s.GMMU.Read(d.base + uint64(page))
			st := d.pageState(page)
			if (st == pageValid && !unmapping[page] || st == pageInFlight) != space.IsResident(page) {
				return fmt.Errorf("page %#x is in state %d but the menu holds it resident = %t", d.base+uint64(page), st, space.IsResident(page))
			}
			switch st {
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
			case pageFixed:
				return fmt.Errorf("managed page %#x is marked unmanaged", d.base+uint64(page))
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
	// pageFixed: cudaMalloc'd, or outside every allocation (the tail of an
	// allocation's last 2 MB region): never faults, never moves.
	pageFixed = 3
)

// Fault-buffer entry kinds.
const (
	entryFree     = 0
	entryFault    = 1 // a far fault: answered once its page is valid
	entryZeroCopy = 2 // a remote access: answered with the remote PTE
	entryPromote  = 3 // a migration raised by the counters: handled as a fault, answers no SM
)

// Driver states.
const (
	drvIdle      = iota
	drvLatency   // the fault's handling latency
	drvUnmap     // unmapping the victims: PTE remote, then a shootdown, per page
	drvEvictCmd  // handing the PME a write-back of up to MaxPagesLimit pages
	drvEvictWait // waiting for the write-back to reach the host
	drvFetchCmd  // handing the PME the fetch runs
	drvFetchWait // waiting for the last page of the fetch
	drvShoot     // shooting down zero-copy mappings of the fetched pages
	drvHostCmd   // host phase: reading the host's range back
	drvHostWait
	drvHostDone
)

// umDriver is the UM driver and the fault buffer in front of it.
type umDriver struct {
	rtl.Base

	remote    gpu.Resolved
	migrated  gpu.Resolved
	responses []tlb.ResponsePort // tapped: the L1 TLBs' results, for the access counters
	frozen    []*rtl.Wire[bool]
	inval     []*rtl.Decoupled[tlb.Invalidate]
	invalAck  []*rtl.Decoupled[tlb.Invalidate]
	update    ptw.PTEPort[uint64]
	cmd       *rtl.Decoupled[pme.Command]
	events    *rtl.Decoupled[pme.Event]
	host      *rtl.Decoupled[uint16]
	hostDone  *rtl.Decoupled[uint16]

	base      uint64 // first VPN of the layout
	pages     int
	regions   int
	capacity  int // managed pages the GPU memory holds
	latency   uint64
	bufSize   int
	hostPages []int // per phase: pages the host reads back

	// The menu: the driver software's resident set, counters and victim
	// order. Its plan lists are read by Drive in the cycles after the Eval
	// that made them, like registers.
	menu     *uvm.Driver
	victims  []int  // pages the current batch evicts (plan.Evict)
	mappings []int  // fetched pages whose zero-copy mapping may sit in a TLB
	batch    [1]int // the fault batch handed to the menu: one fault at a time

	// Fault buffer: faults and zero-copy accesses waiting for an answer.
	reqKind *rtl.Vec[uint8]
	reqWalk *rtl.Vec[ptw.Walk]
	reqSeq  *rtl.Vec[uint64] // arrival order
	seq     *rtl.Reg[uint64]
	waiting *rtl.Reg[uint32]
	perSM   *rtl.Vec[uint16] // faults outstanding per SM: its TLB is frozen while non-zero

	// Driver tables.
	table    *rtl.Vec[uint64] // page states, 32 pages of 2 bits per word
	zcMapped *rtl.Vec[uint64] // per page: a zero-copy reply installed its remote PTE in a TLB
	raised   *rtl.Vec[uint64] // per page: an entryPromote for it is in the fault buffer
	resident *rtl.Vec[uint16] // valid pages per large page

	// Driver state machine.
	fsm       *rtl.Reg[uint8]
	until     *rtl.Reg[uint64] // end of the fault latency
	faultVPN  *rtl.Reg[uint64]
	cursor    *rtl.Reg[uint32] // index into victims or mappings
	sent      *rtl.Reg[uint64] // TLBs that took the current shootdown
	evictLeft *rtl.Reg[uint32] // unmapped pages not yet handed to the PME
	evictCmd  *rtl.Reg[uint32] // pages of the write-back command in flight
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

	// Reply: the entry offered to the router, and whether it carries the
	// remote PTE (a zero-copy access to a page still in host memory).
	repValid  *rtl.Reg[bool]
	repIndex  *rtl.Reg[uint32]
	repRemote *rtl.Reg[bool]
	// The fault buffer is searched for a reply only when an entry, a page
	// state or a PTE write changed in the last cycle (rescan) or a
	// zero-copy reply held back while a fetch started may go (nextDue).
	rescan  *rtl.Reg[bool]
	nextDue *rtl.Reg[uint64]
	// quiet: the last search found nothing to answer or free, and since
	// then nothing but arrivals changed, so only the entry that arrived
	// last cycle (arrival) can be answerable now: the search looks at it
	// alone and finds what the whole search would.
	quiet   *rtl.Reg[bool]
	arrival *rtl.Reg[uint32]

	faults     *rtl.Reg[uint64]
	migrations *rtl.Reg[uint64]
	evictions  *rtl.Reg[uint64]
	zeroCopy   *rtl.Reg[uint64]
}

// maxRuns bounds the contiguous runs of one fetch: every prefetcher stays
// inside the faulting page's 2 MB region, whose 512 pages hold at most 256
// runs of missing pages.
const maxRuns = system.PagesPerRegion / 2

func newUMDriver(s *system.System, cfg *config.Config, sec *config.UM, name string, e *pme.Engine, menu *uvm.Driver) *umDriver {
	l := &s.Layout
	d := &umDriver{
		remote: s.Router.Remote, migrated: s.Router.Migrated, update: s.GMMU.Update,
		cmd: e.Cmd, events: e.Events, host: s.Dispatcher.Host, hostDone: s.Dispatcher.HostDone,
		base:     l.BaseVPN,
		pages:    l.Pages,
		regions:  (l.Pages + system.PagesPerRegion - 1) / system.PagesPerRegion,
		capacity: l.ManagedPages,
		latency:  cfg.Cycles(sec.FaultLatencyUs),
		bufSize:  sec.FaultBuffer,
		menu:     menu,
		victims:  make([]int, 0, system.PagesPerRegion),
		mappings: make([]int, 0, system.PagesPerRegion),
	}
	for _, t := range s.TLBs {
		d.responses = append(d.responses, t.Resp)
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
	s.Sim.Add(d, name+".driver")
	b := &d.Base
	d.reqKind = rtl.NewVec[uint8](b, "req_kind", d.bufSize, 2, entryFree)
	d.reqWalk = rtl.NewVecOf(b, "req_walk", d.bufSize, ptw.WalkBits, ptw.Walk{})
	d.reqSeq = rtl.NewVec[uint64](b, "req_seq", d.bufSize, 64, 0)
	d.seq = rtl.NewReg[uint64](b, "seq", 64, 0)
	d.waiting = rtl.NewReg[uint32](b, "waiting", 32, 0)
	d.perSM = rtl.NewVec[uint16](b, "per_sm", len(s.TLBs), 16, 0)
	d.table = rtl.NewVec[uint64](b, "page_state", (d.pages+31)/32, 64, 0)
	d.zcMapped = rtl.NewVec[uint64](b, "zc_mapped", (d.pages+63)/64, 64, 0)
	d.raised = rtl.NewVec[uint64](b, "raised", (d.pages+63)/64, 64, 0)
	d.resident = rtl.NewVec[uint16](b, "resident", d.regions, 10, 0)
	d.fsm = rtl.NewReg[uint8](b, "state", 4, drvIdle)
	d.until = rtl.NewReg[uint64](b, "until", 64, 0)
	d.faultVPN = rtl.NewReg[uint64](b, "fault_vpn", pte.VPNBits, 0)
	d.cursor = rtl.NewReg[uint32](b, "cursor", 32, 0)
	d.sent = rtl.NewReg[uint64](b, "sent", 64, 0)
	d.evictLeft = rtl.NewReg[uint32](b, "evict_left", 32, 0)
	d.evictCmd = rtl.NewReg[uint32](b, "evict_cmd", 10, 0)
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
	d.repRemote = rtl.NewFlag(b, "rep_remote", false)
	d.rescan = rtl.NewFlag(b, "rescan", false)
	d.nextDue = rtl.NewReg[uint64](b, "next_due", 64, rtl.Never)
	d.quiet = rtl.NewFlag(b, "quiet", false)
	d.arrival = rtl.NewReg[uint32](b, "arrival", 32, 0)
	d.faults = rtl.NewReg[uint64](b, "faults", 64, 0)
	d.migrations = rtl.NewReg[uint64](b, "migrations", 64, 0)
	d.evictions = rtl.NewReg[uint64](b, "evictions", 64, 0)
	d.zeroCopy = rtl.NewReg[uint64](b, "zero_copy", 64, 0)
	// Only managed pages fault and move: every other page of the layout
	// (cudaMalloc'd ones and the tails of the managed allocations' last
	// regions, which the menu's prefetchers may pick) is fixed.
	for w := 0; w < d.table.Len(); w++ {
		d.table.At(w).Poke(^uint64(0))
	}
	for _, r := range l.Managed {
		lo := int(r.First*system.PagesPerGroup - l.BaseVPN)
		for p := lo; p < lo+r.Count*system.PagesPerGroup; p++ {
			w := d.table.At(p / 32)
			w.Poke(w.Q() &^ (3 << (2 * (p % 32))))
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
	for _, r := range d.responses {
		b.Listen(r.Valid, r.Ready, r.Bits, r.PTE)
	}
	return d
}

func (d *umDriver) pageState(page int) int {
	return int(d.table.At(page/32).Q() >> (2 * (page % 32)) & 3)
}

func (d *umDriver) isMapped(page int) bool {
	return d.zcMapped.At(page/64).Q()>>(page%64)&1 != 0
}

func (d *umDriver) isRaised(page int) bool {
	return d.raised.At(page/64).Q()>>(page%64)&1 != 0
}

// markRaised sets the raised bit of the walk's page if raised and clears
// that of page freed (if not -1), with one write per word.
func (d *umDriver) markRaised(w ptw.Walk, raised bool, freed int) {
	if freed >= 0 {
		word := d.raised.At(freed / 64)
		v := word.Q() &^ (1 << (freed % 64))
		if page := int(w.VPN - d.base); raised && page/64 == freed/64 {
			v |= 1 << (page % 64)
			raised = false
		}
		word.Set(v)
	}
	if raised {
		page := int(w.VPN - d.base)
		word := d.raised.At(page / 64)
		word.Set(word.Q() | 1<<(page%64))
	}
}

// unmapPage is the page of the victim or mapping list under the cursor in
// the unmapping states, or -1.
func (d *umDriver) unmapPage() int {
	c := int(d.cursor.Q())
	switch d.fsm.Q() {
	case drvUnmap:
		if c < len(d.victims) {
			return d.victims[c]
		}
	case drvShoot:
		if c < len(d.mappings) {
			return d.mappings[c]
		}
	}
	return -1
}

func (d *umDriver) Drive() {
	st := d.fsm.Q()
	d.remote.Ready.Set(d.waiting.Q() < uint32(d.bufSize))
	for i, f := range d.frozen {
		f.Set(d.perSM.At(i).Q() > 0)
	}
	// One PTE write per cycle: a landed page first, else a victim page.
	page := d.unmapPage()
	switch {
	case d.updValid.Q():
		p := uint64(d.updPage.Q())
		d.update.Valid.Set(true)
		d.update.Bits.Set(d.base + p)
		d.update.PTE.Set(pte.Local(p))
	case st == drvUnmap && page >= 0:
		p := uint64(page)
		d.update.Valid.Set(d.pageState(page) == pageValid)
		d.update.Bits.Set(d.base + p)
		d.update.PTE.Set(pte.Remote(d.base + p))
	default:
		d.update.Valid.Set(false)
	}
	// A victim is shot down once its PTE is remote; a fetched page's
	// zero-copy mapping at once.
	shoot := page >= 0 && (st == drvShoot || d.pageState(page) == pageRemote)
	for i, in := range d.inval {
		in.Valid.Set(shoot && d.sent.Q()&(1<<i) == 0)
		in.Bits.Set(tlb.Invalidate{VPN: d.base + uint64(max(page, 0))})
		d.invalAck[i].Ready.Set(true)
	}
	switch st {
	case drvEvictCmd:
		d.cmd.Valid.Set(true)
		d.cmd.Bits.Set(pme.Command{Tag: evictTag, Op: pme.Evict, Pages: uint16(min(d.evictLeft.Q(), pme.MaxPagesLimit))})
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
	if d.repRemote.Q() {
		// Read-only: a store through the mapping misses in the L1 TLB and
		// comes back here as a write, which migrates the page.
		d.migrated.PTE.Set(pte.Remote(w.VPN).AsReadOnly())
	} else {
		d.migrated.PTE.Set(pte.Local(w.VPN - d.base))
	}
}

// evictTag marks the PME command of a write-back; fetch runs use their run
// index and host read-backs hostTag.
const evictTag = hostTag - 1

func (d *umDriver) Eval() {
	now := d.Now()
	waiting := d.waiting.Q()
	busy := false
	arriveSM, replySM := -1, -1
	freed := -1                     // the page of a raised migration retired this cycle
	searched, found := false, false // a search ran; it answered or freed an entry

	// The driver starts a fetch this cycle: no zero-copy reply is offered
	// for a page that is about to be on its way (see offerReply).
	fetching := d.fsm.Q() == drvLatency && now >= d.until.Q()

	// The access counters: one count per L1 TLB hit on a managed page.
	// While a response is offered the tap stays awake, since the next one
	// may carry the same bits and wake nothing. A hit through a zero-copy
	// mapping whose count reaches the threshold raises the page's
	// migration, one per cycle and only into a free entry the remote port
	// does not take this cycle; a hit that cannot raise it leaves it to the
	// next one.
	raise, raiseWalk := !d.remote.Fire() && waiting < uint32(d.bufSize), ptw.Walk{}
	raised := false
	for _, r := range d.responses {
		if !r.Valid.Get() {
			continue
		}
		busy = true
		res := r.Bits.Get()
		if !r.Ready.Get() || res.Status != tlb.Hit {
			continue
		}
		page := int(res.VPN - d.base)
		if d.pageState(page) == pageFixed {
			continue
		}
		if err := d.menu.Count(page, res.Write); err != nil {
			panic(fmt.Sprintf("%s: %v", d.Path(), err))
		}
		// Only a hit on a zero-copy mapping (a remote PTE) raises: a hit on
		// a victim's local PTE between its unmapping and its shootdown is
		// not one.
		if raise && !raised && r.PTE.Get().IsRemote() && d.pageState(page) == pageRemote && !d.isRaised(page) {
			if dec, _ := d.menu.ShouldMigrate(page, res.Write); dec == uvm.Migrate {
				raised, raiseWalk = true, ptw.Walk{VPN: res.VPN, Write: res.Write}
			}
		}
	}
	arrival := -1 // the entry that arrives this cycle
	if raised {
		arrival = d.enqueue(entryPromote, raiseWalk)
		waiting++
	}

	if d.remote.Fire() {
		w := d.remote.Bits.Get()
		page := int(w.VPN - d.base)
		kind := uint8(entryFault)
		if d.pageState(page) == pageRemote {
			c := d.menu.Counters().Get(page / uvm.PagesPerBlock)
			c.Count = min(c.Count+1, accessctr.MaxCount)
			if d.menu.Decide(c, w.Write) == uvm.Remote {
				kind = entryZeroCopy
			}
		}
		arrival = d.enqueue(kind, w)
		waiting++
		if kind == entryFault {
			arriveSM = int(w.Requester >> gpu.WarpBits)
		}
		busy = true
	}

	// Reply: a fault whose page is valid, or a zero-copy access, goes to
	// its SM.
	wake := d.nextDue.Q()
	if d.repValid.Q() {
		busy = true
		if d.migrated.Fire() {
			i := int(d.repIndex.Q())
			if d.reqKind.At(i).Q() == entryFault {
				replySM = int(d.reqWalk.At(i).Q().Requester >> gpu.WarpBits)
			} else {
				d.zeroCopy.Set(d.zeroCopy.Q() + 1)
			}
			d.reqKind.At(i).Set(entryFree)
			waiting--
			_, _, freed = d.offerReply(i, fetching, -1)
		}
	} else if d.rescan.Q() || now >= wake {
		only := -1
		if d.quiet.Q() && wake == rtl.Never {
			only = int(d.arrival.Q())
		}
		var offered bool
		offered, wake, freed = d.offerReply(-1, fetching, only)
		busy = busy || offered
		searched, found = true, offered || freed >= 0
	}
	if freed >= 0 {
		waiting--
	}
	d.markRaised(raiseWalk, raised, freed)
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
			c := d.evictCmd.Q()
			d.evictions.Set(d.evictions.Q() + uint64(c))
			next = d.afterUnmap()
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
					if len(d.mappings) > 0 {
						next = drvShoot
						d.cursor.Set(0)
						d.sent.Set(0)
					}
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
		case d.rescan.Q():
			// The set of faults to handle changes only with the events
			// that set rescan, so the buffer is searched only then.
			if i := d.oldestFault(); i >= 0 {
				d.faultVPN.Set(d.reqWalk.At(i).Q().VPN)
				d.until.Set(now + d.latency)
				d.faults.Set(d.faults.Q() + 1)
				next = drvLatency
			}
		}
	case drvLatency:
		if fetching {
			busy = true
			next = d.handleFault(setState)
		}
	case drvUnmap:
		busy = true
		d.unmapStep(setState, &next)
	case drvEvictCmd:
		if d.cmd.Fire() {
			n := min(d.evictLeft.Q(), pme.MaxPagesLimit)
			d.evictCmd.Set(n)
			d.evictLeft.Set(d.evictLeft.Q() - n)
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
	case drvShoot:
		busy = true
		d.unmapStep(setState, &next)
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
	// A command or a host-done offered next cycle may be taken then, and
	// the unmapping states move every cycle: stay awake.
	switch next {
	case drvFetchCmd, drvEvictCmd, drvHostCmd, drvHostDone, drvUnmap, drvShoot:
		busy = true
	}
	if waiting != d.waiting.Q() {
		d.waiting.Set(waiting)
	}
	changed := d.migrated.Fire() || d.update.Fire() || d.events.Fire() || next != d.fsm.Q()
	rescan := raised || d.remote.Fire() || changed
	if rescan != d.rescan.Q() {
		d.rescan.Set(rescan)
	}
	quiet := d.quiet.Q()
	if searched {
		quiet = !found
	}
	if quiet = quiet && !changed; quiet != d.quiet.Q() {
		d.quiet.Set(quiet)
	}
	if arrival >= 0 {
		d.arrival.Set(uint32(arrival))
	}
	busy = busy || rescan
	if !busy {
		if next == drvLatency {
			wake = min(wake, d.until.Q())
		}
		d.SleepUntil(wake)
	}
}

// handleFault runs the menu on the fault whose latency is over: the
// victims are unmapped and written back first, then the fetch moves.
func (d *umDriver) handleFault(setState func(page, st int)) uint8 {
	d.batch[0] = int(d.faultVPN.Q() - d.base)
	plan, err := d.menu.HandleFaults(d.batch[:])
	if err != nil {
		panic(fmt.Sprintf("%s: %v", d.Path(), err))
	}
	d.victims = append(d.victims[:0], plan.Evict...)
	runs := d.startFetch(plan.Fetch, setState)
	d.cursor.Set(0)
	d.sent.Set(0)
	switch {
	case len(d.victims) > 0:
		return drvUnmap
	case runs > 0:
		return drvFetchCmd
	}
	return drvIdle
}

// afterUnmap is the next state once the victims are unmapped or a
// write-back has reached the host: the next write-back, the fetch, or
// idle when every page was deferred.
func (d *umDriver) afterUnmap() uint8 {
	switch {
	case d.evictLeft.Q() > 0:
		return drvEvictCmd
	case d.runs.Q() > 0:
		return drvFetchCmd
	}
	return drvIdle
}

// unmapStep works on the page under the cursor. A victim's PTE is made
// remote first (from the next cycle on a walk finds it in host memory),
// then every L1 TLB drops it; a fetched page whose zero-copy mapping a TLB
// may hold is only shot down. A tail page outside its allocation, which
// the menu may have fetched, has nothing to unmap.
func (d *umDriver) unmapStep(setState func(page, st int), next *uint8) {
	page := d.unmapPage()
	if page < 0 {
		*next = drvIdle
		if d.fsm.Q() == drvUnmap {
			*next = d.afterUnmap()
		}
		return
	}
	if d.fsm.Q() == drvUnmap {
		switch d.pageState(page) {
		case pageValid:
			if d.update.Fire() && !d.updValid.Q() {
				setState(page, pageRemote)
				r := page / system.PagesPerRegion
				d.resident.At(r).Set(d.resident.At(r).Q() - 1)
				d.evictLeft.Set(d.evictLeft.Q() + 1)
			}
			return
		case pageFixed:
			d.cursor.Set(d.cursor.Q() + 1)
			return
		}
	}
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
		d.cursor.Set(d.cursor.Q() + 1)
	}
	if sent != d.sent.Q() {
		d.sent.Set(sent)
	}
}

// unmapping reports that the victim page's PTE is made remote this cycle:
// its state is still valid, but a local PTE offered now would reach the
// router after the write and could not be known stale there.
func (d *umDriver) unmapping(page int) bool {
	return d.fsm.Q() == drvUnmap && d.update.Fire() && !d.updValid.Q() && d.unmapPage() == page
}

// offerReply registers the first entry other than skip that can be
// answered as the next reply (only that entry when only is not -1): a
// fault or zero-copy access whose page is
// valid (its PTE write done) gets the local PTE; a zero-copy access whose
// page is still in host memory gets the remote PTE, and the page is marked
// as mapped in a TLB. In the cycle the driver starts a fetch no remote PTE
// is offered, so that every zero-copy mapping of a fetched page is marked
// before the fetch collects them. A raised migration whose page is valid
// answers nobody: the first one found is freed here, and its page is
// returned as freed (-1 if none). It reports whether it offered a reply
// and, if not, the cycle a held-back zero-copy reply may go.
func (d *umDriver) offerReply(skip int, fetching bool, only int) (offered bool, wake uint64, freed int) {
	now := d.Now()
	wake, freed = rtl.Never, -1
	left := d.waiting.Q() // occupied entries: the search stops after the last
	first, end := 0, d.bufSize
	if only >= 0 {
		first, end = only, only+1
	}
	for i := first; i < end && left > 0; i++ {
		kind := d.reqKind.At(i).Q()
		if kind == entryFree {
			continue
		}
		left--
		if i == skip {
			continue
		}
		page := int(d.reqWalk.At(i).Q().VPN - d.base)
		st := d.pageState(page)
		valid := st == pageValid && !(d.updValid.Q() && int(d.updPage.Q()) == page) && !d.unmapping(page)
		remote := false
		switch {
		case kind == entryPromote:
			if valid && freed < 0 {
				d.reqKind.At(i).Set(entryFree)
				freed = page
			}
			continue
		case valid:
		case kind == entryZeroCopy && st == pageRemote:
			if fetching {
				wake = min(wake, now+1)
				continue
			}
			remote = true
			w := d.zcMapped.At(page / 64)
			if bit := uint64(1) << (page % 64); w.Q()&bit == 0 {
				w.Set(w.Q() | bit)
			}
		default:
			continue
		}
		d.repIndex.Set(uint32(i))
		if remote != d.repRemote.Q() {
			d.repRemote.Set(remote)
		}
		if !d.repValid.Q() {
			d.repValid.Set(true)
		}
		return true, now, freed
	}
	if d.repValid.Q() {
		d.repValid.Set(false)
	}
	if wake != d.nextDue.Q() {
		d.nextDue.Set(wake)
	}
	return false, wake, freed
}

// enqueue places an entry of kind for walk w in the first free slot of
// the fault buffer, stamped with its arrival order, and returns the slot.
// At most one entry arrives per cycle.
func (d *umDriver) enqueue(kind uint8, w ptw.Walk) int {
	i := d.freeEntry()
	d.reqKind.At(i).Set(kind)
	d.reqWalk.At(i).Set(w)
	d.reqSeq.At(i).Set(d.seq.Q())
	d.seq.Set(d.seq.Q() + 1)
	return i
}

func (d *umDriver) freeEntry() int {
	for i := range d.bufSize {
		if d.reqKind.At(i).Q() == entryFree {
			return i
		}
	}
	return -1
}

// oldestFault is the oldest fault whose page is still in host memory and
// not on its way: the next one the driver handles.
func (d *umDriver) oldestFault() int {
	best := -1
	left := d.waiting.Q() // occupied entries: the search stops after the last
	for i := 0; i < d.bufSize && left > 0; i++ {
		kind := d.reqKind.At(i).Q()
		if kind == entryFree {
			continue
		}
		left--
		if kind != entryFault && kind != entryPromote {
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

// startFetch marks the plan's managed pages (ascending) on their way,
// collects those with a zero-copy mapping, and splits them into contiguous
// runs, the faulting page's run first with the faulting page as its
// critical page. It returns the number of runs.
func (d *umDriver) startFetch(fetch []int, setState func(page, st int)) int {
	fault := int(d.faultVPN.Q() - d.base)
	d.mappings = d.mappings[:0]
	runs, critical := 0, 0
	for i := 0; i < len(fetch); {
		if d.pageState(fetch[i]) == pageFixed {
			i++
			continue
		}
		j := i + 1
		for j < len(fetch) && fetch[j] == fetch[j-1]+1 && j-i < pme.MaxPagesLimit && d.pageState(fetch[j]) != pageFixed {
			j++
		}
		d.runStart.At(runs).Set(uint64(fetch[i]))
		d.runLen.At(runs).Set(uint16(j - i))
		first := uint16(0)
		if fault >= fetch[i] && fault < fetch[j-1]+1 {
			first = uint16(fault - fetch[i])
			critical = runs
		}
		d.runFirst.At(runs).Set(first)
		runs++
		i = j
	}
	mapWord, mapVal := -1, uint64(0)
	for _, p := range fetch {
		if d.pageState(p) == pageFixed {
			continue
		}
		setState(p, pageInFlight)
		if !d.isMapped(p) {
			continue
		}
		d.mappings = append(d.mappings, p)
		if mapWord != p/64 {
			if mapWord >= 0 {
				d.zcMapped.At(mapWord).Set(mapVal)
			}
			mapWord, mapVal = p/64, d.zcMapped.At(p/64).Q()
		}
		mapVal &^= 1 << (p % 64)
	}
	if mapWord >= 0 {
		d.zcMapped.At(mapWord).Set(mapVal)
	}
	d.runs.Set(uint16(runs))
	d.runNext.Set(uint16(critical))
	d.runIssued.Set(0)
	d.runLanded.Set(0)
	return runs
}
