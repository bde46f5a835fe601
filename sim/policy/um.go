package policy

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/umdriver"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// UM is the fault-based NVIDIA Unified Memory driver (sim/umdriver: far
// faults, fault latency, TLB freeze, the sim/uvm menu's prefetching,
// eviction and zero-copy decisions) attached to the system with one
// section of the configuration: the um policy runs it with [um]
// (defaults: tree prefetcher, LRU 2 MB eviction, no remote access: the
// baseline), the uvmsmart policy with [uvmsmart] (uvmsmart.go), the
// adaptive policy with [adaptive] (adaptive.go). The data moves through
// the same PME and PCIe link blocks as UVMMU's.
type UM struct {
	cfg     *config.Config
	name    string
	section *config.UM
	sys     *system.System
	driver  *umdriver.Driver
	PME     *pme.Engine
	Link    *pcie.Link
	// runtime, when set, is a host runtime's set-up of the driver (its
	// steps, its advice) before the driver is built (suv.go); prelaunch
	// asks the system for a host phase before every kernel.
	runtime   func(p *UM, dcfg *umdriver.Config, menu *uvm.Driver) error
	prelaunch bool
	// remoteOnLink adds the zero-copy lines to the PCIe bytes (suv, ac,
	// sc); the other policies report the migrations' bytes alone.
	remoteOnLink bool
}

func newUM(cfg *config.Config) *UM { return &UM{cfg: cfg, name: "um", section: &cfg.UM} }

// Name is the policy's registry name: "um", "uvmsmart" or "adaptive".
func (p *UM) Name() string { return p.name }

// Prelaunch reports whether the policy's runtime calls the driver before
// every kernel (system.PrelaunchPolicy).
func (p *UM) Prelaunch() bool { return p.prelaunch }

// Attach maps every managed page remote (in host memory, host frame equal
// to its page number) and every cudaMalloc'd page local, and builds the
// link, the PME, the menu and the driver.
func (p *UM) Attach(s *system.System) error {
	p.sys = s
	if err := loadManagedRemote(s); err != nil {
		return err
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
	l := &s.Layout
	menu, err := uvm.New(p.section.Menu(p.cfg.Run.Seed), l.Pages, l.ManagedPages)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	dcfg := umdriver.Config{
		BaseVPN:       l.BaseVPN,
		Pages:         l.Pages,
		Managed:       l.Managed,
		Capacity:      l.ManagedPages,
		LatencyCycles: p.cfg.Cycles(p.section.FaultLatencyUs),
		FaultBuffer:   p.section.FaultBuffer,
		HostPages:     hostPhasePages(s),
		// The prefetcher when the run starts decides how much a counted
		// fault requests; an oversubscription prefetcher that differs is
		// counted as the first would request.
		ReferenceTiming:    p.section.FaultTiming == config.FaultTimingReference,
		FaultUnit:          uvm.FaultUnit(p.section.Prefetcher),
		ConcurrentEviction: p.section.ConcurrentEviction,
		HostSync:           p.section.HostSync,
	}
	ports := umdriver.Ports{
		Remote: s.Router.Remote, Migrated: s.Router.Migrated, Update: s.GMMU.Update,
		Cmd: p.PME.Cmd, Events: p.PME.Events, Host: s.Dispatcher.Host, HostDone: s.Dispatcher.HostDone,
	}
	if p.section.SmartRuntime {
		if err := attachSmartRuntime(menu, l); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		ports.Launches = s.Dispatcher.Launch
	}
	if p.runtime != nil {
		if err := p.runtime(p, &dcfg, menu); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	ports.Inval, ports.InvalAck = invalPorts(s)
	for _, t := range s.TLBs {
		ports.Responses = append(ports.Responses, t.Resp)
		ports.Frozen = append(ports.Frozen, t.Frozen)
	}
	if p.driver, err = umdriver.New(s.Sim, p.name+".driver", dcfg, ports, menu); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	// Loads through a zero-copy mapping: UVMSmart Table I's 200 cycles per
	// remote access after the lines cross PCIe.
	s.Memory.SetRemoteTiming(uint64(p.section.RemoteLatencyCycles), p.cfg.TransferTime(p.cfg.PCIe.BandwidthGBs))
	// Evictions unmap pages whose local PTEs may be queued for a fill.
	s.Router.Watch(s.GMMU.Update)
	return nil
}

// attachSmartRuntime gives the menu a smart runtime whose data structures
// are the layout's managed allocations.
func attachSmartRuntime(menu *uvm.Driver, l *system.Layout) error {
	var allocs []uvm.Allocation
	for _, r := range l.Managed {
		first := int(r.First*system.PagesPerGroup-l.BaseVPN) / uvm.PagesPerBlock
		allocs = append(allocs, uvm.Allocation{FirstBlock: first, Blocks: r.Count * system.PagesPerGroup / uvm.PagesPerBlock})
	}
	rt, err := uvm.NewSmartRuntime(menu.Space().Blocks(), allocs)
	if err != nil {
		return err
	}
	return menu.AttachSmartRuntime(rt)
}

// Stats reports far faults and their time, pages migrated and evicted,
// and link bytes. Under um.fault_timing = "reference" the fault time is
// added to the run's cycles.
func (p *UM) Stats() system.PolicyStats {
	d := p.driver
	var added uint64
	if d.Config().ReferenceTiming {
		added = d.FaultCycles()
	}
	st := system.PolicyStats{
		FaultCycles:      d.FaultCycles(),
		AddedFaultCycles: added,
		FarFaults:        d.Faults(),
		Migrations:       d.Migrations(),
		Evictions:        d.Evictions(),
		PCIeH2DBytes:     p.Link.H2D.Stats().Bytes,
		PCIeD2HBytes:     p.Link.D2H.Stats().Bytes,
	}
	if p.remoteOnLink {
		// SUV's PCIe traffic (Fig. 8) counts the remote accesses' lines.
		st.PCIeH2DBytes += p.sys.Memory.RemoteBytes()
	}
	return st
}

// ZeroCopyMappings is the number of walks the driver answered with a
// zero-copy mapping instead of migrating.
func (p *UM) ZeroCopyMappings() uint64 { return p.driver.ZeroCopy() }

// Menu is the driver's menu state: resident set, access counters,
// oversubscription.
func (p *UM) Menu() *uvm.Driver { return p.driver.Menu() }

// Busy names the driver while it holds faults or zero-copy accesses.
func (p *UM) Busy() []string {
	d := p.driver
	var names []string
	if n := d.Waiting(); n > 0 {
		names = append(names, fmt.Sprintf("%s: %d faults and zero-copy accesses waiting, state %d", d.Path(), n, d.State()))
	}
	return names
}

// Check verifies SPEC 6.5 between cycles: the driver's page table against
// the GMMU's (umdriver.Driver.Check).
func (p *UM) Check() error { return p.driver.Check(p.sys.GMMU.Read) }
