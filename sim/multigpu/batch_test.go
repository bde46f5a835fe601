package multigpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// A cold 4 KB copy from host memory over a GPU's PCIe link (the grit
// preset's pcie.bandwidth_gbs 32 and pcie.rtt_us 1): granted the cycle after
// the link takes it, 4096 / 32 = 128 wire cycles at 1.0 GHz, then half the
// 1 us round trip, 500 cycles. A plan for a cold fault whose copy starts at
// C: the packet is out at C+pcieCopy, the requester's PTE written at
// C+pcieCopy+1, the answer registered at C+pcieCopy+2 and taken by the
// router at C+pcieCopy+3, the cycle the driver takes its next request.
const pcieCopy = 1 + 128 + 500

// coldEach is a workload whose block b (on GPU b) loads page b after
// 10-b cycles of compute: the dispatcher starts block b a cycle after block
// b-1, so that the loads issue, and their walks reach the driver, in one
// cycle.
func coldEach(gpus int) *perBlock {
	wl := newPerBlock()
	for b := range gpus {
		wl.ops = append(wl.ops, []workload.Op{compute(uint32(10 - b)), wl.accessPage(workload.OpLoad, b)})
	}
	return wl
}

// TestBatchPaysOneLatency: GPUs 0 and 1 fault on their own cold pages in
// the same cycle T. Batched (multigpu.fault_batch 256), one batch takes
// both and pays the latency L once:
//
//	T           both walks enter their buffers
//	T+1         the batch starts with both; GPU 0's taken
//	T+2..T+2+L  the batch's latency;  T+3+L  GPU 0's copy starts
//	A0 = T+3+L+pcieCopy+3 = T+635+L   GPU 0 answered; GPU 1's taken
//	A0+1        GPU 1's copy starts (its latency is paid)
//	A1 = A0+1+pcieCopy+3 = T+1268+L
//
// One at a time (multigpu.fault_batch 1), GPU 1's fault is a batch of its
// own and pays L again: taken at A0, latency A0+1..A0+1+L, copy at A0+2+L,
// answered at A0+2+L+pcieCopy+3 = T+1269+2L.
//
// MGPUSim's flow (multigpu.fault_flow = mgpusim) pays no latency: GPU 0's
// fault is taken at T+1 and its copy starts at T+2, answered at
// A0 = T+2+pcieCopy+3 = T+634; GPU 1's taken then, its copy at A0+1,
// answered at A0+1+pcieCopy+3 = T+1267.
func TestBatchPaysOneLatency(t *testing.T) {
	for _, tc := range []struct {
		flow   string
		batch  int
		a0, a1 uint64 // the GPUs' answers after T
	}{
		{"uvm", 256, 635 + faultL, 1268 + faultL},
		{"uvm", 1, 635 + faultL, 1269 + 2*faultL},
		{"mgpusim", 256, 634, 1267},
	} {
		t.Run(fmt.Sprint(tc.flow, tc.batch), func(t *testing.T) {
			cfg := directedConfig(t, "ot")
			cfg.MultiGPU.FaultFlow, cfg.MultiGPU.FaultBatch = tc.flow, tc.batch
			_, r, ev := run(t, cfg, coldEach(2))
			require.Len(t, ev.remote[0], 1)
			require.Equal(t, ev.remote[0], ev.remote[1], "both faults arrive in one cycle")
			T := ev.remote[0][0]
			assert.Equal(t, []uint64{T + tc.a0}, ev.answer[0])
			assert.Equal(t, []uint64{T + tc.a1}, ev.answer[1])
			assert.Equal(t, uint64(1), r.PerGPU[0].LocalFaults)
			assert.Equal(t, uint64(1), r.PerGPU[1].LocalFaults)
		})
	}
}

// TestBatchSplitsAtItsSize: GPUs 0, 1 and 2 fault on their own cold pages
// in cycle T, with multigpu.fault_batch 2. The first batch takes GPUs 0 and
// 1 (one latency, as in TestBatchPaysOneLatency: answered at T+635+L and
// A1 = T+1268+L); GPU 2's fault is left for the next batch, which starts
// when GPU 1 is answered and pays L again: taken at A1, latency
// A1+1..A1+1+L, copy at A1+2+L, answered at A1+2+L+pcieCopy+3 =
// T+1902+2L.
func TestBatchSplitsAtItsSize(t *testing.T) {
	cfg := directedConfig(t, "ot")
	cfg.MultiGPU.GPUs = 3
	cfg.MultiGPU.FaultBatch = 2
	_, _, ev := run(t, cfg, coldEach(3))
	require.Len(t, ev.remote[0], 1)
	T := ev.remote[0][0]
	require.Equal(t, ev.remote[0], ev.remote[2], "the three faults arrive in one cycle")
	assert.Equal(t, []uint64{T + 635 + faultL}, ev.answer[0])
	assert.Equal(t, []uint64{T + 1268 + faultL}, ev.answer[1])
	assert.Equal(t, []uint64{T + 1902 + 2*faultL}, ev.answer[2])
}

// TestBatchMergesFaultsOnOnePage: two SMs of GPU 0 load the same cold page
// in the same cycle; both walks reach the driver (the GMMU merges the walk
// and answers both requests not present), one batch takes them, the first
// plan migrates the page once, and the second fault finds it in place and
// is answered at once, with no latency and no copy.
func TestBatchMergesFaultsOnOnePage(t *testing.T) {
	for _, batch := range []int{256, 1} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			cfg := directedConfig(t, "ot")
			cfg.GPU.SMs = 2
			cfg.MultiGPU.FaultBatch = batch
			wl := newPerBlock()
			wl.ops = [][]workload.Op{{wl.access(workload.OpLoad)}, {wl.access(workload.OpLoad)}}
			_, r, ev := run(t, cfg, wl)
			require.Len(t, ev.remote[0], 2, "both SMs' walks reach the driver")
			T := ev.remote[0][0]
			require.Len(t, ev.answer[0], 2)
			assert.Equal(t, T+635+faultL, ev.answer[0][0])
			assert.LessOrEqual(t, ev.answer[0][1], ev.answer[0][0]+2, "the second answered as soon as the first")
			assert.Equal(t, uint64(1), r.PerGPU[0].Migrations)
			assert.Equal(t, uint64(4096), r.PerGPU[0].PCIeH2DBytes, "one copy")
			assert.Equal(t, uint64(1), r.PerGPU[0].LocalFaults, "one planned fault")
		})
	}
}

// TestRandomFlowsKeepInvariants: four GPUs of two SMs run seeded random
// loads and stores over sixteen pages under every scheme and every driver
// flow, the invariants (System.Check) checked as the run goes and at its
// end, and every access served.
func TestRandomFlowsKeepInvariants(t *testing.T) {
	flows := []struct {
		flow   string
		batch  int
		caches bool // the grit preset's L1 and L2 data caches (the mgpusim shootdown flushes them)
	}{{"uvm", 256, false}, {"uvm", 3, false}, {"uvm", 1, false}, {"mgpusim", 256, false}, {"mgpusim", 256, true}}
	for _, pol := range []string{"ot", "ot-prefetch", "ac", "dup", "first-touch", "ideal", "grit"} {
		for _, fl := range flows {
			name := fmt.Sprintf("%s/%s-%d", pol, fl.flow, fl.batch)
			if fl.caches {
				name += "-caches"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cfg := directedConfig(t, pol)
				cfg.MultiGPU.GPUs = 4
				cfg.GPU.SMs = 2
				cfg.MultiGPU.FaultFlow, cfg.MultiGPU.FaultBatch = fl.flow, fl.batch
				cfg.MultiGPU.AccessThreshold = 8
				cfg.Cache.L2, cfg.Cache.L1 = fl.caches, fl.caches
				rng := rand.New(rand.NewPCG(14, 15))
				wl := newPerBlock()
				for range 8 {
					var ops []workload.Op
					for range 40 {
						kind := workload.OpLoad
						if rng.IntN(4) == 0 {
							kind = workload.OpStore
						}
						ops = append(ops, wl.accessPage(kind, rng.IntN(16)), compute(uint32(rng.IntN(300))))
					}
					wl.ops = append(wl.ops, ops)
				}
				s, r, _ := run(t, cfg, wl)
				assert.Equal(t, uint64(8*40), r.Total.LocalAccesses+r.Total.RemoteAccesses, "every access served once")
				// Each access is one lane, one line: every remote access
				// crossed NVLink as one line, read or written (the last
				// posted writes land after the kernel ends).
				require.NoError(t, s.Sim.Run(10_000))
				lines := uint64(0)
				for _, gp := range s.GPUs {
					read, written := gp.Lines.Lines()
					lines += read + written
				}
				assert.Equal(t, r.Total.RemoteAccesses, lines, "remote lines over NVLink")
			})
		}
	}
}

// The configuration's multigpu.fault_batch range and multigpu.fault_flow
// values are the driver's.
func TestFaultKeysMatchTheDriver(t *testing.T) {
	c := config.Default()
	k, err := config.LookupKey("multigpu.fault_batch")
	require.NoError(t, err)
	lo, hi, ok := k.Bounds(&c)
	require.True(t, ok)
	assert.Equal(t, []string{"1", fmt.Sprint(MaxBatch)}, []string{lo, hi})
	k, err = config.LookupKey("multigpu.fault_flow")
	require.NoError(t, err)
	assert.Equal(t, "one of "+strings.Join(Flows[:], ", "), k.Allowed(&c))
	for _, name := range Flows {
		_, err := ParseFlow(name)
		assert.NoError(t, err)
	}
	_, err = ParseFlow("serial")
	assert.ErrorContains(t, err, "unknown fault flow")
}
