package characterize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/workload"
)

// handMade is a workload of one 8-page allocation and one kernel whose
// block b runs ops[b] in its single warp.
type handMade struct {
	allocs []workload.Alloc
	ops    [][]workload.Op
}

func (h *handMade) Name() string             { return "hand" }
func (h *handMade) Class() string            { return workload.Regular }
func (h *handMade) Allocs() []workload.Alloc { return h.allocs }
func (h *handMade) Footprint() uint64        { return h.allocs[0].Bytes }
func (h *handMade) Phases() []workload.Phase {
	k := &workload.Kernel{Name: "k", Blocks: len(h.ops), ThreadsPerBlock: workload.WarpSize,
		NewWarp: func(b, w int) workload.WarpStream { return workload.Replay(h.ops[b]) }}
	host := &workload.HostAccess{Alloc: "x", Ranges: [][2]uint64{{workload.VABase, workload.VABase + 8*PageBytes}}, Write: true}
	return []workload.Phase{{Host: host}, {Kernel: k}}
}

func access(kind workload.OpKind, pages ...uint64) workload.Op {
	op := workload.Op{Kind: kind, Size: 4}
	for _, p := range pages {
		op.Addr[op.Lanes] = workload.VABase + p*PageBytes + 8
		op.Lanes++
	}
	return op
}

func TestHandMadeStreamClassification(t *testing.T) {
	ld, st := workload.OpLoad, workload.OpStore
	h := &handMade{
		allocs: []workload.Alloc{{Name: "x", Bytes: 8 * PageBytes, Base: workload.VABase}},
		ops: [][]workload.Op{
			// block 0 -> GPU 0: pages 0, 1, 2 read; page 0 twice in one
			// op counts one access.
			{access(ld, 0, 0, 1), access(ld, 2), {Kind: workload.OpCompute, Cycles: 4}},
			// block 1 -> GPU 1: reads page 1, writes page 2, reads page 4.
			{access(ld, 1), access(st, 2), access(ld, 4)},
			// block 2 -> GPU 0 again: page 0 stays private; page 3 written
			// by GPU 0 only is private.
			{access(ld, 0), access(workload.OpAtomic, 3)},
			// block 3 -> GPU 1: page 4 again (private to GPU 1).
			{access(ld, 4)},
		},
	}
	// one SM holding one one-warp block: blocks alternate GPUs 0, 1, 0, 1.
	r, err := Run(h, Placement{GPUs: 2, SMs: 1, WarpsPerSM: 1})
	require.NoError(t, err)
	// pages: 0 private (GPU 0), 1 shared read-only, 2 shared read-write,
	// 3 private (GPU 0), 4 private (GPU 1); 5-7 untouched (the host write
	// does not count).
	// accesses: page 0: 2, page 1: 2, page 2: 2, page 3: 1, page 4: 2.
	want := Counts{Pages: 5, Private: 3, SharedRO: 1, SharedRW: 1,
		Accesses: 9, PrivateAccesses: 5, SharedROAccesses: 2, SharedRWAccesses: 2}
	assert.Equal(t, Result{Workload: "hand", Counts: want, Allocs: []AllocCounts{{Name: "x", Counts: want}}}, r)
	assert.Equal(t, 2, r.Shared())
	assert.Equal(t, uint64(4), r.SharedAccesses())
	assert.InDelta(t, 60.0, Pct(r.Private, r.Pages), 1e-9)

	// on a single GPU every page is private.
	r, err = Run(h, Placement{GPUs: 1, SMs: 1, WarpsPerSM: 1})
	require.NoError(t, err)
	assert.Equal(t, 5, r.Private)
}

func TestPlacementFillsOneGPUBeforeTheNext(t *testing.T) {
	k := &workload.Kernel{Blocks: 1000, ThreadsPerBlock: 256} // 8 warps
	p := Placement{GPUs: 4, SMs: 64, WarpsPerSM: 64}
	// 64 SMs x (64 / 8) blocks = 512 blocks per GPU.
	require.Equal(t, 512, p.BlocksPerGPU(k))
	assert.Equal(t, 0, p.GPU(k, 511))
	assert.Equal(t, 1, p.GPU(k, 512))
	assert.Equal(t, 3, p.GPU(k, 4*512-1))
	assert.Equal(t, 0, p.GPU(k, 4*512), "after the last GPU the first takes blocks again")
	// a block above the occupancy limit still gets one slot per SM.
	big := &workload.Kernel{Blocks: 1, ThreadsPerBlock: 4096}
	assert.Equal(t, 64, p.BlocksPerGPU(big))
}

func TestCountsSplitByAllocation(t *testing.T) {
	ld, st := workload.OpLoad, workload.OpStore
	allocs := []workload.Alloc{{Name: "a", Bytes: 2 * PageBytes}, {Name: "b", Bytes: PageBytes}}
	workload.Layout(allocs) // b starts 2 MB after a: page 512
	h := &handMade{allocs: allocs, ops: [][]workload.Op{
		{access(ld, 0), access(st, 512)},
		{access(ld, 0, 1)},
	}}
	r, err := Run(h, Placement{GPUs: 2, SMs: 1, WarpsPerSM: 1})
	require.NoError(t, err)
	// a: page 0 shared read-only (both GPUs), page 1 private to GPU 1;
	// b: page 512 private to GPU 0.
	assert.Equal(t, []AllocCounts{
		{Name: "a", Counts: Counts{Pages: 2, Private: 1, SharedRO: 1, Accesses: 3, PrivateAccesses: 1, SharedROAccesses: 2}},
		{Name: "b", Counts: Counts{Pages: 1, Private: 1, Accesses: 1, PrivateAccesses: 1}},
	}, r.Allocs)
	assert.Equal(t, 3, r.Pages)

	// an access between the two allocations is an error.
	h.ops[1] = []workload.Op{access(ld, 100)}
	_, err = Run(h, Placement{GPUs: 2, SMs: 1, WarpsPerSM: 1})
	assert.ErrorContains(t, err, "outside its allocations")
}

func TestPlacementRejectsBadRanges(t *testing.T) {
	for _, p := range []Placement{{0, 64, 64}, {17, 64, 64}, {4, 0, 64}, {4, 64, 0}} {
		err := p.Validate()
		require.Error(t, err, "%+v", p)
	}
	_, err := Run(&handMade{allocs: []workload.Alloc{{Name: "x", Bytes: 1, Base: workload.VABase}}}, Placement{GPUs: 99, SMs: 1, WarpsPerSM: 1})
	assert.ErrorContains(t, err, "gpus = 99 outside 1..16")
}

// Expected shapes of GRIT Fig. 4 at a small scale, on GPUs of 4 SMs so that
// the small grids still spread over all four: FIR mostly private (the 15-sample overlap at every 8-page chunk),
// bitonic sort mostly shared read-write.
func TestGRITWorkloadsShapes(t *testing.T) {
	fir, err := workload.New("grit-fir", workload.Params{Scale: 1.0 / 16})
	require.NoError(t, err)
	small := Placement{GPUs: 4, SMs: 4, WarpsPerSM: 64}
	r, err := Run(fir, small)
	require.NoError(t, err)
	assert.Greater(t, Pct(r.Private, r.Pages), 90.0)
	bs, err := workload.New("grit-bs", workload.Params{Scale: 1.0 / 64})
	require.NoError(t, err)
	r, err = Run(bs, small)
	require.NoError(t, err)
	assert.Greater(t, Pct(r.SharedRW, r.Pages), 70.0)
}
