package system_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// micro is a one-warp workload over one managed 64 KB allocation.
type micro struct {
	allocs []workload.Alloc
	ops    []workload.Op
}

func newMicro(ops ...workload.Op) *micro {
	m := &micro{allocs: []workload.Alloc{{Name: "data", Bytes: 64 << 10, Kind: workload.Managed}}, ops: ops}
	workload.Layout(m.allocs)
	return m
}

func (m *micro) Name() string             { return "micro" }
func (m *micro) Class() string            { return workload.Regular }
func (m *micro) Allocs() []workload.Alloc { return m.allocs }
func (m *micro) Footprint() uint64        { return m.allocs[0].Bytes }
func (m *micro) Phases() []workload.Phase {
	return []workload.Phase{{Kernel: &workload.Kernel{Name: "k", Blocks: 1, ThreadsPerBlock: 32,
		NewWarp: func(b, w int) workload.WarpStream { return workload.Replay(m.ops) }}}}
}

// testConfig is the default system without the kernel launch latency and
// the data caches: the directed tests count the cycles of one kernel's
// accesses to DRAM, and TestKernelLaunchLatency and TestL2MissThenHit add
// the launch and the L2 on their own.
func testConfig(policyName string) config.Config {
	cfg := config.Default()
	cfg.Run.Policy = policyName
	cfg.Check.Invariants = true
	cfg.GPU.KernelLaunchUs = 0
	cfg.Cache.L2 = false
	return cfg
}

func runMicro(t *testing.T, cfg config.Config, wl workload.Workload) system.Result {
	t.Helper()
	p, err := policy.New(cfg.Run.Policy, &cfg)
	require.NoError(t, err)
	s, err := system.NewWith(&cfg, wl, p)
	require.NoError(t, err)
	r, err := s.Run(p, system.Options{})
	require.NoError(t, err)
	return r
}

// One warp on one SM: compute for 1000 cycles (the DA finishes its
// initialisation sweep and fills its DCQ meanwhile), then one one-lane load
// of a page that starts in host memory.
func oneLoad() *micro {
	m := newMicro()
	load := workload.Op{Kind: workload.OpLoad, Size: 4, Lanes: 1}
	load.Addr[0] = m.allocs[0].Base
	m.ops = []workload.Op{{Kind: workload.OpCompute, Cycles: 1000}, load}
	return m
}

// TestFirstAccessUVMMU: the hand-computed cycle count of one migration of a
// free destination. The 1,875 cycles from PME command to critical page are
// the UVMMU paper's ~1.3 us (Section V-A; docs/platform.md): 8 set-up
// cycles, a 16 B read request up (2 wire cycles + 740), the 4 KB page down
// (380 wire cycles at 10.80 B/cycle + 741), plus the link's grant cycles.
//
//	cycle 1      compute issues; ready at 1001
//	1001         load issues; its page enters the translation queue
//	1002..1003   L1 TLB lookup, miss
//	1004         walk request leaves the SM (arbiter holding register)
//	1005         arbiter output register
//	1006         GMMU accepts; the result is on Resp 101 cycles later
//	1107         router takes the remote PTE
//	1108         migration unit takes it, opens a migration
//	1109         set-up engine takes it from its queue
//	1110         DA hands out a free frame-group (S=0)
//	1111         PME accepts Fetch{Pages 16, First 0}
//	2986         critical page event (1111 + 1875)
//	2987         its PTE is written through the GMMU update port
//	2988         the reply is chosen (the PTE write has committed)
//	2989         router takes the local PTE
//	2990         L1 TLB fill and replay to the SM
//	2991..2992   lookup hits
//	2993         data request: 128 B, due 2994 + 100 DRAM cycles
//	3094         data back; 3095 the warp finds no instruction and retires
//	3096         the SM is empty; 3097 the dispatcher reports done
func TestFirstAccessUVMMU(t *testing.T) {
	cfg := testConfig("uvmmu")
	cfg.GPU.SMs = 1
	r := runMicro(t, cfg, oneLoad())
	assert.Equal(t, uint64(3097), r.Cycles)
	// The run ends at the warp's retirement: the critical page has landed,
	// the rest of the page-group is still streaming in behind it.
	assert.Equal(t, uint64(1), r.Migrations)
	assert.Equal(t, uint64(0), r.Evictions)
	assert.Greater(t, r.PCIeH2DBytes, uint64(4096))
	assert.InDelta(t, 1.3, float64(2986-1107)/1481, 0.05, "walk result to critical page: the paper's ~1.3 us")
}

// runUVMMU runs wl on one SM under uvmmu at the given oversubscription and
// returns the result and the policy's migration latency samples.
func runUVMMU(t *testing.T, wl workload.Workload, oversubPct int) (r system.Result, free, swap []uint64) {
	t.Helper()
	cfg := testConfig("uvmmu")
	cfg.GPU.SMs = 1
	cfg.Run.OversubPct = oversubPct
	p, err := policy.New(cfg.Run.Policy, &cfg)
	require.NoError(t, err)
	s, err := system.NewWith(&cfg, wl, p)
	require.NoError(t, err)
	r, err = s.Run(p, system.Options{})
	require.NoError(t, err)
	require.NoError(t, p.Check())
	free, swap = p.(*policy.UVMMU).MigrationLatencies()
	return r, free, swap
}

// TestFirstMigrationLatencyUVMMU: the latency sample of the migration in
// TestFirstAccessUVMMU, from the cycle the migration unit opens it to the
// cycle the router takes the critical page's local PTE:
//
//	1108         migration unit takes the remote walk: opened
//	1109         set-up engine takes it from its queue
//	1110         DA hands out a free frame-group (S=0)
//	1111         PME accepts Fetch{Pages 16, First 0}
//	2986         critical page event (1111 + 1875)
//	2987         its PTE is written; 2988 the reply is chosen
//	2989         router takes the local PTE
//
// 2989 - 1108 = 3 + 1875 + 3 = 1,881 cycles, 1.27 us at 1481 MHz (UVMMU
// paper Section V-A2: ~1.3 us).
func TestFirstMigrationLatencyUVMMU(t *testing.T) {
	r, free, swap := runUVMMU(t, oneLoad(), 100)
	assert.Equal(t, uint64(3097), r.Cycles)
	assert.Equal(t, []uint64{1881}, free)
	assert.Empty(t, swap)
	assert.InDelta(t, 1.270, float64(free[0])/1481, 0.0005)
}

// spacedLoads is one warp loading page 0 of each of n page-groups of one
// managed allocation, 10,000 compute cycles apart: each page-group is in
// (16 pages x 379 cycles) before the next access, so no migration waits
// for the link.
func spacedLoads(n int) *micro {
	m := &micro{allocs: []workload.Alloc{{Name: "data", Bytes: uint64(n) << system.GroupShift, Kind: workload.Managed}}}
	workload.Layout(m.allocs)
	m.ops = []workload.Op{{Kind: workload.OpCompute, Cycles: 1000}}
	for g := range n {
		load := workload.Op{Kind: workload.OpLoad, Size: 4, Lanes: 1}
		load.Addr[0] = m.allocs[0].Base + uint64(g)<<system.GroupShift
		m.ops = append(m.ops, load, workload.Op{Kind: workload.OpCompute, Cycles: 10000})
	}
	return m
}

// TestSwapMigrationLatencyUVMMU: 33 page-groups (528 pages) at 103% leave
// 512 pages, one 2 MB region of 32 frame-groups. The first 32 migrations take free
// destinations at 1,881 cycles each, as in TestFirstMigrationLatencyUVMMU.
// The 33rd gets an S=1 destination (the LFSR's victim) and its set-up
// takes 134 cycles more before the PME command, measured from its opening
// cycle t:
//
//	t+2          DA hands out an S=1 frame-group
//	t+3          the IPgT read enters the mux's holding register
//	t+105        the entry is shown: mux to DRAM (1) + 100 DRAM cycles +
//	             the mux's response register (1)
//	t+106..t+136 the victim's 16 pages: remote PTE and shootdown together,
//	             every other cycle (the L1 TLB takes a shootdown only when
//	             its one-entry ack register is empty)
//	t+137        PME accepts Swap{Pages 16, First 0}
//
// The critical page still arrives 1,875 cycles after the command (the
// victim's pages go the other way), and the PTE write, reply choice and
// router handshake add 3: 137 + 1875 + 3 = 2,015 cycles.
func TestSwapMigrationLatencyUVMMU(t *testing.T) {
	r, free, swap := runUVMMU(t, spacedLoads(33), 103)
	want := make([]uint64, 32)
	for i := range want {
		want[i] = 1881
	}
	assert.Equal(t, want, free)
	assert.Equal(t, []uint64{2015}, swap)
	assert.Equal(t, uint64(33*system.PagesPerGroup), r.Migrations)
	assert.Equal(t, uint64(system.PagesPerGroup), r.Evictions)
}

// TestFirstAccessUM: the same access under the fault-based baseline.
//
//	1107         router takes the remote PTE (as above)
//	1108         the driver's fault buffer takes the far fault; the SM's L1
//	             TLB is frozen from 1109
//	1109         the driver starts the fault: 45 us = 66,645 cycles
//	67754        latency over: the tree prefetcher plans the 64 KB basic
//	             block (the allocation's whole 2 MB tree is that block)
//	67755        PME accepts Fetch{Pages 16, First 0}
//	69630        critical page event (67755 + 1875)
//	69631        its PTE is written; 69632 the reply is chosen
//	69633        router takes it; the TLB thaws; 69634 fill and replay
//	69635..69636 lookup hits; 69637 data request, due 69638 + 100
//	69738        data back; 69739 retire; 69740 SM empty; 69741 done
func TestFirstAccessUM(t *testing.T) {
	cfg := testConfig("um")
	cfg.GPU.SMs = 1
	r := runMicro(t, cfg, oneLoad())
	assert.Equal(t, uint64(69741), r.Cycles)
	assert.Equal(t, uint64(1), r.FarFaults)
	assert.Equal(t, uint64(1), r.Migrations, "the critical page; the block's other pages stream in behind it")
}

// TestSwapUnderOversubscription runs hotspot at 150% with every invariant
// checked (SPEC 6.5) in checked mode: swaps happen and every page-group
// stays in exactly one place.
func TestSwapUnderOversubscription(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds")
	}
	for _, name := range []string{"uvmmu", "um"} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(name)
			cfg.Run.Workload = "hotspot"
			cfg.Run.Scale = 0.5
			cfg.Run.OversubPct = 150
			cfg.GPU.SMs = 8
			p, err := policy.New(name, &cfg)
			require.NoError(t, err)
			s, err := system.New(&cfg, p)
			require.NoError(t, err)
			r, err := s.Run(p, system.Options{})
			require.NoError(t, err)
			assert.Positive(t, r.Evictions, "150%% must evict")
			assert.Positive(t, r.PCIeD2HBytes)
			require.NoError(t, p.Check())
		})
	}
}

func resultJSON(t *testing.T, r system.Result) map[string]any {
	t.Helper()
	data, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	for _, f := range system.WallFields {
		delete(m, f)
	}
	return m
}

func runNamed(t *testing.T, cfg config.Config) system.Result {
	t.Helper()
	p, err := policy.New(cfg.Run.Policy, &cfg)
	require.NoError(t, err)
	s, err := system.New(&cfg, p)
	require.NoError(t, err)
	r, err := s.Run(p, system.Options{})
	require.NoError(t, err)
	return r
}

// TestDeterminism: the same configuration and seed give the same JSON,
// wall-time fields aside.
func TestDeterminism(t *testing.T) {
	for _, name := range []string{"uvmmu", "um"} {
		cfg := config.Default()
		cfg.Run.Policy = name
		cfg.Run.Workload = "ra"
		cfg.Run.Scale = 0.05
		cfg.Run.OversubPct = 125
		a := resultJSON(t, runNamed(t, cfg))
		b := resultJSON(t, runNamed(t, cfg))
		assert.Empty(t, cmp.Diff(a, b), name)
	}
}

// TestIdleSkippingIsExact: idle skipping changes nothing but speed.
func TestIdleSkippingIsExact(t *testing.T) {
	for _, name := range []string{"uvmmu", "um", "ideal"} {
		cfg := config.Default()
		cfg.Run.Policy = name
		cfg.Run.Workload = "hotspot"
		cfg.Run.Scale = 0.05
		cfg.GPU.SMs = 4
		// A short launch wait: every cycle of it is evaluated without
		// skipping.
		cfg.GPU.KernelLaunchUs = 5
		cfg.Check.SkipIdle = true
		on := resultJSON(t, runNamed(t, cfg))
		cfg.Check.SkipIdle = false
		off := resultJSON(t, runNamed(t, cfg))
		delete(on, "evaluated_cycles")
		delete(off, "evaluated_cycles")
		assert.Empty(t, cmp.Diff(on, off), name)
	}
}

// TestParallelEvalIsExact: evaluating each cycle's blocks on several
// goroutines (run.threads), every cycle of enough awake blocks spread,
// changes nothing but speed, under every policy.
func TestParallelEvalIsExact(t *testing.T) {
	for _, name := range []string{"uvmmu", "um", "uvmsmart", "ideal"} {
		for _, wl := range []string{"bfs", "hotspot"} {
			t.Run(name+"/"+wl, func(t *testing.T) {
				cfg := config.Default()
				cfg.Run.Policy = name
				cfg.Run.Workload = wl
				cfg.Run.Scale = 0.03
				cfg.Run.OversubPct = 125
				serial := resultJSON(t, runNamed(t, cfg))
				for _, threads := range []int{2, 3} {
					cfg.Run.Threads = threads
					p, err := policy.New(cfg.Run.Policy, &cfg)
					require.NoError(t, err)
					s, err := system.New(&cfg, p)
					require.NoError(t, err)
					s.Sim.SpreadAlways()
					r, err := s.Run(p, system.Options{})
					require.NoError(t, err)
					assert.Empty(t, cmp.Diff(serial, resultJSON(t, r)), "%s %s at %d threads", name, wl, threads)
				}
			})
		}
	}
}

// deaf is a policy that maps every page remote and never answers a remote
// walk: the run stalls with nothing scheduled.
type deaf struct{}

func (deaf) Name() string { return "deaf" }
func (deaf) Attach(s *system.System) error {
	for _, r := range s.Layout.Managed {
		for g := 0; g < r.Count; g++ {
			if err := s.LoadGroup(r.First+uint64(g), uint64(g), true); err != nil {
				return err
			}
		}
	}
	return nil
}
func (deaf) Stats() system.PolicyStats { return system.PolicyStats{} }
func (deaf) Check() error              { return nil }
func (deaf) Busy() []string            { return []string{"deaf: never answers a remote walk"} }

// TestWatchdogNamesStuckUnits: a run in which nothing moves and nothing is
// scheduled stops after the window (20,000 cycles, checked every 5,001)
// with one line per stuck unit, each named once.
func TestWatchdogNamesStuckUnits(t *testing.T) {
	cfg := testConfig("um")
	cfg.GPU.SMs = 1
	cfg.Check.WatchdogCycles = 20000
	s, err := system.NewWith(&cfg, oneLoad(), deaf{})
	require.NoError(t, err)
	_, err = s.Run(deaf{}, system.Options{})
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 3, err.Error())
	assert.Contains(t, lines[0], "nothing retired, moved or was scheduled for")
	assert.Contains(t, lines[0], "(check.watchdog_cycles = 20000)")
	assert.True(t, strings.HasPrefix(lines[1], "  sm0: 1 warps resident"), lines[1])
	assert.Equal(t, "  deaf: never answers a remote walk", lines[2])
}

// A unit waiting on a scheduled event is progressing: a fault latency
// (um.fault_latency_us = 100,000: 148,100,000 cycles), a compute record of
// 2^32-1 cycles, an ordinary 45 us fault under a 1,000-cycle window, and a
// 64 KB page-group transfer (6,066 cycles on the wire) under uvmmu with the
// same window, each far longer than the watchdog's window.
func TestWatchdogWaitsForScheduledEvents(t *testing.T) {
	long := newMicro(workload.Op{Kind: workload.OpCompute, Cycles: 1<<32 - 1})
	cases := []struct {
		name   string
		policy string
		set    func(*config.Config)
		wl     workload.Workload
	}{
		{"fault latency", "um", func(c *config.Config) { c.UM.FaultLatencyUs = 100000 }, oneLoad()},
		{"compute record", "um", func(*config.Config) {}, long},
		{"45 us fault, 1000-cycle window", "um", func(c *config.Config) { c.Check.WatchdogCycles = 1000 }, oneLoad()},
		{"page-group transfer, 1000-cycle window", "uvmmu", func(c *config.Config) { c.Check.WatchdogCycles = 1000 }, oneLoad()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.policy)
			cfg.GPU.SMs = 1
			tc.set(&cfg)
			r := runMicro(t, cfg, tc.wl)
			assert.NotZero(t, r.Cycles)
		})
	}
}

// TestLayoutOversubscription: GPU memory is the footprint over R in 4 KB
// pages. hotspot's three 4 MB grids are 3,072 pages: 125% leaves 2,457
// pages (153 whole frame-groups for the UVMMU), 150% 2,048, 200% 1,536.
func TestLayoutOversubscription(t *testing.T) {
	cfg := config.Default()
	wl, err := workload.New("hotspot", workload.Params{Seed: 1})
	require.NoError(t, err)
	for _, tc := range []struct{ pct, pages, nfg int }{{100, 3072, 192}, {125, 2457, 153}, {150, 2048, 128}, {200, 1536, 96}} {
		cfg.Run.OversubPct = tc.pct
		l, err := system.NewLayout(wl, &cfg)
		require.NoError(t, err)
		assert.Equal(t, []int{tc.pages, tc.pages, tc.nfg}, []int{l.GPUPages, l.ManagedPages, l.NFG}, "%d%%", tc.pct)
	}
	cfg.Memory.CapacityGB = 0.004
	cfg.Run.OversubPct = 100
	_, err = system.NewLayout(wl, &cfg)
	assert.ErrorContains(t, err, "memory.capacity_gb")
}

// TestOversubscriptionsAreDifferentMemories: at the shipped sizes, 100%,
// 125% and 150% give every workload three different GPU memories.
func TestOversubscriptionsAreDifferentMemories(t *testing.T) {
	cfg := config.Default()
	for _, name := range workload.Names() {
		wl, err := workload.New(name, workload.Params{Scale: 1, Seed: 1})
		require.NoError(t, err)
		var pages []int
		for _, pct := range []int{100, 125, 150} {
			cfg.Run.OversubPct = pct
			l, err := system.NewLayout(wl, &cfg)
			require.NoError(t, err)
			pages = append(pages, l.GPUPages)
		}
		assert.Greater(t, pages[0], pages[1], name)
		assert.Greater(t, pages[1], pages[2], name)
	}
}

// TestGPUMemoryMB: run.gpu_memory_mb sets the whole GPU memory, device
// allocations included, over the ratio; srad's five cudaMalloc'd 4 MB
// arrays take 5,120 of 5,632 pages at 22 MB, leaving 512 for managed data
// (half of J); at 20 MB none is left, an error naming the key.
func TestGPUMemoryMB(t *testing.T) {
	cfg := config.Default()
	wl, err := workload.New("srad", workload.Params{Scale: 1, Seed: 1})
	require.NoError(t, err)
	cfg.Run.OversubPct = 200
	cfg.Run.GPUMemoryMB = 22
	l, err := system.NewLayout(wl, &cfg)
	require.NoError(t, err)
	assert.Equal(t, []int{5632, 512, 352}, []int{l.GPUPages, l.ManagedPages, l.NFG})
	cfg.Run.GPUMemoryMB = 20
	_, err = system.NewLayout(wl, &cfg)
	assert.ErrorContains(t, err, "run.gpu_memory_mb")
}

// TestPartialFrameRegion: the UVMMU's allocator manages exactly the
// frame-groups of GPU memory, the last 2 MB region only partly present
// (37 frame-groups: one whole region and 5 of the next), and keeps its
// invariants while it swaps in that memory.
func TestPartialFrameRegion(t *testing.T) {
	cfg := testConfig("uvmmu")
	cfg.Run.Workload = "hotspot"
	cfg.Run.Scale = 0.2
	cfg.GPU.SMs = 4
	cfg.Run.GPUMemoryMB = 37.0 / 16
	p, err := policy.New("uvmmu", &cfg)
	require.NoError(t, err)
	s, err := system.New(&cfg, p)
	require.NoError(t, err)
	assert.Equal(t, 37, s.Layout.NFG)
	r, err := s.Run(p, system.Options{})
	require.NoError(t, err)
	assert.Positive(t, r.Evictions)
	assert.Equal(t, 37.0/16, r.GPUMemoryMB)
}

// TestHostPhasesAndCudaMalloc runs srad, whose cudaMalloc'd arrays the
// driver places before the first kernel and whose host reads come between
// kernels, under every policy with the invariants checked.
func TestHostPhasesAndCudaMalloc(t *testing.T) {
	for _, name := range []string{"ideal", "um", "uvmmu"} {
		cfg := testConfig(name)
		cfg.Run.Workload = "srad"
		cfg.Run.Scale = 0.05
		cfg.GPU.SMs = 4
		r := runNamed(t, cfg)
		assert.Positive(t, r.WarpInstructions, name)
		if name != "ideal" {
			assert.Positive(t, r.PCIeD2HBytes, "%s: the host reads data back", name)
		}
	}
}

// twoKernels is a workload of two one-warp kernels that compute for 1000
// cycles each and touch no memory.
type twoKernels struct{ micro }

func (k *twoKernels) Phases() []workload.Phase {
	kernel := func(name string) workload.Phase {
		return workload.Phase{Kernel: &workload.Kernel{Name: name, Blocks: 1, ThreadsPerBlock: 32,
			NewWarp: func(b, w int) workload.WarpStream {
				return workload.Replay([]workload.Op{{Kind: workload.OpCompute, Cycles: 1000}})
			}}}
	}
	return []workload.Phase{kernel("k1"), kernel("k2")}
}

// TestKernelLaunchLatency: every kernel, the first included, starts
// gpu.kernel_launch_us after the previous phase ends, under every policy.
// With a launch latency L (150 us = 222,150 cycles at 1481 MHz):
//
//	cycle L          the first kernel's block is offered and taken
//	L+1              the compute instruction issues; ready at L+1001
//	L+1001           the warp finds no instruction and retires
//	L+1002           the SM shows empty; the dispatcher ends kernel 1
//	L+1003           kernel 2 begins; its block is offered at 2L+1003
//	2L+1004          its compute issues; the warp retires at 2L+2004
//	2L+2005          the dispatcher ends kernel 2; done shows at 2L+2006
//	                 = 446,306 cycles
//
// and without it (L = 0) the same run takes 2,006 cycles. The wait far
// exceeds the watchdog, which must not count it as a stall, and idle
// skipping evaluates only a handful of its cycles.
func TestKernelLaunchLatency(t *testing.T) {
	for _, name := range []string{"ideal", "um", "uvmsmart", "uvmmu"} {
		cfg := testConfig(name)
		cfg.GPU.SMs = 1
		cfg.Check.WatchdogCycles = 100_000 // under the 222,150-cycle wait
		// One 2 MB region of GPU memory: the UVMMU allocator's start-up
		// (its FrAB sweep and DCQ fill) is over within the first kernel.
		cfg.Run.GPUMemoryMB = 2
		wl := &twoKernels{*newMicro()}
		r0 := runMicro(t, cfg, wl)
		assert.Equal(t, uint64(2006), r0.Cycles, "%s without launch latency", name)
		cfg.GPU.KernelLaunchUs = 150
		r := runMicro(t, cfg, wl)
		assert.Equal(t, uint64(2*222150+2006), r.Cycles, "%s with 150 us launch latency", name)
		assert.Less(t, r.EvaluatedCycles, uint64(10000), "%s: idle skipping jumps over the launch wait", name)
	}
}

// TestL2MissThenHit: n one-lane loads of one line by one warp under ideal
// (the page is local), without and with the L2. Without it each load's
// 128 B is due 1 + 100 cycles after its data request (the DRAM bandwidth
// rounds 128 B up to one cycle): 215 cycles for one load and 105 more per
// load. With it, the load's line leaves the SM one cycle after its
// translation (t), enters its slice's FIFO at t+1, reads its set at t+2,
// and resolves at t+3:
//
//	miss   one 32 B sector on the slice's 484/22 GB/s channels: 2.15
//	       cycles, rounded up, t+6; + 100 DRAM + 119 more of the 120-cycle
//	       L2 path: due t+225, 123 cycles later than t+102 without the L2
//	hit    due at the set read + 120 = t+122, 20 cycles later than t+102
//
// so 215 + 123 = 338 for one load and 125 more per hit; one 32 B sector
// comes from DRAM in all.
func TestL2MissThenHit(t *testing.T) {
	for n := 1; n <= 3; n++ {
		m := newMicro()
		load := workload.Op{Kind: workload.OpLoad, Size: 4, Lanes: 1}
		load.Addr[0] = m.allocs[0].Base
		for i := 0; i < n; i++ {
			m.ops = append(m.ops, load)
		}
		cfg := testConfig("ideal")
		cfg.GPU.SMs = 1
		off := runMicro(t, cfg, m)
		assert.Equal(t, uint64(215+105*(n-1)), off.Cycles, "%d loads without the L2", n)
		cfg.Cache.L2 = true
		on := runMicro(t, cfg, m)
		assert.Equal(t, uint64(338+125*(n-1)), on.Cycles, "%d loads with the L2", n)
		assert.Equal(t, []uint64{uint64(n - 1), 1, 32}, []uint64{on.L2Hits, on.L2Misses, on.DRAMBytes}, "%d loads: hits, misses, DRAM bytes", n)
	}
}

// TestCachesLeaveEvictedPages: under oversubscription every policy's
// evicted pages leave the L2: every page whose PTE turns remote has its
// lines invalidated (each line at most once per departure, so at most 32
// per page), and the invalidations happen.
func TestCachesLeaveEvictedPages(t *testing.T) {
	for _, name := range []string{"um", "uvmsmart", "uvmmu"} {
		cfg := testConfig(name)
		cfg.Check.Invariants = name == "uvmmu"
		cfg.Cache.L2 = true
		cfg.Run.Workload = "backprop"
		cfg.Run.Scale = 0.1
		cfg.Run.OversubPct = 150
		cfg.GPU.SMs = 4
		p, err := policy.New(name, &cfg)
		require.NoError(t, err)
		s, err := system.New(&cfg, p)
		require.NoError(t, err)
		r, err := s.Run(p, system.Options{})
		require.NoError(t, err)
		st := s.Caches.Stats()
		assert.Positive(t, r.Evictions, name)
		assert.GreaterOrEqual(t, st.UnmappedPages, r.Evictions, "%s: every evicted page is seen leaving", name)
		assert.Positive(t, r.CacheInvalidations, "%s: evicted pages' lines leave the L2", name)
		assert.LessOrEqual(t, r.CacheInvalidations, 32*st.UnmappedPages, name)
		assert.Zero(t, st.UnmappedPagesPending, name)
		assert.Positive(t, r.L2Hits, name)
	}
}

// TestPacketSizesMoveWholePages: whatever pcie.packet_bytes, a page
// crosses the link as its 4 KB of data: the bytes host to device are the
// migrated pages' 4 KB each plus one 16 B flush acknowledgement per
// eviction command (none here), under both migration paths. Smaller
// packets cost the link only its per-packet grant cycles, so the run takes
// no less time than with whole-page packets.
func TestPacketSizesMoveWholePages(t *testing.T) {
	for _, name := range []string{"uvmmu", "um"} {
		var whole system.Result
		for _, packet := range []int{4096, 64, 256, 2048, 8192} {
			cfg := testConfig(name)
			cfg.GPU.SMs = 1
			cfg.PCIe.PacketBytes = packet
			r := runMicro(t, cfg, spacedLoads(4))
			if packet == 4096 {
				whole = r
			}
			assert.Positive(t, r.Migrations, "%s %d B", name, packet)
			assert.Equal(t, r.Migrations*4096, r.PCIeH2DBytes, "%s %d B packets: pages x 4 KB", name, packet)
			assert.Equal(t, whole.Migrations, r.Migrations, "%s %d B", name, packet)
			assert.GreaterOrEqual(t, r.Cycles, whole.Cycles, "%s %d B", name, packet)
		}
	}
}

// TestL1Hits: the same loads with the L1 on (cache.l1). The first line
// reads the L1's set at t+2 and misses at t+3; the miss enters the L2's
// queue and reads the slice's set at t+4, two cycles after it would have
// without the L1, so the first load takes 338 + 2 = 340 cycles. A later
// load of the line hits the L1: due at its set read + 1 = t+3 and answered
// at t+4 (the answer waits for its registered done bit), 118 cycles before
// the L2 hit's t+122: 125 - 118 = 7 cycles per load.
func TestL1Hits(t *testing.T) {
	for n := 1; n <= 3; n++ {
		m := newMicro()
		load := workload.Op{Kind: workload.OpLoad, Size: 4, Lanes: 1}
		load.Addr[0] = m.allocs[0].Base
		for i := 0; i < n; i++ {
			m.ops = append(m.ops, load)
		}
		cfg := testConfig("ideal")
		cfg.GPU.SMs = 1
		cfg.Cache.L2, cfg.Cache.L1 = true, true
		r := runMicro(t, cfg, m)
		assert.Equal(t, uint64(340+7*(n-1)), r.Cycles, "%d loads", n)
		assert.Equal(t, []uint64{uint64(n - 1), 1, 0, 1}, []uint64{r.L1Hits, r.L1Misses, r.L2Hits, r.L2Misses}, "%d loads: L1 hits, misses, L2 hits, misses", n)
	}
}

// Busy names every unit at most once in any cycle, each line "path: what
// it holds" (the watchdog prints one line per stuck unit), and names the
// migration unit while it migrates.
func TestBusyNamesEachUnitOnce(t *testing.T) {
	for _, name := range []string{"um", "uvmsmart", "uvmmu"} {
		cfg := testConfig(name)
		cfg.GPU.SMs = 1
		cfg.Run.OversubPct = 150
		p, err := policy.New(name, &cfg)
		require.NoError(t, err)
		s, err := system.NewWith(&cfg, spacedLoads(40), p)
		require.NoError(t, err)
		s.Sim.Reset()
		busyCycles := 0
		for !s.Dispatcher.Done.Get() {
			require.NoError(t, s.Sim.Step())
			seen := map[string]bool{}
			for _, line := range p.Busy() {
				unit, _, ok := strings.Cut(line, ": ")
				require.True(t, ok, "%s: %q is not \"path: what it holds\"", name, line)
				require.False(t, seen[unit], "%s: %s named twice in %v", name, unit, p.Busy())
				seen[unit] = true
				busyCycles++
			}
		}
		assert.NotZero(t, busyCycles, name)
	}
}
