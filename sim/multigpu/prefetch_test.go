package multigpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/workload"
)

// A 4 KB page over PCIe 4.0 at 32 GB/s and 1.0 GHz: 32 bytes a cycle,
// 128 cycles a page; one direction of the 1 us round trip is 500 cycles.
// Over NVLink (300 bytes a cycle) 16 pages back to back are 65,536 / 300
// = 218.45 cycles on the wire, 219 whole ones. Both are blocks/pcie links:
// a packet is granted the cycle after the link takes it, and a packet
// taken while its predecessor is on the wire follows it without a gap.
const (
	pciePage    = 128
	pcieLatency = 500
	nvlink16    = 219
	nvlinkLat   = 200
)

// TestOnTouchPrefetchCycles: GPU 0 reads page 0 of a 64 KB allocation (a
// cold fault: the prefetcher brings the whole 64 KB block, 16 pages, from
// host memory), then GPU 1 reads page 0 (the block migrates GPU 0 -> GPU
// 1), then page 5, which it now holds: no fault. From the cycle T0 the
// driver takes GPU 0's walk:
//
//	T0, T0+1      buffered, taken;  T0+2..T0+2+L  fault latency
//	T0+3+L        the first of 16 page packets (page 0, then pages 1..15)
//	              enters GPU 0's PCIe link, granted at T0+4+L; the others
//	              follow back to back, so page k's last byte is at
//	              T0+4+L+128(k+1); the 16th copy waits for its packet:
//	              T0+4+L+2048 and the 500-cycle latency
//	T0+5+L+2048+500 .. +19     GPU 0's PTEs of pages 1..15 written
//	T0+20+L+2048+500           page 0's PTE;  +21  answer registered
//	T0+22+L+2048+500           GPU 0's router takes it
//
// From the cycle T of GPU 1's walk:
//
//	T, T+1        buffered, taken;  T+2..T+2+L  fault latency
//	T+3+L+4k      page k's PTE in GPU 0 written not present, then its
//	              shootdown: armed, taken, acknowledged (4 cycles a page,
//	              as TestOnTouchMigrationCycles), k = 0..15
//	T+67+L        the first packet enters the GPU 0 -> GPU 1 NVLink,
//	              granted at T+68+L; the 16 pages' 219 wire cycles end at
//	              T+68+L+219, the last copy waits for them and the
//	              200-cycle latency: T+487+L
//	T+488+L .. T+502+L   GPU 1's PTEs of pages 1..15
//	T+503+L       page 0's;  T+504+L  answer registered;  T+505+L  taken
func TestOnTouchPrefetchCycles(t *testing.T) {
	wl := newPerBlock()
	page5 := wl.access(workload.OpLoad)
	page5.Addr[0] += 5 << 12
	wl.ops = [][]workload.Op{{wl.access(workload.OpLoad)}, {compute(20000), wl.access(workload.OpLoad), compute(5000), page5}}
	cfg := directedConfig(t, "ot-prefetch")
	cfg.MultiGPU.MemoryPct = 200 // 32 frames a GPU: a batch takes at most 16
	s, r, ev := run(t, cfg, wl)
	require.Len(t, ev.remote[0], 1)
	require.Len(t, ev.remote[1], 1, "page 5 came with page 0: no second fault")
	T0 := ev.remote[0][0]
	copied := T0 + 4 + faultL + 16*pciePage + pcieLatency
	require.Len(t, ev.update[0], 32, "16 installs, then 16 invalidations")
	for k := range 15 {
		assert.Equal(t, copied+1+uint64(k), ev.update[0][k], "GPU 0's PTE of page %d", k+1)
	}
	assert.Equal(t, copied+16, ev.update[0][15], "GPU 0's PTE of page 0")
	assert.Equal(t, []uint64{T0 + 22 + faultL + 2048 + 500}, ev.answer[0])

	T := ev.remote[1][0]
	for k := range 16 {
		assert.Equal(t, T+3+faultL+4*uint64(k), ev.update[0][16+k], "GPU 0's PTE of page %d invalidated", k)
	}
	moved := T + 68 + faultL + nvlink16 + nvlinkLat
	require.Len(t, ev.update[1], 16)
	for k := range 15 {
		assert.Equal(t, moved+1+uint64(k), ev.update[1][k], "GPU 1's PTE of page %d", k+1)
	}
	assert.Equal(t, T+503+faultL, ev.update[1][15])
	assert.Equal(t, []uint64{T + 505 + faultL}, ev.answer[1])

	assert.Equal(t, uint64(1), r.PerGPU[0].LocalFaults)
	assert.Equal(t, uint64(1), r.PerGPU[1].LocalFaults)
	assert.Equal(t, uint64(16), r.PerGPU[0].Migrations)
	assert.Equal(t, uint64(15), r.PerGPU[0].Prefetched)
	assert.Equal(t, uint64(16*4096), r.PerGPU[0].PCIeH2DBytes)
	assert.Equal(t, uint64(16*4096), r.PerGPU[1].NVLinkBytes)
	assert.Equal(t, uint64(16), r.PerGPU[0].Invalidations, "one shootdown per page")
	for i := range 16 {
		assert.Equal(t, uint16(1<<1), s.Driver.Table().Page(i).Holders, "page %d on GPU 1", i)
	}
}

// TestPrefetchTreeRule: one GPU reads the first page of blocks 0, 1, 2, 3
// and 4 of a 2 MB allocation. Block 0 comes whole (15 prefetched); block 1
// fills its pair; block 2 makes the first four blocks 48 of 64 pages, more
// than half, so block 3 comes too (31 prefetched) and the read of block 3
// finds it; block 4 makes the first eight blocks 80 of 128 pages, so
// blocks 5, 6 and 7 come with it (63 prefetched). Four faults move 128
// pages; on-touch without the prefetcher takes five faults for five pages.
func TestPrefetchTreeRule(t *testing.T) {
	wl := &perBlock{allocs: []workload.Alloc{{Name: "data", Bytes: 2 << 20, Kind: workload.Managed}}}
	workload.Layout(wl.allocs)
	var reads []workload.Op
	for b := range 5 {
		op := wl.access(workload.OpLoad)
		op.Addr[0] += uint64(b) << 16
		reads = append(reads, op, compute(5000))
	}
	wl.ops = [][]workload.Op{reads}
	s, r, _ := run(t, directedConfig(t, "ot-prefetch"), wl)
	assert.Equal(t, uint64(4), r.PerGPU[0].LocalFaults)
	assert.Equal(t, uint64(128), r.PerGPU[0].Migrations)
	assert.Equal(t, uint64(15+15+31+63), r.PerGPU[0].Prefetched)
	for i := range 512 {
		assert.Equal(t, i < 128, s.Driver.Table().Page(i).Has(0), "page %d", i)
	}
	_, r, _ = run(t, directedConfig(t, "ot"), wl)
	assert.Equal(t, uint64(5), r.PerGPU[0].LocalFaults)
	assert.Equal(t, uint64(5), r.PerGPU[0].Migrations)
}

// TestPrefetchBatchTrimmed: a GPU of 11 frames (70% of 16 pages) takes
// batches of at most 5 pages (half of its frames, rounded down): the read
// of page 0 brings pages 1..4 and leaves the block's highest eleven.
func TestPrefetchBatchTrimmed(t *testing.T) {
	wl := newPerBlock()
	wl.ops = [][]workload.Op{{wl.access(workload.OpLoad)}}
	s, r, _ := run(t, directedConfig(t, "ot-prefetch"), wl)
	assert.Equal(t, 11, s.FramesPerGPU)
	assert.Equal(t, uint64(4), r.PerGPU[0].Prefetched)
	for i := range 16 {
		assert.Equal(t, i < 5, s.Driver.Table().Page(i).Has(0), "page %d", i)
	}
}
