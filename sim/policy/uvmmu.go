package policy

import (
	"fmt"
	"slices"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/evict"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/mu"
	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/sim/config"
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
	unit     *mu.Unit
	latency  *mu.LatencyProbe
	DA       *da.DA
	Eviction evict.Metadata // nil with the LFSR
	IPgT     *dram.DRAM
	PME      *pme.Engine
	Link     *pcie.Link
}

func newUVMMU(cfg *config.Config) *UVMMU { return &UVMMU{cfg: cfg} }

// Name is "uvmmu".
func (*UVMMU) Name() string { return "uvmmu" }

// The migration unit's page-group is the system's (SPEC 2): the index is
// out of range, and the build fails, if they differ.
var _ = [1]struct{}{}[mu.PagesPerGroup-system.PagesPerGroup]

// ipgtBase is where the IPgT sits in GPU memory (SPEC 5.3 IPGT_BASE
// default).
const ipgtBase = 0

// Attach builds the DA with its IPgT memory, the PME, the link and the
// migration unit, and maps every managed page-group remote: each starts
// in host memory, at the host frame-group equal to its own number.
func (p *UVMMU) Attach(s *system.System) error {
	cfg := p.cfg
	p.sys = s
	if err := loadManagedRemote(s); err != nil {
		return err
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
	ipgt.NewMux(s.Sim, "uvmmu.ipgt_mux", ports.Mem, unitMem, memPorts, dcfg.AddrBits)
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
	ucfg := mu.Config{
		Slots:      min(p.PME.Config().Slots, mu.MaxSlots),
		Requests:   cfg.UVMMU.MigrationQueue,
		IPGTBase:   ipgtBase,
		FirstGroup: s.Layout.BaseVPN / system.PagesPerGroup,
		Groups:     s.Layout.Pages / system.PagesPerGroup,
		HostPages:  hostPhasePages(s),
	}
	for _, r := range s.Layout.Device {
		for g := 0; g < r.Count; g++ {
			ucfg.Device = append(ucfg.Device, r.First+uint64(g))
		}
	}
	uports := mu.Ports{
		Remote: s.Router.Remote, Migrated: s.Router.Migrated, Dst: p.DA.Ports, Mem: unitMem,
		Cmd: p.PME.Cmd, Events: p.PME.Events, Update: s.GMMU.Update,
		Host: s.Dispatcher.Host, HostDone: s.Dispatcher.HostDone,
	}
	uports.Inval, uports.InvalAck = invalPorts(s)
	if p.unit, err = mu.New(s.Sim, "uvmmu.unit", ucfg, uports); err != nil {
		return fmt.Errorf("uvmmu: %w", err)
	}
	p.latency = mu.NewLatencyProbe(p.unit)
	// Swaps unmap victims whose local PTEs may be queued for a fill.
	s.Router.Watch(s.GMMU.Update)
	return nil
}

// Stats reports the pages migrated and evicted (in 4 KB pages, as for
// every policy) and the link's bytes.
func (p *UVMMU) Stats() system.PolicyStats {
	return system.PolicyStats{
		Migrations:   p.unit.Migrations(),
		Evictions:    p.unit.Evictions(),
		PCIeH2DBytes: p.Link.H2D.Stats().Bytes,
		PCIeD2HBytes: p.Link.D2H.Stats().Bytes,
	}
}

// MigrationLatencies returns one sample per migration whose critical page
// has been answered, in core cycles from the cycle the migration unit
// opened the migration to the cycle the router took the critical page's
// local PTE, split into free destinations and swaps (the
// migration-latency experiment and validation row M1; UVMMU paper
// Section V-A2), as the unit's latency probe recorded them.
func (p *UVMMU) MigrationLatencies() (free, swap []uint64) {
	free, swap = p.latency.Samples()
	return slices.Clone(free), slices.Clone(swap)
}

// Busy names the migration unit once while it holds migrations or
// requests, with both counts.
func (p *UVMMU) Busy() []string {
	active, waiting := p.unit.Active(), p.unit.Waiting()
	if active == 0 && waiting == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: %d page-group migrations in flight, %d requests waiting", p.unit.Path(), active, waiting)}
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
	local := map[uint64]uint64{}
	remote := map[uint64]uint64{}
	inFlight := p.unit.InFlight()
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
	for i, g := range p.unit.Protected() {
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
