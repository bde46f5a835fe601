package multigpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/workload"
)

// TestMGPUSimShootdownFlushCycles: under multigpu.fault_flow = mgpusim,
// GPU 0 reads the page 0 (it migrates there), stores to D = 3 lines of page
// 1 and loads N - D = 5 more, then issues one-cycle compute instructions;
// GPU 1 reads page 0 later, so the driver migrates it GPU 0 -> GPU 1 and
// shoots GPU 0 down. Page 0's line has already left GPU 0's caches with
// its PTE (the Unmap port), so the flush finds N = 8 valid L2 lines, D = 3
// of them dirty (one 32 B sector each), and the 5 loaded lines in the L1.
// From the cycle F GPU 0's caches take the flush request:
//
//	F-2         GPU 0's PTE of page 0 written not present: the page
//	            enters the caches' unmapped queue
//	F-1..F+30   its 32 lines are invalidated, one per cycle in the L2
//	            and the L1 (existing path); the page leaves the queue
//	F           flush request taken (the shootdown's first cycle after
//	            arming)
//	F+1..F+31   drain: waits for the unmapped page and its last
//	            invalidation's second pipeline stage (resolved at F+31)
//	F+32        drain done: FIFOs, miss queues, pipelines, queue empty
//	F+33..F+160 walk: set k = 0..127 enters every array at F+33+k (the
//	            L2's 128 sets; the L1's 32 are done by F+64)
//	F+161       the L2's set 127 resolves
//	F+162       write-back: the 3 dirty sectors (96 B at 484 B per cycle)
//	            left the channel long before; the flush is done
//	F+163 = X   Flushed offered and taken by the driver (X = F+35+sets)
//	X+1         the hold falls and GPU 0's SM issues again
func TestMGPUSimShootdownFlushCycles(t *testing.T) {
	const n, d, sets = 8, 3, 128
	wl := newPerBlock()
	ops := []workload.Op{wl.access(workload.OpLoad)}
	for k := range n {
		kind := workload.OpLoad
		if k < d {
			kind = workload.OpStore
		}
		op := wl.accessPage(kind, 1)
		op.Addr[0] += uint64(k) * 128
		ops = append(ops, op)
	}
	for range 30000 {
		ops = append(ops, compute(1))
	}
	wl.ops = [][]workload.Op{ops, {compute(20000), wl.access(workload.OpLoad)}}
	cfg := directedConfig(t, "ot")
	cfg.MultiGPU.FaultFlow = "mgpusim"
	cfg.Cache.L2, cfg.Cache.L1 = true, true
	s, err := NewWith(cfg, wl)
	require.NoError(t, err)
	c := s.GPUs[0].Caches
	var flush, flushed, resumed, held, unmap []uint64
	var l2Lines, l1Lines, dirty uint64
	issued := uint64(0)
	s.Sim.Probe(func(cyc uint64) {
		if c.Flush.Fire() {
			flush = append(flush, cyc)
			st := c.Stats()
			l2Lines, l1Lines, dirty = st.Invalidated, st.L1Invalidated, st.WriteBackSectors
		}
		if c.Flushed.Fire() {
			flushed = append(flushed, cyc)
			st := c.Stats()
			l2Lines, l1Lines, dirty = st.Invalidated-l2Lines, st.L1Invalidated-l1Lines, st.WriteBackSectors-dirty
		}
		if s.GPUs[0].GMMU.Update.Fire() {
			unmap = append(unmap, cyc)
		}
		if s.GPUs[0].Hold.Get() {
			held = append(held, cyc)
		}
		now := s.GPUs[0].SMs[0].Stats().Issued
		if now != issued && len(flushed) == 1 && len(resumed) == 0 {
			resumed = append(resumed, cyc)
		}
		issued = now
	})
	_, err = s.Run()
	require.NoError(t, err)
	require.NoError(t, s.Check())
	require.Len(t, flush, 1)
	F := flush[0]
	X := F + 35 + sets
	require.NotEmpty(t, unmap)
	assert.Equal(t, F-2, unmap[len(unmap)-1], "page 0 left GPU 0 two cycles before the flush")
	assert.Equal(t, []uint64{X}, flushed)
	assert.Equal(t, []uint64{X + 1}, resumed)
	assert.Equal(t, uint64(n), l2Lines, "every valid L2 line flushed")
	assert.Equal(t, uint64(n-d), l1Lines, "every valid L1 line flushed")
	assert.Equal(t, uint64(d), dirty, "the dirty sectors written back")
	require.NotEmpty(t, held)
	assert.Equal(t, X, held[len(held)-1], "held until the flush is over")
}
