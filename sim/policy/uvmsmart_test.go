package policy_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/uvm"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// regions is a workload of n managed 2 MB allocations ("a", "b", ...),
// each exactly one 2 MB region of 32 blocks of 64 KB, and one kernel whose
// thread block i is one warp running scripts[i].
type regions struct {
	allocs  []workload.Alloc
	scripts [][]workload.Op
	drain   workload.Op // ends every script, unless it is zero
}

func newRegions(n int) *regions {
	r := &regions{drain: drain}
	for i := 0; i < n; i++ {
		r.allocs = append(r.allocs, workload.Alloc{Name: string(rune('a' + i)), Bytes: workload.RegionBytes, Kind: workload.Managed})
	}
	workload.Layout(r.allocs)
	return r
}

// load is a one-lane 4-byte load of page p of block b of allocation a.
func (r *regions) load(a, b, p int) workload.Op {
	op := workload.Op{Kind: workload.OpLoad, Size: 4, Lanes: 1}
	op.Addr[0] = r.allocs[a].Base + uint64(b)<<16 + uint64(p)<<12
	return op
}

// touch is one load of the first page of each listed block of allocation a.
func (r *regions) touch(a int, blocks ...int) []workload.Op {
	var ops []workload.Op
	for _, b := range blocks {
		ops = append(ops, r.load(a, b, 0))
	}
	return ops
}

func (r *regions) Name() string             { return "regions" }
func (r *regions) Class() string            { return workload.Irregular }
func (r *regions) Allocs() []workload.Alloc { return r.allocs }
func (r *regions) Footprint() uint64        { return uint64(len(r.allocs)) * workload.RegionBytes }
func (r *regions) Phases() []workload.Phase {
	return []workload.Phase{{Kernel: &workload.Kernel{Name: "k", Blocks: len(r.scripts), ThreadsPerBlock: workload.WarpSize,
		NewWarp: func(b, w int) workload.WarpStream {
			ops := r.scripts[b]
			if r.drain.Cycles > 0 {
				ops = append(ops, r.drain)
			}
			return workload.Replay(ops)
		}}}}
}

// drain ends every script: 200,000 cycles of compute, longer than the last
// fetch can take (a whole region is 512 * 379 wire cycles plus the round
// trip), so that every page the driver planned has landed when the run ends.
var drain = workload.Op{Kind: workload.OpCompute, Cycles: 200_000}

// microConfig is the default system with invariants checked, one SM per
// thread block, the given policy and memory pressure, and overrides.
func microConfig(t *testing.T, name string, sms, oversub int, sets ...string) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Run.Policy = name
	cfg.Run.OversubPct = oversub
	cfg.GPU.SMs = sms
	cfg.Check.Invariants = true
	for _, s := range sets {
		require.NoError(t, cfg.Set(s))
	}
	return cfg
}

// runMicro runs wl and returns the result and the driver's menu state.
func runMicro(t *testing.T, cfg config.Config, wl workload.Workload) (system.Result, *policy.UM) {
	t.Helper()
	p, err := policy.New(cfg.Run.Policy, &cfg)
	require.NoError(t, err)
	s, err := system.NewWith(&cfg, wl, p)
	require.NoError(t, err)
	r, err := s.Run(p, system.Options{})
	require.NoError(t, err)
	return r, p.(*policy.UM)
}

// residentBlocks lists the blocks of region a with every page resident and
// checks that no block is partly resident.
func residentBlocks(t *testing.T, um *policy.UM, a int) []int {
	t.Helper()
	var full []int
	for b := 0; b < 32; b++ {
		switch um.Menu().Space().BlockMask(a*32 + b) {
		case 0xffff:
			full = append(full, b)
		case 0:
		default:
			t.Fatalf("block %d of region %d is partly resident", b, a)
		}
	}
	return full
}

// regionCounts sums the access counts of each region's blocks.
func regionCounts(um *policy.UM, n int) []uint32 {
	sums := make([]uint32, n)
	for b := 0; b < 32*n; b++ {
		sums[b/32] += um.Menu().Counters().Get(b).Count
	}
	return sums
}

// The tree prefetcher on far faults under um (UVMSmart Section II-B; the
// worked example of docs/uvm-menu.md). One warp touches blocks 0, 1, 2, 4
// and 8 of a 2 MB allocation, one fault at a time:
//
//	block 0  its 64 KB block; node{0-1} holds 16 of 32 pages, not more than half
//	block 1  its block; node{0-1} is full
//	block 2  its block; node{0-3} holds 48 of 64 > half: block 3 comes too
//	block 4  its block; node{0-7} holds 80 of 128 > half: blocks 5-7 come too
//	block 8  its block; node{0-15} holds 144 of 256 > half: blocks 9-15 come too
//
// Five faults, blocks 0-15 resident (256 pages), nothing evicted, nothing
// served remotely.
func TestUMTreePrefetcherFarFaults(t *testing.T) {
	wl := newRegions(1)
	wl.scripts = [][]workload.Op{wl.touch(0, 0, 1, 2, 4, 8)}
	r, um := runMicro(t, microConfig(t, "um", 1, 100), wl)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, residentBlocks(t, um, 0))
	assert.Equal(t, uint64(5), r.FarFaults)
	assert.Equal(t, uint64(256), r.Migrations)
	assert.Equal(t, uint64(0), r.Evictions)
	assert.Equal(t, uint64(0), um.ZeroCopyMappings())
}

// fillSequence is the tree prefetcher's shortest way to make a whole
// region resident: blocks 0, 1, 2, 4, 8 and 16 (docs/uvm-menu.md).
var fillSequence = []int{0, 1, 2, 4, 8, 16}

// LRU 2 MB and LFU 2 MB choose different victims. Three 2 MB allocations
// a, b, c at 150%: the GPU holds two regions (1,024 pages). Four warps on
// four SMs fill a together with the tree's fill sequence, each reading the
// same pages, so each of a's six pages is accessed four times: 24 counted
// accesses (one per L1 TLB hit). Then warp 0 alone fills b (6 accesses) and
// reads c's block 0: the batch needs 16 pages and memory is full, so one
// whole region goes.
//
//   - lru2m: a is the least recently used region (its last arrival is
//     before b's): a is evicted, b and c's block 0 stay.
//   - lfu2m: a has 24 accesses, b 6: b is evicted, a stays.
//
// Either way the eviction writes back 512 pages.
func TestEvictionLRUvsLFUVictims(t *testing.T) {
	wl := newRegions(3)
	fillA := wl.touch(0, fillSequence...)
	wl.scripts = [][]workload.Op{append(append(fillA, wl.touch(1, fillSequence...)...), wl.touch(2, 0)...), fillA, fillA, fillA}
	for _, tc := range []struct {
		eviction string
		a, b     int // resident blocks of a and b at the end
	}{
		{uvm.EvictLRU2M, 0, 32},
		{uvm.EvictLFU2M, 32, 0},
	} {
		t.Run(tc.eviction, func(t *testing.T) {
			r, um := runMicro(t, microConfig(t, "um", 4, 150, "um.eviction="+tc.eviction), wl)
			assert.Len(t, residentBlocks(t, um, 0), tc.a, "a")
			assert.Len(t, residentBlocks(t, um, 1), tc.b, "b")
			assert.Equal(t, []int{0}, residentBlocks(t, um, 2), "c")
			assert.Equal(t, uint64(512), r.Evictions)
			assert.Equal(t, uint64(512+512+16), r.Migrations)
			assert.Equal(t, []uint32{24, 6, 1}, regionCounts(um, 3))
		})
	}
}

// A read of a host-resident block is served remotely until the block's
// access count reaches the threshold, then it migrates. um with remote =
// always and t_s = 4 (the static threshold from the start, UVMSmart
// Section VI "Always"): one warp reads pages 0..4 of block 0, each page a
// new translation, so each read walks; the driver decides on the block's
// count with the read included, and the read is counted at its TLB hit:
//
//	read 1..3  count 1..3 < 4: zero-copy, the remote PTE is installed
//	read 4     count 4 = t_s: far fault, block 0 migrates (16 pages),
//	           critical page 3 first; the warp goes on when it lands
//	read 5     page 4 is still on its way: the walk finds the remote PTE
//	           and is merged with the fetch, no new fault; counted (5) at
//	           its hit once page 4 has landed
func TestRemoteUntilStaticThreshold(t *testing.T) {
	wl := newRegions(1)
	wl.scripts = [][]workload.Op{{wl.load(0, 0, 0), wl.load(0, 0, 1), wl.load(0, 0, 2), wl.load(0, 0, 3), wl.load(0, 0, 4)}}
	r, um := runMicro(t, microConfig(t, "um", 1, 100, "um.remote=always", "um.migrate_threshold=4"), wl)
	assert.Equal(t, uint64(3), um.ZeroCopyMappings())
	assert.Equal(t, uint64(1), r.FarFaults)
	assert.Equal(t, uint64(16), r.Migrations)
	assert.Equal(t, []int{0}, residentBlocks(t, um, 0))
	assert.Equal(t, uint32(5), um.Menu().Counters().Get(0).Count)
}

// The timing of one zero-copy read, hand-computed on the chain of
// sim/system's TestFirstAccessUM (one SM, a 1,000-cycle compute, then a
// one-lane load of a page in host memory), under um with remote = always:
//
//	1107   router takes the remote PTE (as in TestFirstAccessUM)
//	1108   the driver takes the walk: the block's count with this read is
//	       1 < t_s = 8, a zero-copy access; no far fault, so the SM's TLB
//	       is not frozen
//	1109   the reply is chosen, with the read-only remote PTE
//	1110   router takes it; from here the chain is TestFirstAccessUM's
//	       from its router take (2989) to the end (3097), 108 cycles, but
//	       for the data: the load's line comes from host memory, 12 cycles
//	       on the link (128 B at 10.80 B/cycle, rounded up) + 200
//	       (UVMSmart Table I) instead of 1 + 100 from GPU DRAM: 111 more
//	1329   the dispatcher reports done
//
// Nothing migrates and nothing faults; the read is counted at its hit and
// is the one load the data path serves remotely.
func TestZeroCopyReadTiming(t *testing.T) {
	wl := newRegions(1)
	wl.drain = workload.Op{}
	wl.scripts = [][]workload.Op{{{Kind: workload.OpCompute, Cycles: 1000}, wl.load(0, 0, 0)}}
	r, um := runMicro(t, microConfig(t, "um", 1, 100, "um.remote=always", "gpu.kernel_launch_us=0"), wl)
	assert.Equal(t, uint64(1329), r.Cycles)
	assert.Equal(t, uint64(1), um.ZeroCopyMappings())
	assert.Equal(t, uint64(1), r.RemoteAccesses)
	assert.Equal(t, uint64(0), r.FarFaults)
	assert.Equal(t, uint64(0), r.Migrations)
	assert.Equal(t, uint32(1), um.Menu().Counters().Get(0).Count)
}

// The dynamic threshold of Eq. 1 before oversubscription,
// t = 1 + t_s * resident / capacity (truncated), under uvmsmart's defaults
// (adaptive, t_s = 8). Two 2 MB allocations at 100%: capacity 1,024 pages.
// One warp reads:
//
//	a blocks 0, 1, 2, 4   t = 1 while at most 64 pages are resident: each
//	                      first read faults; the tree fills blocks 0-7
//	                      (128 pages)
//	a block 8, pages 0-1  t = 1 + 8*128/1024 = 2: read 1 is remote, read 2
//	                      migrates; the tree fills 9-15 (256 pages)
//	a block 16, pages 0-2 t = 1 + 8*256/1024 = 3: reads 1-2 remote, read 3
//	                      migrates; the tree fills 17-31 (512 pages)
//
// Six faults, three zero-copy reads, the whole region resident.
func TestAdaptiveThresholdGrowsWithOccupancy(t *testing.T) {
	wl := newRegions(2)
	ops := wl.touch(0, 0, 1, 2, 4)
	ops = append(ops, wl.load(0, 8, 0), wl.load(0, 8, 1))
	ops = append(ops, wl.load(0, 16, 0), wl.load(0, 16, 1), wl.load(0, 16, 2))
	wl.scripts = [][]workload.Op{ops}
	r, um := runMicro(t, microConfig(t, "adaptive", 1, 100), wl)
	assert.Equal(t, uint64(3), um.ZeroCopyMappings())
	assert.Equal(t, uint64(6), r.FarFaults)
	assert.Equal(t, uint64(512), r.Migrations)
	assert.Len(t, residentBlocks(t, um, 0), 32)
	assert.False(t, um.Menu().Oversubscribed())
}

// uvmsmart on an oversubscribed irregular run (ra at 125%: three 2 MB
// arrays, two regions of GPU memory) completes with the invariants checked
// every chunk, serves some reads remotely, evicts, and gives the same
// result for the same seed.
func TestUVMSmartIrregularRunIsDeterministic(t *testing.T) {
	cfg := config.Default()
	cfg.Run.Policy, cfg.Run.Workload, cfg.Run.OversubPct, cfg.Run.Scale = "adaptive", "ra", 125, 0.5
	cfg.Check.Invariants = true
	run := func() (system.Result, uint64) {
		p, err := policy.New(cfg.Run.Policy, &cfg)
		require.NoError(t, err)
		s, err := system.New(&cfg, p)
		require.NoError(t, err)
		r, err := s.Run(p, system.Options{})
		require.NoError(t, err)
		return r, p.(*policy.UM).ZeroCopyMappings()
	}
	a, remoteA := run()
	b, remoteB := run()
	assert.Positive(t, remoteA)
	assert.Positive(t, a.Evictions)
	assert.Equal(t, remoteA, remoteB)
	ignoreWall := cmp.FilterPath(func(p cmp.Path) bool {
		f, ok := p.Last().(cmp.StructField)
		return ok && (f.Name() == "WallSeconds" || f.Name() == "SimCyclesPerSecond" || f.Name() == "WarpInstrPerSecond")
	}, cmp.Ignore())
	assert.Empty(t, cmp.Diff(a, b, ignoreWall))
}

// The menu keys' allowed names are sim/uvm's, in every policy section.
func TestMenuNamesMatchSimUVM(t *testing.T) {
	want := map[string][]string{
		"prefetcher":         uvm.PrefetcherNames(),
		"prefetcher_oversub": uvm.PrefetcherNames(),
		"eviction":           uvm.EvictorNames(),
		"remote":             uvm.RemoteModeNames(),
	}
	typ := reflect.TypeOf(config.UM{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if names, ok := want[f.Tag.Get("toml")]; ok {
			assert.Equal(t, names, strings.Split(f.Tag.Get("oneof"), ","), f.Name)
			delete(want, f.Tag.Get("toml"))
		}
	}
	assert.Empty(t, want, "menu keys missing from config.UM")
	def := config.Default()
	assert.Equal(t, uvm.DefaultConfig(), def.UM.Menu(1), "um defaults are the sim/uvm baseline")
	adaptive := def.Adaptive.Menu(1)
	assert.Equal(t, uvm.RemoteAdaptive, adaptive.Remote)
	assert.Equal(t, uvm.EvictLFU2M, adaptive.Evictor)
	assert.Equal(t, uvm.PrefetchTree, adaptive.Prefetcher)
	// uvmsmart starts as the baseline; its smart runtime switches later.
	assert.Equal(t, uvm.DefaultConfig(), def.UVMSmart.Menu(1))
	assert.True(t, def.UVMSmart.SmartRuntime)
	assert.False(t, def.UM.SmartRuntime || def.Adaptive.SmartRuntime)
}

// Idle skipping changes nothing but speed under uvmsmart, whose driver
// sleeps until a zero-copy access falls due and wakes on every L1 TLB
// response it counts. With remote = oversub at 150% the fills of a and b
// migrate on first touch; c's block 0 then evicts a region and marks the
// GPU oversubscribed, so reads of c's block 1 are served remotely until
// the block's count reaches t_s = 8, migrate it, and shoot the zero-copy
// mappings down. The outcome is the same with skipping on and off (with a
// 1 us fault latency, so that the run without skipping stays short).
func TestUVMSmartIdleSkippingIsExact(t *testing.T) {
	wl := newRegions(3)
	wl.drain = workload.Op{Kind: workload.OpCompute, Cycles: 20_000}
	fillA := wl.touch(0, fillSequence...)
	ops := append(append(fillA, wl.touch(1, fillSequence...)...), wl.touch(2, 0)...)
	for p := 0; p < 10; p++ {
		ops = append(ops, wl.load(2, 1, p))
	}
	wl.scripts = [][]workload.Op{ops, fillA, fillA, fillA}
	type outcome struct {
		Result         system.Result
		RemoteAccesses uint64
		Counts         []uint32
	}
	run := func(skip bool) outcome {
		cfg := microConfig(t, "adaptive", 4, 150, "adaptive.remote=oversub", "adaptive.fault_latency_us=1")
		cfg.Check.SkipIdle = skip
		r, um := runMicro(t, cfg, wl)
		r.WallSeconds, r.SimCyclesPerSecond, r.WarpInstrPerSecond, r.EvaluatedCycles = 0, 0, 0, 0
		return outcome{r, um.ZeroCopyMappings(), regionCounts(um, 3)}
	}
	on := run(true)
	assert.Equal(t, uint64(7), on.RemoteAccesses, "reads 1-7 of c's block 1")
	assert.Equal(t, uint64(512), on.Result.Evictions)
	assert.Empty(t, cmp.Diff(on, run(false)))
}

// store is a one-lane 4-byte store to page p of block b of allocation a.
func (r *regions) store(a, b, p int) workload.Op {
	op := r.load(a, b, p)
	op.Kind = workload.OpStore
	return op
}

// A write always migrates (UVMSmart Section III-C), a read of the same cold
// block is served remotely. uvmsmart defaults (adaptive, t_s = 8), two 2 MB
// allocations at 100% (capacity 1,024 pages). One warp reads blocks 0, 1, 2
// and 4 of a: four faults, the tree fills blocks 0-7 (128 pages), and the
// threshold becomes t = 1 + 8*128/1024 = 2. Then one access to page 0 of
// block 16, whose count with it is 1 < 2:
//
//   - a load is a zero-copy access: no fault, nothing moves;
//   - a store is a far fault: block 16 migrates (16 pages; node{16-17}
//     holds 16 of 32 pages, not more than half, so the tree adds nothing).
//
// Either way the access is counted once, at its L1 TLB hit.
func TestWriteMigratesWhereReadIsRemote(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		op                   func(a, b, p int) workload.Op
		remote, faults, migr uint64
		blocks               []int
	}{
		{"load", nil, 1, 4, 128, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"store", nil, 0, 5, 144, []int{0, 1, 2, 3, 4, 5, 6, 7, 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := newRegions(2)
			access := wl.load(0, 16, 0)
			if tc.name == "store" {
				access = wl.store(0, 16, 0)
			}
			wl.scripts = [][]workload.Op{append(wl.touch(0, 0, 1, 2, 4), access)}
			r, um := runMicro(t, microConfig(t, "adaptive", 1, 100), wl)
			assert.Equal(t, tc.remote, um.ZeroCopyMappings())
			assert.Equal(t, tc.faults, r.FarFaults)
			assert.Equal(t, tc.migr, r.Migrations)
			assert.Equal(t, tc.blocks, residentBlocks(t, um, 0))
			assert.Equal(t, uint32(1), um.Menu().Counters().Get(16).Count)
		})
	}
}

// A page read remotely and then written migrates: the zero-copy reply
// installs the remote PTE read-only, so the store misses on it in the L1
// TLB, walks, and reaches the driver as a write. uvmsmart with remote =
// always (t_s = 8 from the start, UVMSmart Section VI "Always"); page 0 of
// a's block 0 is accessed twice:
//
//   - load, load: the first is a zero-copy access (count 1 < 8) and
//     installs the mapping; the second hits it and is served remotely
//     without walking. No fault, nothing moves.
//   - load, store: the load as before; the store misses on the read-only
//     mapping and faults although the count (2) is under t_s: block 0
//     migrates (16 pages; node{0-1} holds 16 of 32, not more than half),
//     and the fetch shoots the zero-copy mapping down.
//
// Both accesses are counted, each at its L1 TLB hit (the store's at the hit
// of its replayed lookup, once the page is local).
func TestZeroCopyReadThenWriteMigrates(t *testing.T) {
	for _, tc := range []struct {
		name         string
		store        bool
		faults, migr uint64
		blocks       []int
	}{
		{"load-load", false, 0, 0, nil},
		{"load-store", true, 1, 16, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := newRegions(1)
			second := wl.load(0, 0, 0)
			if tc.store {
				second = wl.store(0, 0, 0)
			}
			wl.scripts = [][]workload.Op{{wl.load(0, 0, 0), second}}
			r, um := runMicro(t, microConfig(t, "adaptive", 1, 100, "adaptive.remote=always"), wl)
			assert.Equal(t, uint64(1), um.ZeroCopyMappings())
			assert.Equal(t, tc.faults, r.FarFaults)
			assert.Equal(t, tc.migr, r.Migrations)
			assert.Equal(t, tc.blocks, residentBlocks(t, um, 0))
			assert.Equal(t, uint32(2), um.Menu().Counters().Get(0).Count)
		})
	}
}

// LFU 2 MB eviction prefers a read-only region to a written one with the
// same count (UVMSmart Section IV, "Access Counter Based Page
// Replacement"). Three 2 MB allocations at 150% (two regions fit); one warp
// fills b with the tree's fill sequence, then a, six accesses each, then
// reads c's block 0, which evicts a whole region. b is the least recently
// used region.
//
//   - lru2m: b goes, whatever its accesses.
//   - lfu2m, b filled by stores: a and b both count 6; a was only read,
//     b written, so a goes although b is older.
//   - lfu2m, b filled by loads: equal counts and kinds fall back to LRU:
//     b goes.
//
// Each eviction writes one region back (512 pages); every fill migrates a
// region (512 pages each) and c's block 0 16 pages.
func TestLFUEvictsReadOnlyRegionFirst(t *testing.T) {
	for _, tc := range []struct {
		name, eviction string
		stores         bool
		a, b           int // resident blocks of a and b at the end
	}{
		{"lru2m-written", uvm.EvictLRU2M, true, 32, 0},
		{"lfu2m-written", uvm.EvictLFU2M, true, 0, 32},
		{"lfu2m-read", uvm.EvictLFU2M, false, 32, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := newRegions(3)
			var ops []workload.Op
			for _, b := range fillSequence {
				if tc.stores {
					ops = append(ops, wl.store(1, b, 0))
				} else {
					ops = append(ops, wl.load(1, b, 0))
				}
			}
			ops = append(ops, wl.touch(0, fillSequence...)...)
			wl.scripts = [][]workload.Op{append(ops, wl.touch(2, 0)...)}
			r, um := runMicro(t, microConfig(t, "um", 1, 150, "um.eviction="+tc.eviction), wl)
			assert.Len(t, residentBlocks(t, um, 0), tc.a, "a")
			assert.Len(t, residentBlocks(t, um, 1), tc.b, "b")
			assert.Equal(t, []int{0}, residentBlocks(t, um, 2), "c")
			assert.Equal(t, uint64(512), r.Evictions)
			assert.Equal(t, uint64(512+512+16), r.Migrations)
			assert.Equal(t, []uint32{6, 6, 1}, regionCounts(um, 3))
		})
	}
}

// Accesses through a zero-copy mapping are counted at their TLB hits, and
// the hit that brings the block's count to the threshold raises the page's
// migration (UVMSmart Section IV). um with remote = always and t_s = 4; one
// warp reads page 0 of block 0 four times, waits 200,000 cycles, and reads
// it again:
//
//	read 1   walk: count 1 < 4, zero-copy; the read-only remote PTE is
//	         installed and the load is served from host memory
//	read 2-4 TLB hits on the mapping, served remotely; read 4 counts 4 =
//	         t_s and raises the migration: a far fault answering no SM
//	         (the tree prefetcher adds nothing for one block: 16 pages)
//	         after which the mapping is shot down
//	read 5   misses, walks, finds the local PTE: served from GPU DRAM
//
// One mapping, four remote loads, one fault, 16 pages, count 5.
func TestZeroCopyHitsRaiseMigration(t *testing.T) {
	wl := newRegions(1)
	read := wl.load(0, 0, 0)
	wl.scripts = [][]workload.Op{{read, read, read, read, {Kind: workload.OpCompute, Cycles: 200_000}, read}}
	r, um := runMicro(t, microConfig(t, "um", 1, 100, "um.remote=always", "um.migrate_threshold=4"), wl)
	assert.Equal(t, uint64(1), um.ZeroCopyMappings())
	assert.Equal(t, uint64(4), r.RemoteAccesses)
	assert.Equal(t, uint64(1), r.FarFaults)
	assert.Equal(t, uint64(16), r.Migrations)
	assert.Equal(t, []int{0}, residentBlocks(t, um, 0))
	assert.Equal(t, uint32(5), um.Menu().Counters().Get(0).Count)
}

// A managed allocation's tail moves as the UVMSmart simulator's
// cudaMallocManaged sizes it (system.ManagedGroups: whole 2 MB pages, the
// rest rounded up to a power of two of 64 KB blocks), in a run started by
// System.Run (which resets every register). A managed allocation a of
// 1.5 MB, blocks 0-23 of its 2 MB region, is 32 blocks as allocated; the
// next allocation b is never touched. The fill sequence (blocks 0, 1, 2,
// 4, 8, 16) makes the tree prefetcher plan the whole region with the sixth
// fault (node{0-31} holds 256 + 16 = 272 of 512 pages, more than half:
// blocks 17-31 come too), and all of it moves: 512 pages from six far
// faults, as the reference migrates fdtd's rounded 6 MB arrays whole; the
// invariants hold throughout (microConfig checks them).
func TestUMAllocationTailAsAllocated(t *testing.T) {
	wl := &regions{drain: drain, allocs: []workload.Alloc{
		{Name: "a", Bytes: 24 * workload.RegionBytes / 32, Kind: workload.Managed},
		{Name: "b", Bytes: workload.RegionBytes, Kind: workload.Managed},
	}}
	workload.Layout(wl.allocs)
	wl.scripts = [][]workload.Op{wl.touch(0, fillSequence...)}
	r, um := runMicro(t, microConfig(t, "um", 1, 100), wl)
	assert.Equal(t, uint64(6), r.FarFaults)
	assert.Equal(t, uint64(512), r.Migrations)
	assert.Equal(t, uint64(512*4096), r.PCIeH2DBytes)
	require.NoError(t, um.Check())
}

// Reference fault timing (um.fault_timing = "reference") on the tree
// prefetcher's worked example (TestUMTreePrefetcherFarFaults): one warp
// touches blocks 0, 1, 2, 4 and 8 one load at a time, so five pages fault,
// none of them requested before (blocks 3, 5-7 and 9-15 come as
// prefetches and are never touched). Five faults, as under cycle timing,
// and the same 256 pages move. The fault latency is 45 us = 66,645 cycles;
// under cycle timing each fault spends it on the timeline before its
// transfer (the driver takes it up in cycle t and plans at t + 66,645),
// under reference timing none does (it plans at t + 1, the driver's state
// change) and 5 * 66,645 = 333,225 cycles are added after the run.
// Nothing else differs, so
//
//	reference timeline = cycle timeline - 5 * 66,644
//	reference cycles   = reference timeline + 333,225 = cycle cycles + 5.
func TestUMReferenceFaultTiming(t *testing.T) {
	wl := newRegions(1)
	wl.scripts = [][]workload.Op{wl.touch(0, 0, 1, 2, 4, 8)}
	cyc, _ := runMicro(t, microConfig(t, "um", 1, 100), wl)
	ref, _ := runMicro(t, microConfig(t, "um", 1, 100, "um.fault_timing=reference"), wl)
	const latency = 66_645
	assert.Equal(t, uint64(5), cyc.FarFaults)
	assert.Equal(t, uint64(5), ref.FarFaults)
	assert.Equal(t, uint64(5*latency), cyc.FaultCycles)
	assert.Equal(t, uint64(5*latency), ref.FaultCycles)
	assert.Equal(t, cyc.Cycles, cyc.TimelineCycles)
	assert.Equal(t, ref.TimelineCycles+5*latency, ref.Cycles)
	assert.Equal(t, cyc.TimelineCycles-5*(latency-1), ref.TimelineCycles)
	assert.Equal(t, cyc.Cycles+5, ref.Cycles)
	assert.Equal(t, cyc.Migrations, ref.Migrations)
}

// The smart runtime of uvmsmart (DATE'21) switches only when a batch has
// to evict, by the patterns of the blocks transferred so far. Three 2 MB
// allocations a, b, c at 150% (room for two regions), one warp:
//
//   - linear: a and b filled with the fill sequence (batches of blocks
//     {0}, {1}, {2-3}, {4-7}, {8-15}, {16-31}: ascending), then c's block 0
//     evicts a region. Every allocation is linear without reuse: nothing
//     switches (LRU 2 MB, no remote access).
//   - random: a's blocks 16 then 0 first (block 0 after block 16: random),
//     then the same. a is random: the batch that evicts switches to
//     zero-copy once oversubscribed and tree-based eviction.
func TestUVMSmartRuntimeSwitchesOnPattern(t *testing.T) {
	for _, tc := range []struct {
		name     string
		first    []int
		remote   string
		evictor  string
		zeroCopy bool
	}{
		{"linear", fillSequence, uvm.RemoteOff, uvm.EvictLRU2M, false},
		{"random", append([]int{16, 0}, fillSequence...), uvm.RemoteOversub, uvm.EvictLRUTree, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := newRegions(3)
			ops := append(wl.touch(0, tc.first...), wl.touch(1, fillSequence...)...)
			wl.scripts = [][]workload.Op{append(ops, wl.touch(2, 0)...)}
			r, um := runMicro(t, microConfig(t, "uvmsmart", 1, 150), wl)
			require.NotNil(t, um.Menu().SmartRuntime())
			assert.Equal(t, tc.remote, um.Menu().Config().Remote)
			assert.Equal(t, tc.evictor, um.Menu().Evictor().Name())
			assert.True(t, um.Menu().Oversubscribed())
			assert.Positive(t, r.Evictions)
			if tc.zeroCopy {
				assert.Equal(t, uvm.Random, um.Menu().SmartRuntime().Pattern(0))
			} else {
				assert.Equal(t, uvm.Linear, um.Menu().SmartRuntime().Pattern(0))
			}
		})
	}
}

// twoKernels runs scripts[0] as a first kernel and scripts[1] as a second,
// one warp each.
type twoKernels struct{ *regions }

func (w twoKernels) Phases() []workload.Phase {
	var ph []workload.Phase
	for i, ops := range w.scripts {
		ops := append(ops, w.drain)
		ph = append(ph, workload.Phase{Kernel: &workload.Kernel{Name: fmt.Sprintf("k%d", i), Blocks: 1, ThreadsPerBlock: workload.WarpSize,
			NewWarp: func(int, int) workload.WarpStream { return workload.Replay(ops) }}})
	}
	return ph
}

// Kernel boundaries reach the smart runtime (tapped from the launch
// ports). At 150% (two regions of room): kernel 1 fills a and b with the
// fill sequence (linear); kernel 2 fills c (its block 0 evicts a, LRU) and
// then reads a's block 0 again (evicts b). a's block 0 is a block kernel 1
// transferred: kernel 2's sequence for a is linear with reuse, and linear
// then linear-reuse is linear-reuse: tree eviction, no zero-copy. Seen as
// one kernel, block 0 after block 31 would be random with reuse and switch
// zero-copy on.
func TestUVMSmartRuntimeSeesKernelBoundaries(t *testing.T) {
	wl := newRegions(3)
	wl.scripts = [][]workload.Op{
		append(wl.touch(0, fillSequence...), wl.touch(1, fillSequence...)...),
		append(wl.touch(2, fillSequence...), wl.touch(0, 0)...),
	}
	_, um := runMicro(t, microConfig(t, "uvmsmart", 1, 150), twoKernels{wl})
	assert.Equal(t, uvm.LinearReuse, um.Menu().SmartRuntime().Pattern(0))
	assert.Equal(t, uvm.Linear, um.Menu().SmartRuntime().Pattern(2))
	assert.Equal(t, uvm.RemoteOff, um.Menu().Config().Remote)
	assert.Equal(t, uvm.EvictLRUTree, um.Menu().Evictor().Name())
}

// Concurrent eviction (um.concurrent_eviction, the simulator's separate
// write-back and read queues): three 2 MB allocations at 150% (room for
// two regions); one warp fills a and b, then reads c's block 0, whose
// batch evicts a (LRU 2 MB, 512 pages). Serially the fetch of c's block
// waits for a's write-back to reach the host; concurrently it goes out at
// once, so the run is shorter by at least the write-back's wire time,
// 512 pages * 4,096 B * 1481 / 16,000 cycles per byte (16 GB/s at
// 1481 MHz) = 194,117.6 cycles, and by at most that plus the flush's
// round trip (1 us = 1,481 cycles) and one page's wire time (379 cycles)
// the two commands share on the device-to-host lane (measured: 195,237).
// Both runs evict the same 512 pages.
func TestUMConcurrentEviction(t *testing.T) {
	wl := newRegions(3)
	wl.scripts = [][]workload.Op{append(append(wl.touch(0, fillSequence...), wl.touch(1, fillSequence...)...), wl.touch(2, 0)...)}
	serial, _ := runMicro(t, microConfig(t, "um", 1, 150, "um.concurrent_eviction=false"), wl)
	concurrent, _ := runMicro(t, microConfig(t, "um", 1, 150), wl)
	assert.Equal(t, uint64(512), serial.Evictions)
	assert.Equal(t, uint64(512), concurrent.Evictions)
	assert.Equal(t, serial.Migrations, concurrent.Migrations)
	saved := serial.Cycles - concurrent.Cycles
	assert.GreaterOrEqual(t, saved, uint64(194_118))
	assert.LessOrEqual(t, saved, uint64(194_118+1_481+379))
}

// hostBetween runs scripts[0] as a kernel, then a host phase reading the
// first 4 KB of allocation a, then scripts[1] as a second kernel.
type hostBetween struct{ *regions }

func (w hostBetween) Phases() []workload.Phase {
	k := twoKernels(w).Phases()
	a := w.allocs[0]
	host := workload.Phase{Host: &workload.HostAccess{Alloc: a.Name, Ranges: [][2]uint64{{a.Base, a.Base + 4096}}}}
	return []workload.Phase{k[0], host, k[1]}
}

// Host synchronisation (um.host_sync, cudaDeviceSynchronize in the
// simulator): kernel 1 stores to page 0 of a (one fault; the tree brings
// its 64 KB block, 16 pages) and reads page 1 of block 1 (a second fault,
// 16 more pages). The host phase then writes back and invalidates the
// dirty page, page 0 alone: 1 page evicted. Kernel 2 loads page 0 again:
// a third fault, and the block's one missing page moves (1 page). With
// host_sync = false the pages stay valid: two faults, 32 pages, nothing
// evicted.
func TestUMHostSyncInvalidatesDirtyPages(t *testing.T) {
	for _, tc := range []struct {
		sync                          string
		faults, migrations, evictions uint64
	}{
		{"true", 3, 33, 1},
		{"false", 2, 32, 0},
	} {
		t.Run("host_sync="+tc.sync, func(t *testing.T) {
			wl := newRegions(1)
			wl.scripts = [][]workload.Op{{wl.store(0, 0, 0), wl.load(0, 1, 1)}, {wl.load(0, 0, 0)}}
			r, um := runMicro(t, microConfig(t, "um", 1, 100, "um.host_sync="+tc.sync), hostBetween{wl})
			assert.Equal(t, tc.faults, r.FarFaults)
			assert.Equal(t, tc.migrations, r.Migrations)
			assert.Equal(t, tc.evictions, r.Evictions)
			assert.Equal(t, 32, um.Menu().Space().Resident())
		})
	}
}
