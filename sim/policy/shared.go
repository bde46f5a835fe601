package policy

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/migrate"
	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
)

// The set-up both migrating policies (um, uvmsmart and uvmmu) share: the
// managed data starts in host memory, and the data moves over one PCIe
// link through one PME.

// hostPort is the link port index of the PME and its host DMA responder.
const hostPort = 0

// loadManagedRemote maps every managed page-group remote, in host memory
// at the host frame-group equal to its own number.
func loadManagedRemote(s *system.System) error {
	for _, r := range s.Layout.Managed {
		for g := 0; g < r.Count; g++ {
			if err := s.LoadGroup(r.First+uint64(g), r.First+uint64(g), true); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostPhasePages is, per phase of the run, the pages the host reads back
// before it (0 for a kernel).
func hostPhasePages(s *system.System) []int {
	pages := make([]int, len(s.Phases))
	for i, ph := range s.Phases {
		if ph.Host != nil {
			pages[i] = migrate.HostPages(ph.Host.Ranges)
		}
	}
	return pages
}

// invalPorts lists every L1 TLB's invalidation and acknowledgement ports,
// in SM order.
func invalPorts(s *system.System) (inval, ack []*rtl.Decoupled[tlb.Invalidate]) {
	for _, t := range s.TLBs {
		inval = append(inval, t.Inval)
		ack = append(ack, t.InvalAck)
	}
	return inval, ack
}

// newLinkAndPME builds the host link with the PME and its host DMA
// responder on port hostPort, moving 4 KB pages.
func newLinkAndPME(s *system.System, cfg *config.Config) (*pcie.Link, *pme.Engine, error) {
	return newLinkAndPMEOf(s, cfg, pme.DefaultConfig().PageBytes)
}

// newLinkAndPMEOf is newLinkAndPME with the PME moving pages of pageBytes.
func newLinkAndPMEOf(s *system.System, cfg *config.Config, pageBytes int) (*pcie.Link, *pme.Engine, error) {
	lcfg := pcie.Config{
		BandwidthMBps:   uint64(cfg.PCIe.BandwidthGBs * 1000),
		ClockMHz:        uint64(cfg.GPU.ClockMHz),
		RoundTripCycles: cfg.Cycles(cfg.PCIe.RTTUs),
		MaxPacketBytes:  cfg.PCIe.PacketBytes,
		Ports:           1,
	}
	link, err := pcie.New(s.Sim, "pcie", lcfg, pcie.NewPorts(s.Sim, "pcie", lcfg))
	if err != nil {
		return nil, nil, fmt.Errorf("pcie: %w", err)
	}
	pcfg := pme.DefaultConfig()
	pcfg.PageBytes = pageBytes
	pcfg.SetupCycles = cfg.UVMMU.SetupCycles
	pcfg.PacketBytes = min(pcfg.PageBytes, cfg.PCIe.PacketBytes)
	if err := pcfg.CheckLink(lcfg); err != nil {
		return nil, nil, err
	}
	e, err := pme.New(s.Sim, "pme", pcfg, pme.NewPorts(s.Sim, "pme", link.D2H.In[hostPort], link.H2D.Out[hostPort]))
	if err != nil {
		return nil, nil, fmt.Errorf("pme: %w", err)
	}
	if _, err := pme.NewHostDMA(s.Sim, "host.dma", pcfg, pme.HostPorts{In: link.D2H.Out[hostPort], Out: link.H2D.In[hostPort]}); err != nil {
		return nil, nil, fmt.Errorf("pme: %w", err)
	}
	return link, e, nil
}
