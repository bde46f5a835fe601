package multigpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/workload"
)

// nvlink3 is three 4 KB pages back to back on one NVLink (300 bytes a
// cycle at 1.0 GHz): 12,288 / 300 = 40.96 cycles on the wire, 41 whole
// ones.
const nvlink3 = 41

// TestAccessCounterPromotionMovesGroup: GPU 0 reads pages 0, 1 and 2 of a
// 64 KB group (three cold faults: it owns them); GPU 1 maps page 1
// remotely and then page 0, whose 255th read is the group's 256th remote
// hit (page 1's read is the first) and raises the promotion; GPU 1 then
// computes, so no remote line is on the link when the copies go. The promotion
// moves every page of the group held only by GPU 0 under access-counter
// migration, 0, 1 and 2 (pages 3..15 were never touched: they stay in
// host memory), in one plan. From the cycle P the driver takes it:
//
//	P, P+1        buffered, taken;  P+2..P+2+L  fault latency
//	P+3+L+4k      page k's PTEs written not present in the GPUs that hold
//	              or map it (pages 0 and 1: both GPUs; page 2: GPU 0),
//	              then the shootdown: armed, taken, acknowledged (4
//	              cycles a page, as TestOnTouchPrefetchCycles), k = 0..2
//	P+15+L        the first of three packets enters the GPU 0 -> GPU 1
//	              NVLink, granted at P+16+L; 41 wire cycles for the three,
//	              and the last copy waits for the 200-cycle latency:
//	              P+16+L+41+200 = P+257+L
//	P+258+L       GPU 1's PTE of page 1;  P+259+L  page 2's
//	P+260+L       page 0's; a promotion has no walk to answer
func TestAccessCounterPromotionMovesGroup(t *testing.T) {
	wl := newPerBlock()
	reads := []workload.Op{compute(20000), wl.accessPage(workload.OpLoad, 1)}
	for range 255 {
		reads = append(reads, wl.access(workload.OpLoad))
	}
	wl.ops = [][]workload.Op{
		{wl.accessPage(workload.OpLoad, 0), wl.accessPage(workload.OpLoad, 1), wl.accessPage(workload.OpLoad, 2)},
		append(reads, compute(20000)),
	}
	s, r, ev := run(t, directedConfig(t, "ac"), wl)
	require.Len(t, ev.promote[1], 1)
	P := ev.promote[1][0]
	// GPU 1's writes: the remote mappings of pages 1 and 0, the
	// invalidations of both, then the three local PTEs.
	require.Len(t, ev.update[1], 7)
	assert.Equal(t, []uint64{P + 3 + faultL, P + 7 + faultL}, ev.update[1][2:4])
	assert.Equal(t, []uint64{P + 3 + faultL, P + 7 + faultL, P + 11 + faultL}, ev.update[0][3:], "GPU 0 invalidated page by page")
	moved := P + 16 + faultL + nvlink3 + nvlinkLat
	assert.Equal(t, []uint64{moved + 1, moved + 2, moved + 3}, ev.update[1][4:])
	assert.Equal(t, P+260+faultL, moved+3)

	assert.Equal(t, uint64(1), r.PerGPU[1].Promotions)
	assert.Equal(t, uint64(3), r.PerGPU[1].Migrations)
	assert.Equal(t, uint64(3), r.PerGPU[0].Invalidations)
	assert.Equal(t, uint64(2), r.PerGPU[1].Invalidations)
	assert.Equal(t, uint64(2), r.PerGPU[1].LocalFaults, "page 2 came without a fault")
	tb := s.Driver.Table()
	for i := range 16 {
		p := tb.Page(i)
		if i < 3 {
			assert.Equal(t, uint16(1<<1), p.Holders, "page %d on GPU 1", i)
			assert.Zero(t, p.Mapped, "page %d", i)
		} else {
			assert.Zero(t, p.Holders, "page %d in host memory", i)
		}
	}
}

// TestAccessCounterNotifiesOnceUntilServed: with a 200 us (200,000-cycle)
// fault latency, GPU 1 goes on reading page 0 remotely while its
// promotion waits for the driver: more than 256 further remote hits, which
// do not raise again, since the group stays notified until the driver has
// served the promotion. From the cycle P the driver takes it, the plan is
// TestAccessCounterPromotionCycles's with L = 200,000: the broadcast at
// P+3+L, the local PTE at P+223+L, after which the driver clears the
// group (P+224+L, taken by the counters the same cycle): count 0, not
// notified.
func TestAccessCounterNotifiesOnceUntilServed(t *testing.T) {
	const latency = 200_000
	wl := newPerBlock()
	reads := []workload.Op{compute(20000)}
	for range 2000 {
		reads = append(reads, wl.access(workload.OpLoad))
	}
	wl.ops = [][]workload.Op{{wl.access(workload.OpLoad)}, reads}
	cfg := directedConfig(t, "ac")
	cfg.MultiGPU.FaultLatencyUs = latency / 1000
	s, r, ev := run(t, cfg, wl)
	require.Len(t, ev.promote[1], 1, "one promotion for the group")
	P := ev.promote[1][0]
	require.Len(t, ev.update[1], 3)
	assert.Equal(t, P+3+latency, ev.update[1][1])
	assert.Equal(t, P+223+latency, ev.update[1][2])
	assert.Greater(t, r.PerGPU[1].RemoteAccesses, uint64(2*256), "hits while the promotion waited")
	assert.Equal(t, uint64(1), r.PerGPU[1].Promotions)
	c := s.GPUs[1].Counters
	assert.Zero(t, c.groups.At(0).Q(), "cleared after the service")
	assert.Zero(t, c.notified.At(0).Q())
}
