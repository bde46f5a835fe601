// Package umdriver is the fault-based NVIDIA Unified Memory driver and the
// fault buffer in front of it, as the UVMSmart simulator models them in
// its accurate-simulation mode (gpgpu-sim_UVMSmart, gmmu_t::cycle in
// gpgpu-sim/gpu-sim.cc; UVMSmart paper Section II), with its prefetching,
// eviction and remote-access decisions taken from the shared policy menu
// (package sim/uvm, docs/uvm-menu.md). The um and uvmsmart policies
// (sim/policy) attach it with their configuration sections.
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
//     have crossed PCIe (gpu.Memory). A write always migrates (Section
//     III-C: the page is invalidated in host memory and copied to the
//     device exclusively): a store walks with its write bit and becomes a
//     far fault whatever the count, and a store that finds a zero-copy
//     mapping in its L1 TLB misses on the read-only bit, walks, and
//     faults the same way.
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
package umdriver

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/accessctr"
	"github.com/uvmmu/uvmmu/blocks/migrate"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// Ports are the driver's wires, all of them other blocks' ports; the
// per-SM lists are in SM order.
type Ports struct {
	Remote    ptw.PTEPort[ptw.Walk] // in: walks that found a remote PTE (the router's)
	Migrated  ptw.PTEPort[ptw.Walk] // out: faults answered, zero-copy mappings
	Responses []tlb.ResponsePort    // tapped: the L1 TLBs' results, for the access counters
	Frozen    []*rtl.Wire[bool]     // out: an SM's L1 TLB refuses misses while it has faults
	Inval     []*rtl.Decoupled[tlb.Invalidate]
	InvalAck  []*rtl.Decoupled[tlb.Invalidate]
	Update    ptw.PTEPort[uint64] // out: the GMMU's page-table writes
	Cmd       *rtl.Decoupled[pme.Command]
	Events    *rtl.Decoupled[pme.Event]
	Host      *rtl.Decoupled[uint16] // in: a host phase starts
	HostDone  *rtl.Decoupled[uint16] // out: its read-back is over
	// Launches are tapped for the kernel boundaries the menu's smart
	// runtime needs (the dispatcher's launch ports); nil without it.
	Launches []*rtl.Decoupled[gpu.Launch]
}

// Config is the address space the driver manages and its parameters.
type Config struct {
	BaseVPN uint64         // first page of the layout
	Pages   int            // pages of the layout
	Managed []system.Range // the managed allocations, in page-groups; every other page is fixed
	// Capacity is the managed pages GPU memory holds.
	Capacity int
	// LatencyCycles is the fault handling latency (um.fault_latency_us).
	LatencyCycles uint64
	// FaultBuffer is the fault buffer's entries (um.fault_buffer), in
	// uvm.FaultBufferRange.
	FaultBuffer int
	// HostPages is, per host phase, the pages it reads back (0 for a
	// kernel).
	HostPages []int
	// ReferenceTiming is um.fault_timing = "reference", the UVMSmart
	// simulator's -enable_accurate_simulation 0: no fault latency on the
	// timeline, no TLB freeze; faults are counted as the simulator counts
	// them (sim/uvm FaultCount), FaultUnit pages requested per counted
	// fault, and FaultCycles are added to the run's cycles afterwards
	// (gpu-sim.cc:116-126).
	ReferenceTiming bool
	FaultUnit       int
	// ConcurrentEviction (um.concurrent_eviction): a write-back goes on its
	// own lane and the fetch is handed to the PME right after it, as the
	// simulator's write-back and read queues each have their own latency
	// slot (gpu-sim.cc:3086-3305); evicted pages count when their
	// write-back starts. False waits for each write-back to reach the host.
	ConcurrentEviction bool
	// HostSync (um.host_sync): before a host phase, the dirty managed
	// pages are written back and invalidated, as the simulator's
	// cudaDeviceSynchronize does (cuda_runtime_api.cc:2019-2063).
	HostSync bool
	// Steps is, per phase, the runtime's driver operations a host phase
	// carries out instead of a read-back and a host synchronisation
	// (steps.go), possibly none; nil for every other phase.
	Steps [][]Step
}

// Validate names the first parameter outside its range.
func (c Config) Validate() error {
	switch {
	case c.Pages < 1:
		return fmt.Errorf("umdriver: Pages %d must be at least 1", c.Pages)
	case c.Capacity < 0:
		return fmt.Errorf("umdriver: Capacity %d is negative", c.Capacity)
	case !uvm.FaultBufferRange.Has(int64(c.FaultBuffer)):
		return uvm.FaultBufferRange.Check("umdriver: FaultBuffer", int64(c.FaultBuffer))
	}
	for _, r := range c.Managed {
		lo := r.First * system.PagesPerGroup
		if lo < c.BaseVPN || lo-c.BaseVPN+uint64(r.Count)*system.PagesPerGroup > uint64(c.Pages) {
			return fmt.Errorf("umdriver: managed allocation %s (page-groups %#x+%d) outside the layout", r.Name, r.First, r.Count)
		}
	}
	for i, p := range c.HostPages {
		if p < 0 {
			return fmt.Errorf("umdriver: HostPages[%d] = %d is negative", i, p)
		}
	}
	if c.ReferenceTiming && c.FaultUnit != 1 && c.FaultUnit != uvm.PagesPerBlock {
		return fmt.Errorf("umdriver: FaultUnit %d is not 1 or %d", c.FaultUnit, uvm.PagesPerBlock)
	}
	return c.validateSteps()
}

// Page states in the driver's table (2 bits per page).
const (
	pageRemote   = 0
	pageInFlight = 1
	pageValid    = 2
	// pageFixed: cudaMalloc'd, or outside every allocation (the tail of an
	// allocation's last 2 MB region): never faults, never moves. It is
	// never stored in the table; pageState derives it from the layout.
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
	drvStep     // a runtime step starts: its advice, its call cost
	drvStepWait // the call cost, then the step's transfers region by region
)

// evictTag marks the PME command of a write-back; fetch runs use their run
// index and host read-backs migrate.HostTag.
const evictTag = migrate.HostTag - 1

// maxRuns bounds the contiguous runs of one fetch: every prefetcher stays
// inside the faulting page's 2 MB region, whose 512 pages hold at most 256
// runs of missing pages.
const maxRuns = system.PagesPerRegion / 2

// Driver is the UM driver and the fault buffer in front of it.
type Driver struct {
	rtl.Base
	Ports

	cfg     Config
	regions int
	// The Valid wires of Responses and Launches as buses, so that a cycle
	// visits only the SMs whose port offers something.
	respValid, launchValid *rtl.BitBus
	// managed: per page, in a managed allocation. Wiring from the layout,
	// not state: the table's registers are reset at every run's start
	// (rtl Sim.Reset), so a mark kept there would not survive it.
	managed []uint64
	// latency is the fault latency on the timeline: 0 under reference
	// timing, whose faults reference counts.
	latency   uint64
	reference *uvm.FaultCount
	// dirtyEdits gathers one cycle's changes to the dirty bits, one entry
	// per word, applied in finishCycle.
	dirtyEdits []dirtyEdit

	// Shared parts: the page-table write arbiter, the TLB shootdown, the
	// host read-back.
	writer *migrate.PTEWriter
	shoot  *migrate.Shootdown
	host   *migrate.HostReadBack

	// The menu: the driver software's resident set, counters and victim
	// order. Its plan lists are read by Drive in the cycles after the Eval
	// that made them, like registers.
	menu     *uvm.Driver
	victims  []int  // pages the current batch evicts (plan.Evict)
	mappings []int  // fetched pages whose zero-copy mapping may sit in a TLB
	batch    [1]int // the fault batch handed to the menu: one fault at a time

	// Fault buffer: faults and zero-copy accesses waiting for an answer.
	reqKind *rtl.Vec[uint8]
	// occupied is the entries whose kind is not entryFree, one bit each.
	occupied occupancy
	reqWalk  *rtl.Vec[ptw.Walk]
	reqSeq   *rtl.Vec[uint64] // arrival order
	seq      *rtl.Reg[uint64]
	waiting  *rtl.Reg[uint32]
	perSM    *rtl.Vec[uint16] // faults outstanding per SM: its TLB is frozen while non-zero

	// parked is the occupied entries that wait for their page to change
	// state (parkedEntries), passed by the reply search.
	parked parkedEntries

	// Bit i of frozen: SM i's L1 TLB is frozen (perSM non-zero, reference
	// timing aside); frozenShown is frozen before its last change, so
	// Drive sets only the freeze wires of the SMs whose bit changed then.
	frozen      *rtl.Reg[uint64]
	frozenShown *rtl.Reg[uint64]

	// Driver tables.
	table    *rtl.Vec[uint64] // page states, 32 pages of 2 bits per word
	zcMapped *rtl.Vec[uint64] // per page: a zero-copy reply installed its remote PTE in a TLB
	raised   *rtl.Vec[uint64] // per page: an entryPromote for it is in the fault buffer
	resident *rtl.Vec[uint16] // valid pages per large page
	dirty    *rtl.Vec[uint64] // per page: stored to since it arrived (HostSync)
	kernel   *rtl.Reg[uint16] // the kernel last launched (Launches)

	// Driver state machine.
	fsm       *rtl.Reg[uint8]
	until     *rtl.Reg[uint64] // end of the fault latency
	faultVPN  *rtl.Reg[uint64]
	cursor    *rtl.Reg[uint32] // index into victims or mappings
	evictLeft *rtl.Reg[uint32] // unmapped pages not yet handed to the PME
	evictCmd  *rtl.Reg[uint32] // pages of the write-back command in flight
	runStart  *rtl.Vec[uint64] // fetch runs: first page index, length, critical position
	runLen    *rtl.Vec[uint16]
	runFirst  *rtl.Vec[uint16]
	runs      *rtl.Reg[uint16]
	runNext   *rtl.Reg[uint16] // next run to hand to the PME
	runIssued *rtl.Reg[uint16] // runs handed to the PME
	runLanded *rtl.Reg[uint16] // runs whose last page is in
	syncing   *rtl.Reg[bool]   // unmapping and writing back for a host phase
	afterSync *rtl.Reg[uint8]  // the host phase's state once the sync is done
	// Runtime steps (steps.go): the phase whose steps run, the step, the
	// next page of its range, and whether a transfer returns to them.
	stepPhase *rtl.Reg[uint16]
	stepIndex *rtl.Reg[uint32]
	stepPage  *rtl.Reg[uint64]
	inSteps   *rtl.Reg[bool]

	// shootQuiet: neither the state nor the one before its last change
	// offers a shootdown, so the shootdown's ports already show no offer
	// and Drive leaves them (false at reset: the first Drive sets them).
	shootQuiet *rtl.Reg[bool]

	// Reply: the entry offered to the router, and whether it carries the
	// remote PTE (a zero-copy access to a page still in host memory).
	repValid  *rtl.Reg[bool]
	repIndex  *rtl.Reg[uint32]
	repRemote *rtl.Reg[bool]
	// The fault buffer is searched for a reply only when an entry, the
	// state machine or a PTE write changed in the last cycle (rescan) or
	// a zero-copy reply held back while a fetch started may go (nextDue).
	rescan  *rtl.Reg[bool]
	nextDue *rtl.Reg[uint64]
	// quiet: the last search found nothing to answer or free, and since
	// then nothing but arrivals changed, so only the entry that arrived
	// last cycle (arrival) can be answerable now: the search looks at it
	// alone and finds what the whole search would.
	quiet   *rtl.Reg[bool]
	arrival *rtl.Reg[uint32]
	// resume: the last search offered the entry at repIndex and since
	// then nothing it reads has changed but for an arrival in that
	// search's cycle (resumeArrival; the entry is in arrival). The entries
	// before repIndex were not answerable then and still are not, so the
	// search that follows the reply looks at that arrival and then only
	// past repIndex.
	resume        *rtl.Reg[bool]
	resumeArrival *rtl.Reg[bool]

	faults     *rtl.Reg[uint64]
	migrations *rtl.Reg[uint64]
	evictions  *rtl.Reg[uint64]
	zeroCopy   *rtl.Reg[uint64]

	// This cycle's combinational values, passed between the steps of Eval.
	c step
}

// step is what one Eval's steps hand each other.
type step struct {
	now      uint64
	waiting  uint32
	busy     bool
	fetching bool  // the fault latency ends now: a fetch starts
	next     uint8 // the state machine's next state
	// Fault buffer traffic: the entry that arrives (-1 if none), a raised
	// migration and its walk, the page of a raised migration retired (-1
	// if none), the SMs whose fault arrives or is answered (-1 if none).
	arrival           int
	raised            bool
	raiseWalk         ptw.Walk
	freed             int
	arriveSM, replySM int
	// The reply search: whether it ran, whether it answered or freed an
	// entry, and when a held-back reply may go; whether it offered a
	// reply and whether it held one back.
	searched, found bool
	wake            uint64
	offered, held   bool
	// Page-state writes, gathered per table word; the region whose
	// resident count a landed page raises.
	stateWord    int
	stateVal     uint64
	landedRegion int
	// stepDue is the cycle the step in drvStepWait goes on.
	stepDue uint64
}

// New adds a driver to s under path, with menu as its software state.
func New(s *rtl.Sim, path string, cfg Config, p Ports, menu *uvm.Driver) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(p.Inval) > migrate.MaxTLBs || len(p.InvalAck) != len(p.Inval) || len(p.Frozen) != len(p.Inval) {
		return nil, fmt.Errorf("umdriver: %d invalidation, %d acknowledgement and %d freeze ports; want equal counts, at most %d", len(p.Inval), len(p.InvalAck), len(p.Frozen), migrate.MaxTLBs)
	}
	d := &Driver{
		Ports:    p,
		cfg:      cfg,
		regions:  (cfg.Pages + system.PagesPerRegion - 1) / system.PagesPerRegion,
		menu:     menu,
		victims:  make([]int, 0, system.PagesPerRegion),
		mappings: make([]int, 0, system.PagesPerRegion),
	}
	s.Add(d, path)
	b := &d.Base
	n := cfg.FaultBuffer
	d.reqKind = rtl.NewVec[uint8](b, "req_kind", n, 2, entryFree)
	d.occupied = newOccupancy(b, "req_occupied", n)
	d.parked = newParkedEntries(n, (cfg.Pages+31)/32)
	d.reqWalk = rtl.NewVecOf(b, "req_walk", n, ptw.WalkBits, ptw.Walk{})
	d.reqSeq = rtl.NewVec[uint64](b, "req_seq", n, 64, 0)
	d.seq = rtl.NewReg[uint64](b, "seq", 64, 0)
	d.waiting = rtl.NewReg[uint32](b, "waiting", 32, 0)
	d.perSM = rtl.NewVec[uint16](b, "per_sm", len(p.Frozen), 16, 0)
	d.frozen = rtl.NewReg[uint64](b, "frozen", 64, 0)
	d.frozenShown = rtl.NewReg[uint64](b, "frozen_shown", 64, 0)
	d.table = rtl.NewVec[uint64](b, "page_state", (cfg.Pages+31)/32, 64, 0)
	d.zcMapped = rtl.NewVec[uint64](b, "zc_mapped", (cfg.Pages+63)/64, 64, 0)
	d.raised = rtl.NewVec[uint64](b, "raised", (cfg.Pages+63)/64, 64, 0)
	d.resident = rtl.NewVec[uint16](b, "resident", d.regions, 10, 0)
	d.fsm = rtl.NewReg[uint8](b, "state", 4, drvIdle)
	d.until = rtl.NewReg[uint64](b, "until", 64, 0)
	d.faultVPN = rtl.NewReg[uint64](b, "fault_vpn", pte.VPNBits, 0)
	d.cursor = rtl.NewReg[uint32](b, "cursor", 32, 0)
	d.evictLeft = rtl.NewReg[uint32](b, "evict_left", 32, 0)
	d.evictCmd = rtl.NewReg[uint32](b, "evict_cmd", 10, 0)
	d.runStart = rtl.NewVec[uint64](b, "run_start", maxRuns, 32, 0)
	d.runLen = rtl.NewVec[uint16](b, "run_len", maxRuns, 10, 0)
	d.runFirst = rtl.NewVec[uint16](b, "run_first", maxRuns, 10, 0)
	d.runs = rtl.NewReg[uint16](b, "runs", 10, 0)
	d.runNext = rtl.NewReg[uint16](b, "run_next", 10, 0)
	d.runIssued = rtl.NewReg[uint16](b, "run_issued", 10, 0)
	d.runLanded = rtl.NewReg[uint16](b, "run_landed", 10, 0)
	d.repValid = rtl.NewFlag(b, "rep_valid", false)
	d.shootQuiet = rtl.NewFlag(b, "shoot_quiet", false)
	d.repIndex = rtl.NewReg[uint32](b, "rep_index", 32, 0)
	d.repRemote = rtl.NewFlag(b, "rep_remote", false)
	d.rescan = rtl.NewFlag(b, "rescan", false)
	d.nextDue = rtl.NewReg[uint64](b, "next_due", 64, rtl.Never)
	d.quiet = rtl.NewFlag(b, "quiet", false)
	d.arrival = rtl.NewReg[uint32](b, "arrival", 32, 0)
	d.resume = rtl.NewFlag(b, "resume", false)
	d.resumeArrival = rtl.NewFlag(b, "resume_arrival", false)
	d.faults = rtl.NewReg[uint64](b, "faults", 64, 0)
	d.migrations = rtl.NewReg[uint64](b, "migrations", 64, 0)
	d.evictions = rtl.NewReg[uint64](b, "evictions", 64, 0)
	d.zeroCopy = rtl.NewReg[uint64](b, "zero_copy", 64, 0)
	d.dirty = rtl.NewVec[uint64](b, "dirty", (cfg.Pages+63)/64, 64, 0)
	d.kernel = rtl.NewReg[uint16](b, "kernel", 16, 0)
	d.syncing = rtl.NewFlag(b, "syncing", false)
	d.afterSync = rtl.NewReg[uint8](b, "after_sync", 4, drvIdle)
	d.stepPhase = rtl.NewReg[uint16](b, "step_phase", 16, 0)
	d.stepIndex = rtl.NewReg[uint32](b, "step_index", 32, 0)
	d.stepPage = rtl.NewReg[uint64](b, "step_page", 32, 0)
	d.inSteps = rtl.NewFlag(b, "in_steps", false)
	d.dirtyEdits = make([]dirtyEdit, 0, len(p.Responses)+2)
	respValid := make([]*rtl.Wire[bool], len(p.Responses))
	for i, r := range p.Responses {
		respValid[i] = r.Valid
	}
	d.respValid = rtl.NewBitBus(s, path+".response_valid", respValid)
	d.launchValid = rtl.ValidBus(s, path+".launch_valid", p.Launches)
	d.latency = cfg.LatencyCycles
	if cfg.ReferenceTiming {
		var err error
		if d.reference, err = uvm.NewFaultCount(cfg.Pages, cfg.FaultUnit); err != nil {
			return nil, err
		}
		d.latency = 0
	}
	d.writer = migrate.NewPTEWriter(b, p.Update)
	d.shoot = migrate.NewShootdown(b, p.Inval, p.InvalAck)
	d.host = migrate.NewHostReadBack(b, p.Host, p.HostDone, cfg.HostPages)
	// Only managed pages fault and move: every other page of the layout
	// (cudaMalloc'd ones and the tails of the managed allocations' last
	// regions, which the menu's prefetchers may pick) is fixed.
	d.managed = make([]uint64, (cfg.Pages+63)/64)
	for _, r := range cfg.Managed {
		lo := int(r.First*system.PagesPerGroup - cfg.BaseVPN)
		for p := lo; p < lo+r.Count*system.PagesPerGroup; p++ {
			d.managed[p/64] |= 1 << (p % 64)
		}
	}
	p.Remote.Consumer(b)
	p.Migrated.Producer(b)
	p.Cmd.Producer(b)
	p.Events.Consumer(b)
	for _, r := range p.Responses {
		b.Listen(r.Valid, r.Ready, r.Bits, r.PTE)
	}
	for _, l := range p.Launches {
		b.Listen(l.Valid, l.Ready, l.Bits)
	}
	return d, nil
}

// Config returns the driver's parameters.
func (d *Driver) Config() Config { return d.cfg }

// Menu is the driver's menu state: resident set, access counters,
// oversubscription.
func (d *Driver) Menu() *uvm.Driver { return d.menu }

// Faults counts the far faults: those handled, each with its latency on
// the timeline, or under reference timing those counted as the UVMSmart
// simulator counts them (sim/uvm FaultCount).
func (d *Driver) Faults() uint64 {
	if d.reference != nil {
		return d.reference.Count()
	}
	return d.faults.Q()
}

// FaultCycles is the far faults' time: Faults times the fault latency.
// Under reference timing it is not on the timeline and belongs added to
// the run's cycles (gpu-sim.cc:116-126).
func (d *Driver) FaultCycles() uint64 { return d.Faults() * d.cfg.LatencyCycles }

// Migrations counts the 4 KB pages moved to the GPU.
func (d *Driver) Migrations() uint64 { return d.migrations.Q() }

// Evictions counts the 4 KB pages written back to the host.
func (d *Driver) Evictions() uint64 { return d.evictions.Q() }

// ZeroCopy counts the walks answered with a zero-copy mapping.
func (d *Driver) ZeroCopy() uint64 { return d.zeroCopy.Q() }

// Waiting is the number of faults and zero-copy accesses in the buffer.
func (d *Driver) Waiting() int { return int(d.waiting.Q()) }

// State is the state machine's state, for reports.
func (d *Driver) State() int { return int(d.fsm.Q()) }

// pageState, isMapped and isRaised take a page number, never negative,
// and divide it as unsigned: the searches call them for every entry.
func (d *Driver) pageState(page int) int {
	p := uint(page)
	if d.managed[p/64]>>(p%64)&1 == 0 {
		return pageFixed
	}
	return int(d.table.At(int(p/32)).Q() >> (2 * (p % 32)) & 3)
}

func (d *Driver) isMapped(page int) bool {
	p := uint(page)
	return d.zcMapped.At(int(p/64)).Q()>>(p%64)&1 != 0
}

func (d *Driver) isRaised(page int) bool {
	p := uint(page)
	return d.raised.At(int(p/64)).Q()>>(p%64)&1 != 0
}

// shooting reports a state in which Drive may offer a shootdown (the
// states in which unmapPage may name a page).
func shooting(st uint8) bool { return st == drvUnmap || st == drvShoot }

// unmapPage is the page of the victim or mapping list under the cursor in
// the unmapping states, or -1.
func (d *Driver) unmapPage() int {
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

// Drive presents the freeze wires, the PTE write, the shootdown, the PME
// command, the host handshake and the reply, all from registers.
func (d *Driver) Drive() {
	st := d.fsm.Q()
	base := d.cfg.BaseVPN
	d.Remote.Ready.Set(d.waiting.Q() < uint32(d.cfg.FaultBuffer))
	fz := d.frozen.Q()
	for set := fz ^ d.frozenShown.Q(); set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		d.Frozen[i].Set(fz&(1<<i) != 0)
	}
	// One PTE write per cycle: a landed page first, else a victim page.
	page := d.unmapPage()
	if st == drvUnmap && page >= 0 {
		p := base + uint64(page)
		d.writer.Drive(true, d.pageState(page) == pageValid, p, pte.Remote(p))
	} else {
		d.writer.Drive(false, false, 0, 0)
	}
	// A victim is shot down once its PTE is remote; a fetched page's
	// zero-copy mapping at once.
	if !d.shootQuiet.Q() {
		shoot := page >= 0 && (st == drvShoot || d.pageState(page) == pageRemote)
		d.shoot.Drive(shoot, base+uint64(max(page, 0)))
	}
	switch st {
	case drvEvictCmd:
		d.Cmd.Valid.Set(true)
		d.Cmd.Bits.Set(pme.Command{Tag: evictTag, Op: pme.Evict, Pages: uint16(min(d.evictLeft.Q(), pme.MaxPagesLimit))})
	case drvFetchCmd:
		r := int(d.runNext.Q())
		d.Cmd.Valid.Set(true)
		d.Cmd.Bits.Set(pme.Command{Tag: uint16(r), Op: pme.Fetch, Pages: d.runLen.At(r).Q(), First: d.runFirst.At(r).Q()})
	case drvHostCmd:
		d.Cmd.Valid.Set(true)
		d.Cmd.Bits.Set(d.host.Command())
	default:
		d.Cmd.Valid.Set(false)
	}
	d.Events.Ready.Set(!d.writer.Landing())
	d.host.Drive(st == drvIdle, st == drvHostDone)
	i := int(d.repIndex.Q())
	d.Migrated.Valid.Set(d.repValid.Q())
	w := d.reqWalk.At(i).Q()
	d.Migrated.Bits.Set(w)
	if d.repRemote.Q() && d.menu.RemoteWritable(int(w.VPN-base)) {
		// Pinned on host or under access counters: mapped read-write.
		d.Migrated.PTE.Set(pte.Remote(w.VPN))
	} else if d.repRemote.Q() {
		// Read-only: a store through the mapping misses in the L1 TLB and
		// comes back here as a write, which migrates the page.
		d.Migrated.PTE.Set(pte.Remote(w.VPN).AsReadOnly())
	} else {
		d.Migrated.PTE.Set(pte.Local(w.VPN - base))
	}
}

// Eval runs one turn of the driver's loop: count the TLB hits, take the
// fault buffer's arrivals, answer, land a page, advance the fault
// handling, and decide whether to sleep.
func (d *Driver) Eval() {
	now := d.Now()
	// The constant fields first, in one store of the whole step, then
	// the registers' values, each read once.
	c := &d.c
	*c = step{arrival: -1, freed: -1, arriveSM: -1, replySM: -1, stateWord: -1, landedRegion: -1}
	c.now, c.waiting, c.next = now, d.waiting.Q(), d.fsm.Q()
	c.wake, c.stepDue = d.nextDue.Q(), d.until.Q()
	// The driver starts a fetch this cycle: no zero-copy reply is offered
	// for a page that is about to be on its way (see offerReply).
	c.fetching = c.next == drvLatency && now >= c.stepDue
	d.evalLaunches()
	d.evalCounters()
	if d.countingOnly() {
		d.finishCounting()
		return
	}
	d.evalArrivals()
	d.evalReply()
	d.evalLanding()
	d.evalFaults()
	d.finishCycle()
}

// countingOnly reports, after the counters, a cycle in which the driver
// only counts the hits its taps offer, as in most cycles it is awake: the
// counters raised no migration, no walk arrives, no reply is offered, no
// search of the fault buffer is due (nor a resumed one pending), no PTE
// write, PME event or host phase comes, and the state machine waits
// without a step of its own (the fault latency not yet over). The steps
// after the counters then change nothing, and finishCounting does what
// finishCycle would. (In these states only a landed page's PTE is
// written: the sequencer writes in drvUnmap alone.)
func (d *Driver) countingOnly() bool {
	c := &d.c
	if c.raised || c.now >= c.wake || d.repValid.Q() || d.rescan.Q() || d.resume.Q() ||
		d.writer.Landing() || d.Remote.Fire() || d.Events.Fire() {
		return false
	}
	switch d.fsm.Q() {
	case drvIdle:
		return !d.Host.Fire()
	case drvLatency:
		return !c.fetching
	case drvEvictWait, drvFetchWait, drvHostWait:
		return true
	}
	return false
}

// finishCounting ends a counting-only cycle: the counters' dirty bits
// (HostSync) are written, and with no response offered the driver sleeps
// until a held-back reply may go or the fault latency ends. Every other
// register finishCycle might write keeps its value: nothing entered or
// left the fault buffer, the state stays, and rescan and resume are low.
func (d *Driver) finishCounting() {
	c := &d.c
	d.applyDirty()
	if !c.busy {
		d.sleepUntilDue(c.next)
	}
}

// sleepUntilDue puts the driver to sleep, entering state next, until the
// first cycle that has work for it without an input changing: a held-back
// reply may go, the fault latency ends, or a step's call cost is over.
func (d *Driver) sleepUntilDue(next uint8) {
	c := &d.c
	wake := c.wake
	if next == drvLatency {
		wake = min(wake, d.until.Q())
	}
	if next == drvStepWait {
		wake = min(wake, c.stepDue)
	}
	d.SleepUntil(wake)
}

// evalLaunches tells the menu's smart runtime that a kernel ended when a
// launch carries a new kernel index.
func (d *Driver) evalLaunches() {
	for set := d.launchValid.Get(); set != 0; set &= set - 1 {
		if l := d.Launches[bits.TrailingZeros64(set)]; l.Fire() && l.Bits.Get().Kernel != d.kernel.Q() {
			d.menu.KernelEnded()
			d.kernel.Set(l.Bits.Get().Kernel)
		}
	}
}

// evalCounters is the access counters: one count per L1 TLB hit on a
// managed page. While a response is offered the tap stays awake, since
// the next one may carry the same bits and wake nothing. A hit through a
// zero-copy mapping whose count reaches the threshold raises the page's
// migration, one per cycle and only into a free entry the remote port
// does not take this cycle; a hit that cannot raise it leaves it to the
// next one.
func (d *Driver) evalCounters() {
	c := &d.c
	raise := !d.Remote.Fire() && c.waiting < uint32(d.cfg.FaultBuffer)
	for set := d.respValid.Get(); set != 0; set &= set - 1 {
		r := d.Responses[bits.TrailingZeros64(set)]
		c.busy = true
		res := r.Bits.Get()
		if !r.Ready.Get() || res.Status != tlb.Hit {
			continue
		}
		page := int(res.VPN - d.cfg.BaseVPN)
		if d.pageState(page) == pageFixed {
			continue
		}
		if err := d.menu.Count(page, res.Write); err != nil {
			panic(fmt.Sprintf("%s: %v", d.Path(), err))
		}
		if res.Write && d.cfg.HostSync && !r.PTE.Get().IsRemote() {
			d.editDirty(page, true)
		}
		// Only a hit on a zero-copy mapping (a remote PTE) raises: a hit on
		// a victim's local PTE between its unmapping and its shootdown is
		// not one.
		if raise && !c.raised && r.PTE.Get().IsRemote() && d.pageState(page) == pageRemote && !d.isRaised(page) {
			if dec, _ := d.menu.ShouldMigrate(page, res.Write); dec == uvm.Migrate {
				c.raised, c.raiseWalk = true, ptw.Walk{VPN: res.VPN, Write: res.Write}
			}
		}
	}
}

// evalArrivals puts a raised migration or the remote walk into the fault
// buffer: a walk to a page in host memory that the menu serves remotely
// is a zero-copy access, any other a far fault.
func (d *Driver) evalArrivals() {
	c := &d.c
	if c.raised {
		c.arrival = d.enqueue(entryPromote, c.raiseWalk)
		d.countReference(entryPromote, c.raiseWalk)
		c.waiting++
	}
	if !d.Remote.Fire() {
		return
	}
	w := d.Remote.Bits.Get()
	page := int(w.VPN - d.cfg.BaseVPN)
	kind := uint8(entryFault)
	if d.pageState(page) == pageRemote {
		ctr := d.menu.Counters().Get(page / uvm.PagesPerBlock)
		ctr.Count = min(ctr.Count+1, accessctr.MaxCount)
		if d.menu.DecidePage(page, ctr, w.Write) == uvm.Remote {
			kind = entryZeroCopy
		}
	}
	c.arrival = d.enqueue(kind, w)
	d.countReference(kind, w)
	c.waiting++
	if kind == entryFault {
		c.arriveSM = int(w.Requester >> gpu.WarpBits)
	}
	c.busy = true
}

// evalReply retires the reply the router took, or searches the buffer
// for the next one: a fault whose page is valid, or a zero-copy access,
// goes to its SM. It keeps each SM's outstanding fault count, whose zero
// thaws the SM's L1 TLB.
func (d *Driver) evalReply() {
	c := &d.c
	if d.repValid.Q() {
		c.busy = true
		if d.Migrated.Fire() {
			i := int(d.repIndex.Q())
			if d.reqKind.At(i).Q() == entryFault {
				c.replySM = int(d.reqWalk.At(i).Q().Requester >> gpu.WarpBits)
			} else {
				d.zeroCopy.Set(d.zeroCopy.Q() + 1)
			}
			d.reqKind.At(i).Set(entryFree)
			d.occupied.put(i, false)
			c.waiting--
			c.offered, _, c.freed = d.offerReply(i, -1, d.resume.Q())
		}
	} else if d.rescan.Q() || c.now >= c.wake {
		only := -1
		if d.quiet.Q() && c.wake == rtl.Never {
			only = int(d.arrival.Q())
		}
		c.offered, c.wake, c.freed = d.offerReply(-1, only, false)
		c.busy = c.busy || c.offered
		c.searched, c.found = true, c.offered || c.freed >= 0
	}
	if c.freed >= 0 {
		c.waiting--
	}
	d.markRaised()
	if c.arriveSM != c.replySM {
		fz := d.frozen.Q()
		if i := c.arriveSM; i >= 0 {
			n := d.perSM.At(i).Q() + 1
			d.perSM.At(i).Set(n)
			fz = d.freeze(fz, i, n)
		}
		if i := c.replySM; i >= 0 {
			n := d.perSM.At(i).Q() - 1
			d.perSM.At(i).Set(n)
			fz = d.freeze(fz, i, n)
		}
		if fz != d.frozen.Q() {
			d.frozen.Set(fz)
			d.frozenShown.Set(d.frozen.Q())
		}
	}
}

// freeze is the frozen mask fz with SM i's bit for n outstanding faults:
// reference fault timing freezes no TLB (-enable_accurate_simulation 0).
func (d *Driver) freeze(fz uint64, i int, n uint16) uint64 {
	if n > 0 && d.reference == nil {
		return fz | 1<<i
	}
	return fz &^ (1 << i)
}

// evalLanding retires a PTE write and takes a PME event: a chunk of a
// host read-back, a write-back that reached the host, or a fetched page,
// whose PTE is written next cycle.
func (d *Driver) evalLanding() {
	c := &d.c
	if d.writer.Retire() {
		c.busy = true
	}
	if !d.Events.Fire() {
		return
	}
	c.busy = true
	ev := d.Events.Bits.Get()
	switch {
	case ev.Tag == migrate.HostTag:
		c.next = drvHostCmd
		if d.host.ChunkDone() {
			c.next = drvHostDone
		}
	case ev.Tag == evictTag && d.concurrentNow():
		// A write-back on its own lane has reached the host; the driver
		// moved on when it started.
	case ev.Tag == evictTag:
		d.evictions.Set(d.evictions.Q() + uint64(d.evictCmd.Q()))
		c.next = d.afterUnmap()
	default:
		r := int(ev.Tag)
		page := int(d.runStart.At(r).Q()) + int(ev.Page)
		d.setState(page, pageValid)
		if d.cfg.HostSync {
			d.editDirty(page, false) // arrives clean
		}
		c.landedRegion = page / system.PagesPerRegion
		p := uint64(page)
		d.writer.Land(d.cfg.BaseVPN+p, pte.Local(p))
		d.migrations.Set(d.migrations.Q() + 1)
		if ev.Last {
			n := d.runLanded.Q() + 1
			d.runLanded.Set(n)
			if n == d.runs.Q() {
				c.next = d.idle()
				if len(d.mappings) > 0 {
					c.next = drvShoot
					d.cursor.Set(0)
					d.shoot.Clear()
				}
			}
		}
	}
}

// evalFaults is the driver proper: take a host phase or the oldest fault,
// wait out its latency, run the menu, unmap and write back the victims,
// hand the PME the fetch, shoot down the fetched pages' zero-copy
// mappings.
func (d *Driver) evalFaults() {
	c := &d.c
	switch d.fsm.Q() {
	case drvIdle:
		switch {
		case d.Host.Fire():
			c.next = drvHostDone
			if d.host.Start() {
				c.next = drvHostCmd
			}
			if ph := d.Host.Bits.Get(); d.hasSteps(ph) {
				c.next = d.startSteps(ph)
			} else if d.cfg.HostSync {
				c.next = d.startSync(c.next)
			}
		case d.rescan.Q():
			// The set of faults to handle changes only with the events
			// that set rescan, so the buffer is searched only then.
			if i := d.oldestFault(); i >= 0 {
				d.faultVPN.Set(d.reqWalk.At(i).Q().VPN)
				d.until.Set(c.now + d.latency)
				d.faults.Set(d.faults.Q() + 1)
				c.next = drvLatency
			}
		}
	case drvLatency:
		if c.fetching {
			c.busy = true
			c.next = d.handleFault()
		}
	case drvUnmap, drvShoot:
		c.busy = true
		d.unmapStep()
	case drvEvictCmd:
		if d.Cmd.Fire() {
			n := min(d.evictLeft.Q(), pme.MaxPagesLimit)
			d.evictCmd.Set(n)
			d.evictLeft.Set(d.evictLeft.Q() - n)
			c.next = drvEvictWait
			if d.concurrentNow() {
				// The write-back goes on its own lane and its pages count
				// as evicted when it starts (gpu-sim.cc:3134-3160: frames
				// freed, page_evict_dirty counted); the next write-back
				// or the fetch is issued at once.
				d.evictions.Set(d.evictions.Q() + uint64(n))
				switch {
				case d.evictLeft.Q() > n:
					c.next = drvEvictCmd
				case d.runs.Q() > 0:
					c.next = drvFetchCmd
				default:
					c.next = d.idle()
				}
			}
		}
	case drvFetchCmd:
		if d.Cmd.Fire() {
			issued := d.runIssued.Q() + 1
			d.runIssued.Set(issued)
			d.runNext.Set((d.runNext.Q() + 1) % d.runs.Q())
			if issued == d.runs.Q() {
				c.next = drvFetchWait
			}
		}
	case drvHostCmd:
		if d.Cmd.Fire() {
			c.next = drvHostWait
		}
	case drvHostDone:
		if d.host.Done() {
			c.next = drvIdle
		}
	case drvStep:
		c.busy = true
		c.next = d.beginStep()
	case drvStepWait:
		if c.now >= d.until.Q() {
			c.busy = true
			c.next = d.stepTransfer()
		}
	}
}

// finishCycle writes the cycle's gathered page states, counts and flags,
// and decides whether the driver may sleep and until when.
func (d *Driver) finishCycle() {
	c := &d.c
	if c.stateWord >= 0 {
		d.writeState(c.stateWord, c.stateVal)
	}
	d.applyDirty()
	d.occupied.flush()
	if r := c.landedRegion; r >= 0 {
		d.resident.At(r).Set(d.resident.At(r).Q() + 1)
	}
	next := c.next
	if next != d.fsm.Q() {
		d.fsm.Set(next)
		c.busy = true
		if quiet := !shooting(d.fsm.Q()) && !shooting(next); quiet != d.shootQuiet.Q() {
			d.shootQuiet.Set(quiet)
		}
	}
	// A command or a host-done offered next cycle may be taken then, and
	// the unmapping states move every cycle: stay awake.
	switch next {
	case drvFetchCmd, drvEvictCmd, drvHostCmd, drvHostDone, drvUnmap, drvShoot, drvStep:
		c.busy = true
	case drvStepWait:
		// A step whose call cost is over goes on at once.
		c.busy = c.busy || c.stepDue <= c.now+1
	}
	if c.waiting != d.waiting.Q() {
		d.waiting.Set(c.waiting)
	}
	// A page that lands is valid next cycle but its PTE write is still
	// pending (LandingAt): it becomes answerable with that write, so a
	// PME event alone changes nothing a search finds (other than through
	// the state machine).
	changed := d.Migrated.Fire() || d.writer.Written() || next != d.fsm.Q()
	rescan := c.raised || d.Remote.Fire() || changed
	if rescan != d.rescan.Q() {
		d.rescan.Set(rescan)
	}
	quiet := d.quiet.Q()
	if c.searched {
		quiet = !c.found
	}
	if quiet = quiet && !changed; quiet != d.quiet.Q() {
		d.quiet.Set(quiet)
	}
	if c.arrival >= 0 {
		d.arrival.Set(uint32(c.arrival))
	}
	// A reply taken and an arrival leave the other entries as they were.
	other := d.writer.Written() || next != d.fsm.Q()
	resume := c.offered && !other && !c.held && c.freed < 0
	if d.repValid.Q() && !d.Migrated.Fire() {
		// The reply waits for the router: no search this cycle.
		resume = d.resume.Q() && !other && c.arrival < 0
	}
	if resume != d.resume.Q() {
		d.resume.Set(resume)
	}
	if arrived := c.arrival >= 0; resume && c.offered && arrived != d.resumeArrival.Q() {
		d.resumeArrival.Set(arrived)
	}
	if !c.busy && !rescan {
		d.sleepUntilDue(next)
	}
	d.unparkChanged()
}

// setState changes a page's state this cycle; the writes to one table
// word are gathered into one.
func (d *Driver) setState(page, st int) {
	c := &d.c
	wi := page / 32
	if c.stateWord != wi {
		if c.stateWord >= 0 {
			d.writeState(c.stateWord, c.stateVal)
		}
		c.stateWord, c.stateVal = wi, d.table.At(wi).Q()
	}
	sh := 2 * (page % 32)
	c.stateVal = c.stateVal&^(3<<sh) | uint64(st)<<sh
}

// markRaised sets the raised bit of a migration raised this cycle and
// clears that of the one freed (if any), with one write per word.
func (d *Driver) markRaised() {
	c := &d.c
	raised := c.raised
	if c.freed >= 0 {
		word := d.raised.At(c.freed / 64)
		v := word.Q() &^ (1 << (c.freed % 64))
		if page := int(c.raiseWalk.VPN - d.cfg.BaseVPN); raised && page/64 == c.freed/64 {
			v |= 1 << (page % 64)
			raised = false
		}
		word.Set(v)
	}
	if raised {
		page := int(c.raiseWalk.VPN - d.cfg.BaseVPN)
		word := d.raised.At(page / 64)
		word.Set(word.Q() | 1<<(page%64))
	}
}

// handleFault runs the menu on the fault whose latency is over: the
// victims are unmapped and written back first, then the fetch moves.
func (d *Driver) handleFault() uint8 {
	d.batch[0] = int(d.faultVPN.Q() - d.cfg.BaseVPN)
	plan, err := d.menu.HandleFaults(d.batch[:])
	if err != nil {
		panic(fmt.Sprintf("%s: %v", d.Path(), err))
	}
	d.victims = append(d.victims[:0], plan.Evict...)
	runs := d.startFetch(plan.Fetch)
	d.cursor.Set(0)
	d.shoot.Clear()
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
func (d *Driver) afterUnmap() uint8 {
	switch {
	case d.evictLeft.Q() > 0:
		return drvEvictCmd
	case d.syncing.Q():
		d.syncing.Set(false)
		return d.afterSync.Q()
	case d.runs.Q() > 0:
		return drvFetchCmd
	}
	return d.idle()
}

// concurrentNow reports that write-backs go on their own lane: with
// ConcurrentEviction, except while syncing for a host phase, which waits
// for its write-back as cudaDeviceSynchronize does.
func (d *Driver) concurrentNow() bool { return d.cfg.ConcurrentEviction && !d.syncing.Q() }

// countReference counts a migrating access (a fault or a raised
// migration) under reference fault timing: its page counts as a fault
// unless it is already valid, on its way or requested by an earlier fault
// (sim/uvm FaultCount).
func (d *Driver) countReference(kind uint8, w ptw.Walk) {
	if d.reference == nil || kind == entryZeroCopy {
		return
	}
	if page := int(w.VPN - d.cfg.BaseVPN); d.pageState(page) == pageRemote {
		d.reference.Fault(page)
	}
}

// startSync begins the host synchronisation before a host phase, as the
// simulator's cudaDeviceSynchronize (cuda_runtime_api.cc:2019-2063): every
// dirty managed page still valid is copied back and invalidated (the menu
// drops it; the driver unmaps it, shoots it down and writes it back, and
// waits for the write-back). Clean pages stay valid. It returns the state
// to go to: unmapping, or then when nothing is dirty; then follows the
// sync.
func (d *Driver) startSync(then uint8) uint8 {
	d.victims = d.victims[:0]
	for w := 0; w < d.dirty.Len(); w++ {
		for m := d.dirty.At(w).Q(); m != 0; m &= m - 1 {
			if p := w*64 + bits.TrailingZeros64(m); d.pageState(p) == pageValid {
				d.victims = append(d.victims, p)
			}
		}
	}
	if len(d.victims) == 0 {
		return then
	}
	if err := d.menu.Invalidate(d.victims); err != nil {
		panic(fmt.Sprintf("%s: %v", d.Path(), err))
	}
	d.syncing.Set(true)
	d.afterSync.Set(then)
	d.runs.Set(0)
	d.cursor.Set(0)
	d.shoot.Clear()
	return drvUnmap
}

// dirtyEdit is one word's change to the dirty bits in this cycle.
type dirtyEdit struct {
	word       int
	set, clear uint64
}

// editDirty marks page dirty (a store hit its local PTE) or clean (it
// arrives or is unmapped); a page unmapped in the cycle a store hits it
// ends clean.
func (d *Driver) editDirty(page int, dirty bool) {
	w, bit := page/64, uint64(1)<<(page%64)
	i := 0
	for i < len(d.dirtyEdits) && d.dirtyEdits[i].word != w {
		i++
	}
	if i == len(d.dirtyEdits) {
		d.dirtyEdits = append(d.dirtyEdits, dirtyEdit{word: w})
	}
	if dirty {
		d.dirtyEdits[i].set |= bit
	} else {
		d.dirtyEdits[i].clear |= bit
	}
}

// applyDirty writes the cycle's dirty-bit changes, one write per word.
func (d *Driver) applyDirty() {
	for _, e := range d.dirtyEdits {
		w := d.dirty.At(e.word)
		if v := (w.Q() | e.set) &^ e.clear; v != w.Q() {
			w.Set(v)
		}
	}
	d.dirtyEdits = d.dirtyEdits[:0]
}

// unmapStep works on the page under the cursor. A victim's PTE is made
// remote first (from the next cycle on a walk finds it in host memory),
// then every L1 TLB drops it; a fetched page whose zero-copy mapping a TLB
// may hold is only shot down. A tail page outside its allocation, which
// the menu may have fetched, has nothing to unmap.
func (d *Driver) unmapStep() {
	c := &d.c
	page := d.unmapPage()
	if page < 0 {
		c.next = d.idle()
		if d.fsm.Q() == drvUnmap {
			c.next = d.afterUnmap()
		}
		return
	}
	if d.fsm.Q() == drvUnmap {
		switch d.pageState(page) {
		case pageValid:
			if d.writer.SequencerWrote() {
				d.setState(page, pageRemote)
				if d.reference != nil {
					d.reference.Evicted(page)
				}
				if d.cfg.HostSync {
					d.editDirty(page, false)
				}
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
	if d.shoot.Step(true) {
		d.cursor.Set(d.cursor.Q() + 1)
	}
}

// unmapping reports that the victim page's PTE is made remote this cycle:
// its state is still valid, but a local PTE offered now would reach the
// router after the write and could not be known stale there.
func (d *Driver) unmapping(page int) bool {
	return d.fsm.Q() == drvUnmap && d.writer.SequencerWrote() && d.unmapPage() == page
}

// offerReply registers the first entry other than skip that can be
// answered as the next reply (only that entry when only is not -1): a
// fault or zero-copy access whose page is valid (its PTE write done) gets
// the local PTE; a zero-copy access whose page is still in host memory
// gets the remote PTE, and the page is marked as mapped in a TLB. In the
// cycle the driver starts a fetch no remote PTE is offered, so that every
// zero-copy mapping of a fetched page is marked before the fetch collects
// them. A raised migration whose page is valid answers nobody: the first
// one found is freed here, and its page is returned as freed (-1 if
// none). It reports whether it offered a reply and, if not, the cycle a
// held-back zero-copy reply may go. With resume (see Driver.resume) the
// search after the reply of skip looks at the last arrival, if below
// skip, and then only past skip.
func (d *Driver) offerReply(skip, only int, resume bool) (offered bool, wake uint64, freed int) {
	r := replyScan{skip: skip, wake: rtl.Never, freed: -1}
	left := d.waiting.Q() // occupied entries: the search stops after the last
	first, end, pick := 0, d.occupied.words.Len(), ^uint64(0)
	switch {
	case only >= 0:
		first, end, pick = only/64, only/64+1, 1<<(only%64)
	case resume:
		if a := int(d.arrival.Q()); d.resumeArrival.Q() && a < skip && d.offer(a, &r) {
			return true, d.c.now, r.freed
		}
		// The occupied entries up to skip are not visited.
		next := skip + 1
		first, pick = next/64, ^uint64(0)<<(next%64)
		for wi := range first {
			left -= uint32(bits.OnesCount64(d.occupied.word(wi)))
		}
		if first < end {
			left -= uint32(bits.OnesCount64(d.occupied.word(first) &^ pick))
		}
	}
	for wi := first; wi < end && left > 0; wi++ {
		parked := d.occupied.word(wi) & pick & d.parked.Word(wi)
		left -= uint32(bits.OnesCount64(parked))
		for set := d.occupied.word(wi) & pick &^ parked; set != 0 && left > 0; set &= set - 1 {
			i := wi*64 + bits.TrailingZeros64(set)
			left--
			if d.offer(i, &r) {
				return true, d.c.now, r.freed
			}
		}
		pick = ^uint64(0)
	}
	if d.repValid.Q() {
		d.repValid.Set(false)
	}
	if r.wake != d.nextDue.Q() {
		d.nextDue.Set(r.wake)
	}
	return false, r.wake, r.freed
}

// replyScan is what a search of the fault buffer carries from entry to
// entry.
type replyScan struct {
	skip  int    // the entry whose reply the router took, or -1
	wake  uint64 // when a held-back zero-copy reply may go
	freed int    // the page of the raised migration freed, or -1
}

// offer registers occupied entry i as the next reply if it can be
// answered, and reports whether it did; it frees i instead if it is a
// raised migration whose page is valid and none was freed yet.
func (d *Driver) offer(i int, r *replyScan) bool {
	if i == r.skip {
		return false
	}
	kind := d.reqKind.At(i).Q()
	page := int(d.reqWalk.At(i).Q().VPN - d.cfg.BaseVPN)
	st := d.pageState(page)
	if waits(kind, st) {
		d.parked.park(i, page)
	}
	valid := st == pageValid && !d.writer.LandingAt(d.cfg.BaseVPN+uint64(page)) && !d.unmapping(page)
	remote := false
	switch {
	case kind == entryPromote:
		if valid && r.freed < 0 {
			d.reqKind.At(i).Set(entryFree)
			d.occupied.put(i, false)
			r.freed = page
		}
		return false
	case valid:
	case kind == entryZeroCopy && st == pageRemote:
		if d.c.fetching {
			r.wake = min(r.wake, d.c.now+1)
			d.c.held = true
			return false
		}
		remote = true
		w := d.zcMapped.At(page / 64)
		if bit := uint64(1) << (page % 64); w.Q()&bit == 0 {
			w.Set(w.Q() | bit)
		}
	default:
		return false
	}
	d.repIndex.Set(uint32(i))
	if remote != d.repRemote.Q() {
		d.repRemote.Set(remote)
	}
	if !d.repValid.Q() {
		d.repValid.Set(true)
	}
	return true
}

// enqueue places an entry of kind for walk w in the first free slot of
// the fault buffer, stamped with its arrival order, and returns the slot.
// At most one entry arrives per cycle.
func (d *Driver) enqueue(kind uint8, w ptw.Walk) int {
	i := d.occupied.firstFree(d.cfg.FaultBuffer)
	d.reqKind.At(i).Set(kind)
	d.occupied.put(i, true)
	d.parked.Unpark(i)
	d.reqWalk.At(i).Set(w)
	d.reqSeq.At(i).Set(d.seq.Q())
	d.seq.Set(d.seq.Q() + 1)
	return i
}

// oldestFault is the oldest fault whose page is still in host memory and
// not on its way: the next one the driver handles.
func (d *Driver) oldestFault() int {
	best := -1
	left := d.waiting.Q() // occupied entries: the search stops after the last
	for wi := 0; wi < d.occupied.words.Len() && left > 0; wi++ {
		for set := d.occupied.word(wi); set != 0; set &= set - 1 {
			i := wi*64 + bits.TrailingZeros64(set)
			left--
			if kind := d.reqKind.At(i).Q(); kind != entryFault && kind != entryPromote {
				continue
			}
			if d.pageState(int(d.reqWalk.At(i).Q().VPN-d.cfg.BaseVPN)) != pageRemote {
				continue
			}
			if best < 0 || d.reqSeq.At(i).Q() < d.reqSeq.At(best).Q() {
				best = i
			}
		}
	}
	return best
}

// startFetch marks the plan's managed pages (ascending) on their way,
// collects those with a zero-copy mapping, and splits them into contiguous
// runs, the faulting page's run first with the faulting page as its
// critical page. It returns the number of runs.
func (d *Driver) startFetch(fetch []int) int {
	return d.startFetchAt(fetch, int(d.faultVPN.Q()-d.cfg.BaseVPN))
}

// startFetchAt is startFetch with fault as the critical page.
func (d *Driver) startFetchAt(fetch []int, fault int) int {
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
		d.setState(p, pageInFlight)
		if d.reference != nil {
			d.reference.Requested(p)
		}
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
