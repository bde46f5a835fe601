package suv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/workload"
	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// pageMemory is n pages available to the placements: n+1 pages of
// capacity in units of one page (Memory keeps one unit back).
func pageMemory(n uint64) Memory { return Memory{Capacity: (n + 1) * PageBytes, Unit: PageBytes} }

// placementProgram is one kernel of 64 blocks of 64 threads (2 warps) on
// smallGPU: 4 SMs x 8/2 = 16 concurrent blocks <= 32, so the working-set
// rule runs. Its structures, in allocation order:
//
//	ptr   8192 B  pointer chase in a data-dependent loop: Unknown
//	hot   4096 B  every block reads hot[tid] 16 times: 4096 x 16 = 65536
//	              accesses, density 16; one block's range [0, 256) x 16
//	              blocks = 4096, not under half the size: Density
//	tmp  16384 B  tmp[64 bid + tid] 32 times: 131072 accesses, density 8;
//	              WSS 256 x 16 = 4096 < 8192: Temporal
//	cold 49152 B  cold[192 tid + bid] once: 4096 accesses, density
//	              0.0833; one block spans [0, 48388), WSS the whole size:
//	              Density
//	tlow 16384 B  tlow[64 bid + tid] once: density 0.25, WSS 4096:
//	              Temporal
func placementProgram() *static.Program {
	idx := aff(0, tm(static.BlockX, 64), tm(static.ThreadX, 1))
	return &static.Program{Workload: "placement", Allocs: []static.Alloc{
		{Name: "ptr", Bytes: 8192, Managed: true},
		{Name: "hot", Bytes: 4096, Managed: true},
		{Name: "tmp", Bytes: 16384, Managed: true},
		{Name: "cold", Bytes: 49152, Managed: true},
		{Name: "tlow", Bytes: 16384, Managed: true},
	},
		Kernels: []static.Kernel{{Name: "k", GridX: 64, GridY: 1, BlockX: 64, BlockY: 1,
			Loops: []static.Loop{{Name: "chase", DataDependent: true}, {Name: "l16", Trips: 16}, {Name: "l32", Trips: 32}},
			Ops: []static.MemOp{
				{Alloc: "ptr", ElemBytes: 8, Kind: static.PointerChase, Loops: []int{0}, BranchFraction: 1},
				{Alloc: "hot", ElemBytes: 4, Index: aff(0, tm(static.ThreadX, 1)), Loops: []int{1}, BranchFraction: 1},
				{Alloc: "tmp", ElemBytes: 4, Index: idx, Loops: []int{2}, BranchFraction: 1},
				{Alloc: "cold", ElemBytes: 4, Index: aff(0, tm(static.ThreadX, 192), tm(static.BlockX, 1)), BranchFraction: 1},
				{Alloc: "tlow", ElemBytes: 4, Index: idx, BranchFraction: 1},
			}}}}
}

// Algorithm 1 with 12 pages (49152 B) of GPU memory:
//
//	footprint 8192+4096+16384+49152+16384 = 94208 B
//	ptr:  Unknown, reserve 8192/94208 x 49152 = 4273.8 -> one page, 4096;
//	      avail 45056 (the printed line 4 leaves avail at 49152)
//	by density: hot 16, tmp 8, tlow 0.25, cold 0.0833
//	hot:  pinned on the GPU whole, avail 40960
//	tmp:  Temporal, density 8 > 5: reserve its WSS 4096, avail 36864
//	tlow: Temporal, density 0.25 <= 5: pinned on host (the printed line 16
//	      falls through to line 17 and pins it on the GPU too)
//	cold: 36864 B pinned on the GPU, the other 12288 on host, avail 0
//	ptr is not placed again by the density loop.
func TestAlgorithm1Placement(t *testing.T) {
	rt, err := NewRuntime(placementProgram(), smallGPU, pageMemory(12))
	require.NoError(t, err)
	l := rt.BeforeLaunch(0)
	wantDecisions := []Decision{
		{Alloc: "ptr", Class: Unknown, ReservedBytes: 4096, Counters: true},
		{Alloc: "hot", Class: Density, GPUBytes: 4096},
		{Alloc: "tmp", Class: Temporal, ReservedBytes: 4096},
		{Alloc: "tlow", Class: Temporal, HostBytes: 16384},
		{Alloc: "cold", Class: Density, GPUBytes: 36864, HostBytes: 12288},
	}
	require.Empty(t, cmp.Diff(wantDecisions, l.Decisions))
	wantActions := []Action{
		{Alloc: "ptr", Bytes: 8192, Do: Counters},
		{Alloc: "hot", Bytes: 4096, Do: PinGPU},
		{Alloc: "tmp", Bytes: 16384, Do: OnDemand},
		{Alloc: "tlow", Bytes: 16384, Do: PinHost},
		{Alloc: "cold", Bytes: 36864, Do: PinGPU},
		{Alloc: "cold", Offset: 36864, Bytes: 12288, Do: PinHost},
	}
	require.Empty(t, cmp.Diff(wantActions, l.Actions))
}

// A second launch of the same kernel changes no advice: only the GPU pins
// are called again (their prefetch moves nothing while the pages stay).
func TestAlgorithm1CallsOnlyOnChange(t *testing.T) {
	p := placementProgram()
	p.Kernels = append(p.Kernels, p.Kernels[0])
	rt, err := NewRuntime(p, smallGPU, pageMemory(12))
	require.NoError(t, err)
	ls := rt.Plan()
	require.Len(t, ls, 2)
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "hot", Bytes: 4096, Do: PinGPU},
		{Alloc: "cold", Bytes: 36864, Do: PinGPU},
	}, ls[1].Actions))
}

// With memory for the Unknown reservation only, every other structure is
// pinned on host (Algorithm 1 line 8, "avail == 0").
func TestAlgorithm1NoRoomLeft(t *testing.T) {
	// footprint 94208, capacity 6 pages = 24576: ptr reserves
	// 8192/94208 x 24576 = 2137 -> 0 pages; avail 24576.
	// hot pins 4096 (avail 20480), tmp reserves 4096 (16384), tlow on
	// host, cold pins 16384 of 49152 (avail 0).
	rt, err := NewRuntime(placementProgram(), smallGPU, pageMemory(6))
	require.NoError(t, err)
	l := rt.BeforeLaunch(0)
	require.Empty(t, cmp.Diff([]Decision{
		{Alloc: "ptr", Class: Unknown, Counters: true},
		{Alloc: "hot", Class: Density, GPUBytes: 4096},
		{Alloc: "tmp", Class: Temporal, ReservedBytes: 4096},
		{Alloc: "tlow", Class: Temporal, HostBytes: 16384},
		{Alloc: "cold", Class: Density, GPUBytes: 16384, HostBytes: 32768},
	}, l.Decisions))
}

// iterProgram launches one kernel per host iteration, iters of them: 2048
// blocks of 64 threads read rows[iter x 131072 + 64 bid + tid] (4 B), one
// 512 KB span per iteration of a 4 MB structure.
func iterProgram(iters int64) *static.Program {
	p := &static.Program{Workload: "iter", Allocs: []static.Alloc{{Name: "rows", Bytes: 4 << 20, Managed: true}}}
	for it := range iters {
		p.Kernels = append(p.Kernels, static.Kernel{Name: "k", GridX: 2048, GridY: 1, BlockX: 64, BlockY: 1,
			HostIter: it, HostIters: iters,
			Ops: []static.MemOp{{Alloc: "rows", ElemBytes: 4,
				Index: aff(0, tm(static.HostIter, 131072), tm(static.BlockX, 64), tm(static.ThreadX, 1)), BranchFraction: 1}}})
	}
	return p
}

// Algorithm 2: one iteration's span is 2048 x 64 x 4 = 512 KB at
// iter x 512 KB; under 2 MB, so 2 MB / 512 KB = 4 iterations are
// prefetched and pinned together: [0, 2 MB) before iteration 0, nothing
// before 1-3, then the first window is released and [2 MB, 4 MB) pinned
// before iteration 4. Algorithm 1 reserves the window and places nothing
// else.
func TestAlgorithm2PrefetchSpan(t *testing.T) {
	rt, err := NewRuntime(iterProgram(8), smallGPU, pageMemory(16384))
	require.NoError(t, err)
	ls := rt.Plan()
	const mb2 = 2 << 20
	require.Empty(t, cmp.Diff([]Action{{Alloc: "rows", Offset: 0, Bytes: mb2, Do: PinGPU}}, ls[0].Actions))
	for i := 1; i < 4; i++ {
		require.Empty(t, ls[i].Actions, "launch %d", i)
	}
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "rows", Offset: 0, Bytes: mb2, Do: Release},
		{Alloc: "rows", Offset: mb2, Bytes: mb2, Do: PinGPU},
	}, ls[4].Actions))
	require.Empty(t, cmp.Diff([]Decision{{Alloc: "rows", Class: Temporal, GPUBytes: mb2, ReservedBytes: mb2}}, ls[4].Decisions))
}

// A span of 2 MB or more is prefetched one iteration at a time.
func TestAlgorithm2OneIterationSpans(t *testing.T) {
	p := iterProgram(2)
	for i := range p.Kernels {
		p.Kernels[i].GridX = 8192 // 8192 x 64 x 4 = 2 MB per iteration
		p.Kernels[i].Ops[0].Index = aff(0, tm(static.HostIter, 524288), tm(static.BlockX, 64), tm(static.ThreadX, 1))
	}
	p.Allocs[0].Bytes = 4 << 20
	rt, err := NewRuntime(p, smallGPU, pageMemory(16384))
	require.NoError(t, err)
	ls := rt.Plan()
	const mb2 = 2 << 20
	require.Empty(t, cmp.Diff([]Action{{Alloc: "rows", Bytes: mb2, Do: PinGPU}}, ls[0].Actions))
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "rows", Bytes: mb2, Do: Release},
		{Alloc: "rows", Offset: mb2, Bytes: mb2, Do: PinGPU},
	}, ls[1].Actions))
}

// SC ranks by total access count, not density: with 12 pages (49152 B),
// tmp (131072 accesses, 16384 B) goes first and fits (32768 left), hot
// (65536) fits (28672 left); cold and tlow have 4096 each and the same
// reuse distance, so allocation order: cold (49152 B) does not fit and
// goes to host whole, tlow (16384) fits; ptr (Unknown, no count) is left
// on demand.
func TestSCPlacement(t *testing.T) {
	sc, err := NewSC(placementProgram(), smallGPU, pageMemory(12))
	require.NoError(t, err)
	l := sc.BeforeLaunch(0)
	require.Empty(t, cmp.Diff([]Decision{
		{Alloc: "tmp", Class: Temporal, GPUBytes: 16384},
		{Alloc: "hot", Class: Density, GPUBytes: 4096},
		{Alloc: "cold", Class: Density, HostBytes: 49152},
		{Alloc: "tlow", Class: Temporal, GPUBytes: 16384},
		{Alloc: "ptr", Class: Unknown},
	}, l.Decisions))
}

// Algorithm 2 on doitgen at scale 1 (NR = 32, NQ = 1024, NP = 32; A and
// sum 4 MB). doitgen_kernel1 at r has 1 x 128 blocks of 32 x 8 threads
// writing sum[r*32768 + 256 by + 32 ty + 32 bx + tx] and reading
// A[r*32768 + 256 by + 32 ty + s], s < 32: over the grid both index
// r*32768 .. r*32768 + 127*256 + 7*32 + 31 = r*32768 + 32767, one
// iteration's span of 32768 x 4 B = 128 KB at r x 128 KB. Under 2 MB, so
// 2 MB / 128 KB = 16 iterations are batched: before r = 0 (launch 0) A's
// and sum's [0, 2 MB) are prefetched and pinned (then C4, Density, is
// pinned whole by Algorithm 1); before r = 16 (launch 32, two launches per
// iteration) [0, 2 MB) is released and [2 MB, 4 MB) pinned, and nothing
// moves in between (launch 1 only returns the untouched C4 to on-demand).
func TestAlgorithm2DoitgenSpan(t *testing.T) {
	_, p, err := workload.Describe("doitgen", workload.Params{Seed: 1})
	require.NoError(t, err)
	const kb64, mb2 = 64 << 10, 2 << 20
	rt, err := NewRuntime(p, GPU{SMs: 28, WarpsPerSM: 64}, Memory{Capacity: 16 << 20, Unit: kb64})
	require.NoError(t, err)
	regions := AnalyzeKernel(p, &p.Kernels[0], GPU{SMs: 28, WarpsPerSM: 64})
	require.Equal(t, []Span{{Start: 0, Bytes: 128 << 10}}, regions[0].Spans, "A's span at r = 0")
	ls := rt.Plan()
	require.Len(t, ls, 64)
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "A", Bytes: mb2, Do: PinGPU},
		{Alloc: "sum", Bytes: mb2, Do: PinGPU},
		{Alloc: "C4", Bytes: 4096, Do: PinGPU},
	}, ls[0].Actions))
	require.Empty(t, cmp.Diff([]Action{{Alloc: "C4", Bytes: 4096, Do: OnDemand}}, ls[1].Actions))
	for i := 2; i < 32; i++ {
		for _, a := range ls[i].Actions {
			require.Equal(t, "C4", a.Alloc, "launch %d moves no window", i)
		}
	}
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "A", Bytes: mb2, Do: Release},
		{Alloc: "A", Offset: mb2, Bytes: mb2, Do: PinGPU},
		{Alloc: "sum", Bytes: mb2, Do: Release},
		{Alloc: "sum", Offset: mb2, Bytes: mb2, Do: PinGPU},
		{Alloc: "C4", Bytes: 4096, Do: PinGPU},
	}, ls[32].Actions))
}

// Windows that do not fit are clipped: a and b (1 MB each) are read at
// [iter + 64 bid + tid] by 4096 blocks of 64 threads, a span of the whole
// 1 MB at every iteration (under 2 MB: two iterations batched, the union
// clipped to the structure). 1.5 MB of 64 KB units is 24, 23 of them
// available: a's window takes 16 (1 MB), b's the 7 left ([0, 448 KB)),
// and the rest of b's span, [448 KB, 1 MB), is pinned on host.
func TestAlgorithm2WindowsClippedToMemory(t *testing.T) {
	const mb1, kb64 = 1 << 20, 64 << 10
	p := &static.Program{Workload: "clip", Allocs: []static.Alloc{{Name: "a", Bytes: mb1, Managed: true}, {Name: "b", Bytes: mb1, Managed: true}}}
	for it := range int64(2) {
		k := static.Kernel{Name: "k", GridX: 4096, GridY: 1, BlockX: 64, BlockY: 1, HostIter: it, HostIters: 2}
		for _, a := range []string{"a", "b"} {
			k.Ops = append(k.Ops, static.MemOp{Alloc: a, ElemBytes: 4,
				Index: aff(0, tm(static.HostIter, 1), tm(static.BlockX, 64), tm(static.ThreadX, 1)), BranchFraction: 1})
		}
		p.Kernels = append(p.Kernels, k)
	}
	rt, err := NewRuntime(p, smallGPU, Memory{Capacity: 24 * kb64, Unit: kb64})
	require.NoError(t, err)
	ls := rt.Plan()
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "a", Bytes: mb1, Do: PinGPU},
		{Alloc: "b", Bytes: 7 * kb64, Do: PinGPU},
		{Alloc: "b", Offset: 7 * kb64, Bytes: mb1 - 7*kb64, Do: PinHost},
	}, ls[0].Actions))
	// Two 1 MB windows do not fit, so the batch halved to one iteration:
	// at iteration 1 the same ranges are pinned again (nothing to release;
	// b's host tail is unchanged).
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "a", Bytes: mb1, Do: PinGPU},
		{Alloc: "b", Bytes: 7 * kb64, Do: PinGPU},
	}, ls[1].Actions))
}

// With 3 MB available (49 units of 64 KB, one kept back), doitgen's two
// 2 MB windows of 16 iterations (4 MB) do not fit: the batch halves to 8
// iterations, 8 x 128 KB = 1 MB per window (2 MB in all), so [0, 1 MB) of
// A and sum is pinned before r = 0 and moved to [1 MB, 2 MB) before r = 8
// (launch 16).
func TestAlgorithm2BatchHalvesToFit(t *testing.T) {
	_, p, err := workload.Describe("doitgen", workload.Params{Seed: 1})
	require.NoError(t, err)
	const kb64, mb1 = 64 << 10, 1 << 20
	rt, err := NewRuntime(p, GPU{SMs: 28, WarpsPerSM: 64}, Memory{Capacity: 49 * kb64, Unit: kb64})
	require.NoError(t, err)
	ls := rt.Plan()
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "A", Bytes: mb1, Do: PinGPU},
		{Alloc: "sum", Bytes: mb1, Do: PinGPU},
		{Alloc: "C4", Bytes: 4096, Do: PinGPU},
	}, ls[0].Actions))
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "A", Bytes: mb1, Do: Release},
		{Alloc: "A", Offset: mb1, Bytes: mb1, Do: PinGPU},
		{Alloc: "sum", Bytes: mb1, Do: Release},
		{Alloc: "sum", Offset: mb1, Bytes: mb1, Do: PinGPU},
		{Alloc: "C4", Bytes: 4096, Do: PinGPU},
	}, ls[16].Actions))
}

// A window stays pinned while launches that do not touch its structure run,
// so it holds memory they may not place into. 5 units of 64 KB leave 4
// (256 KB): launch 0 reads b[iter + 64 bid + tid] over 512 blocks of 64
// threads, its whole 128 KB, and pins it as b's window; launch 1 (the same
// iteration) reads a the same way and c (256 KB) once per thread: b's
// 128 KB are held, a's window takes the other 128 KB, and Algorithm 1 has
// nothing left for c, which is pinned on host (without the held window it
// would pin 128 KB of c on top of a full memory).
func TestAlgorithm2HeldWindowsCount(t *testing.T) {
	const kb64, kb128 = 64 << 10, 128 << 10
	p := &static.Program{Workload: "held", Allocs: []static.Alloc{
		{Name: "a", Bytes: kb128, Managed: true}, {Name: "b", Bytes: kb128, Managed: true}, {Name: "c", Bytes: 2 * kb128, Managed: true}}}
	whole := aff(0, tm(static.HostIter, 1), tm(static.BlockX, 64), tm(static.ThreadX, 1))
	p.Kernels = []static.Kernel{
		{Name: "kb", GridX: 512, GridY: 1, BlockX: 64, BlockY: 1, HostIter: 0, HostIters: 2,
			Ops: []static.MemOp{{Alloc: "b", ElemBytes: 4, Index: whole, BranchFraction: 1}}},
		{Name: "ka", GridX: 512, GridY: 1, BlockX: 64, BlockY: 1, HostIter: 0, HostIters: 2,
			Ops: []static.MemOp{{Alloc: "a", ElemBytes: 4, Index: whole, BranchFraction: 1},
				{Alloc: "c", ElemBytes: 8, Index: aff(0, tm(static.BlockX, 64), tm(static.ThreadX, 1)), BranchFraction: 1}}},
	}
	rt, err := NewRuntime(p, smallGPU, Memory{Capacity: 5 * kb64, Unit: kb64})
	require.NoError(t, err)
	ls := rt.Plan()
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "a", Bytes: kb128, Do: OnDemand},
		{Alloc: "c", Bytes: 2 * kb128, Do: OnDemand},
		{Alloc: "b", Bytes: kb128, Do: PinGPU},
	}, ls[0].Actions))
	require.Empty(t, cmp.Diff([]Action{
		{Alloc: "a", Bytes: kb128, Do: PinGPU},
		{Alloc: "c", Bytes: 2 * kb128, Do: PinHost},
	}, ls[1].Actions))
}
