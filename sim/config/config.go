// Package config holds every knob of the single-GPU + PCIe system (SPEC
// section 2) and of the migration policies, with one documented default
// constructor, TOML file loading, dotted-key overrides, range validation and
// the exact conversions from physical units to core cycles.
//
// Every field carries its TOML key in a struct tag and its allowed values
// in another: `limit` names the block parameter the key sets, whose range
// the block exports and checks itself (blockLimits); `min`/`max` bound a
// key no block bounds; `oneof` lists names. Validate, the `--set` override
// path and `uvmsim list` all read those tags, so a key's name and range are
// written down once, and the configuration accepts exactly what the blocks
// do.
package config

import (
	"fmt"
	"math"

	"github.com/uvmmu/uvmmu/sim/uvm"
)

// Config is the whole system and run configuration.
type Config struct {
	Run      Run    `toml:"run"`
	GPU      GPU    `toml:"gpu"`
	Memory   Memory `toml:"memory"`
	Cache    Cache  `toml:"cache"`
	PCIe     PCIe   `toml:"pcie"`
	UM       UM     `toml:"um"`
	UVMSmart UM     `toml:"uvmsmart"`
	Adaptive UM     `toml:"adaptive"`
	UVMMU    UVMMU  `toml:"uvmmu"`
	// Incomplete is the 2 MB page mode (run.page_size = "2MB") and its
	// incomplete-pages translation and migration path.
	Incomplete Incomplete `toml:"incomplete"`
	MultiGPU   MultiGPU   `toml:"multigpu"`
	Grit       Grit       `toml:"grit"`
	Check      Check      `toml:"check"`
}

// Run selects the experiment: workload, policy, memory pressure and seed.
type Run struct {
	// Preset is applied when set (from a file, --set or --preset), before
	// the keys that follow it; see ApplyPreset.
	Preset     string  `toml:"preset" oneof:"presets" doc:"platform preset applied under the other keys (uvmsim list shows the keys each one sets)"`
	Workload   string  `toml:"workload" doc:"built-in workload name (see uvmsim list)"`
	Policy     string  `toml:"policy" oneof:"ideal,um,uvmsmart,adaptive,uvmmu,incomplete,complete,copy-execute,suv,ac,sc" doc:"migration policy"`
	PageSize   string  `toml:"page_size" oneof:"4KB,2MB" doc:"translation page: 4KB (SPEC 2) or 2MB, the incomplete-pages system (policies incomplete, complete, copy-execute; no oversubscription)"`
	OversubPct int     `toml:"oversub_pct" min:"100" max:"1000" doc:"oversubscription ratio R in percent: managed GPU memory = footprint / R in 4 KB pages (SPEC 2), the whole footprint at 100"`
	Scale      float64 `toml:"scale" min:"0.0001" max:"10000" doc:"workload size multiplier (the footprint must fit memory.capacity_gb and the GMMU's 64 GB page table)"`
	Seed       uint64  `toml:"seed" min:"0" max:"9223372036854775807" doc:"seed of every random choice (workload, LFSR seed derivation); a TOML integer, so at most 2^63-1 in a file, with --set and --seed alike"`
	GraphFile  string  `toml:"graph_file" doc:"Rodinia-format graph for bfs (empty: generated)"`
	Threads    int     `toml:"threads" min:"1" max:"64" doc:"goroutines that evaluate the blocks of each cycle (results are identical at any count)"`
	// MaxMemoryGB bounds the simulator's own memory, not the simulated
	// machine's: it never changes a result.
	MaxMemoryGB float64 `toml:"max_memory_gb" min:"0" max:"1048576" doc:"host memory a run may take, predicted before it starts (GiB); 0: the machine's physical memory"`

	GPUMemoryMB float64 `toml:"gpu_memory_mb" min:"0" max:"11264" doc:"GPU memory in MB (2^20 bytes), cudaMalloc'd data included, as the UVMSmart simulator's -gddr_size; overrides run.oversub_pct when set (0: footprint / R); at most memory.capacity_gb"`
}

// GPU is the core and translation configuration (UVMMU paper Table I).
type GPU struct {
	ClockMHz       int    `toml:"clock_mhz" limit:"pcie.ClockMHz" doc:"core clock; every latency is converted to these cycles"`
	SMs            int    `toml:"sms" min:"1" max:"63" doc:"streaming multiprocessors (the walk arbiter and shootdown masks are 64 bits)"`
	WarpsPerSM     int    `toml:"warps_per_sm" limit:"gpu.Warps" doc:"occupancy limit in warps per SM"`
	Scheduler      string `toml:"scheduler" oneof:"gto,lrr" doc:"warp scheduler: greedy-then-oldest or loose round robin"`
	LineBytes      int    `toml:"line_bytes" min:"32" max:"4096" pow2:"true" doc:"cache line size the coalescer groups lanes into"`
	L1TLBEntries   int    `toml:"l1_tlb_entries" limit:"tlb.Ways" doc:"per-SM L1 TLB entries, fully associative, LRU"`
	L1TLBLatency   int    `toml:"l1_tlb_latency" limit:"tlb.HitLatency" doc:"L1 TLB lookup cycles"`
	TranslateQueue int    `toml:"translate_queue" limit:"gpu.TranslateQueue" doc:"per-SM queue of page translations waiting for the L1 TLB"`
	Walkers        int    `toml:"walkers" limit:"ptw.Walkers" doc:"page-table walkers in the GMMU"`
	WalkQueue      int    `toml:"walk_queue" limit:"ptw.QueueDepth" doc:"GMMU walk queue entries"`
	WalkCycles     int    `toml:"walk_cycles" limit:"ptw.LevelLatency" doc:"page-table walk latency in cycles"`

	KernelLaunchUs float64 `toml:"kernel_launch_us" min:"0" max:"100000" doc:"kernel launch latency: every kernel's first block starts this long after the previous phase ends (0: at once)"`
}

// Memory is GPU DRAM.
type Memory struct {
	CapacityGB    float64 `toml:"capacity_gb" min:"0.002" max:"1024" doc:"physical GPU memory (bounds managed + cudaMalloc'd data)"`
	LatencyCycles int     `toml:"latency_cycles" limit:"dram.Latency" doc:"local DRAM access latency in cycles"`
	BandwidthGBs  float64 `toml:"bandwidth_gbs" min:"1" max:"100000" doc:"DRAM bandwidth in GB/s (10^9 bytes)"`
}

// Cache is the data caches of UVMMU Table I in the geometry of the UVMSmart
// simulator's GTX 1080 Ti configuration (gpgpusim.config:56-61): an L2
// slice in each memory sub-partition and a per-SM L1 that global loads
// bypass there (-gmem_skip_L1D 1).
type Cache struct {
	L2              bool `toml:"l2" doc:"L2 data cache in the memory sub-partitions (false: every load goes to DRAM at memory.latency_cycles)"`
	L2Slices        int  `toml:"l2_slices" min:"1" max:"64" doc:"memory sub-partitions, one L2 slice and an equal share of memory.bandwidth_gbs each"`
	L2Sets          int  `toml:"l2_sets" min:"1" max:"65536" pow2:"true" doc:"sets per L2 slice"`
	L2Ways          int  `toml:"l2_ways" min:"1" max:"16" doc:"L2 associativity"`
	L2LatencyCycles int  `toml:"l2_latency_cycles" min:"1" max:"100000" doc:"L2 hit latency; a miss adds memory.latency_cycles and its sectors' DRAM transfer"`
	L1              bool `toml:"l1" doc:"per-SM L1 data cache for global loads (the reference bypasses it, -gmem_skip_L1D 1); needs cache.l2"`
	L1Sets          int  `toml:"l1_sets" min:"1" max:"65536" pow2:"true" doc:"L1 sets"`
	L1Ways          int  `toml:"l1_ways" min:"1" max:"16" doc:"L1 associativity"`
	L1LatencyCycles int  `toml:"l1_latency_cycles" min:"1" max:"100000" doc:"L1 hit latency"`
}

// PCIe is the host link.
type PCIe struct {
	BandwidthGBs float64 `toml:"bandwidth_gbs" limit:"pcie.BandwidthMBps" doc:"bandwidth per direction in GB/s (10^9 bytes)"`
	RTTUs        float64 `toml:"rtt_us" limit:"pcie.RoundTripCycles" doc:"round-trip time in microseconds; each direction adds half"`
	PacketBytes  int     `toml:"packet_bytes" limit:"pcie.MaxPacketBytes" doc:"packet size; the links interleave packets round robin"`
}

// UM is a fault-based UVM driver as the UVMSmart simulator models it: its
// timing and its choices from the shared policy menu (SPEC 6.4, package
// sim/uvm, docs/uvm-menu.md). The um policy reads the [um] section, the
// uvmsmart policy the [uvmsmart] section and the adaptive policy the
// [adaptive] section; the sections have these keys and differ only in
// their defaults. The allowed names are sim/uvm's
// (TestMenuNamesMatchSimUVM holds the tags to them).
type UM struct {
	FaultLatencyUs      float64 `toml:"fault_latency_us" min:"0" max:"100000" doc:"far-fault handling latency per fault batch entry"`
	FaultBuffer         int     `toml:"fault_buffer" limit:"umdriver.FaultBuffer" doc:"far-fault buffer entries"`
	Prefetcher          string  `toml:"prefetcher" oneof:"none,tree,seqlocal,random" doc:"prefetcher until GPU memory first fills: on-demand, tree-based neighborhood (64 KB leaves, 2 MB roots), sequential-local 64 KB, random 4 KB"`
	PrefetcherOversub   string  `toml:"prefetcher_oversub" oneof:"none,tree,seqlocal,random" doc:"prefetcher once GPU memory has filled"`
	Eviction            string  `toml:"eviction" oneof:"lru2m,lrutree,lru64k,random4k,lfu2m,lru4k" doc:"eviction policy: LRU 2 MB, LRU tree-based, LRU sequential-local 64 KB, random 4 KB, access-counter LFU 2 MB, LRU 4 KB"`
	Remote              string  `toml:"remote" oneof:"off,adaptive,always,oversub" doc:"remote zero-copy access: off, adaptive threshold (UVMSmart Eq. 1), static threshold always, static threshold once oversubscribed"`
	MigrateThreshold    int     `toml:"migrate_threshold" limit:"accessctr.Threshold" doc:"static access-counter threshold t_s (accesses to a 64 KB block before a read migrates)"`
	Penalty             int     `toml:"penalty" limit:"uvm.Penalty" doc:"multiplicative migration penalty p once oversubscribed (UVMSmart Eq. 1)"`
	FreeBufferPct       float64 `toml:"free_buffer_pct" limit:"uvm.FreeBufferPercent" doc:"percentage of managed GPU memory kept free by evicting ahead"`
	RemoteLatencyCycles int     `toml:"remote_latency_cycles" min:"0" max:"100000" doc:"latency of one remote zero-copy access, before the line's transfer time on the link"`
	FaultTiming         string  `toml:"fault_timing" oneof:"cycle,reference" doc:"far-fault timing: cycle (the fault latency in the cycle loop, faulting SM's TLB frozen) or reference (the UVMSmart simulator's -enable_accurate_simulation 0: no latency on the timeline, no freeze, distinct faulting pages x latency added to the total)"`
	ConcurrentEviction  bool    `toml:"concurrent_eviction" doc:"write-backs on their own lane (the UVMSmart simulator's eviction and read queues): the fetch of the faulting page goes out while the victims travel to the host, and evicted pages count when their write-back starts; false waits for each write-back to reach the host first"`
	HostSync            bool    `toml:"host_sync" doc:"before each host phase between kernels, write back and invalidate the dirty managed pages, as the UVMSmart simulator's cudaDeviceSynchronize does; false leaves them valid"`
	SmartRuntime        bool    `toml:"smart_runtime" doc:"DATE'21 smart runtime (-enable_smart_runtime): on oversubscription classify each allocation's pattern; random or mixed -> zero-copy once oversubscribed + tree eviction, linear reuse -> tree eviction"`
}

// Fault timing modes of config.UM.FaultTiming.
const (
	FaultTimingCycle     = "cycle"
	FaultTimingReference = "reference"
)

// Menu is the section's choice from the sim/uvm menu; the random
// prefetcher and evictor draw from seed.
func (u *UM) Menu(seed uint64) uvm.Config {
	return uvm.Config{
		Prefetcher:        u.Prefetcher,
		OversubPrefetcher: u.PrefetcherOversub,
		Evictor:           u.Eviction,
		Remote:            u.Remote,
		StaticThreshold:   uint32(u.MigrateThreshold),
		Penalty:           uint32(u.Penalty),
		FreeBufferPercent: u.FreeBufferPct,
		Seed:              seed,
	}
}

// umDefaults is the UVMSmart simulator's baseline driver (uvm.DefaultConfig:
// tree prefetcher before and after oversubscription, LRU 2 MB eviction, no
// remote access, t_s = 8, p = 2, no free-page buffer) with the UVMMU
// paper's 45 us fault latency.
func umDefaults() UM {
	m := uvm.DefaultConfig()
	return UM{
		FaultLatencyUs:    45, // UVMMU Table I: 45 us fault-based handling
		FaultBuffer:       4096,
		Prefetcher:        m.Prefetcher,
		PrefetcherOversub: m.OversubPrefetcher,
		Eviction:          m.Evictor,
		Remote:            m.Remote,
		MigrateThreshold:  int(m.StaticThreshold),
		Penalty:           int(m.Penalty),
		FreeBufferPct:     m.FreeBufferPercent,
		// UVMSmart Table I: remote (zero-copy) access 200 cycles.
		RemoteLatencyCycles: 200,
		FaultTiming:         FaultTimingCycle,
		// gpu-sim.cc:3086-3177: write-backs and reads are separate queues,
		// each with its own latency slot.
		ConcurrentEviction: true,
		// cuda_runtime_api.cc:2019-2063: cudaDeviceSynchronize copies the
		// dirty managed pages back and invalidates them.
		HostSync: true,
	}
}

// uvmsmartDefaults is the runtime the UVMMU paper compares against, its
// reference [5]: the DATE'21 adaptive framework, the baseline driver with
// the smart runtime on (gpgpu-sim_UVMSmart -enable_smart_runtime 1,
// gpu-sim.cc:2672-2833), which switches to zero-copy once oversubscribed
// and tree-based eviction by the access patterns it detects.
func uvmsmartDefaults() UM {
	u := umDefaults()
	u.SmartRuntime = true
	return u
}

// adaptiveDefaults is the IPDPS'20 adaptive scheme (UVMSmart paper, seed
// 001, Sections IV and V): the baseline driver with remote zero-copy
// access under the dynamic threshold of Eq. 1 and access-counter LFU 2 MB
// eviction.
func adaptiveDefaults() UM {
	u := umDefaults()
	u.Remote = uvm.RemoteAdaptive
	u.Eviction = uvm.EvictLFU2M
	return u
}

// UVMMU is the hardware migration path and its Destination Allocator.
type UVMMU struct {
	DCQDepth       int `toml:"dcq_depth" limit:"dcq.Depth" doc:"destination candidate queue entries"`
	DCQThreshold   int `toml:"dcq_threshold" limit:"dcq.Threshold" doc:"refill when the DCQ holds fewer entries"`
	FrabWord       int `toml:"frab_word" limit:"frab.WordBits" doc:"FrAB SRAM word width in bits"`
	LFSRWidth      int `toml:"lfsr_width" limit:"lfsr.Width" doc:"victim-picker LFSR width"`
	MigrationQueue int `toml:"migration_queue" limit:"mu.Requests" doc:"remote-PTE requests the migration unit holds"`
	SetupCycles    int `toml:"setup_cycles" limit:"pme.SetupCycles" doc:"PME descriptor set-up cycles"`
	// Eviction selects the swap-victim source for the sensitivity study of
	// UVMMU paper Section V-C1 (Figure 5); blocks/evict.Names lists the
	// same names.
	Eviction string `toml:"eviction" oneof:"random,seqlocal,nru,tree" doc:"swap-victim choice: random (the DA's LFSR, the paper's linear-random), seqlocal (LRU over 64 KB frame-groups), nru (referenced bits and a clock hand), tree (LRU over 2 MB frame-regions with tree-based neighbourhood)"`
}

// Page sizes of run.page_size.
const (
	PageSize4K = "4KB"
	PageSize2M = "2MB"
)

// Incomplete is the 2 MB page system of the incomplete-pages paper (Shen
// et al., NPC 2018, seed 002): the migration unit and range records, the
// shared L2 TLB, the migration request builder and the host's handling.
type Incomplete struct {
	UnitBytes int `toml:"unit_bytes" min:"256" max:"2097152" pow2:"true" doc:"migration unit: the granule of the range records and of a range migration (Section 4.2: 1 KB)"`
	Ranges    int `toml:"ranges" min:"1" max:"8" doc:"K, the migrated ranges a TLB entry records (the page table keeps an exact bitmap)"`
	// MinLength is "unit" or "bdp": Section 3.3 sets the minimum length
	// "based on the bandwidth value".
	MinLength       string  `toml:"min_length" oneof:"unit,bdp" doc:"length of a new migration request: one unit, or the link's bandwidth-delay product (pcie.bandwidth_gbs x pcie.rtt_us) rounded up to units"`
	MergeGapBytes   int     `toml:"merge_gap_bytes" min:"0" max:"2097152" doc:"a miss merges into a pending (unsent) request of its page when the gap between them is at most this"`
	MaxRequestBytes int     `toml:"max_request_bytes" min:"256" max:"2097152" doc:"largest migration request a merge may build"`
	HandlingUs      float64 `toml:"handling_us" min:"0" max:"100000" doc:"host handling latency per migration request before the PME transfers it (the paper gives none)"`
	MRQEntries      int     `toml:"mrq_entries" min:"1" max:"256" doc:"migration requests the GMMU holds pending or in flight"`
	SuspendEntries  int     `toml:"suspend_entries" min:"1" max:"65536" doc:"translation requests suspended on a migration"`
	L2TLBEntries    int     `toml:"l2_tlb_entries" min:"1" max:"65536" doc:"shared L2 TLB entries of 2 MB pages"`
	L2TLBWays       int     `toml:"l2_tlb_ways" min:"1" max:"65536" doc:"shared L2 TLB associativity"`
	L2TLBLatency    int     `toml:"l2_tlb_latency" min:"1" max:"65536" doc:"shared L2 TLB lookup cycles"`
}

// incompleteDefaults: Section 4.2's 1 KB unit; four ranges per TLB entry
// (93 bits of record beside each entry, where a bitmap would be 2,048);
// a new request of one unit; merging within 4 KB up to a 64 KB request,
// the UVMMU page-group; 1 us of host handling, the PCIe round trip, as
// the paper names no figure (the incomplete experiment sweeps it); GRIT
// Table I's 512-entry 16-way L2 TLB with a 10-cycle lookup.
func incompleteDefaults() Incomplete {
	return Incomplete{
		UnitBytes: 1024, Ranges: 4, MinLength: "unit", MergeGapBytes: 4096, MaxRequestBytes: 64 << 10,
		HandlingUs: 1, MRQEntries: 64, SuspendEntries: 4096,
		L2TLBEntries: 512, L2TLBWays: 16, L2TLBLatency: 10,
	}
}

// Pages2M reports whether the run uses 2 MB pages.
func (c *Config) Pages2M() bool { return c.Run.PageSize == PageSize2M }

// pages2MPolicies run only on 2 MB pages; the others only on 4 KB pages.
var pages2MPolicies = []string{"incomplete", "complete", "copy-execute"}

// validatePages joins run.page_size to the policy and the memory keys.
func (c *Config) validatePages() error {
	need := false
	for _, p := range pages2MPolicies {
		need = need || c.Run.Policy == p
	}
	in := &c.Incomplete
	switch {
	case need && !c.Pages2M():
		return fmt.Errorf("config: run.policy = %q needs run.page_size = %q", c.Run.Policy, PageSize2M)
	case !c.Pages2M():
		return nil
	case !need:
		return fmt.Errorf("config: run.page_size = %q runs the policies incomplete, complete and copy-execute, not run.policy = %q", PageSize2M, c.Run.Policy)
	case c.Run.OversubPct != 100:
		return fmt.Errorf("config: run.oversub_pct = %d with run.page_size = %q; allowed: 100 (the 2 MB page system allocates whole frames and runs without oversubscription, Shen et al. Section 4.1)", c.Run.OversubPct, PageSize2M)
	case c.Run.GPUMemoryMB != 0:
		return fmt.Errorf("config: run.gpu_memory_mb = %g with run.page_size = %q; allowed: 0 (no oversubscription)", c.Run.GPUMemoryMB, PageSize2M)
	case in.MaxRequestBytes < in.UnitBytes:
		return fmt.Errorf("config: incomplete.max_request_bytes = %d is less than incomplete.unit_bytes = %d", in.MaxRequestBytes, in.UnitBytes)
	case in.MinUnits(c) > in.MaxRequestBytes/in.UnitBytes:
		return fmt.Errorf("config: incomplete.min_length = %q is %d units, more than incomplete.max_request_bytes = %d allows", in.MinLength, in.MinUnits(c), in.MaxRequestBytes)
	case in.L2TLBEntries%in.L2TLBWays != 0 || (in.L2TLBEntries/in.L2TLBWays)&(in.L2TLBEntries/in.L2TLBWays-1) != 0:
		return fmt.Errorf("config: incomplete.l2_tlb_entries = %d must be incomplete.l2_tlb_ways = %d times a power of two", in.L2TLBEntries, in.L2TLBWays)
	}
	return nil
}

// MinUnits is the length of a new migration request in units: one, or
// the link's bandwidth-delay product rounded up to whole units (16 GB/s x
// 1 us = 16,000 B: 16 units of 1 KB), at most the 2 MB page.
func (in *Incomplete) MinUnits(c *Config) int {
	if in.MinLength != "bdp" {
		return 1
	}
	bdp := c.PCIe.BandwidthGBs * 1e9 * c.PCIe.RTTUs * 1e-6
	return min(int(math.Ceil(bdp/float64(in.UnitBytes))), (2<<20)/in.UnitBytes)
}

// MultiGPU is the multi-GPU system of GRIT (SPEC 8, package sim/multigpu):
// with gpus above one, a run builds that many GPUs of the [gpu], [memory]
// and [cache] sections, linked by NVLink and to the host by PCIe ([pcie]),
// under the multi-GPU placement scheme named here instead of run.policy.
type MultiGPU struct {
	GPUs   int    `toml:"gpus" min:"1" max:"16" doc:"GPUs; above 1 the run is the multi-GPU system of GRIT under multigpu.policy (1: the single-GPU system under run.policy)"`
	Policy string `toml:"policy" oneof:"ot,ot-prefetch,first-touch,ideal,ac,dup,grit,grit-prefetch" doc:"multi-GPU page placement scheme (sim/multigpu): on-touch migration, on-touch with the tree prefetcher, first-touch pinning, GRIT's ideal, access-counter migration, duplication, GRIT (per-page scheme, [grit] section), GRIT with the tree prefetcher"`
	// GRIT Table I: "Configured to 70% of application's memory footprint".
	MemoryPct       int     `toml:"memory_pct" min:"1" max:"1000" doc:"each GPU's memory as a percentage of the workload's footprint, in 4 KB pages (GRIT Table I: 70)"`
	NVLinkGBs       float64 `toml:"nvlink_gbs" limit:"pcie.BandwidthMBps" doc:"bandwidth of each directed GPU-to-GPU NVLink in GB/s (10^9 bytes); the GPUs are fully connected"`
	NVLinkLatency   int     `toml:"nvlink_latency_cycles" min:"1" max:"65536" doc:"cycles a remote line access or a page copy spends on NVLink besides its wire time (each way: the link block's round trip is twice it)"`
	FaultLatencyUs  float64 `toml:"fault_latency_us" min:"0" max:"100000" doc:"host driver's handling time of one fault batch before it acts on the batch's first fault (GRIT gives none; unused under fault_flow = mgpusim)"`
	FaultBatch      int     `toml:"fault_batch" min:"1" max:"4096" doc:"most faults and promotions the host driver takes from the GPUs' fault buffers into one batch, paying fault_latency_us once (NVIDIA UVM's uvm_perf_fault_batch_count: 256; 1 serves one fault at a time, each paying the latency; unused under fault_flow = mgpusim)"`
	FaultFlow       string  `toml:"fault_flow" oneof:"uvm,mgpusim" doc:"host driver's fault flow: uvm (batches of fault_batch, fault_latency_us per batch) or mgpusim (MGPUSim's: one fault at a time, no software latency, each shootdown holding the SMs of the GPUs it reaches and flushing their whole L1 and L2 data caches)"`
	AccessThreshold int     `toml:"ac_threshold" min:"1" max:"65535" doc:"remote accesses of a GPU to a 64 KB group that migrate the group's pages at the owner under ac (GRIT Table I: 256)"`
	L2TLB           bool    `toml:"l2_tlb" doc:"each GPU's shared L2 TLB between its L1 TLBs and its GMMU (GRIT Table I: 512 entries, 16-way, 10 cycles; false: L1 misses walk at once)"`
}

// Grit is GRIT's per-page placement (package sim/grit) under
// multigpu.policy = grit: the Fault-Aware Initiator's threshold and the
// switches of GRIT Fig. 20's ablation.
type Grit struct {
	Threshold  int  `toml:"threshold" min:"1" max:"16" doc:"faults (local and protection) on a page that interrupt the driver to decide its scheme (GRIT V-B: 4; Fig. 21 studies 2, 4, 8, 16)"`
	PACache    bool `toml:"pa_cache" doc:"the 64-entry 4-way PA-Cache in front of the PA-Table (false: GRIT Fig. 20's PA-Table only, every fault reads and writes its record in host memory)"`
	Prediction bool `toml:"prediction" doc:"the Neighboring-Aware Prediction after each scheme change (GRIT V-D)"`
}

// multiGPUDefaults is GRIT Table I where it speaks, with the single-GPU
// system (one GPU) as the default run.
func multiGPUDefaults() MultiGPU {
	return MultiGPU{
		GPUs:      1,
		Policy:    "ot",
		MemoryPct: 70, // GRIT Table I
		// GRIT Table I: 300 GB/s NVLink-v2, read as each directed link of
		// a fully connected topology.
		NVLinkGBs: 300,
		// UVMSmart Table I's 200-cycle remote access; GRIT gives none.
		NVLinkLatency: 200,
		// GRIT gives no fault-handling time; 20 us per batch sits inside
		// the 20-50 us the UVM papers measure (docs/grit.md sweeps it).
		FaultLatencyUs: 20,
		// NVIDIA UVM's default batch (open-gpu-kernel-modules,
		// kernel-open/nvidia-uvm/uvm_gpu_replayable_faults.c,
		// UVM_PERF_FAULT_BATCH_COUNT_DEFAULT); sim/multigpu/doc.go.
		FaultBatch:      256,
		FaultFlow:       "uvm",
		AccessThreshold: 256,  // GRIT Table I
		L2TLB:           true, // GRIT Table I
	}
}

// Check holds run-time checking.
type Check struct {
	Invariants     bool   `toml:"invariants" doc:"check the SPEC 6.5 invariants every migration event"`
	WatchdogCycles uint64 `toml:"watchdog_cycles" min:"1000" max:"1000000000000" doc:"cycles without a retired instruction or migration before the run fails"`
	SkipIdle       bool   `toml:"skip_idle" doc:"jump the clock over cycles in which every block sleeps (results are identical)"`
}

// Default is the UVMMU paper's Table I system (GTX 1080 Ti), with the
// UVMSmart adaptive paper's Table I timings where that table is silent.
func Default() Config {
	return Config{
		Run: Run{
			Preset:     DefaultPreset,
			Workload:   "hotspot",
			Policy:     "uvmmu",
			OversubPct: 100,
			Scale:      1,
			Seed:       1,
			Threads:    1,
			PageSize:   PageSize4K,
		},
		GPU: GPU{
			ClockMHz:     1481, // UVMMU Table I: core 1481 MHz
			SMs:          28,   // UVMMU Table I
			WarpsPerSM:   64,   // UVMMU Table I
			Scheduler:    "gto",
			LineBytes:    128, // UVMMU Table I: 128 B lines of four 32 B sectors
			L1TLBEntries: 128, // UVMMU Table I: fully associative
			L1TLBLatency: 1,   // a fully associative CAM lookup in one cycle
			// One worst-case instruction (32 pages) per warp and one more:
			// the issue stage never stalls on lookups in flight, which a
			// TLB freeze can hold for a whole fault latency.
			TranslateQueue: 64*32 + 32,
			Walkers:        64,  // UVMMU Table I
			WalkQueue:      64,  // GRIT Table I (UVMMU Table I gives none)
			WalkCycles:     100, // UVMSmart Table I: page-table walk 100 cycles
			// The UVMSmart simulator's -gpgpu_kernel_launch_latency 222150
			// cycles = 150 us at 1481 MHz (its GTX 1080 Ti
			// gpgpusim.config:193).
			KernelLaunchUs: 150,
		},
		Memory: Memory{
			CapacityGB:    11,  // UVMMU Table I: 11 GB GDDR5X
			LatencyCycles: 100, // UVMSmart Table I: local access 100 cycles
			BandwidthGBs:  484, // UVMMU Table I
		},
		Cache: Cache{
			// gpgpusim.config:61, -gpgpu_cache:dl2 64:128:16 per memory
			// sub-partition, and :15-16, 11 channels x 2 sub-partitions:
			// 22 x 128 KB = 2.75 MB (the file's comment and UVMMU Table I
			// round it to 3 MB).
			L2:       true,
			L2Slices: 22,
			L2Sets:   64,
			L2Ways:   16,
			// gpgpusim.config:98, -rop_latency 120: the sub-partition's
			// queue ahead of the L2 (l2cache.cc:554).
			L2LatencyCycles: 120,
			// gpgpusim.config:56-58: -gpgpu_cache:dl1 64:128:6 (48 KB),
			// bypassed by global loads (-gmem_skip_L1D 1); a hit completes
			// in the LD/ST unit's cycle (shader.cc:1434-1440).
			L1:              false,
			L1Sets:          64,
			L1Ways:          6,
			L1LatencyCycles: 1,
		},
		PCIe: PCIe{
			BandwidthGBs: 16, // UVMMU Table I: PCIe 3.0 x16
			RTTUs:        1,  // UVMMU Table I: 1 us round trip
			PacketBytes:  4096,
		},
		UM:         umDefaults(),
		UVMSmart:   uvmsmartDefaults(),
		Adaptive:   adaptiveDefaults(),
		Incomplete: incompleteDefaults(),
		UVMMU: UVMMU{
			DCQDepth:       64,  // SPEC 2
			DCQThreshold:   32,  // SPEC 2
			FrabWord:       256, // SPEC 2
			LFSRWidth:      32,  // SPEC 5.3 default LFSR_WIDTH
			MigrationQueue: 256,
			// The paper's 10-cycle handling = DA pop + PME set-up (UVMMU
			// Section V-A); the DA answers in about two cycles, the PME
			// descriptor set-up takes the rest.
			SetupCycles: 8,
			Eviction:    "random", // UVMMU Section IV-D: the LFSR victim picker
		},
		MultiGPU: multiGPUDefaults(),
		Grit:     Grit{Threshold: 4, PACache: true, Prediction: true}, // GRIT Sections V-B..V-D
		Check: Check{
			// 150 far faults' worth of 45 us: a run that neither retires an
			// instruction nor moves a page that long is stuck.
			WatchdogCycles: 10_000_000,
			SkipIdle:       true,
		},
	}
}

// Cycles converts microseconds to core cycles, rounded to nearest
// (1 us = 1481 cycles and 45 us = 66,645 cycles at 1481 MHz).
func (c *Config) Cycles(us float64) uint64 {
	return uint64(math.Round(us * float64(c.GPU.ClockMHz)))
}

// FixedPointBits is the fraction width of the byte-time fixed point the
// links and DRAM use, so that consecutive packets accumulate sub-cycle time
// exactly instead of rounding each packet.
const FixedPointBits = 16

// TransferTime is the wire time of one byte in units of 2^-FixedPointBits
// cycles for a bandwidth in GB/s (10^9 B/s): 16 GB/s at 1481 MHz is 10.80
// B/cycle, so a 4 KB page takes 379 cycles and a 64 KB page-group 6,066.
func (c *Config) TransferTime(gbs float64) uint64 {
	return uint64(math.Round(float64(c.GPU.ClockMHz) * 1e6 / (gbs * 1e9) * (1 << FixedPointBits)))
}

// BytesPerCycle is a bandwidth in bytes per core cycle, for reports.
func (c *Config) BytesPerCycle(gbs float64) float64 {
	return gbs * 1e9 / (float64(c.GPU.ClockMHz) * 1e6)
}

// WireCycles is the whole number of cycles n bytes occupy a link of the
// given bandwidth, rounded to nearest.
func (c *Config) WireCycles(bytes uint64, gbs float64) uint64 {
	fp := bytes * c.TransferTime(gbs)
	return (fp + 1<<(FixedPointBits-1)) >> FixedPointBits
}

// OneWayCycles is half the PCIe round trip: the delay each direction adds.
func (c *Config) OneWayCycles() uint64 { return c.Cycles(c.PCIe.RTTUs / 2) }

// FaultCycles is the UM driver's far-fault handling latency in cycles.
func (c *Config) FaultCycles() uint64 { return c.Cycles(c.UM.FaultLatencyUs) }

// Validate checks every key against its allowed values and then the
// rules that join keys, and names the key of the first violation. It is
// the whole check `uvmsim config --check` and `uvmsim run` make of a
// configuration before any block is built.
func (c *Config) Validate() error {
	if err := validateKeys(c); err != nil {
		return err
	}
	if c.Cache.L1 && !c.Cache.L2 {
		return fmt.Errorf("config: cache.l1 = true needs cache.l2 = true")
	}
	if err := c.validatePages(); err != nil {
		return err
	}
	if c.UVMMU.DCQThreshold > c.UVMMU.DCQDepth {
		return fmt.Errorf("config: uvmmu.dcq_threshold = %d must not exceed uvmmu.dcq_depth = %d", c.UVMMU.DCQThreshold, c.UVMMU.DCQDepth)
	}
	// The data path spends TransferTime per byte, in 2^-16 cycles; a zero
	// would move any number of bytes in no time (gpu.MemoryConfig.ByteTime).
	if c.TransferTime(c.Memory.BandwidthGBs) == 0 {
		return fmt.Errorf("config: memory.bandwidth_gbs = %g at gpu.clock_mhz = %d is %.0f bytes per cycle; allowed: at most %d bytes per cycle (the data path counts byte time in 2^-%d cycles)",
			c.Memory.BandwidthGBs, c.GPU.ClockMHz, c.BytesPerCycle(c.Memory.BandwidthGBs), 1<<(FixedPointBits+1), FixedPointBits)
	}
	return nil
}

// driver is the section of the UM driver run.policy uses, if any.
func (c *Config) driver() (string, *UM) {
	switch c.Run.Policy {
	case "um":
		return "um", &c.UM
	case "uvmsmart":
		return "uvmsmart", &c.UVMSmart
	}
	return "", nil
}
