package policy

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/evict"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
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

// UVMMU is the hardware-offloaded migration path (UVMMU paper Section IV,
// Figure 2; SPEC 6.4): a walk that finds a remote PTE goes to the migration
// unit, which takes a destination frame-group from the Destination
// Allocator (blocks/da, its IPgT in GPU DRAM served by blocks/dram), has
// the Page Migration Engine (blocks/pme) move the 64 KB page-group over the
// PCIe link (blocks/pcie) critical page first, writes each landed page's
// PTE through the GMMU's update port, and answers every waiting request
// when its own page has landed. A destination with S=1 holds a victim: the
// unit reads its IPgT entry, points the victim's PTEs at the remote frame
// the requested page-group came from, shoots the victim's pages down in
// every L1 TLB, and has the PME swap the two page-groups over both link
// directions. No software runs and no TLB is frozen; the handling latency
// is what the DA and the PME set-up take. With uvmmu.eviction other than
// random, an eviction-metadata block (blocks/evict) offers the DA its swap
// victims in place of the LFSR (UVMMU paper Section V-C1).
type UVMMU struct {
	cfg      *config.Config
	sys      *system.System
	unit     *migrationUnit
	DA       *da.DA
	Eviction evict.Metadata // nil with the LFSR
	IPgT     *dram.DRAM
	PME      *pme.Engine
	Link     *pcie.Link
}

func newUVMMU(cfg *config.Config) *UVMMU { return &UVMMU{cfg: cfg} }

// Name is "uvmmu".
func (*UVMMU) Name() string { return "uvmmu" }

// ipgtBase is where the IPgT sits in GPU memory (SPEC 5.3 IPGT_BASE
// default).
const ipgtBase = 0

// hostPort is the link port index of the PME and its host DMA responder.
const hostPort = 0

// Attach builds the DA with its IPgT memory, the PME, the link and the
// migration unit, and maps every managed page-group remote: each starts
// in host memory, at the host frame-group equal to its own number.
func (p *UVMMU) Attach(s *system.System) error {
	cfg := p.cfg
	p.sys = s
	for _, r := range s.Layout.Managed {
		for g := 0; g < r.Count; g++ {
			if err := s.LoadGroup(r.First+uint64(g), r.First+uint64(g), true); err != nil {
				return err
			}
		}
	}
	dcfg := da.DefaultConfig()
	dcfg.NFG = uint64(s.Layout.NFG)
	dcfg.DCQDepth, dcfg.DCQThreshold = cfg.UVMMU.DCQDepth, cfg.UVMMU.DCQThreshold
	dcfg.FrABWord, dcfg.LFSRWidth = cfg.UVMMU.FrabWord, cfg.UVMMU.LFSRWidth
	dcfg.IPGTBase = ipgtBase
	// The LFSR must never be zero (SPEC 5.2); derive a non-zero seed.
	dcfg.LFSRSeed = cfg.Run.Seed%(1<<cfg.UVMMU.LFSRWidth-1) + 1
	if cfg.UVMMU.Eviction != evict.Random {
		dcfg.Victims = afm.VictimExternal
	}
	if err := dcfg.Validate(); err != nil {
		return fmt.Errorf("uvmmu: %w", err)
	}
	ports := da.NewPorts(s.Sim, "uvmmu.da", dcfg)
	var err error
	if p.DA, err = da.New(s.Sim, "uvmmu.da", dcfg, ports); err != nil {
		return fmt.Errorf("uvmmu: %w", err)
	}
	if dcfg.Victims == afm.VictimExternal {
		// It snoops the GMMU's walk results and the DA's IPgT writes.
		w := s.Router.Walks
		ecfg := evict.Config{Name: cfg.UVMMU.Eviction, NFG: dcfg.NFG, IPGTBase: ipgtBase, NRUClearCycles: evict.DefaultNRUClearCycles}
		eports := evict.Ports{WalkValid: w.Valid, WalkReady: w.Ready, WalkPTE: w.PTE, IPgT: ports.Mem, Victim: ports.Victim}
		if p.Eviction, err = evict.New(s.Sim, "uvmmu.evict", ecfg, eports); err != nil {
			return fmt.Errorf("uvmmu: %w", err)
		}
	}
	memPorts := ipgt.NewMemPorts(s.Sim, "uvmmu.ipgt_mem", dcfg.AddrBits)
	unitMem := ipgt.NewMemPorts(s.Sim, "uvmmu.unit", dcfg.AddrBits)
	newIPGTMux(s.Sim, "uvmmu.ipgt_mux", ports.Mem, unitMem, memPorts, dcfg.AddrBits)
	mcfg := dram.Config{
		Latency: cfg.Memory.LatencyCycles, BytesPerCycle: cfg.BytesPerCycle(cfg.Memory.BandwidthGBs),
		Base: ipgtBase, Words: s.Layout.NFG, AddrBits: dcfg.AddrBits,
	}
	if p.IPgT, err = dram.New(s.Sim, "uvmmu.ipgt_dram", mcfg, memPorts); err != nil {
		return fmt.Errorf("uvmmu: %w", err)
	}
	// The driver builds the IPgT at boot: every frame-group free.
	for fg := 0; fg < s.Layout.NFG; fg++ {
		p.IPgT.Load(fg, ipgt.Entry{F: true}.Pack())
	}
	if p.Link, p.PME, err = newLinkAndPME(s, cfg); err != nil {
		return err
	}
	p.unit = newMigrationUnit(s, cfg, p.DA, unitMem, p.PME)
	// Swaps unmap victims whose local PTEs may be queued for a fill.
	s.Router.Watch(s.GMMU.Update)
	return nil
}

// newLinkAndPME builds the host link with the PME and its host DMA
// responder on port hostPort.
func newLinkAndPME(s *system.System, cfg *config.Config) (*pcie.Link, *pme.Engine, error) {
	lcfg := pcie.Config{
		BandwidthMBps:   uint64(cfg.PCIe.BandwidthGBs * 1000),
		ClockMHz:        uint64(cfg.GPU.ClockMHz),
		RoundTripCycles: cfg.Cycles(cfg.PCIe.RTTUs),
		MaxPacketBytes:  cfg.PCIe.PacketBytes,
		Ports:           1,
	}
	link, err := pcie.New(s.Sim, "pcie", lcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("pcie: %w", err)
	}
	pcfg := pme.DefaultConfig()
	pcfg.SetupCycles = cfg.UVMMU.SetupCycles
	pcfg.PacketBytes = min(pcfg.PageBytes, cfg.PCIe.PacketBytes)
	if err := pcfg.CheckLink(lcfg); err != nil {
		return nil, nil, err
	}
	e, err := pme.New(s.Sim, "pme", pcfg, link.D2H.In[hostPort], link.H2D.Out[hostPort])
	if err != nil {
		return nil, nil, fmt.Errorf("pme: %w", err)
	}
	if _, err := pme.NewHostDMA(s.Sim, "host.dma", pcfg, link.D2H.Out[hostPort], link.H2D.In[hostPort]); err != nil {
		return nil, nil, fmt.Errorf("pme: %w", err)
	}
	return link, e, nil
}

// Stats reports the pages migrated and evicted (in 4 KB pages, as for
// every policy) and the link's bytes.
func (p *UVMMU) Stats() system.PolicyStats {
	return system.PolicyStats{
		Migrations:   p.unit.migrations.Q(),
		Evictions:    p.unit.evictions.Q(),
		PCIeH2DBytes: p.Link.H2D.Stats().Bytes,
		PCIeD2HBytes: p.Link.D2H.Stats().Bytes,
	}
}

// MigrationLatencies returns one sample per migration whose critical page
// has been answered, in core cycles from the cycle the migration unit
// opened the migration to the cycle the router took the critical page's
// local PTE, split into free destinations and swaps (the
// migration-latency experiment and validation row M1; UVMMU paper
// Section V-A2).
func (p *UVMMU) MigrationLatencies() (free, swap []uint64) {
	return slices.Clone(p.unit.latFree), slices.Clone(p.unit.latSwap)
}

// Busy names the migration unit while it holds migrations or requests.
func (p *UVMMU) Busy() []string {
	var names []string
	if n := p.unit.active(); n > 0 {
		names = append(names, fmt.Sprintf("%s (%d page-group migrations in flight)", p.unit.Path(), n))
	}
	if n := p.unit.waiting.Q(); n > 0 {
		names = append(names, fmt.Sprintf("%s (%d requests waiting)", p.unit.Path(), n))
	}
	return names
}

// Check verifies SPEC 6.5 between cycles: every managed page-group is in
// exactly one place (all 16 PTEs local in one frame-group, or all remote
// in one host frame-group); no two page-groups share a frame-group or a
// host frame-group; a resident page-group's frame-group is mapped to it in
// the IPgT (unless its migration is still finishing); protected
// frame-groups hold the cudaMalloc'd data and are never migration targets;
// and the FrAB invariant: a clear bit means its region has no reservable
// frame-group.
func (p *UVMMU) Check() error {
	s := p.sys
	u := p.unit
	local := map[uint64]uint64{}
	remote := map[uint64]uint64{}
	inFlight := map[uint64]bool{}
	for slot := range u.slots {
		if u.state.At(slot).Q() != slotFree {
			inFlight[u.vpgn.At(slot).Q()] = true
			if u.swap.At(slot).Q() != 0 {
				inFlight[u.victim.At(slot).Q()] = true
			}
		}
	}
	for _, r := range s.Layout.Managed {
		for g := r.First; g < r.First+uint64(r.Count); g++ {
			if inFlight[g] {
				continue
			}
			first := s.GMMU.Read(g * system.PagesPerGroup)
			fg := first.Frame() / system.PagesPerGroup
			for i := 0; i < system.PagesPerGroup; i++ {
				e := s.GMMU.Read(g*system.PagesPerGroup + uint64(i))
				if !e.Valid() || e.IsRemote() != first.IsRemote() || e.Frame() != system.LocalFrame(fg, i) {
					return fmt.Errorf("page-group %#x: PTE of page %d is %#x, not in the same place as page 0 (%#x)", g, i, uint64(e), uint64(first))
				}
			}
			place := local
			if first.IsRemote() {
				place = remote
			}
			if other, dup := place[fg]; dup {
				return fmt.Errorf("page-groups %#x and %#x both in frame-group %#x (remote %v)", other, g, fg, first.IsRemote())
			}
			place[fg] = g
			if !first.IsRemote() && !p.mapPending(fg, g) {
				e := ipgt.Unpack(p.IPgT.Peek(int(fg)))
				if !e.M || e.VPgN != g || e.P || e.F {
					return fmt.Errorf("page-group %#x is in frame-group %#x but its IPgT entry is %+v", g, fg, e)
				}
			}
		}
	}
	for i, g := range u.device[:u.deviceDone.Q()] {
		e := s.GMMU.Read(g * system.PagesPerGroup)
		if !e.Valid() || e.IsRemote() {
			return fmt.Errorf("cudaMalloc'd page-group %#x (number %d) is not mapped local: PTE %#x", g, i, uint64(e))
		}
		pfgn := e.Frame() / system.PagesPerGroup
		if entry := ipgt.Unpack(p.IPgT.Peek(int(pfgn))); !entry.P {
			return fmt.Errorf("cudaMalloc'd frame-group %#x lost its protection: IPgT entry %+v", pfgn, entry)
		}
		if other, taken := local[pfgn]; taken {
			return fmt.Errorf("protected frame-group %#x holds managed page-group %#x", pfgn, other)
		}
	}
	if p.Eviction != nil && p.Eviction.LostMaps() > 0 {
		return fmt.Errorf("eviction metadata %s lost %d map writes", p.cfg.UVMMU.Eviction, p.Eviction.LostMaps())
	}
	return p.checkFrAB()
}

// mapPending reports that the DA has accepted the map of page-group g
// into frame-group fg and not yet written it: the migration unit retires
// a slot at the map handshake, before the AFM serves the map.
func (p *UVMMU) mapPending(fg, g uint64) bool {
	pf, pv, ok := p.DA.AFM.PendingMap()
	return ok && pf == fg && pv == g
}

func (p *UVMMU) checkFrAB() error {
	word := p.DA.Config().FrABWord
	regions := (p.sys.Layout.NFG + system.GroupsPerRegion - 1) / system.GroupsPerRegion
	for r := 0; r < regions; r++ {
		w := p.DA.FrAB.Peek(r / word)
		bit := r % word
		if w[bit/64]>>(bit%64)&1 != 0 {
			continue
		}
		for fg := r * system.GroupsPerRegion; fg < (r+1)*system.GroupsPerRegion && fg < p.sys.Layout.NFG; fg++ {
			if ipgt.Reservable(p.IPgT.Peek(fg)) {
				return fmt.Errorf("FrAB bit of region %d is clear but frame-group %#x is free", r, fg)
			}
		}
	}
	return nil
}

// Slot states of the migration unit.
const (
	slotFree   = iota
	slotSetup  // waiting for, or in, the set-up sequence
	slotMoving // the PME has the command
)

// Set-up sequencer states.
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

// migrationUnit is the UVMMU's migration control (UVMMU paper Figure 2,
// steps 3-7): a table of page-group migrations (one per PME command slot),
// a table of waiting translation requests, and three engines that run in
// parallel, each using its own ports:
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
type migrationUnit struct {
	rtl.Base

	remote   gpu.Resolved // from the router
	migrated gpu.Resolved // to the router
	dst      da.Ports
	mem      ipgt.MemPorts
	cmd      *rtl.Decoupled[pme.Command]
	events   *rtl.Decoupled[pme.Event]
	update   ptw.PTEPort[uint64]
	inval    []*rtl.Decoupled[tlb.Invalidate]
	invalAck []*rtl.Decoupled[tlb.Invalidate]
	host     *rtl.Decoupled[uint16]
	hostDone *rtl.Decoupled[uint16]

	slots    int
	requests int
	phases   []hostPages // per phase: the host's pages to read back (nil for kernels)
	device   []uint64    // the driver's list of cudaMalloc'd page-groups (VPgN)

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
	setupQ   *rtl.Vec[uint8]  // slots waiting for the set-up engine, FIFO
	setupQH  *rtl.Reg[uint8]
	setupQN  *rtl.Reg[uint8]
	freeMask *rtl.Reg[uint64] // free slots

	// Set-up engine.
	setup      *rtl.Reg[uint8]
	setupSlot  *rtl.Reg[uint8]
	page       *rtl.Reg[uint8]  // page index of the unmap / device PTE loop
	sent       *rtl.Reg[uint64] // TLBs that took this page's shootdown
	deviceDone *rtl.Reg[uint32] // cudaMalloc'd page-groups protected so far
	devPFgN    *rtl.Reg[uint64]
	hostPhase  *rtl.Reg[uint16]
	hostChunk  *rtl.Reg[uint32] // next 512-page chunk of the host read

	// Landing engine: the page whose PTE is written this cycle.
	updValid *rtl.Reg[bool]
	updVPN   *rtl.Reg[uint64]
	updPTE   *rtl.Reg[pte.PTE]
	mapSlot  *rtl.Reg[uint8] // slot whose IPgT map write is offered
	mapValid *rtl.Reg[bool]

	// Waiting requests.
	reqValid *rtl.Vec[uint8]
	reqWalk  *rtl.Vec[ptw.Walk]
	waiting  *rtl.Reg[uint32]

	// Reply engine: the answer offered to the router.
	repValid *rtl.Reg[bool]
	repIndex *rtl.Reg[uint32]
	repWalk  *rtl.Reg[ptw.Walk]
	repPTE   *rtl.Reg[pte.PTE]

	// Frame-group of each resident page-group (valid bit above it), from
	// firstGroup on: a remote walk that read its PTE before the migration
	// wrote it is answered from here instead of migrating the page-group
	// a second time.
	firstGroup uint64
	frameOf    *rtl.Vec[uint64]
	// This cycle's changes to it (combinational): the page-group mapped
	// and the victim chosen, or noGroup.
	nowResident, nowEvicting uint64
	// Set-up queue traffic this cycle (combinational).
	queued, dequeued bool

	migrations *rtl.Reg[uint64] // 4 KB pages moved to the GPU
	evictions  *rtl.Reg[uint64] // 4 KB pages written back to the host

	// Migration latency probe (UVMMU paper Section V-A2: about 1.3 us to a
	// free destination). A migration's latency runs from the cycle it is
	// opened (the unit takes the remote walk on the router's Remote port,
	// or restarts an evicted page-group for a waiting request) to the
	// cycle the router takes the reply for its critical page on the
	// Migrated port: the requester's PTE is in and its SM can go on.
	openedAt *rtl.Vec[uint64] // cycle each slot's migration was opened
	timed    *rtl.Vec[uint8]  // its critical page's reply has been taken
	// The samples, in cycles, split by whether a victim was swapped out
	// (an S=1 destination whose IPgT entry is no longer mapped is a free
	// destination: nothing is swapped). They are what the probe reports,
	// not state any engine reads; one is appended per completed
	// migration, at the reply handshake, so the slices grow by amortised
	// appends at most once per cycle and never in a cycle without a reply.
	latFree, latSwap []uint64
}

// hostPages is a host phase's read-back: the number of pages it touches.
type hostPages struct{ pages int }

// hostTag marks the PME command of a host read-back (slot tags are below).
const hostTag = 1<<16 - 1

func newMigrationUnit(s *system.System, cfg *config.Config, d *da.DA, mem ipgt.MemPorts, e *pme.Engine) *migrationUnit {
	u := &migrationUnit{
		remote: s.Router.Remote, migrated: s.Router.Migrated,
		dst: d.Ports, mem: mem, cmd: e.Cmd, events: e.Events, update: s.GMMU.Update,
		host: s.Dispatcher.Host, hostDone: s.Dispatcher.HostDone,
		slots:    min(e.Config().Slots, 64),
		requests: cfg.UVMMU.MigrationQueue,
	}
	for _, t := range s.TLBs {
		u.inval = append(u.inval, t.Inval)
		u.invalAck = append(u.invalAck, t.InvalAck)
	}
	for _, ph := range s.Phases {
		var hp hostPages
		if ph.Host != nil {
			hp.pages = hostRangePages(ph.Host.Ranges)
		}
		u.phases = append(u.phases, hp)
	}
	for _, r := range s.Layout.Device {
		for g := 0; g < r.Count; g++ {
			u.device = append(u.device, r.First+uint64(g))
		}
	}
	s.Sim.Add(u, "uvmmu.unit")
	b := &u.Base
	n := u.slots
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
	u.setupQ = rtl.NewVec[uint8](b, "setup_q", n, 6, 0)
	u.setupQH = rtl.NewReg[uint8](b, "setup_q_head", 6, 0)
	u.setupQN = rtl.NewReg[uint8](b, "setup_q_count", 7, 0)
	u.freeMask = rtl.NewReg(b, "free", n, uint64(1)<<n-1)
	if n == 64 {
		u.freeMask = rtl.NewReg(b, "free_all", 64, ^uint64(0))
	}
	u.setup = rtl.NewReg[uint8](b, "setup", 4, setupIdle)
	u.setupSlot = rtl.NewReg[uint8](b, "setup_slot", 6, 0)
	u.page = rtl.NewReg[uint8](b, "page", 5, 0)
	u.sent = rtl.NewReg[uint64](b, "sent", 64, 0)
	u.deviceDone = rtl.NewReg[uint32](b, "device_done", 32, 0)
	u.devPFgN = rtl.NewReg[uint64](b, "dev_pfgn", 32, 0)
	u.hostPhase = rtl.NewReg[uint16](b, "host_phase", 16, 0)
	u.hostChunk = rtl.NewReg[uint32](b, "host_chunk", 32, 0)
	u.updValid = rtl.NewFlag(b, "upd_valid", false)
	u.updVPN = rtl.NewReg[uint64](b, "upd_vpn", pte.VPNBits, 0)
	u.updPTE = rtl.NewReg[pte.PTE](b, "upd_pte", 64, 0)
	u.mapSlot = rtl.NewReg[uint8](b, "map_slot", 6, 0)
	u.mapValid = rtl.NewFlag(b, "map_valid", false)
	u.reqValid = rtl.NewVec[uint8](b, "req_valid", u.requests, 1, 0)
	u.reqWalk = rtl.NewVecOf(b, "req_walk", u.requests, ptw.WalkBits, ptw.Walk{})
	u.waiting = rtl.NewReg[uint32](b, "waiting", 16, 0)
	u.repValid = rtl.NewFlag(b, "rep_valid", false)
	u.repIndex = rtl.NewReg[uint32](b, "rep_index", 16, 0)
	u.repWalk = rtl.NewRegOf(b, "rep_walk", ptw.WalkBits, ptw.Walk{})
	u.repPTE = rtl.NewReg[pte.PTE](b, "rep_pte", 64, 0)
	u.firstGroup = s.Layout.BaseVPN / system.PagesPerGroup
	u.frameOf = rtl.NewVec[uint64](b, "frame_of", s.Layout.Pages/system.PagesPerGroup, 33, 0)
	u.migrations = rtl.NewReg[uint64](b, "migrations", 64, 0)
	u.evictions = rtl.NewReg[uint64](b, "evictions", 64, 0)
	u.openedAt = rtl.NewVec[uint64](b, "opened_at", n, 64, 0)
	u.timed = rtl.NewVec[uint8](b, "timed", n, 1, 0)
	u.remote.Consumer(b)
	u.migrated.Producer(b)
	b.Listen(u.dst.DstValid, u.dst.DstPFgN, u.dst.DstSwap, u.dst.Map.Ready, u.dst.SW.Ready, u.dst.InitDone)
	b.Listen(u.mem.ReqReady, u.mem.RespValid, u.mem.RespData)
	u.cmd.Producer(b)
	u.events.Consumer(b)
	u.update.Producer(b)
	for i := range u.inval {
		u.inval[i].Producer(b)
		u.invalAck[i].Consumer(b)
	}
	u.host.Consumer(b)
	u.hostDone.Producer(b)
	return u
}

// hostRangePages counts the 4 KB pages a host access touches.
func hostRangePages(ranges [][2]uint64) int {
	n := 0
	last := ^uint64(0)
	for _, r := range ranges {
		for p := r[0] >> system.PageShift; r[1] > r[0] && p <= (r[1]-1)>>system.PageShift; p++ {
			if p != last {
				n++
				last = p
			}
		}
	}
	return n
}

func (u *migrationUnit) active() int { return u.slots - bits.OnesCount64(u.freeMask.Q()) }

// Drive presents the set-up engine's requests, the PTE write, the map
// write and the reply, all from registers.
func (u *migrationUnit) Drive() {
	st := u.setup.Q()
	slot := int(u.setupSlot.Q())
	u.remote.Ready.Set(u.freeMask.Q() != 0 && u.waiting.Q() < uint32(u.requests))
	u.dst.DstReady.Set(st == setupDst || st == setupDevice)
	u.mem.ReqValid.Set(st == setupRead)
	u.mem.ReqWrite.Set(false)
	u.mem.ReqAddr.Set(ipgt.Address(ipgtBase, u.pfgn.At(slot).Q()))
	u.mem.ReqWData.Set(0)
	u.cmd.Valid.Set(st == setupCmd || st == setupHost)
	if st == setupHost {
		left := u.phases[u.hostPhase.Q()].pages - int(u.hostChunk.Q())*pme.MaxPagesLimit
		u.cmd.Bits.Set(pme.Command{Tag: hostTag, Op: pme.Evict, Pages: uint16(min(left, pme.MaxPagesLimit))})
	} else {
		op := pme.Fetch
		if u.swap.At(slot).Q() != 0 {
			op = pme.Swap
		}
		u.cmd.Bits.Set(pme.Command{Tag: uint16(slot), Op: op, Pages: system.PagesPerGroup, First: uint16(u.first.At(slot).Q())})
	}
	u.events.Ready.Set(!u.updValid.Q())

	// One PTE write per cycle: a landed page first, else a victim page
	// being unmapped or a cudaMalloc'd page being mapped.
	k := uint64(u.page.Q())
	switch {
	case u.updValid.Q():
		u.update.Valid.Set(true)
		u.update.Bits.Set(u.updVPN.Q())
		u.update.PTE.Set(u.updPTE.Q())
	case st == setupUnmap:
		u.update.Valid.Set(true)
		u.update.Bits.Set(u.victim.At(slot).Q()*system.PagesPerGroup + k)
		u.update.PTE.Set(pte.Remote(system.LocalFrame(u.hostFG.At(slot).Q(), int(k))))
	case st == setupDevPTE:
		u.update.Valid.Set(true)
		u.update.Bits.Set(u.device[u.deviceDone.Q()]*system.PagesPerGroup + k)
		u.update.PTE.Set(pte.Local(system.LocalFrame(u.devPFgN.Q(), int(k))))
	default:
		u.update.Valid.Set(false)
	}
	// A victim page is shot down only in a cycle its remote PTE is written
	// (the update port is always ready; a landed page's write goes first),
	// never before: a walk that read the old PTE after the shootdown would
	// otherwise fill a TLB with it, while a result still on its way when
	// the PTE is written is dropped by the GMMU's forwarding or the router.
	sent := u.sent.Q()
	vpn := u.victim.At(slot).Q()*system.PagesPerGroup + k
	for i, in := range u.inval {
		in.Valid.Set(st == setupUnmap && sent&(1<<i) == 0 && !u.updValid.Q())
		in.Bits.Set(tlb.Invalidate{VPN: vpn})
		u.invalAck[i].Ready.Set(true)
	}
	u.dst.SW.Valid.Set(st == setupProtect)
	u.dst.SW.Op.Set(uint8(afm.OpProtect))
	u.dst.SW.PFgN.Set(u.devPFgN.Q())

	m := int(u.mapSlot.Q())
	u.dst.Map.Valid.Set(u.mapValid.Q())
	u.dst.Map.PFgN.Set(u.pfgn.At(m).Q())
	u.dst.Map.VPgN.Set(u.vpgn.At(m).Q())
	u.dst.Map.CID.Set(0)

	u.migrated.Valid.Set(u.repValid.Q())
	u.migrated.Bits.Set(u.repWalk.Q())
	u.migrated.PTE.Set(u.repPTE.Q())
	u.host.Ready.Set(st == setupIdle && u.setupQN.Q() == 0 && int(u.deviceDone.Q()) == len(u.device))
	u.hostDone.Valid.Set(st == setupHostDone)
	u.hostDone.Bits.Set(u.hostPhase.Q())
}

// Eval runs the three engines.
func (u *migrationUnit) Eval() {
	free := u.freeMask.Q()
	waiting := u.waiting.Q()
	busy := false

	// A remote walk: join the page-group's migration, or start one.
	u.nowResident, u.nowEvicting = noGroup, noGroup
	u.queued, u.dequeued = false, false
	if u.remote.Fire() {
		busy = true
		w := u.remote.Bits.Get()
		g := w.VPN / system.PagesPerGroup
		if u.find(g) < 0 && !u.isResident(g) {
			u.start(&free, g, u.remote.PTE.Get().Frame()/system.PagesPerGroup, w.VPN)
		}
		i := u.freeRequest()
		u.reqValid.At(i).Set(1)
		u.reqWalk.At(i).Set(w)
		waiting++
	}

	arriving := ^uint64(0)
	if u.remote.Fire() {
		arriving = u.remote.Bits.Get().VPN / system.PagesPerGroup
	}
	busy = u.evalSetup() || busy
	busy = u.evalLanding(&free, arriving) || busy
	var replied bool
	waiting, replied = u.evalReply(waiting, &free)
	busy = busy || replied

	u.applyResident()
	if u.queued != u.dequeued {
		if u.queued {
			u.setupQN.Set(u.setupQN.Q() + 1)
		} else {
			u.setupQN.Set(u.setupQN.Q() - 1)
		}
	}
	if free != u.freeMask.Q() {
		u.freeMask.Set(free)
	}
	if waiting != u.waiting.Q() {
		u.waiting.Set(waiting)
	}
	if !busy {
		u.Sleep()
	}
}

// noGroup marks no resident-bit change.
const noGroup = ^uint64(0)

// applyResident records this cycle's mapped page-group and victim.
func (u *migrationUnit) applyResident() {
	if g := u.nowResident; g != noGroup {
		slot := int(u.mapSlot.Q())
		u.frameOf.At(int(g - u.firstGroup)).Set(1<<32 | u.pfgn.At(slot).Q())
	}
	if g := u.nowEvicting; g != noGroup {
		u.frameOf.At(int(g - u.firstGroup)).Set(0)
	}
}

func (u *migrationUnit) isResident(g uint64) bool {
	return u.frameOf.At(int(g-u.firstGroup)).Q()>>32 != 0
}

// start opens a migration of page-group g from host frame-group hostFG,
// critical page first, and queues it for the set-up engine. It runs at
// most once per cycle.
func (u *migrationUnit) start(free *uint64, g, hostFG, vpn uint64) {
	slot := bits.TrailingZeros64(*free)
	*free &^= 1 << slot
	u.state.At(slot).Set(slotSetup)
	u.vpgn.At(slot).Set(g)
	u.hostFG.At(slot).Set(hostFG)
	u.first.At(slot).Set(uint8(vpn % system.PagesPerGroup))
	u.swap.At(slot).Set(0)
	u.landed.At(slot).Set(0)
	u.mapped.At(slot).Set(0)
	u.evicted.At(slot).Set(0)
	u.openedAt.At(slot).Set(u.Now())
	u.timed.At(slot).Set(0)
	u.setupQ.At(int((u.setupQH.Q() + u.setupQN.Q()) % uint8(u.slots))).Set(uint8(slot))
	u.queued = true
}

// find returns the slot migrating page-group g in or out, or -1.
func (u *migrationUnit) find(g uint64) int {
	for slot := range u.slots {
		if u.state.At(slot).Q() == slotFree {
			continue
		}
		if u.vpgn.At(slot).Q() == g || ((u.swap.At(slot).Q() != 0) && !(u.evicted.At(slot).Q() != 0) && u.victim.At(slot).Q() == g) {
			return slot
		}
	}
	return -1
}

func (u *migrationUnit) freeRequest() int {
	for i := range u.requests {
		if !(u.reqValid.At(i).Q() != 0) {
			return i
		}
	}
	return -1
}

// evalSetup advances the set-up engine by one step.
func (u *migrationUnit) evalSetup() bool {
	st := u.setup.Q()
	ownWrite := u.update.Fire() && !u.updValid.Q()
	slot := int(u.setupSlot.Q())
	next := st
	switch st {
	case setupIdle:
		switch {
		case int(u.deviceDone.Q()) < len(u.device) && u.dst.InitDone.Get():
			next = setupDevice
		case u.host.Fire():
			ph := u.host.Bits.Get()
			u.hostPhase.Set(ph)
			u.hostChunk.Set(0)
			next = setupHostDone
			if u.phases[ph].pages > 0 {
				next = setupHost
			}
		case u.setupQN.Q() > 0:
			h := u.setupQH.Q()
			u.setupSlot.Set(u.setupQ.At(int(h)).Q())
			u.setupQH.Set((h + 1) % uint8(u.slots))
			u.dequeued = true
			next = setupDst
		}
	case setupDst:
		if u.dst.DstFire() {
			u.pfgn.At(slot).Set(u.dst.DstPFgN.Get())
			next = setupCmd
			if u.dst.DstSwap.Get() {
				next = setupRead
			}
		}
	case setupRead:
		if u.mem.ReqValid.Get() && u.mem.ReqReady.Get() {
			next = setupWait
		}
	case setupWait:
		if u.mem.RespValid.Get() {
			// docs/da.md: an S=1 destination whose entry is no longer
			// mapped is a free destination.
			if e := ipgt.Unpack(u.mem.RespData.Get()); e.M {
				u.swap.At(slot).Set(1)
				u.victim.At(slot).Set(e.VPgN)
				u.nowEvicting = e.VPgN
				u.page.Set(0)
				u.sent.Set(0)
				next = setupUnmap
			} else {
				next = setupCmd
			}
		}
	case setupUnmap:
		sent := u.sent.Q()
		for i, in := range u.inval {
			if in.Fire() {
				sent |= 1 << i
			}
		}
		all := uint64(1)<<len(u.inval) - 1
		if len(u.inval) == 64 {
			all = ^uint64(0)
		}
		if sent == all && ownWrite {
			sent = 0
			if u.page.Q() == system.PagesPerGroup-1 {
				next = setupCmd
			} else {
				u.page.Set(u.page.Q() + 1)
			}
		}
		if sent != u.sent.Q() {
			u.sent.Set(sent)
		}
	case setupCmd:
		if u.cmd.Fire() {
			u.state.At(slot).Set(slotMoving)
			next = setupIdle
		}
	case setupDevice:
		if u.dst.DstFire() {
			u.devPFgN.Set(u.dst.DstPFgN.Get())
			next = setupProtect
		}
	case setupProtect:
		if u.dst.SW.Valid.Get() && u.dst.SW.Ready.Get() {
			u.page.Set(0)
			next = setupDevPTE
		}
	case setupDevPTE:
		if ownWrite {
			if u.page.Q() == system.PagesPerGroup-1 {
				u.deviceDone.Set(u.deviceDone.Q() + 1)
				next = setupIdle
			} else {
				u.page.Set(u.page.Q() + 1)
			}
		}
	case setupHost:
		if u.cmd.Fire() {
			next = setupHostEvict
		}
	case setupHostEvict:
		// The landing engine moves on when the read-back's event comes.
	case setupHostDone:
		if u.hostDone.Fire() {
			next = setupIdle
		}
	}
	if next != st {
		u.setup.Set(next)
		return true
	}
	return st != setupIdle && st != setupHostEvict
}

// evalLanding takes one PME event per cycle and retires finished slots.
func (u *migrationUnit) evalLanding(free *uint64, arriving uint64) bool {
	busy := false
	if u.updValid.Q() && u.update.Fire() {
		u.updValid.Set(false)
		busy = true
	}
	if u.events.Fire() {
		busy = true
		ev := u.events.Bits.Get()
		if ev.Tag == hostTag {
			u.finishHostChunk()
		} else {
			slot := int(ev.Tag)
			if ev.Victim {
				u.evicted.At(slot).Set(1)
				u.evictions.Set(u.evictions.Q() + system.PagesPerGroup)
			} else {
				g := u.vpgn.At(slot).Q()
				u.updValid.Set(true)
				u.updVPN.Set(g*system.PagesPerGroup + uint64(ev.Page))
				u.updPTE.Set(pte.Local(system.LocalFrame(u.pfgn.At(slot).Q(), int(ev.Page))))
				u.landed.At(slot).Set(u.landed.At(slot).Q() | 1<<ev.Page)
				u.migrations.Set(u.migrations.Q() + 1)
			}
		}
	}
	// The IPgT map write of a fully landed page-group.
	if u.mapValid.Q() {
		busy = true
		if u.dst.Map.Ready.Get() {
			u.mapped.At(int(u.mapSlot.Q())).Set(1)
			u.nowResident = u.vpgn.At(int(u.mapSlot.Q())).Q()
			u.mapValid.Set(false)
		}
	} else {
		for slot := range u.slots {
			if u.state.At(slot).Q() == slotMoving && u.landed.At(slot).Q() == 1<<system.PagesPerGroup-1 && !(u.mapped.At(slot).Q() != 0) {
				u.mapSlot.Set(uint8(slot))
				u.mapValid.Set(true)
				busy = true
				break
			}
		}
	}
	// Retire a slot once mapped, its victim (if any) home, and no request
	// waits on, or arrives for, either page-group.
	for slot := range u.slots {
		if u.state.At(slot).Q() != slotMoving || !(u.mapped.At(slot).Q() != 0) || ((u.swap.At(slot).Q() != 0) && !(u.evicted.At(slot).Q() != 0)) {
			continue
		}
		if u.referenced(slot) || u.vpgn.At(slot).Q() == arriving || u.victim.At(slot).Q() == arriving {
			continue
		}
		u.state.At(slot).Set(slotFree)
		*free |= 1 << slot
		busy = true
		break
	}
	return busy
}

func (u *migrationUnit) finishHostChunk() {
	chunk := u.hostChunk.Q() + 1
	u.hostChunk.Set(chunk)
	next := uint8(setupHost)
	if int(chunk)*pme.MaxPagesLimit >= u.phases[u.hostPhase.Q()].pages {
		next = setupHostDone
	}
	u.setup.Set(next)
}

// referenced reports a waiting request for the slot's page-groups.
func (u *migrationUnit) referenced(slot int) bool {
	g, v, swap := u.vpgn.At(slot).Q(), u.victim.At(slot).Q(), (u.swap.At(slot).Q() != 0)
	for i := range u.requests {
		if !(u.reqValid.At(i).Q() != 0) {
			continue
		}
		rg := u.reqWalk.At(i).Q().VPN / system.PagesPerGroup
		if rg == g || (swap && rg == v) {
			return true
		}
	}
	return false
}

// evalReply offers the first answerable request to the router.
func (u *migrationUnit) evalReply(waiting uint32, free *uint64) (uint32, bool) {
	busy := false
	skip := -1
	if u.repValid.Q() {
		if !u.migrated.Fire() {
			return waiting, true
		}
		skip = int(u.repIndex.Q())
		u.reqValid.At(skip).Set(0)
		u.recordLatency(u.repWalk.Q().VPN)
		waiting--
		busy = true
	}
	offer := false
	canStart := !u.remote.Fire() && *free == u.freeMask.Q() && *free != 0
	for i := range u.requests {
		if i == skip || u.reqValid.At(i).Q() == 0 {
			continue
		}
		w := u.reqWalk.At(i).Q()
		e, st := u.answer(w.VPN)
		switch {
		case st == answerLocal:
			u.repIndex.Set(uint32(i))
			u.repWalk.Set(w)
			u.repPTE.Set(e)
			offer, busy = true, true
		case st == answerRestart && canStart:
			// Its page-group went back to the host while it waited:
			// migrate it again, from where the eviction put it.
			u.start(free, w.VPN/system.PagesPerGroup, e.Frame()/system.PagesPerGroup, w.VPN)
			canStart, busy = false, true
			continue
		default:
			continue
		}
		break
	}
	if offer != u.repValid.Q() {
		u.repValid.Set(offer)
	}
	return waiting, busy
}

// recordLatency takes one latency sample when the reply the router has
// just taken is the first for its migration's critical page. A reply
// answered from frameOf has no migration in flight and gives none.
func (u *migrationUnit) recordLatency(vpn uint64) {
	g, k := vpn/system.PagesPerGroup, uint8(vpn%system.PagesPerGroup)
	for slot := range u.slots {
		if u.state.At(slot).Q() == slotFree || u.vpgn.At(slot).Q() != g {
			continue
		}
		if u.timed.At(slot).Q() == 0 && u.first.At(slot).Q() == k {
			d := u.Now() - u.openedAt.At(slot).Q()
			if u.swap.At(slot).Q() != 0 {
				u.latSwap = append(u.latSwap, d)
			} else {
				u.latFree = append(u.latFree, d)
			}
			u.timed.At(slot).Set(1)
		}
		return
	}
}

// Outcomes of answer.
const (
	answerWait    = iota // the request's page is still on its way
	answerLocal          // its page has landed: reply with the local PTE
	answerRestart        // its page-group was evicted meanwhile: migrate it again
)

// answer says what a waiting request for vpn gets now: the local PTE once
// its page's PTE is written, or, once the eviction of its page-group is
// over and no new migration of it has started, the remote PTE it must be
// migrated again from.
func (u *migrationUnit) answer(vpn uint64) (pte.PTE, int) {
	g, k := vpn/system.PagesPerGroup, int(vpn%system.PagesPerGroup)
	for slot := range u.slots {
		if u.state.At(slot).Q() != slotFree && u.vpgn.At(slot).Q() == g {
			if u.landed.At(slot).Q()&(1<<k) != 0 && !(u.updValid.Q() && u.updVPN.Q() == vpn) {
				return pte.Local(system.LocalFrame(u.pfgn.At(slot).Q(), k)), answerLocal
			}
			return 0, answerWait
		}
	}
	if e := u.frameOf.At(int(g - u.firstGroup)).Q(); e>>32 != 0 {
		return pte.Local(system.LocalFrame(e&(1<<32-1), k)), answerLocal
	}
	for slot := range u.slots {
		if u.state.At(slot).Q() != slotFree && (u.swap.At(slot).Q() != 0) && u.victim.At(slot).Q() == g {
			if u.evicted.At(slot).Q() != 0 {
				return pte.Remote(system.LocalFrame(u.hostFG.At(slot).Q(), k)), answerRestart
			}
			return 0, answerWait
		}
	}
	return 0, answerWait
}
