// Package system composes the single-GPU + PCIe system of SPEC 6 from rtl
// blocks and runs a workload on it under a migration policy:
//
//	dispatcher ─► SM[i] ◄─► L1 TLB[i]        (sim/gpu, blocks/tlb)
//	               │  └─ misses ─► walk arbiter ─► GMMU (walk queue, walkers,
//	               │                                page table; blocks/ptw)
//	               │                                   │ results
//	               │  ◄── fill + replay ── router ◄────┘
//	               │                         │ remote PTE    ▲ migrated
//	               │                         ▼               │
//	               │                      migration policy (sim/policy):
//	               │                      DA, PME, driver, PCIe link ...
//	               └─ loads ─► GPU DRAM data path
//
// The policy owns everything after "remote PTE": it is the only part that
// differs between runs of the same workload. Package policy holds the
// policies; this package holds the fabric, the run loop, the watchdog and
// the results.
package system

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/uvmmu/uvmmu/blocks/cache"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// Policy is a migration policy: the blocks that resolve remote PTEs and
// everything they need (allocator, migration engine, driver, link).
type Policy interface {
	// Name is the policy's registry name.
	Name() string
	// Attach adds the policy's blocks to s, connects them to the router's
	// Remote and Migrated ports, the GMMU's Update port, the TLBs'
	// freeze and shootdown ports and the dispatcher's host ports, and
	// loads the initial page table.
	Attach(s *System) error
	// Stats reads the policy's counters between cycles.
	Stats() PolicyStats
	// Check verifies the policy's invariants (SPEC 6.5) between cycles.
	Check() error
	// Busy describes the policy's units that hold unfinished work, one
	// "path: what it holds" line per unit, each unit once, for the
	// watchdog's report.
	Busy() []string
}

// PolicyStats are the migration counters every policy reports.
type PolicyStats struct {
	FarFaults    uint64 // faults the driver handled (um)
	Migrations   uint64 // 4 KB pages migrated host to GPU
	Evictions    uint64 // 4 KB pages written back GPU to host
	PCIeH2DBytes uint64
	PCIeD2HBytes uint64

	// FaultCycles is the far faults' handling time; AddedFaultCycles the
	// part of it that is not on the timeline and is added to the run's
	// cycles (um.fault_timing = "reference").
	FaultCycles, AddedFaultCycles uint64
}

// System is the composed GPU: its rtl simulator, the blocks of the
// fabric, and the workload's layout. Policies read and connect its fields.
type System struct {
	Cfg      *config.Config
	Sim      *rtl.Sim
	Workload workload.Workload
	Layout   Layout
	Phases   []workload.Phase

	SMs        []*gpu.SM
	TLBs       []*tlb.TLB
	Arbiter    *gpu.WalkArbiter
	GMMU       *ptw.GMMU
	Router     *gpu.Router
	Dispatcher *gpu.Dispatcher
	Memory     *gpu.Memory
	// Caches is the cached data path (cache.l2), nil without it.
	Caches *gpu.Caches
	// Pages2M is the 2 MB page translation path (run.page_size = "2MB"),
	// which takes the place of TLBs, GMMU and Router; nil without it.
	Pages2M *Pages2M

	// ModelMemoryBytes is the host memory predicted for the run.
	ModelMemoryBytes uint64
}

// PrelaunchPolicy is a policy whose host runtime calls the driver before
// every kernel launch (SUV's injected code, SUV Section V-C): the system
// puts a host phase named PrelaunchPhaseName before each kernel phase, and
// the policy's driver runs the runtime's operations in it.
type PrelaunchPolicy interface {
	Prelaunch() bool
}

// PrelaunchPhaseName names the host phase before each kernel of a
// PrelaunchPolicy.
const PrelaunchPhaseName = "prelaunch"

// SetupPhaseName names the host phase the system puts before the first
// kernel of a workload with cudaMalloc'd allocations.
const SetupPhaseName = "cudaMalloc"

// Options are the run's observation switches, which never change results.
type Options struct {
	VCD     io.Writer // waveform output, or nil
	Signals []string  // hierarchical name patterns to dump into the VCD
}

// New builds the system for cfg's workload (built-in, or a "trace:FILE"
// name) under policy p. The host memory the run needs is estimated first,
// before anything large is built, and a run over the limit fails with a
// *MemoryError.
func New(cfg *config.Config, p Policy) (*System, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	params := workload.Params{Scale: cfg.Run.Scale, Seed: cfg.Run.Seed, GraphFile: cfg.Run.GraphFile}
	if _, trace := workload.TraceFile(cfg.Run.Workload); !trace && cfg.Run.GraphFile == "" {
		size, err := workload.SizeOf(cfg.Run.Workload, params)
		if err != nil {
			return nil, fmt.Errorf("run.workload: %w", err)
		}
		if err := checkMemory(cfg, size); err != nil {
			return nil, err
		}
		if err := checkGPUMemory(cfg, size); err != nil {
			return nil, err
		}
	}
	wl, err := workload.New(cfg.Run.Workload, params)
	if err != nil {
		return nil, fmt.Errorf("run.workload: %w", err)
	}
	return NewWith(cfg, wl, p)
}

// NewWith builds the system for workload wl (a built-in one, a trace, or a
// testbench's) under policy p; cfg.Run.Workload only labels the results.
func NewWith(cfg *config.Config, wl workload.Workload, p Policy) (*System, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	size := workload.SizeOfWorkload(wl)
	if err := checkMemory(cfg, size); err != nil {
		return nil, err
	}
	layout, err := NewLayout(wl, cfg)
	if err != nil {
		return nil, err
	}
	sched, err := gpu.ParseScheduler(cfg.GPU.Scheduler)
	if err != nil {
		return nil, err
	}
	s := &System{
		Cfg:      cfg,
		Sim:      rtl.New(rtl.Options{Checked: cfg.Check.Invariants, SkipIdle: cfg.Check.SkipIdle, Threads: cfg.Run.Threads}),
		Workload: wl,
		Layout:   layout,
		Phases:   wl.Phases(),

		ModelMemoryBytes: ModelMemory(size),
	}
	if len(layout.Device) > 0 {
		// The cudaMalloc calls before the first kernel: a host phase in
		// which the policy's driver places the device allocations.
		s.Phases = append([]workload.Phase{{Host: &workload.HostAccess{Alloc: SetupPhaseName}}}, s.Phases...)
	}
	if pp, ok := p.(PrelaunchPolicy); ok && pp.Prelaunch() {
		var phases []workload.Phase
		for _, ph := range s.Phases {
			if ph.Kernel != nil {
				phases = append(phases, workload.Phase{Host: &workload.HostAccess{Alloc: PrelaunchPhaseName}})
			}
			phases = append(phases, ph)
		}
		s.Phases = phases
	}
	kernels := gpu.Kernels(s.Phases)
	for _, k := range kernels {
		if w := k.WarpsPerBlock(); w > cfg.GPU.WarpsPerSM {
			return nil, fmt.Errorf("gpu.warps_per_sm = %d out of range for workload %s; allowed: %d..%d (its thread blocks have %d warps)",
				cfg.GPU.WarpsPerSM, wl.Name(), w, gpu.MaxWarps, w)
		}
	}
	smCfg := gpu.SMConfig{Warps: cfg.GPU.WarpsPerSM, Scheduler: sched, LineBytes: cfg.GPU.LineBytes, TranslateQueue: cfg.GPU.TranslateQueue, StreamLines: cfg.Cache.L2}
	if cfg.Pages2M() {
		err = s.newTranslation2M(kernels, smCfg, p)
	} else {
		err = s.newTranslation(kernels, smCfg)
	}
	if err != nil {
		return nil, err
	}
	s.Dispatcher = gpu.NewDispatcher(s.Sim, "dispatcher", s.Phases, gpu.NewDispatcherPorts(s.Sim, "dispatcher", s.SMs), cfg.Cycles(cfg.GPU.KernelLaunchUs))
	s.Memory, err = gpu.NewMemory(s.Sim, "dram", gpu.MemoryConfig{
		SMs: cfg.GPU.SMs, Warps: cfg.GPU.WarpsPerSM, LineBytes: cfg.GPU.LineBytes,
		Latency: uint64(cfg.Memory.LatencyCycles), ByteTime: cfg.TransferTime(cfg.Memory.BandwidthGBs),
	}, s.SMs)
	if err != nil {
		return nil, err
	}
	if cfg.Cache.L2 {
		if s.Caches, err = newCaches(s); err != nil {
			return nil, err
		}
	}
	if err := p.Attach(s); err != nil {
		return nil, err
	}
	return s, nil
}

// newTranslation builds the SMs and the 4 KB translation path: per-SM L1
// TLBs, the walk arbiter, the GMMU and the router.
func (s *System) newTranslation(kernels []*workload.Kernel, smCfg gpu.SMConfig) error {
	cfg, layout, wl := s.Cfg, s.Layout, s.Workload
	var err error
	var fills []tlb.FillPort
	for i := 0; i < cfg.GPU.SMs; i++ {
		path := fmt.Sprintf("sm%d", i)
		l1cfg := tlb.Config{Sets: 1, Ways: cfg.GPU.L1TLBEntries, HitLatency: cfg.GPU.L1TLBLatency}
		l1, err := tlb.New(s.Sim, path+".l1tlb", l1cfg, tlb.NewPorts(s.Sim, path+".l1tlb"))
		if err != nil {
			return fmt.Errorf("gpu.l1_tlb_entries: %w", err)
		}
		sm, err := gpu.NewSM(s.Sim, path, i, smCfg, kernels, gpu.NewSMPorts(s.Sim, path, l1.Ports))
		if err != nil {
			return err
		}
		s.SMs = append(s.SMs, sm)
		s.TLBs = append(s.TLBs, l1)
		fills = append(fills, l1.Fill)
	}
	if layout.Pages > ptw.MaxPages {
		return fmt.Errorf("run.scale = %g: workload %s spans %d MB of pages, more than the GMMU's page table holds (%d MB)",
			cfg.Run.Scale, wl.Name(), layout.Pages>>8, ptw.MaxPages>>8)
	}
	s.GMMU, err = ptw.New(s.Sim, "gmmu", ptw.Config{
		Walkers: cfg.GPU.Walkers, QueueDepth: cfg.GPU.WalkQueue, Levels: 1, LevelLatency: cfg.GPU.WalkCycles,
		BaseVPN: layout.BaseVPN, Pages: layout.Pages,
	}, ptw.NewPorts(s.Sim, "gmmu"))
	if err != nil {
		return fmt.Errorf("gpu: %w", err)
	}
	if s.Arbiter, err = gpu.NewWalkArbiter(s.Sim, "walk_arbiter", gpu.WalkReqs(s.SMs), s.GMMU.Req); err != nil {
		return err
	}
	var replays []*rtl.Decoupled[ptw.Walk]
	for _, m := range s.SMs {
		replays = append(replays, m.Replay)
	}
	s.Router = gpu.NewRouter(s.Sim, "router", gpu.NewRouterPorts(s.Sim, "router", s.GMMU.Resp, fills, replays))
	return nil
}

// newCaches builds the cached data path of cfg.Cache over the SMs, watching
// the GMMU's page-table writes for pages that leave GPU memory.
func newCaches(s *System) (*gpu.Caches, error) {
	cfg := s.Cfg
	c := cfg.Cache
	sector := gpu.SectorBytes(cfg.GPU.LineBytes)
	return gpu.NewCaches(s.Sim, "caches", gpu.CachesConfig{
		SMs: cfg.GPU.SMs, Warps: cfg.GPU.WarpsPerSM, Slices: c.L2Slices,
		L2:          cache.Config{Sets: c.L2Sets, Ways: c.L2Ways, LineBytes: cfg.GPU.LineBytes, SectorBytes: sector, WriteBack: true, HitLatency: c.L2LatencyCycles},
		L1:          cache.Config{Sets: c.L1Sets, Ways: c.L1Ways, LineBytes: cfg.GPU.LineBytes, SectorBytes: sector, HitLatency: c.L1LatencyCycles},
		L1Enabled:   c.L1,
		DRAMLatency: uint64(cfg.Memory.LatencyCycles), SliceByteTime: cfg.TransferTime(cfg.Memory.BandwidthGBs / float64(c.L2Slices)),
		InputDepth: 4, InvalidateDepth: 1 << 14, // 64 MB of unmapped pages waiting
	}, s.SMs, s.unmapPort())
}

// unmapPort is the page-table write port the caches watch for pages that
// leave GPU memory.
func (s *System) unmapPort() ptw.PTEPort[uint64] {
	if s.Pages2M != nil {
		return s.Pages2M.Unmap
	}
	return s.GMMU.Update
}

// LocalFrame is the GPU frame number of page i of frame-group pfgn.
func LocalFrame(pfgn uint64, i int) uint64 { return pfgn*PagesPerGroup + uint64(i) }

// LoadGroup writes the 16 PTEs of page-group vpgn before the run: local in
// frame-group frame, or remote in host frame-group frame.
func (s *System) LoadGroup(vpgn, frame uint64, remote bool) error {
	for i := 0; i < PagesPerGroup; i++ {
		e := pte.Local(LocalFrame(frame, i))
		if remote {
			e = pte.Remote(LocalFrame(frame, i))
		}
		if err := s.GMMU.Load(vpgn*PagesPerGroup+uint64(i), e); err != nil {
			return err
		}
	}
	return nil
}

// Result is one run's outcome.
type Result struct {
	Workload   string  `json:"workload"`
	Policy     string  `json:"policy"`
	OversubPct int     `json:"oversub_pct"`
	Scale      float64 `json:"scale"`
	Seed       uint64  `json:"seed"`

	ClockMHz           int     `json:"clock_mhz"`
	Cycles             uint64  `json:"cycles"`
	WallSeconds        float64 `json:"wall_seconds"`
	SimCyclesPerSecond float64 `json:"sim_cycles_per_second"`
	WarpInstrPerSecond float64 `json:"warp_instructions_per_second"`
	EvaluatedCycles    uint64  `json:"evaluated_cycles"`

	WarpInstructions uint64 `json:"warp_instructions"`
	MemInstructions  uint64 `json:"memory_instructions"`
	TLBLookups       uint64 `json:"tlb_lookups"`
	TLBMisses        uint64 `json:"tlb_misses"`
	Walks            uint64 `json:"walks"`
	RemoteWalks      uint64 `json:"remote_walks"`
	DRAMBytes        uint64 `json:"dram_bytes"`

	FarFaults      uint64 `json:"far_faults"`
	Migrations     uint64 `json:"migrations"`
	Evictions      uint64 `json:"evictions"`
	PCIeH2DBytes   uint64 `json:"pcie_h2d_bytes"`
	PCIeD2HBytes   uint64 `json:"pcie_d2h_bytes"`
	RemoteAccesses uint64 `json:"remote_accesses"`

	// FaultCycles is the far faults' handling time. TimelineCycles is the
	// cycles simulated; Cycles adds the fault time a policy keeps off the
	// timeline (um.fault_timing = "reference").
	FaultCycles    uint64 `json:"fault_cycles"`
	TimelineCycles uint64 `json:"timeline_cycles"`
	// The data caches (cache.l2, cache.l1); zero without them.
	L2Hits             uint64 `json:"l2_hits"`
	L2Misses           uint64 `json:"l2_misses"`
	L1Hits             uint64 `json:"l1_hits"`
	L1Misses           uint64 `json:"l1_misses"`
	CacheInvalidations uint64 `json:"cache_invalidations"` // L2 lines dropped because their page left GPU memory
	L2WriteBackBytes   uint64 `json:"l2_writeback_bytes"`

	// The 2 MB page system (run.page_size = "2MB"); zero otherwise: range
	// misses at each translation level, migration requests sent and
	// misses merged into a pending one, bytes migrated, 2 MB frames taken.
	L1RangeMisses     uint64 `json:"l1_range_misses"`
	L2RangeMisses     uint64 `json:"l2_range_misses"`
	PTRangeMisses     uint64 `json:"pt_range_misses"`
	MigrationRequests uint64 `json:"migration_requests"`
	MergedRequests    uint64 `json:"merged_requests"`
	MigratedBytes     uint64 `json:"migrated_bytes"`
	Frames2M          uint64 `json:"frames_2m"`

	FootprintBytes  uint64 `json:"footprint_bytes"`
	GPUMemoryBytes  uint64 `json:"gpu_memory_bytes"`
	ManagedCapacity uint64 `json:"managed_capacity_bytes"`
	// GPUMemoryMB is GPUMemoryBytes in MB (2^20 bytes), as
	// run.gpu_memory_mb takes it.
	GPUMemoryMB float64 `json:"gpu_memory_mb"`

	// ModelMemoryBytes is the simulator's host memory predicted before
	// the run (EstimateMemory); it depends only on the configuration.
	ModelMemoryBytes uint64 `json:"model_memory_bytes"`
}

// WallFields are the Result fields that depend on the host machine rather
// than on the simulation; everything else is deterministic.
var WallFields = []string{"wall_seconds", "sim_cycles_per_second", "warp_instructions_per_second"}

// Run simulates the workload to its end and reports the result. p must be
// the policy the system was built with.
func (s *System) Run(p Policy, opts Options) (Result, error) {
	if opts.VCD != nil {
		if err := s.Sim.TraceVCDClock(opts.VCD, s.Cfg.GPU.ClockMHz, opts.Signals...); err != nil {
			return Result{}, err
		}
		defer s.Sim.CloseTrace()
	}
	start := time.Now()
	s.Sim.Reset()
	if err := s.loop(p); err != nil {
		return Result{}, err
	}
	if opts.VCD != nil {
		// The waveform is an output of the run: failing to write it fails
		// the run.
		if err := s.Sim.CloseTrace(); err != nil {
			return Result{}, fmt.Errorf("system: vcd: %w", err)
		}
	}
	wall := time.Since(start).Seconds()
	return s.result(p, wall), nil
}

// loop steps the clock until the dispatcher reports the last phase done,
// checking the invariants and the watchdog between chunks of cycles.
func (s *System) loop(p Policy) error {
	cfg := s.Cfg
	chunk := min(cfg.Check.WatchdogCycles/4+1, 1<<20)
	if cfg.Check.Invariants {
		chunk = min(chunk, 1<<14)
	}
	w := watchdog{window: cfg.Check.WatchdogCycles, progress: s.progress(p)}
	for {
		done, err := s.Sim.RunUntil(s.Dispatcher.Done.Get, chunk)
		if err != nil {
			return fmt.Errorf("system: cycle %d: %w", s.Sim.Cycle(), err)
		}
		if err := s.blockErrors(); err != nil {
			return err
		}
		if cfg.Check.Invariants {
			if err := p.Check(); err != nil {
				return fmt.Errorf("system: invariant violated at cycle %d: %w", s.Sim.Cycle(), err)
			}
		}
		if done {
			return nil
		}
		if w.stalled(s.Sim, s.progress(p)) {
			return s.watchdogError(p, &w)
		}
	}
}

func (s *System) blockErrors() error {
	if s.GMMU != nil {
		if err := s.GMMU.Err(); err != nil {
			return err
		}
	}
	if s.Caches != nil {
		return s.Caches.Err()
	}
	return nil
}

// progress is a number that grows whenever an instruction issues or a
// page moves.
func (s *System) progress(p Policy) uint64 {
	n := uint64(0)
	for _, m := range s.SMs {
		n += m.Stats().Issued
	}
	ps := p.Stats()
	return n + ps.Migrations + ps.Evictions + ps.PCIeH2DBytes + ps.PCIeD2HBytes + s.Memory.RemoteLoads()
}

// watchdogError reports one line per unit holding unfinished work, each
// with what it holds and waits for.
func (s *System) watchdogError(p Policy, w *watchdog) error {
	var lines []string
	for _, m := range s.SMs {
		if r := m.Resident.Get(); r > 0 {
			lines = append(lines, fmt.Sprintf("%s: %s", m.Path(), m.Describe()))
		}
	}
	lines = append(lines, p.Busy()...)
	if len(lines) == 0 {
		lines = append(lines, fmt.Sprintf("%s: phase not done, no unit holds work", s.Dispatcher.Path()))
	}
	return fmt.Errorf("system: watchdog: at cycle %d nothing retired, moved or was scheduled for %d cycles (check.watchdog_cycles = %d); stuck:\n  %s",
		s.Sim.Cycle(), s.Sim.Cycle()-w.since, w.window, strings.Join(lines, "\n  "))
}

func (s *System) result(p Policy, wall float64) Result {
	cfg := s.Cfg
	r := Result{
		Workload: s.Workload.Name(), Policy: p.Name(), OversubPct: cfg.Run.OversubPct, Scale: cfg.Run.Scale, Seed: cfg.Run.Seed,
		ClockMHz: cfg.GPU.ClockMHz, Cycles: s.Sim.Cycle(), WallSeconds: wall, EvaluatedCycles: s.Sim.Executed(),
		DRAMBytes:       s.Memory.Bytes(),
		FootprintBytes:  s.Workload.Footprint(),
		GPUMemoryBytes:  uint64(s.Layout.GPUPages) << PageShift,
		ManagedCapacity: uint64(s.Layout.ManagedPages) << PageShift,
		GPUMemoryMB:     float64(uint64(s.Layout.GPUPages)<<PageShift) / (1 << 20),

		ModelMemoryBytes: s.ModelMemoryBytes,
	}
	if s.Pages2M != nil {
		s.Pages2M.result(&r)
	} else {
		r.Walks, r.RemoteWalks = s.GMMU.Stats().Walks, s.Router.RemoteSeen()
	}
	for _, m := range s.SMs {
		st := m.Stats()
		r.WarpInstructions += st.Issued
		r.MemInstructions += st.MemIssued
		r.TLBLookups += st.Lookups
		r.TLBMisses += st.Misses
	}
	ps := p.Stats()
	r.FarFaults, r.Migrations, r.Evictions = ps.FarFaults, ps.Migrations, ps.Evictions
	r.PCIeH2DBytes, r.PCIeD2HBytes = ps.PCIeH2DBytes, ps.PCIeD2HBytes
	r.RemoteAccesses = s.Memory.RemoteLoads()
	r.FaultCycles, r.TimelineCycles = ps.FaultCycles, r.Cycles
	r.Cycles += ps.AddedFaultCycles
	if s.Caches != nil {
		cs := s.Caches.Stats()
		r.DRAMBytes += cs.DRAMBytes
		r.L2Hits, r.L2Misses, r.L1Hits, r.L1Misses = cs.L2Hits, cs.L2Misses, cs.L1Hits, cs.L1Misses
		r.CacheInvalidations = cs.Invalidated
		r.L2WriteBackBytes = cs.WriteBackSectors * 32
	}
	if wall > 0 {
		r.SimCyclesPerSecond = float64(r.TimelineCycles) / wall
		r.WarpInstrPerSecond = float64(r.WarpInstructions) / wall
	}
	return r
}
