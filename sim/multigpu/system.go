package multigpu

import (
	"fmt"
	"strings"
	"time"

	"github.com/uvmmu/uvmmu/blocks/cache"
	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// GPU is one GPU of the system: the single-GPU system's blocks (sim/gpu,
// blocks/tlb, blocks/ptw), with its own local page table in its GMMU.
type GPU struct {
	SMs      []*gpu.SM
	TLBs     []*tlb.TLB
	Arbiter  *gpu.WalkArbiter
	L2TLB    *L2TLB // nil without multigpu.l2_tlb
	GMMU     *ptw.GMMU
	Protect  *ProtectionCheck
	Router   *gpu.Router
	Memory   *gpu.Memory
	Caches   *gpu.Caches // nil without cache.l2
	Counters *Counters
	Hold     *rtl.Wire[bool] // the SMs' issue hold during a shootdown (multigpu.fault_flow = mgpusim), else nil
	Lines    *RemoteLines    // remote line reads and writes over NVLink
}

// System is N GPUs, the host driver and the thread-block dispatcher on
// one rtl simulator, stepped in lockstep.
type System struct {
	Cfg        *config.Config
	Sim        *rtl.Sim
	Workload   workload.Workload
	Layout     system.Layout
	Phases     []workload.Phase
	Policy     Policy
	GPUs       []*GPU
	Dispatcher *gpu.Dispatcher
	Driver     *Driver
	// PCIe[g] is GPU g's link to the host (H2D: host to GPU g); NVLink
	// holds a link per GPU pair a < b (H2D: a to b, D2H: b to a), in the
	// order (0,1), (0,2), ..., (1,2), ...
	PCIe, NVLink []*pcie.Link
	// FramesPerGPU is each GPU's memory in 4 KB pages.
	FramesPerGPU int
}

// New builds the system for cfg's workload under cfg.MultiGPU.Policy.
func New(cfg *config.Config) (*System, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	wl, err := workload.New(cfg.Run.Workload, workload.Params{Scale: cfg.Run.Scale, Seed: cfg.Run.Seed, GraphFile: cfg.Run.GraphFile})
	if err != nil {
		return nil, fmt.Errorf("run.workload: %w", err)
	}
	return NewWith(cfg, wl)
}

// NewWith builds the system for workload wl; cfg.Run.Workload only labels
// the results.
func NewWith(cfg *config.Config, wl workload.Workload) (*System, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pol, err := NewPolicy(cfg.MultiGPU.Policy)
	if err != nil {
		return nil, err
	}
	n := cfg.MultiGPU.GPUs
	// Every allocation is managed by the host driver: the layout's whole
	// range, at 100% oversubscription (the GPUs' memory is set below).
	lcfg := *cfg
	lcfg.Run.OversubPct, lcfg.Run.GPUMemoryMB = 100, 0
	layout, err := system.NewLayout(wl, &lcfg)
	if err != nil {
		return nil, err
	}
	if layout.Pages > ptw.MaxPages {
		return nil, fmt.Errorf("run.scale = %g: workload %s spans %d MB of pages, more than a GMMU's page table holds", cfg.Run.Scale, wl.Name(), layout.Pages>>8)
	}
	sched, err := gpu.ParseScheduler(cfg.GPU.Scheduler)
	if err != nil {
		return nil, err
	}
	s := &System{Cfg: cfg, Workload: wl, Layout: layout, Phases: wl.Phases(), Policy: pol,
		Sim: rtl.New(rtl.Options{Checked: cfg.Check.Invariants, SkipIdle: cfg.Check.SkipIdle, Threads: cfg.Run.Threads})}
	// GRIT Table I: each GPU's DRAM is 70% (multigpu.memory_pct) of the
	// application's footprint, the footprint in 4 KB pages of every
	// allocation (managed and device alike); each GPU gets that much, so
	// 4 GPUs hold 280% of the footprint between them.
	footprint := layout.FootprintPages + layout.DeviceGroups*system.PagesPerGroup
	s.FramesPerGPU = max(footprint*cfg.MultiGPU.MemoryPct/100, 1)
	if pol.Ideal {
		s.FramesPerGPU = layout.Pages
	}
	kernels := gpu.Kernels(s.Phases)
	for _, k := range kernels {
		if w := k.WarpsPerBlock(); w > cfg.GPU.WarpsPerSM {
			return nil, fmt.Errorf("gpu.warps_per_sm = %d out of range for workload %s; allowed: %d..%d (its thread blocks have %d warps)",
				cfg.GPU.WarpsPerSM, wl.Name(), w, gpu.MaxWarps, w)
		}
	}
	smCfg := gpu.SMConfig{Warps: cfg.GPU.WarpsPerSM, Scheduler: sched, LineBytes: cfg.GPU.LineBytes, TranslateQueue: cfg.GPU.TranslateQueue, StreamLines: cfg.Cache.L2, RemoteLines: true}
	flow, err := ParseFlow(cfg.MultiGPU.FaultFlow)
	if err != nil {
		return nil, err
	}
	var allSMs []*gpu.SM
	ports := DriverPorts{}
	for g := range n {
		gp, err := s.newGPU(g, smCfg, kernels, pol, flow)
		if err != nil {
			return nil, err
		}
		s.GPUs = append(s.GPUs, gp)
		allSMs = append(allSMs, gp.SMs...)
		ports.Remote = append(ports.Remote, gp.Router.Remote)
		ports.Migrated = append(ports.Migrated, gp.Router.Migrated)
		ports.Update = append(ports.Update, gp.GMMU.Update)
		ports.Promote = append(ports.Promote, gp.Counters.Promote)
		ports.Clear = append(ports.Clear, gp.Counters.Clear)
		var inv, ack []*rtl.Decoupled[tlb.Invalidate]
		for _, t := range gp.TLBs {
			inv = append(inv, t.Inval)
			ack = append(ack, t.InvalAck)
		}
		if gp.L2TLB != nil {
			inv = append(inv, gp.L2TLB.TLB.Inval)
			ack = append(ack, gp.L2TLB.TLB.InvalAck)
		}
		ports.Inval = append(ports.Inval, inv)
		ports.InvalAck = append(ports.InvalAck, ack)
		if flow == FlowMGPUSim {
			var flush, flushed *rtl.Decoupled[uint8]
			if gp.Caches != nil {
				flush, flushed = gp.Caches.Flush, gp.Caches.Flushed
			}
			ports.Flush = append(ports.Flush, flush)
			ports.Flushed = append(ports.Flushed, flushed)
			ports.Hold = append(ports.Hold, gp.Hold)
		}
	}
	dp := gpu.NewDispatcherPorts(s.Sim, "dispatcher", allSMs)
	s.Dispatcher = gpu.NewGPUFirstDispatcher(s.Sim, "dispatcher", s.Phases, dp, cfg.GPU.SMs, cfg.Cycles(cfg.GPU.KernelLaunchUs))
	ports.Host, ports.HostDone = dp.Host, dp.HostDone
	var lines []Channel
	if ports.Channels, lines, err = s.newLinks(n); err != nil {
		return nil, err
	}
	for g, gp := range s.GPUs {
		lp := LinePorts{Out: make([]*rtl.Decoupled[pcie.Packet], n), In: make([]*rtl.Decoupled[pcie.Packet], n)}
		for _, m := range gp.SMs {
			lp.Req = append(lp.Req, m.RemoteReq)
			lp.Resp = append(lp.Resp, m.RemoteResp)
		}
		for o := range n {
			if o != g {
				lp.Out[o], lp.In[o] = lines[ChannelIndex(n, g, o)].In, lines[ChannelIndex(n, o, g)].Out
			}
		}
		if gp.Lines, err = NewRemoteLines(s.Sim, fmt.Sprintf("gpu%d.lines", g), g, cfg.GPU.WarpsPerSM, cfg.GPU.LineBytes, LineCredits(cfg.MultiGPU.NVLinkLatency), lp); err != nil {
			return nil, err
		}
	}
	table := NewTable(n, layout.Pages, s.FramesPerGPU)
	if pol.Grit {
		if pol.Decider, err = NewGritDecider(GritConfig(cfg), table, layout.BaseVPN, hostWalk(cfg)); err != nil {
			return nil, err
		}
		s.Policy = pol
	}
	s.Driver, err = NewDriver(s.Sim, "host.driver", DriverConfig{
		GPUs: n, BaseVPN: layout.BaseVPN,
		FaultCycles: cfg.Cycles(cfg.MultiGPU.FaultLatencyUs),
		FaultQueue:  FaultQueue,
		Batch:       cfg.MultiGPU.FaultBatch,
		Flow:        flow,
		Blocks:      allocatedBlocks(layout),
	}, table, pol, ports)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// newLinks builds the links (SPEC 8; GRIT Table I) as blocks/pcie links,
// and returns the driver's channels over them (ChannelIndex) and the
// remote line units' (the NVLink directions' LinePort; no remote mapping
// points at host memory, so PCIe has the driver's port alone). Topology: every GPU has its own PCIe link to the host
// (pcie.bandwidth_gbs each way, pcie.rtt_us round trip: half each way),
// and every pair of GPUs its own NVLink, all-to-all, at
// multigpu.nvlink_gbs each way and multigpu.nvlink_latency_cycles each way
// (GRIT Table I's 300 GB/s NVLink-v2 read as each directed link). A page
// copy is one 4 KB packet.
func (s *System) newLinks(n int) (ch, lines []Channel, err error) {
	cfg := s.Cfg
	ch, lines = make([]Channel, 2*n+n*n), make([]Channel, 2*n+n*n)
	link := func(path string, mbps float64, rtt uint64, ports int) (*pcie.Link, error) {
		lc := pcie.Config{BandwidthMBps: uint64(mbps * 1000), ClockMHz: uint64(cfg.GPU.ClockMHz), RoundTripCycles: rtt,
			MaxPacketBytes: 1 << gpu.PageShift, Ports: ports}
		return pcie.New(s.Sim, path, lc, pcie.NewPorts(s.Sim, path, lc))
	}
	for g := range n {
		l, err := link(fmt.Sprintf("host.pcie%d", g), cfg.PCIe.BandwidthGBs, cfg.Cycles(cfg.PCIe.RTTUs), 1)
		if err != nil {
			return nil, nil, fmt.Errorf("pcie: %w", err)
		}
		s.PCIe = append(s.PCIe, l)
		ch[ChannelIndex(n, Host, g)] = Channel{In: l.H2D.In[0], Out: l.H2D.Out[0]}
		ch[ChannelIndex(n, g, Host)] = Channel{In: l.D2H.In[0], Out: l.D2H.Out[0]}
	}
	for a := range n {
		for b := a + 1; b < n; b++ {
			l, err := link(fmt.Sprintf("nvlink%d_%d", a, b), cfg.MultiGPU.NVLinkGBs, 2*uint64(cfg.MultiGPU.NVLinkLatency), LinePort+1)
			if err != nil {
				return nil, nil, fmt.Errorf("multigpu.nvlink_gbs, multigpu.nvlink_latency_cycles: %w", err)
			}
			s.NVLink = append(s.NVLink, l)
			ch[ChannelIndex(n, a, b)] = Channel{In: l.H2D.In[0], Out: l.H2D.Out[0]}
			ch[ChannelIndex(n, b, a)] = Channel{In: l.D2H.In[0], Out: l.D2H.Out[0]}
			lines[ChannelIndex(n, a, b)] = Channel{In: l.H2D.In[LinePort], Out: l.H2D.Out[LinePort]}
			lines[ChannelIndex(n, b, a)] = Channel{In: l.D2H.In[LinePort], Out: l.D2H.Out[LinePort]}
		}
	}
	return ch, lines, nil
}

// allocatedBlocks marks the 64 KB blocks (page groups) of the layout that
// belong to an allocation, managed or device.
func allocatedBlocks(l system.Layout) []bool {
	blocks := make([]bool, l.Pages/system.PagesPerGroup)
	first := l.BaseVPN / system.PagesPerGroup
	for _, r := range append(append([]system.Range(nil), l.Managed...), l.Device...) {
		for k := range r.Count {
			blocks[r.First-first+uint64(k)] = true
		}
	}
	return blocks
}

// newGPU builds GPU g: SMs with their L1 TLBs, the walk arbiter, the GMMU
// (GRIT Table I: four levels, a page-walk cache), the protection check,
// the router, DRAM, the data caches and the access counters. Every page
// starts not present: the data is in host memory.
func (s *System) newGPU(g int, smCfg gpu.SMConfig, kernels []*workload.Kernel, pol Policy, flow Flow) (*GPU, error) {
	cfg := s.Cfg
	pre := fmt.Sprintf("gpu%d.", g)
	gp := &GPU{}
	if flow == FlowMGPUSim {
		gp.Hold = rtl.NewBit(s.Sim, pre+"sm_hold")
	}
	var fills []tlb.FillPort
	var resps []tlb.ResponsePort
	for i := range cfg.GPU.SMs {
		path := fmt.Sprintf("%ssm%d", pre, i)
		l1, err := tlb.New(s.Sim, path+".l1tlb", tlb.Config{Sets: 1, Ways: cfg.GPU.L1TLBEntries, HitLatency: cfg.GPU.L1TLBLatency}, tlb.NewPorts(s.Sim, path+".l1tlb"))
		if err != nil {
			return nil, fmt.Errorf("gpu.l1_tlb_entries: %w", err)
		}
		ports := gpu.NewSMPorts(s.Sim, path, l1.Ports)
		ports.Hold = gp.Hold
		sm, err := gpu.NewSM(s.Sim, path, i, smCfg, kernels, ports)
		if err != nil {
			return nil, err
		}
		gp.SMs = append(gp.SMs, sm)
		gp.TLBs = append(gp.TLBs, l1)
		fills = append(fills, l1.Fill)
		resps = append(resps, l1.Resp)
	}
	wcfg := ptw.GRITConfig()
	wcfg.Walkers, wcfg.QueueDepth, wcfg.LevelLatency = cfg.GPU.Walkers, cfg.GPU.WalkQueue, cfg.GPU.WalkCycles
	wcfg.BaseVPN, wcfg.Pages = s.Layout.BaseVPN, s.Layout.Pages
	var err error
	if gp.GMMU, err = ptw.New(s.Sim, pre+"gmmu", wcfg, ptw.NewPorts(s.Sim, pre+"gmmu")); err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	// L1 misses go to the shared L2 TLB (GRIT Table I), its misses to
	// the GMMU; without it, to the GMMU.
	walks, results := gp.GMMU.Req, gp.GMMU.Resp
	if cfg.MultiGPU.L2TLB {
		walks = rtl.NewDecoupledOf[ptw.Walk](s.Sim, pre+"l2tlb.in", ptw.WalkBits)
		results = gpu.NewResolvedPort(s.Sim, pre+"l2tlb.out")
		if gp.L2TLB, err = NewL2TLB(s.Sim, pre+"l2tlb", tlb.GRITL2Config(), walks, gp.GMMU, results); err != nil {
			return nil, err
		}
	}
	if gp.Arbiter, err = gpu.NewWalkArbiter(s.Sim, pre+"walk_arbiter", gpu.WalkReqs(gp.SMs), walks); err != nil {
		return nil, err
	}
	checked := gpu.NewResolvedPort(s.Sim, pre+"protect.out")
	gp.Protect = NewProtectionCheck(s.Sim, pre+"protect", results, checked)
	var replays []*rtl.Decoupled[ptw.Walk]
	for _, m := range gp.SMs {
		replays = append(replays, m.Replay)
	}
	gp.Router = gpu.NewRouter(s.Sim, pre+"router", gpu.NewRouterPorts(s.Sim, pre+"router", checked, fills, replays))
	// The driver rewrites PTEs that may be queued for a fill.
	gp.Router.Watch(gp.GMMU.Update)
	if gp.Memory, err = gpu.NewMemory(s.Sim, pre+"dram", gpu.MemoryConfig{
		SMs: cfg.GPU.SMs, Warps: cfg.GPU.WarpsPerSM, LineBytes: cfg.GPU.LineBytes,
		Latency: uint64(cfg.Memory.LatencyCycles), ByteTime: cfg.TransferTime(cfg.Memory.BandwidthGBs),
	}, gp.SMs); err != nil {
		return nil, err
	}
	if cfg.Cache.L2 {
		c := cfg.Cache
		sector := gpu.SectorBytes(cfg.GPU.LineBytes)
		if gp.Caches, err = gpu.NewCaches(s.Sim, pre+"caches", gpu.CachesConfig{
			SMs: cfg.GPU.SMs, Warps: cfg.GPU.WarpsPerSM, Slices: c.L2Slices,
			L2:          cache.Config{Sets: c.L2Sets, Ways: c.L2Ways, LineBytes: cfg.GPU.LineBytes, SectorBytes: sector, WriteBack: true, HitLatency: c.L2LatencyCycles},
			L1:          cache.Config{Sets: c.L1Sets, Ways: c.L1Ways, LineBytes: cfg.GPU.LineBytes, SectorBytes: sector, HitLatency: c.L1LatencyCycles},
			L1Enabled:   c.L1,
			DRAMLatency: uint64(cfg.Memory.LatencyCycles), SliceByteTime: cfg.TransferTime(cfg.Memory.BandwidthGBs / float64(c.L2Slices)),
			InputDepth: 4, InvalidateDepth: 1 << 14,
			Flushable: flow == FlowMGPUSim,
		}, gp.SMs, gp.GMMU.Update); err != nil {
			return nil, err
		}
	}
	threshold := uint32(0)
	if pol.Counters {
		threshold = uint32(cfg.MultiGPU.AccessThreshold)
	}
	gp.Counters = NewCounters(s.Sim, pre+"counters", resps, s.Layout.BaseVPN, s.Layout.Pages, threshold)
	for i := range s.Layout.Pages {
		if err := gp.GMMU.Load(s.Layout.BaseVPN+uint64(i), notPresent(pte.SchemeNone)); err != nil {
			return nil, err
		}
	}
	return gp, nil
}

// GPUResult is one GPU's counts.
type GPUResult struct {
	GPU            int    `json:"gpu"`
	LocalAccesses  uint64 `json:"local_accesses"`
	RemoteAccesses uint64 `json:"remote_accesses"`
	WarpInstr      uint64 `json:"warp_instructions"`
	FramesUsed     int    `json:"frames_used"`
	GPUStats
}

// Result is a multi-GPU run's outcome: totals and per-GPU counts.
type Result struct {
	Workload string  `json:"workload"`
	Policy   string  `json:"policy"`
	GPUs     int     `json:"gpus"`
	Scale    float64 `json:"scale"`
	Seed     uint64  `json:"seed"`
	ClockMHz int     `json:"clock_mhz"`
	Cycles   uint64  `json:"cycles"`
	// EvaluatedCycles are the cycles the simulator evaluated; the others
	// it skipped, every block asleep.
	EvaluatedCycles    uint64  `json:"evaluated_cycles"`
	WallSeconds        float64 `json:"wall_seconds"`
	SimCyclesPerSecond float64 `json:"sim_cycles_per_second"`
	FootprintBytes     uint64  `json:"footprint_bytes"`
	GPUMemoryBytes     uint64  `json:"gpu_memory_bytes"` // per GPU

	Total  GPUResult   `json:"total"`
	PerGPU []GPUResult `json:"per_gpu"`
	Grit   *GritResult `json:"grit,omitempty"` // policy grit only
}

// WallFields are the Result fields that depend on the host machine.
var WallFields = []string{"wall_seconds", "sim_cycles_per_second"}

// Run simulates the workload to its end.
func (s *System) Run() (Result, error) {
	start := time.Now()
	s.Sim.Reset()
	if err := s.loop(); err != nil {
		return Result{}, err
	}
	if g, ok := s.Policy.Decider.(*GritDecider); ok && g.Err() != nil {
		return Result{}, g.Err()
	}
	return s.result(time.Since(start).Seconds()), nil
}

func (s *System) loop() error {
	cfg := s.Cfg
	chunk := min(cfg.Check.WatchdogCycles/4+1, 1<<20)
	if cfg.Check.Invariants {
		chunk = min(chunk, 1<<12)
	}
	last, since := s.progress(), uint64(0)
	for {
		done, err := s.Sim.RunUntil(s.Dispatcher.Done.Get, chunk)
		if err != nil {
			return fmt.Errorf("multigpu: cycle %d: %w", s.Sim.Cycle(), err)
		}
		for _, gp := range s.GPUs {
			if err := gp.GMMU.Err(); err != nil {
				return err
			}
			if gp.Caches != nil {
				if err := gp.Caches.Err(); err != nil {
					return err
				}
			}
		}
		if cfg.Check.Invariants {
			if err := s.Check(); err != nil {
				return fmt.Errorf("multigpu: invariant violated at cycle %d: %w", s.Sim.Cycle(), err)
			}
		}
		if done {
			return nil
		}
		if p := s.progress(); p != last {
			last, since = p, s.Sim.Cycle()
		} else if s.Sim.Cycle()-since >= cfg.Check.WatchdogCycles {
			return s.watchdogError(since)
		}
	}
}

// progress grows whenever an instruction issues or the driver moves on.
func (s *System) progress() uint64 {
	n := uint64(0)
	for _, gp := range s.GPUs {
		for _, m := range gp.SMs {
			n += m.Stats().Issued
		}
	}
	for _, st := range s.Driver.Stats() {
		n += st.LocalFaults + st.ProtectionFaults + st.Promotions + st.FastAnswers + st.Invalidations + st.NVLinkBytes + st.PCIeH2DBytes + st.PCIeD2HBytes
	}
	return n
}

// watchdogError names every unit that holds unfinished work.
func (s *System) watchdogError(since uint64) error {
	var lines []string
	for _, gp := range s.GPUs {
		for _, m := range gp.SMs {
			if m.Resident.Get() > 0 {
				lines = append(lines, fmt.Sprintf("%s: %s", m.Path(), m.Describe()))
			}
		}
	}
	lines = append(lines, s.Driver.Busy()...)
	for _, gp := range s.GPUs {
		lines = append(lines, gp.Lines.Busy()...)
	}
	if len(lines) == 0 {
		lines = append(lines, fmt.Sprintf("%s: phase not done, no unit holds work", s.Dispatcher.Path()))
	}
	return fmt.Errorf("multigpu: watchdog: at cycle %d nothing retired or moved for %d cycles (check.watchdog_cycles = %d); stuck:\n  %s",
		s.Sim.Cycle(), s.Sim.Cycle()-since, s.Cfg.Check.WatchdogCycles, strings.Join(lines, "\n  "))
}

func (s *System) result(wall float64) Result {
	cfg := s.Cfg
	r := Result{Workload: s.Workload.Name(), Policy: s.Policy.Name, GPUs: len(s.GPUs), Scale: cfg.Run.Scale, Seed: cfg.Run.Seed,
		ClockMHz: cfg.GPU.ClockMHz, Cycles: s.Sim.Cycle(), EvaluatedCycles: s.Sim.Executed(), WallSeconds: wall,
		FootprintBytes: s.Workload.Footprint(), GPUMemoryBytes: uint64(s.FramesPerGPU) << gpu.PageShift}
	if wall > 0 {
		r.SimCyclesPerSecond = float64(r.Cycles) / wall
	}
	r.Total.GPU = -1
	for g, gp := range s.GPUs {
		st := s.Driver.Stats()[g]
		gr := GPUResult{GPU: g, GPUStats: st, FramesUsed: s.Driver.Table().Used(g)}
		// NVLink bytes received: page copies and remote line packets.
		gr.NVLinkBytes += gp.Lines.ReceivedBytes()
		gr.LocalAccesses, gr.RemoteAccesses = gp.Counters.Accesses()
		for _, m := range gp.SMs {
			gr.WarpInstr += m.Stats().Issued
		}
		r.PerGPU = append(r.PerGPU, gr)
		t := &r.Total
		t.LocalAccesses += gr.LocalAccesses
		t.RemoteAccesses += gr.RemoteAccesses
		t.WarpInstr += gr.WarpInstr
		t.FramesUsed += gr.FramesUsed
		t.LocalFaults += st.LocalFaults
		t.ProtectionFaults += st.ProtectionFaults
		t.Promotions += st.Promotions
		t.Migrations += st.Migrations
		t.ReplicasMade += st.ReplicasMade
		t.ReplicasCollapse += st.ReplicasCollapse
		t.Invalidations += st.Invalidations
		t.Evictions += st.Evictions
		t.NVLinkBytes += gr.NVLinkBytes
		t.PCIeH2DBytes += st.PCIeH2DBytes
		t.PCIeD2HBytes += st.PCIeD2HBytes
		t.FastAnswers += st.FastAnswers
		t.Prefetched += st.Prefetched
	}
	if g, ok := s.Policy.Decider.(*GritDecider); ok {
		r.Grit = g.Result()
	}
	return r
}

// Check verifies the multi-GPU invariants between cycles (SPEC 8): the
// centralized table's own (Table.Check: one place or identical read-only
// replicas, no frame used twice on a GPU), and that every GPU's local page
// table agrees with it for every page the driver is not changing now.
func (s *System) Check() error {
	t := s.Driver.Table()
	if err := t.Check(s.Policy.Ideal); err != nil {
		return err
	}
	pn := &s.Driver.planner
	for i := range s.Layout.Pages {
		if s.Driver.busyPage(i) {
			continue
		}
		vpn := s.Layout.BaseVPN + uint64(i)
		for g, gp := range s.GPUs {
			// Scheme bits aside: a GPU that never saw the page keeps the
			// bits of its initial entry.
			want, got := pn.localPTE(i, g), gp.GMMU.Read(vpn)
			if want.WithScheme(0) != got.WithScheme(0) {
				return fmt.Errorf("page %#x: gpu%d's local PTE %#x, the centralized table's %#x (%+v)", vpn, g, uint64(got), uint64(want), t.Page(i))
			}
		}
	}
	return nil
}
