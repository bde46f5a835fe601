// Package mu is the UVMMU migration unit (UVMMU paper Section IV, Figure 2,
// steps 3-7; SPEC 6.4): the hardware that takes a walk which found a
// remote PTE, gets a destination frame-group from the Destination
// Allocator (blocks/da), has the Page Migration Engine (blocks/pme) move
// the 64 KB page-group over PCIe critical page first, writes each landed
// page's PTE through the GMMU's update port and answers every waiting
// request once its own page has landed. A destination with S=1 holds a
// victim: the unit reads its IPgT entry, points the victim's PTEs at the
// remote frame the requested page-group came from, shoots the victim's
// pages down in every L1 TLB, and has the PME swap the two page-groups
// over both link directions.
//
// There is no Verilog module for it yet; its ports are those of the
// blocks it connects: the router's Remote and Migrated ports, the DA's
// allocation, map and software ports, an IPgT memory port (shared with
// the DA through ipgt.Mux), the PME's command and event ports, the GMMU's
// update port, every L1 TLB's invalidation port and the dispatcher's host
// phase handshake. LatencyProbe samples its migration latencies from
// outside.
package mu

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/migrate"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
)

// PagesPerGroup is the 4 KB pages of a 64 KB page-group (SPEC 2), the
// unit of a migration.
const PagesPerGroup = 16

// LocalFrame is the frame number of page i of frame-group fg.
func LocalFrame(fg uint64, i int) uint64 { return fg*PagesPerGroup + uint64(i) }

// Ports are the unit's wires, all of them other blocks' ports.
type Ports struct {
	Remote   ptw.PTEPort[ptw.Walk] // in: walks that found a remote PTE (the router's)
	Migrated ptw.PTEPort[ptw.Walk] // out: requests answered with their local PTE
	Dst      da.Ports              // the DA's allocation, map, software and init ports
	Mem      ipgt.MemPorts         // out: reads of an S=1 destination's IPgT entry
	Cmd      *rtl.Decoupled[pme.Command]
	Events   *rtl.Decoupled[pme.Event]
	Update   ptw.PTEPort[uint64]              // out: the GMMU's page-table writes
	Inval    []*rtl.Decoupled[tlb.Invalidate] // out: one per L1 TLB
	InvalAck []*rtl.Decoupled[tlb.Invalidate]
	Host     *rtl.Decoupled[uint16] // in: a host phase starts
	HostDone *rtl.Decoupled[uint16] // out: its read-back is over
}

// Config sizes the unit and lists the driver's boot work.
type Config struct {
	// Slots is the migration table: one entry per PME command slot.
	Slots int
	// Requests is the table of waiting translation requests
	// (uvmmu.migration_queue).
	Requests int
	// IPGTBase is where the IPgT sits in GPU memory (SPEC 5.3).
	IPGTBase uint64
	// FirstGroup and Groups are the page-groups of the address space the
	// unit remembers as resident (frameOf).
	FirstGroup uint64
	Groups     int
	// HostPages is, per host phase, the pages it reads back (0 for a
	// kernel).
	HostPages []int
	// Device lists the cudaMalloc'd page-groups the driver protects at
	// boot, before the first kernel.
	Device []uint64
}

// Limits on the parameters.
const (
	MaxSlots    = 64   // the width of the free mask
	MaxRequests = 4096 // the reply index and waiting count are 16 bits; uvmmu.migration_queue's bound
)

// The ranges Validate checks, exported for the configuration layer.
var (
	SlotsRange    = rtl.Range{Min: 1, Max: MaxSlots}
	RequestsRange = rtl.Range{Min: 1, Max: MaxRequests}
)

// Validate names the first parameter outside its range.
func (c Config) Validate() error {
	switch {
	case !SlotsRange.Has(int64(c.Slots)):
		return SlotsRange.Check("mu: Slots", int64(c.Slots))
	case !RequestsRange.Has(int64(c.Requests)):
		return RequestsRange.Check("mu: Requests", int64(c.Requests))
	case c.Groups < 1:
		return fmt.Errorf("mu: Groups %d must be at least 1", c.Groups)
	case c.FirstGroup+uint64(c.Groups) > 1<<afm.VPgNBits:
		return fmt.Errorf("mu: page-groups %#x..%#x beyond the %d-bit VPgN", c.FirstGroup, c.FirstGroup+uint64(c.Groups)-1, afm.VPgNBits)
	}
	for i, p := range c.HostPages {
		if p < 0 {
			return fmt.Errorf("mu: HostPages[%d] = %d is negative", i, p)
		}
	}
	return nil
}

// Slot states.
const (
	slotFree   = iota
	slotSetup  // waiting for, or in, the set-up sequence
	slotMoving // the PME has the command
)

// Set-up engine states.
const (
	setupIdle    = iota
	setupDst     // asking the DA for a destination
	setupRead    // reading the destination's IPgT entry (S=1)
	setupWait    // waiting for that entry
	setupUnmap   // pointing the victim's PTEs at the remote frame, shooting it down
	setupCmd     // handing the PME its command
	setupDevice  // driver: taking a destination for a cudaMalloc'd page-group
	setupProtect // driver: PROTECT, then the page-group's 16 PTEs
	setupDevPTE
	setupHost      // driver: host phase, reading the host's range back
	setupHostEvict // waiting for the read-back's last page
	setupHostDone  // telling the dispatcher the host phase is over
)

// Unit is the migration control: a table of page-group migrations (one
// per PME command slot), a table of waiting translation requests, and
// three engines that run in parallel, each on its own ports:
//
//   - set-up: takes a new migration through DA destination, the victim's
//     IPgT read and unmapping (S=1) and the PME command, one migration at a
//     time; it also runs the driver's work at host phases (PROTECT of the
//     cudaMalloc'd page-groups before the first kernel, host reads);
//   - landing: one PME event per cycle; a landed page's PTE is written the
//     cycle after its event, a finished fetch is mapped in the IPgT;
//   - reply: one answer per cycle to the router: a request whose page has
//     landed gets the local PTE (the router fills the SM's L1 TLB and
//     replays it), a request for a page-group that was being evicted gets
//     the remote PTE once the eviction is over, which sends it back here as
//     a new migration.
type Unit struct {
	rtl.Base
	Ports

	cfg Config

	// Shared parts: the page-table write arbiter, the victim shootdown,
	// the host read-back.
	writer *migrate.PTEWriter
	shoot  *migrate.Shootdown
	host   *migrate.HostReadBack

	// Migration table, one entry per PME slot.
	state    *rtl.Vec[uint8]
	vpgn     *rtl.Vec[uint64] // requested page-group
	hostFG   *rtl.Vec[uint64] // its host frame-group
	pfgn     *rtl.Vec[uint64] // destination frame-group
	first    *rtl.Vec[uint8]  // critical page
	swap     *rtl.Vec[uint8]  // destination held a victim
	victim   *rtl.Vec[uint64] // the victim page-group
	landed   *rtl.Vec[uint16] // pages whose PTE is written
	mapped   *rtl.Vec[uint8]  // the IPgT map write is done
	evicted  *rtl.Vec[uint8]  // the victim is in host memory
	setupQ   *rtl.Ring[uint8] // slots waiting for the set-up engine
	freeMask *rtl.Reg[uint64] // free slots

	// Set-up engine.
	setup      *rtl.Reg[uint8]
	setupSlot  *rtl.Reg[uint8]
	page       *rtl.Reg[uint8]  // page index of the unmap / device PTE loop
	deviceDone *rtl.Reg[uint32] // cudaMalloc'd page-groups protected so far
	devPFgN    *rtl.Reg[uint64]

	// Landing engine: the IPgT map write offered.
	mapSlot  *rtl.Reg[uint8]
	mapValid *rtl.Reg[bool]

	// Waiting requests.
	reqValid *rtl.BitVec
	reqWalk  *rtl.Vec[ptw.Walk]
	waiting  *rtl.Reg[uint32]

	// Reply engine: the answer offered to the router.
	repValid *rtl.Reg[bool]
	repIndex *rtl.Reg[uint32]
	repWalk  *rtl.Reg[ptw.Walk]
	repPTE   *rtl.Reg[pte.PTE]
	// resume: the last search offered the request at repIndex and since
	// then nothing the search reads has changed but for the arrival of
	// resumeArrival (Requests for none). The requests before repIndex
	// were not answerable then and still are not, so the search that
	// follows the reply looks at that arrival and then only past
	// repIndex.
	resume        *rtl.Reg[bool]
	resumeArrival *rtl.Reg[uint32]
	// rescan: something the search reads may have changed since the last
	// search that found nothing to answer or restart. While it is clear,
	// only the request in rescanEntry (Requests for none), which arrived
	// since, can be answerable: the search looks at it alone, or is
	// skipped. Both are set in the cycles that change what the search
	// reads (a second arrival sets rescan), and cleared by a search that
	// finds nothing in a cycle that writes other registers anyway or in
	// which the unit sleeps, so that they never keep the unit awake.
	rescan      *rtl.Reg[bool]
	rescanEntry *rtl.Reg[uint32]

	// parked is the waiting requests whose page a migration still moves
	// (parkedRequests), passed by the reply search.
	parked parkedRequests

	// Frame-group of each resident page-group (valid bit above it), from
	// FirstGroup on: a remote walk that read its PTE before the migration
	// wrote it is answered from here instead of migrating the page-group
	// a second time.
	frameOf *rtl.Vec[uint64]
	// This cycle's changes to it (combinational): the page-group mapped
	// and the victim chosen, or noGroup.
	nowResident, nowEvicting uint64
	// Set-up queue traffic this cycle (combinational): a slot pushed by
	// start, the head popped by the set-up engine.
	queued, dequeued bool
	queuedSlot       uint8
	// The request table entry an arrival takes this cycle (combinational),
	// or -1, and the cycle's reply search.
	arrived int
	search  replySearch

	migrations *rtl.Reg[uint64] // 4 KB pages moved to the GPU
	evictions  *rtl.Reg[uint64] // 4 KB pages written back to the host
}

// New adds a migration unit to s under path.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*Unit, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(p.Inval) > migrate.MaxTLBs || len(p.InvalAck) != len(p.Inval) {
		return nil, fmt.Errorf("mu: %d invalidation and %d acknowledgement ports; want equal counts, at most %d", len(p.Inval), len(p.InvalAck), migrate.MaxTLBs)
	}
	u := &Unit{Ports: p, cfg: cfg}
	s.Add(u, path)
	b := &u.Base
	n := cfg.Slots
	u.state = rtl.NewVec[uint8](b, "state", n, 2, slotFree)
	u.vpgn = rtl.NewVec[uint64](b, "vpgn", n, afm.VPgNBits, 0)
	u.hostFG = rtl.NewVec[uint64](b, "host_fg", n, 48, 0)
	u.pfgn = rtl.NewVec[uint64](b, "pfgn", n, 32, 0)
	u.first = rtl.NewVec[uint8](b, "first", n, 4, 0)
	u.swap = rtl.NewVec[uint8](b, "swap", n, 1, 0)
	u.victim = rtl.NewVec[uint64](b, "victim", n, afm.VPgNBits, 0)
	u.landed = rtl.NewVec[uint16](b, "landed", n, 16, 0)
	u.mapped = rtl.NewVec[uint8](b, "mapped", n, 1, 0)
	u.evicted = rtl.NewVec[uint8](b, "evicted", n, 1, 0)
	u.setupQ = rtl.NewRing[uint8](b, "setup_q", n, 6, false)
	u.freeMask = rtl.NewReg(b, "free", n, uint64(1)<<n-1)
	if n == 64 {
		u.freeMask = rtl.NewReg(b, "free_all", 64, ^uint64(0))
	}
	u.setup = rtl.NewReg[uint8](b, "setup", 4, setupIdle)
	u.setupSlot = rtl.NewReg[uint8](b, "setup_slot", 6, 0)
	u.page = rtl.NewReg[uint8](b, "page", 5, 0)
	u.deviceDone = rtl.NewReg[uint32](b, "device_done", 32, 0)
	u.devPFgN = rtl.NewReg[uint64](b, "dev_pfgn", 32, 0)
	u.mapSlot = rtl.NewReg[uint8](b, "map_slot", 6, 0)
	u.mapValid = rtl.NewFlag(b, "map_valid", false)
	u.reqValid = rtl.NewBitVec(b, "req_valid", cfg.Requests)
	u.reqWalk = rtl.NewVecOf(b, "req_walk", cfg.Requests, ptw.WalkBits, ptw.Walk{})
	u.waiting = rtl.NewReg[uint32](b, "waiting", 16, 0)
	u.repValid = rtl.NewFlag(b, "rep_valid", false)
	u.repIndex = rtl.NewReg[uint32](b, "rep_index", 16, 0)
	u.repWalk = rtl.NewRegOf(b, "rep_walk", ptw.WalkBits, ptw.Walk{})
	u.repPTE = rtl.NewReg[pte.PTE](b, "rep_pte", 64, 0)
	u.resume = rtl.NewFlag(b, "resume", false)
	u.resumeArrival = rtl.NewReg(b, "resume_arrival", 16, uint32(cfg.Requests))
	u.rescan = rtl.NewFlag(b, "rescan", true)
	u.rescanEntry = rtl.NewReg(b, "rescan_entry", 16, uint32(cfg.Requests))
	u.parked = newParkedRequests(cfg.Requests, cfg.Slots)
	u.frameOf = rtl.NewVec[uint64](b, "frame_of", cfg.Groups, 33, 0)
	u.migrations = rtl.NewReg[uint64](b, "migrations", 64, 0)
	u.evictions = rtl.NewReg[uint64](b, "evictions", 64, 0)
	u.writer = migrate.NewPTEWriter(b, p.Update)
	u.shoot = migrate.NewShootdown(b, p.Inval, p.InvalAck)
	u.host = migrate.NewHostReadBack(b, p.Host, p.HostDone, cfg.HostPages)
	p.Remote.Consumer(b)
	p.Migrated.Producer(b)
	d := p.Dst
	b.Listen(d.DstValid, d.DstPFgN, d.DstSwap, d.Map.Ready, d.SW.Ready, d.InitDone)
	b.Listen(p.Mem.ReqReady, p.Mem.RespValid, p.Mem.RespData)
	p.Cmd.Producer(b)
	p.Events.Consumer(b)
	return u, nil
}

// Config returns the unit's parameters.
func (u *Unit) Config() Config { return u.cfg }

// Migrations counts the 4 KB pages moved to the GPU.
func (u *Unit) Migrations() uint64 { return u.migrations.Q() }

// Evictions counts the 4 KB pages written back to the host.
func (u *Unit) Evictions() uint64 { return u.evictions.Q() }

// Active is the number of page-group migrations in flight.
func (u *Unit) Active() int { return u.cfg.Slots - bits.OnesCount64(u.freeMask.Q()) }

// Waiting is the number of requests waiting for an answer.
func (u *Unit) Waiting() int { return int(u.waiting.Q()) }

// InFlight is the set of page-groups a migration moves in or out.
func (u *Unit) InFlight() map[uint64]bool {
	m := map[uint64]bool{}
	for slot := range u.cfg.Slots {
		if u.state.At(slot).Q() != slotFree {
			m[u.vpgn.At(slot).Q()] = true
			if u.swap.At(slot).Q() != 0 {
				m[u.victim.At(slot).Q()] = true
			}
		}
	}
	return m
}

// Protected is the cudaMalloc'd page-groups protected and mapped so far.
func (u *Unit) Protected() []uint64 { return u.cfg.Device[:u.deviceDone.Q()] }

// Drive presents the set-up engine's requests, the PTE write, the map
// write and the reply, all from registers.
func (u *Unit) Drive() {
	st := u.setup.Q()
	slot := int(u.setupSlot.Q())
	u.Remote.Ready.Set(u.freeMask.Q() != 0 && u.waiting.Q() < uint32(u.cfg.Requests))
	u.Dst.DstReady.Set(st == setupDst || st == setupDevice)
	u.Mem.ReqValid.Set(st == setupRead)
	u.Mem.ReqWrite.Set(false)
	u.Mem.ReqAddr.Set(ipgt.Address(u.cfg.IPGTBase, u.pfgn.At(slot).Q()))
	u.Mem.ReqWData.Set(0)
	u.Cmd.Valid.Set(st == setupCmd || st == setupHost)
	if st == setupHost {
		u.Cmd.Bits.Set(u.host.Command())
	} else {
		op := pme.Fetch
		if u.swap.At(slot).Q() != 0 {
			op = pme.Swap
		}
		u.Cmd.Bits.Set(pme.Command{Tag: uint16(slot), Op: op, Pages: PagesPerGroup, First: uint16(u.first.At(slot).Q())})
	}
	u.Events.Ready.Set(!u.writer.Landing())

	// One PTE write per cycle: a landed page first, else a victim page
	// being unmapped or a cudaMalloc'd page being mapped.
	k := uint64(u.page.Q())
	switch st {
	case setupUnmap:
		u.writer.Drive(true, true, u.victim.At(slot).Q()*PagesPerGroup+k, pte.Remote(LocalFrame(u.hostFG.At(slot).Q(), int(k))))
	case setupDevPTE:
		u.writer.Drive(true, true, u.cfg.Device[u.deviceDone.Q()]*PagesPerGroup+k, pte.Local(LocalFrame(u.devPFgN.Q(), int(k))))
	default:
		u.writer.Drive(false, false, 0, 0)
	}
	// A victim page is shot down only in a cycle its remote PTE is written
	// (the update port is always ready; a landed page's write goes first),
	// never before: a walk that read the old PTE after the shootdown would
	// otherwise fill a TLB with it, while a result still on its way when
	// the PTE is written is dropped by the GMMU's forwarding or the router.
	u.shoot.Drive(st == setupUnmap && !u.writer.Landing(), u.victim.At(slot).Q()*PagesPerGroup+k)
	u.Dst.SW.Valid.Set(st == setupProtect)
	u.Dst.SW.Op.Set(uint8(afm.OpProtect))
	u.Dst.SW.PFgN.Set(u.devPFgN.Q())

	m := int(u.mapSlot.Q())
	u.Dst.Map.Valid.Set(u.mapValid.Q())
	u.Dst.Map.PFgN.Set(u.pfgn.At(m).Q())
	u.Dst.Map.VPgN.Set(u.vpgn.At(m).Q())
	u.Dst.Map.CID.Set(0)

	u.Migrated.Valid.Set(u.repValid.Q())
	u.Migrated.Bits.Set(u.repWalk.Q())
	u.Migrated.PTE.Set(u.repPTE.Q())
	u.host.Drive(st == setupIdle && u.setupQ.Len() == 0 && int(u.deviceDone.Q()) == len(u.cfg.Device), st == setupHostDone)
}

// Eval takes a remote walk, then runs the three engines.
func (u *Unit) Eval() {
	free := u.freeMask.Q()
	u.nowResident, u.nowEvicting = noGroup, noGroup
	u.queued, u.dequeued, u.arrived = false, false, -1

	waiting, arriving := u.evalArrival(&free)
	busy := arriving != noGroup
	busy = u.evalSetup() || busy
	retired := u.writer.Landing() && u.Update.Fire()
	busy = u.evalLanding(&free, arriving) || busy
	// What the reply search reads, other than the request table, changes
	// with a PME event, the landing register's write, a destination taken
	// (its frame-group) or a victim chosen, a page-group mapped, or a
	// slot started or retired.
	changed := u.Events.Fire() || retired || u.Dst.DstFire() || u.nowEvicting != noGroup || u.nowResident != noGroup || free != u.freeMask.Q()
	waiting, r := u.evalReply(waiting, &free, changed)
	busy = busy || r.busy
	u.noteRescan(r, changed, busy)

	u.applyResident()
	u.setupQ.Update(u.queued, u.queuedSlot, 0, u.dequeued)
	u.reqValid.Flush()
	if free != u.freeMask.Q() {
		u.freeMask.Set(free)
	}
	if waiting != u.waiting.Q() {
		u.waiting.Set(waiting)
	}
	u.parked.unparkChanged()
	if !busy {
		u.Sleep()
	}
}

// noGroup marks no page-group.
const noGroup = ^uint64(0)

// evalArrival takes a remote walk into the request table and joins its
// page-group's migration or starts one. It returns the waiting count and
// the page-group that arrived (noGroup if none).
func (u *Unit) evalArrival(free *uint64) (uint32, uint64) {
	waiting := u.waiting.Q()
	if !u.Remote.Fire() {
		return waiting, noGroup
	}
	w := u.Remote.Bits.Get()
	g := w.VPN / PagesPerGroup
	if u.find(g) < 0 && !u.isResident(g) {
		u.start(free, g, u.Remote.PTE.Get().Frame()/PagesPerGroup, w.VPN)
	}
	i := u.freeRequest()
	u.reqValid.Put(i, true)
	u.parked.Unpark(i)
	u.reqWalk.At(i).Set(w)
	u.arrived = i
	return waiting + 1, g
}

// applyResident records this cycle's mapped page-group and victim.
func (u *Unit) applyResident() {
	if g := u.nowResident; g != noGroup {
		slot := int(u.mapSlot.Q())
		u.frameOf.At(int(g - u.cfg.FirstGroup)).Set(1<<32 | u.pfgn.At(slot).Q())
	}
	if g := u.nowEvicting; g != noGroup {
		u.frameOf.At(int(g - u.cfg.FirstGroup)).Set(0)
	}
}

func (u *Unit) isResident(g uint64) bool {
	return u.frameOf.At(int(g-u.cfg.FirstGroup)).Q()>>32 != 0
}

// start opens a migration of page-group g from host frame-group hostFG,
// critical page first, and queues it for the set-up engine. It runs at
// most once per cycle.
func (u *Unit) start(free *uint64, g, hostFG, vpn uint64) {
	slot := bits.TrailingZeros64(*free)
	*free &^= 1 << slot
	u.state.At(slot).Set(slotSetup)
	u.vpgn.At(slot).Set(g)
	u.hostFG.At(slot).Set(hostFG)
	u.first.At(slot).Set(uint8(vpn % PagesPerGroup))
	u.swap.At(slot).Set(0)
	u.landed.At(slot).Set(0)
	u.mapped.At(slot).Set(0)
	u.evicted.At(slot).Set(0)
	u.parked.changed |= 1 << slot
	u.queued, u.queuedSlot = true, uint8(slot)
}

// inUse is the slots not free (the complement of the free mask): the
// searches of the migration table visit only them.
func (u *Unit) inUse() uint64 {
	used := ^u.freeMask.Q()
	if u.cfg.Slots < 64 {
		used &= uint64(1)<<u.cfg.Slots - 1
	}
	return used
}

// find returns the slot migrating page-group g in or out, or -1.
func (u *Unit) find(g uint64) int {
	for set := u.inUse(); set != 0; set &= set - 1 {
		slot := bits.TrailingZeros64(set)
		if u.vpgn.At(slot).Q() == g || (u.swap.At(slot).Q() != 0 && u.evicted.At(slot).Q() == 0 && u.victim.At(slot).Q() == g) {
			return slot
		}
	}
	return -1
}

func (u *Unit) freeRequest() int {
	return rtl.FirstClear(u.cfg.Requests, u.reqValid)
}

// evalSetup advances the set-up engine by one step.
func (u *Unit) evalSetup() bool {
	st := u.setup.Q()
	slot := int(u.setupSlot.Q())
	next := st
	switch st {
	case setupIdle:
		switch {
		case int(u.deviceDone.Q()) < len(u.cfg.Device) && u.Dst.InitDone.Get():
			next = setupDevice
		case u.Host.Fire():
			next = setupHostDone
			if u.host.Start() {
				next = setupHost
			}
		case u.setupQ.Len() > 0:
			u.setupSlot.Set(u.setupQ.Head())
			u.dequeued = true
			next = setupDst
		}
	case setupDst:
		if u.Dst.DstFire() {
			u.pfgn.At(slot).Set(u.Dst.DstPFgN.Get())
			next = setupCmd
			if u.Dst.DstSwap.Get() {
				next = setupRead
			}
		}
	case setupRead:
		if u.Mem.ReqValid.Get() && u.Mem.ReqReady.Get() {
			next = setupWait
		}
	case setupWait:
		if u.Mem.RespValid.Get() {
			// docs/da.md: an S=1 destination whose entry is no longer
			// mapped is a free destination.
			if e := ipgt.Unpack(u.Mem.RespData.Get()); e.M {
				u.swap.At(slot).Set(1)
				u.victim.At(slot).Set(e.VPgN)
				u.nowEvicting = e.VPgN
				u.page.Set(0)
				u.shoot.Clear()
				next = setupUnmap
			} else {
				next = setupCmd
			}
		}
	case setupUnmap:
		if u.shoot.Step(u.writer.SequencerWrote()) {
			if u.page.Q() == PagesPerGroup-1 {
				next = setupCmd
			} else {
				u.page.Set(u.page.Q() + 1)
			}
		}
	case setupCmd:
		if u.Cmd.Fire() {
			u.state.At(slot).Set(slotMoving)
			next = setupIdle
		}
	case setupDevice:
		if u.Dst.DstFire() {
			u.devPFgN.Set(u.Dst.DstPFgN.Get())
			next = setupProtect
		}
	case setupProtect:
		if u.Dst.SW.Valid.Get() && u.Dst.SW.Ready.Get() {
			u.page.Set(0)
			next = setupDevPTE
		}
	case setupDevPTE:
		if u.writer.SequencerWrote() {
			if u.page.Q() == PagesPerGroup-1 {
				u.deviceDone.Set(u.deviceDone.Q() + 1)
				next = setupIdle
			} else {
				u.page.Set(u.page.Q() + 1)
			}
		}
	case setupHost:
		if u.Cmd.Fire() {
			next = setupHostEvict
		}
	case setupHostEvict:
		// The landing engine moves on when the read-back's event comes.
	case setupHostDone:
		if u.host.Done() {
			next = setupIdle
		}
	}
	if next != st {
		u.setup.Set(next)
		return true
	}
	return st != setupIdle && st != setupHostEvict
}

// evalLanding takes one PME event per cycle, offers the IPgT map write of
// a fully landed page-group and retires a finished slot.
func (u *Unit) evalLanding(free *uint64, arriving uint64) bool {
	busy := u.writer.Retire()
	if u.Events.Fire() {
		busy = true
		ev := u.Events.Bits.Get()
		if ev.Tag == migrate.HostTag {
			next := uint8(setupHost)
			if u.host.ChunkDone() {
				next = setupHostDone
			}
			u.setup.Set(next)
		} else {
			slot := int(ev.Tag)
			if ev.Victim {
				u.evicted.At(slot).Set(1)
				u.evictions.Set(u.evictions.Q() + PagesPerGroup)
			} else {
				g := u.vpgn.At(slot).Q()
				u.writer.Land(g*PagesPerGroup+uint64(ev.Page), pte.Local(LocalFrame(u.pfgn.At(slot).Q(), int(ev.Page))))
				u.landed.At(slot).Set(u.landed.At(slot).Q() | 1<<ev.Page)
				u.parked.changed |= 1 << slot
				u.migrations.Set(u.migrations.Q() + 1)
			}
		}
	}
	// The IPgT map write of a fully landed page-group.
	if u.mapValid.Q() {
		busy = true
		if u.Dst.Map.Ready.Get() {
			u.mapped.At(int(u.mapSlot.Q())).Set(1)
			u.nowResident = u.vpgn.At(int(u.mapSlot.Q())).Q()
			u.mapValid.Set(false)
		}
	} else {
		for set := u.inUse(); set != 0; set &= set - 1 {
			if slot := bits.TrailingZeros64(set); u.state.At(slot).Q() == slotMoving && u.landed.At(slot).Q() == 1<<PagesPerGroup-1 && u.mapped.At(slot).Q() == 0 {
				u.mapSlot.Set(uint8(slot))
				u.mapValid.Set(true)
				busy = true
				break
			}
		}
	}
	// Retire a slot once mapped, its victim (if any) home, and no request
	// waits on, or arrives for, either page-group.
	for set := u.inUse(); set != 0; set &= set - 1 {
		slot := bits.TrailingZeros64(set)
		if u.state.At(slot).Q() != slotMoving || u.mapped.At(slot).Q() == 0 || (u.swap.At(slot).Q() != 0 && u.evicted.At(slot).Q() == 0) {
			continue
		}
		if u.referenced(slot) || u.vpgn.At(slot).Q() == arriving || u.victim.At(slot).Q() == arriving {
			continue
		}
		u.state.At(slot).Set(slotFree)
		u.parked.changed |= 1 << slot
		*free |= 1 << slot
		busy = true
		break
	}
	return busy
}

// referenced reports a waiting request for the slot's page-groups.
func (u *Unit) referenced(slot int) bool {
	g, v, swap := u.vpgn.At(slot).Q(), u.victim.At(slot).Q(), u.swap.At(slot).Q() != 0
	for wi := range u.reqValid.Words() {
		for set := u.reqValid.Word(wi); set != 0; set &= set - 1 {
			rg := u.reqWalk.At(wi*64+bits.TrailingZeros64(set)).Q().VPN / PagesPerGroup
			if rg == g || (swap && rg == v) {
				return true
			}
		}
	}
	return false
}

// evalReply retires the reply the router took and offers the first
// answerable request; a request whose page-group was evicted while it
// waited starts its migration again. changed reports a change this
// cycle, other than to the request table, of what the search reads. It
// returns the waiting count and what the search did.
func (u *Unit) evalReply(waiting uint32, free *uint64, changed bool) (uint32, *replySearch) {
	r := &u.search
	*r = replySearch{skip: -1, free: free, canStart: !u.Remote.Fire() && *free == u.freeMask.Q() && *free != 0}
	first := 0 // the search visits the entries from first on
	if u.repValid.Q() {
		if !u.Migrated.Fire() {
			if u.resume.Q() && (changed || u.arrived >= 0) {
				u.resume.Set(false)
			}
			r.busy = true
			return waiting, r
		}
		r.skip = int(u.repIndex.Q())
		u.reqValid.Put(r.skip, false)
		waiting--
		r.busy = true
		if u.resume.Q() {
			first = r.skip + 1
			if a := int(u.resumeArrival.Q()); a < r.skip {
				u.visit(r, a)
			}
		}
	} else if !u.rescan.Q() {
		// Only the request that arrived since the last search, if any
		// and not answered since, can be answerable.
		e := int(u.rescanEntry.Q())
		if e == u.cfg.Requests {
			return waiting, r
		}
		if u.reqValid.Has(e) {
			u.visit(r, e)
		}
		first = u.cfg.Requests
	}
	r.searched = true
	// The words of the table from the one holding first on, the entries
	// below first masked off.
	from := ^uint64(0) << (first % 64)
	for wi := first / 64; wi < u.reqValid.Words() && !r.offer; wi++ {
		for set := u.reqValid.Word(wi) & from &^ u.parked.Word(wi); set != 0 && !r.offer; set &= set - 1 {
			u.visit(r, wi*64+bits.TrailingZeros64(set))
		}
		from = ^uint64(0)
	}
	if r.offer != u.repValid.Q() {
		u.repValid.Set(r.offer)
	}
	arrival := u.cfg.Requests
	if u.arrived >= 0 {
		arrival = u.arrived
	}
	resume := r.offer && !changed && !r.blocked && !r.started
	if resume != u.resume.Q() {
		u.resume.Set(resume)
	}
	if a := uint32(arrival); resume && a != u.resumeArrival.Q() {
		u.resumeArrival.Set(a)
	}
	return waiting, r
}

// noteRescan sets the rescan registers for the next cycle.
func (u *Unit) noteRescan(r *replySearch, changed, busy bool) {
	none := uint32(u.cfg.Requests)
	rescan, entry := u.rescan.Q(), u.rescanEntry.Q()
	// A search that found nothing covers every change so far. It is
	// recorded in a cycle that writes anyway (a reply taken, an arrival)
	// or in which the unit sleeps whatever it writes.
	if r.searched && !r.offer && !r.started && !r.blocked && (r.skip >= 0 || u.arrived >= 0 || !busy) {
		rescan, entry = false, none
	}
	switch {
	case changed || r.started || r.blocked:
		rescan = true
	case u.arrived >= 0 && entry != none:
		rescan = true
	case u.arrived >= 0:
		entry = uint32(u.arrived)
	}
	if rescan != u.rescan.Q() {
		u.rescan.Set(rescan)
	}
	if entry != u.rescanEntry.Q() {
		u.rescanEntry.Set(entry)
	}
}

// replySearch is one cycle's search of the waiting requests.
type replySearch struct {
	skip     int     // the request whose reply the router took, or -1
	free     *uint64 // the slots free next cycle
	canStart bool    // a migration may start: no arrival started one, no slot changed
	// Waiting requests crowd on few page-groups: the search looks each
	// group up once (the registers do not change within the cycle).
	looks  [8]groupLook
	looked uint8
	// What it did: searched, offered a request, started a migration, found
	// a request whose migration could not start; and whether the reply
	// engine is busy.
	searched, offer, started, blocked, busy bool
}

// visit looks at waiting request i: it offers it if answerable, or
// starts its page-group's migration again.
func (u *Unit) visit(r *replySearch, i int) {
	if i == r.skip {
		return
	}
	w := u.reqWalk.At(i).Q()
	g := w.VPN / PagesPerGroup
	l := &r.looks[g%uint64(len(r.looks))]
	if bit := uint8(1) << (g % uint64(len(r.looks))); r.looked&bit == 0 || l.g != g {
		*l = u.lookGroup(g)
		r.looked |= bit
	}
	e, st := u.answer(w.VPN, l)
	switch {
	case st == answerLocal:
		u.repIndex.Set(uint32(i))
		u.repWalk.Set(w)
		u.repPTE.Set(e)
		r.offer, r.busy = true, true
	case st == answerRestart && r.canStart:
		// Its page-group went back to the host while it waited:
		// migrate it again, from where the eviction put it.
		u.start(r.free, w.VPN/PagesPerGroup, e.Frame()/PagesPerGroup, w.VPN)
		r.canStart, r.started, r.busy = false, true, true
	case st == answerRestart:
		r.blocked = true
	case l.slot >= 0 && l.landed&(1<<(w.VPN%PagesPerGroup)) == 0:
		u.parked.Park(i, l.slot) // its page is still on its way
	}
}

// Outcomes of answer.
const (
	answerWait    = iota // the request's page is still on its way
	answerLocal          // its page has landed: reply with the local PTE
	answerRestart        // its page-group was evicted meanwhile: migrate it again
)

// groupLook is what answer needs of a page-group, found in the
// registers' current values: the in-use slot migrating it with the slot's
// landed pages and frame group, else its frame table entry and, unless
// that holds a frame, the in-use slot evicting it (-1 for no slot).
type groupLook struct {
	g            uint64
	slot         int
	landed, pfgn uint64
	frame        uint64
	victim       int
}

// lookGroup finds page-group g's migration, frame and eviction.
func (u *Unit) lookGroup(g uint64) groupLook {
	l := groupLook{g: g, slot: -1, victim: -1}
	inUse := u.inUse()
	for set := inUse; set != 0; set &= set - 1 {
		if slot := bits.TrailingZeros64(set); u.vpgn.At(slot).Q() == g {
			l.slot, l.landed, l.pfgn = slot, uint64(u.landed.At(slot).Q()), u.pfgn.At(slot).Q()
			return l
		}
	}
	if l.frame = u.frameOf.At(int(g - u.cfg.FirstGroup)).Q(); l.frame>>32 != 0 {
		return l
	}
	for set := inUse; set != 0; set &= set - 1 {
		if slot := bits.TrailingZeros64(set); u.swap.At(slot).Q() != 0 && u.victim.At(slot).Q() == g {
			l.victim = slot
			return l
		}
	}
	return l
}

// answer says what a waiting request for vpn, in page-group l, gets now:
// the local PTE once its page's PTE is written, or, once the eviction of
// its page-group is over and no new migration of it has started, the
// remote PTE it must be migrated again from.
func (u *Unit) answer(vpn uint64, l *groupLook) (pte.PTE, int) {
	k := int(vpn % PagesPerGroup)
	switch {
	case l.slot >= 0:
		if l.landed&(1<<k) != 0 && !u.writer.LandingAt(vpn) {
			return pte.Local(LocalFrame(l.pfgn, k)), answerLocal
		}
	case l.frame>>32 != 0:
		return pte.Local(LocalFrame(l.frame&(1<<32-1), k)), answerLocal
	case l.victim >= 0 && u.evicted.At(l.victim).Q() != 0:
		return pte.Remote(LocalFrame(u.hostFG.At(l.victim).Q(), k)), answerRestart
	}
	return 0, answerWait
}
