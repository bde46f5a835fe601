package policy

import (
	"fmt"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/suv"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/umdriver"
	"github.com/uvmmu/uvmmu/sim/uvm"
	"github.com/uvmmu/uvmmu/sim/workload"
	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// The SUV paper's policies (seed 004), all on the UM driver of um.go with
// the [um] section (the paper's UVM: fault latency, fault buffer, tree
// prefetcher) and the sim/uvm menu's placement advice:
//
//   - suv: SUV-Mgmt (sim/suv Runtime): before every kernel, Algorithm 2 at a
//     host-loop iteration and Algorithm 1, as driver steps in a host phase
//     the system puts before the kernel (umdriver steps.go). Eviction is
//     LRU over 64 KB blocks, so that a pin takes exactly its blocks out of
//     the eviction order (the driver's 2 MB LRU would keep a whole region
//     from eviction for one pinned page).
//   - sc: the SC'19 placement (sim/suv SC) on the same steps and eviction.
//   - ac: NVIDIA's access-counter migration (SUV Section II-A): every
//     managed page mapped for remote access from the start, a 64 KB block
//     migrating when its access count reaches uvm.ACThreshold = 256; the
//     migration moves that block (the sequential-local prefetcher), and
//     eviction is the driver's LRU over 2 MB.
//
// Their PCIe bytes include the remote accesses' lines (host to device),
// as SUV's Fig. 8 counts all traffic over the link; um, uvmsmart and
// adaptive report the migrations' bytes alone.

// Modelled costs of SUV's driver calls (SUV Section V-D). The paper gives
// no figures; these are the host-side costs of one call into the driver
// and of mapping host pages into the GPU's page table. A prefetch's data
// moves through the PME and the link like a fault's, on the timeline.
const (
	// suvCallUs is one driver call (an ioctl: cudaMemAdvise,
	// cudaMemPrefetchAsync or a SUV API) before it acts.
	suvCallUs = 5.0
	// suvMapUsPer2MB is mapping 2 MB of host pages for remote access
	// (suvPinOnHost's SetAccessedBy, suvEnableAccessCounter), per 2 MB.
	suvMapUsPer2MB = 2.0
)

func newSUV(cfg *config.Config) *UM {
	sec := cfg.UM
	sec.Eviction = uvm.EvictLRU64K
	p := &UM{cfg: cfg, name: "suv", section: &sec, prelaunch: true, remoteOnLink: true}
	p.runtime = func(p *UM, dcfg *umdriver.Config, menu *uvm.Driver) error {
		prog, g, mem, err := staticOf(p.sys)
		if err != nil {
			return err
		}
		rt, err := suv.NewRuntime(prog, g, mem)
		if err != nil {
			return err
		}
		return p.stepsFor(dcfg, rt.Plan())
	}
	return p
}

func newSC(cfg *config.Config) *UM {
	sec := cfg.UM
	sec.Eviction = uvm.EvictLRU64K
	p := &UM{cfg: cfg, name: "sc", section: &sec, prelaunch: true, remoteOnLink: true}
	p.runtime = func(p *UM, dcfg *umdriver.Config, menu *uvm.Driver) error {
		prog, g, mem, err := staticOf(p.sys)
		if err != nil {
			return err
		}
		sc, err := suv.NewSC(prog, g, mem)
		if err != nil {
			return err
		}
		return p.stepsFor(dcfg, sc.Plan())
	}
	return p
}

func newAC(cfg *config.Config) *UM {
	sec := cfg.UM
	sec.Prefetcher, sec.PrefetcherOversub = uvm.PrefetchSeqLocal, uvm.PrefetchSeqLocal
	p := &UM{cfg: cfg, name: "ac", section: &sec, remoteOnLink: true}
	p.runtime = func(p *UM, _ *umdriver.Config, menu *uvm.Driver) error {
		l := &p.sys.Layout
		for _, r := range l.Managed {
			first := int(r.First*system.PagesPerGroup - l.BaseVPN)
			if err := menu.Place(first, r.Count*system.PagesPerGroup, uvm.PlaceCounters); err != nil {
				return err
			}
		}
		return nil
	}
	return p
}

// staticOf is the run's workload's static description, the GPU the
// analysis sees and the GPU memory left for managed data, in units of the
// 64 KB blocks the lru64k evictor evicts.
func staticOf(s *system.System) (*static.Program, suv.GPU, suv.Memory, error) {
	cfg := s.Cfg
	_, prog, err := workload.Describe(s.Workload.Name(), workload.Params{Scale: cfg.Run.Scale, Seed: cfg.Run.Seed, GraphFile: cfg.Run.GraphFile})
	if err != nil {
		return nil, suv.GPU{}, suv.Memory{}, err
	}
	g := suv.GPU{SMs: cfg.GPU.SMs, WarpsPerSM: cfg.GPU.WarpsPerSM}
	return prog, g, suv.Memory{Capacity: uint64(s.Layout.ManagedPages) * suv.PageBytes, Unit: uvm.PagesPerBlock * suv.PageBytes}, nil
}

// stepsFor turns each launch's actions into the driver steps of the host
// phase before that launch.
func (p *UM) stepsFor(dcfg *umdriver.Config, launches []suv.Launch) error {
	s := p.sys
	l := &s.Layout
	first := map[string]int{}
	for _, r := range l.Managed {
		first[r.Name] = int(r.First*system.PagesPerGroup - l.BaseVPN)
	}
	call := p.cfg.Cycles(suvCallUs)
	dcfg.Steps = make([][]umdriver.Step, len(s.Phases))
	launch := 0
	for i, ph := range s.Phases {
		if ph.Kernel != nil {
			launch++
			continue
		}
		if ph.Host.Alloc != system.PrelaunchPhaseName {
			continue
		}
		dcfg.Steps[i] = []umdriver.Step{}
		if launch >= len(launches) {
			return fmt.Errorf("workload %s launches more kernels than its static description (%d)", s.Workload.Name(), len(launches))
		}
		for _, a := range launches[launch].Actions {
			base, ok := first[a.Alloc]
			if !ok {
				return fmt.Errorf("static description names allocation %q, which the layout does not manage", a.Alloc)
			}
			pg, n := base+int(a.Offset/suv.PageBytes), int((a.Bytes+suv.PageBytes-1)/suv.PageBytes)
			mapCost := call + p.cfg.Cycles(suvMapUsPer2MB*float64(a.Bytes)/suv.RegionBytes)
			place := func(pl uvm.Placement, cycles uint64) umdriver.Step {
				return umdriver.Step{Kind: umdriver.StepPlace, First: pg, Pages: n, Placement: pl, Cycles: cycles}
			}
			var steps []umdriver.Step
			switch a.Do {
			case suv.PinGPU:
				steps = []umdriver.Step{place(uvm.PlaceGPU, call), {Kind: umdriver.StepFetch, First: pg, Pages: n}}
			case suv.PinHost:
				steps = []umdriver.Step{place(uvm.PlaceHost, mapCost)}
			case suv.Counters:
				steps = []umdriver.Step{place(uvm.PlaceCounters, mapCost)}
			case suv.OnDemand:
				steps = []umdriver.Step{place(uvm.PlaceFault, call)}
			case suv.Release:
				steps = []umdriver.Step{place(uvm.PlaceFault, call), {Kind: umdriver.StepRelease, First: pg, Pages: n}}
			}
			dcfg.Steps[i] = append(dcfg.Steps[i], steps...)
		}
	}
	if launch != len(launches) {
		return fmt.Errorf("workload %s launches %d kernels, its static description %d", s.Workload.Name(), launch, len(launches))
	}
	return nil
}
