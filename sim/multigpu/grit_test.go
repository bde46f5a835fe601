package multigpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/grit"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// pingPong: GPU 0 and GPU 1 read the page in turn, two reads each, far
// enough apart that each read is a local fault of its own: faults 1-3
// migrate the page on-touch (host -> 0 -> 1 -> 0), fault 4 (GPU 1's
// second read) reaches GRIT's threshold with the R/W bit still 0.
func pingPong() *perBlock {
	wl := newPerBlock()
	wl.ops = [][]workload.Op{
		{wl.access(workload.OpLoad), compute(20000), wl.access(workload.OpLoad)},
		{compute(10000), wl.access(workload.OpLoad), compute(20000), wl.access(workload.OpLoad)},
	}
	return wl
}

// TestGritOnTouchToDuplicationAtFourthFault: under grit the page's first
// three faults keep the initial scheme, on-touch; the fourth interrupts
// the driver, which decides duplication (read only). From the cycle T of
// GPU 1's second walk (the fourth fault):
//
//	T, T+1      buffered, taken: GRIT counts the fault (the PA-Cache hits:
//	            the decision is out well within the host's 4 x 100 = 400
//	            cycle walk, so the handling does not wait)
//	T+2..T+2+L  fault latency
//	T+3+L       GPU 0's copy made read-only (PTE written with scheme 11)
//	T+4+L       shootdown armed;  T+5+L  taken;  T+6+L  acknowledged
//	T+7+L       the copy GPU 0 -> GPU 1 enters the NVLink, out at
//	            T+7+L+nvlinkCopy = T+7+L+215 = T+222+L
//	T+223+L     GPU 1's read-only replica PTE written
//	T+224+L     answer registered;  T+225+L  GPU 1's router takes it
//
// Both GPUs then hold the page read-only, and the host PTE and both GPU
// PTEs carry scheme bits 11 (duplication).
func TestGritOnTouchToDuplicationAtFourthFault(t *testing.T) {
	s, r, ev := run(t, directedConfig(t, GritPolicy), pingPong())
	require.Len(t, ev.remote[0], 2)
	require.Len(t, ev.remote[1], 2)
	T := ev.remote[1][1]
	assert.Equal(t, T+3+faultL, ev.update[0][len(ev.update[0])-1], "GPU 0's copy downgraded")
	assert.Equal(t, T+223+faultL, ev.update[1][len(ev.update[1])-1], "GPU 1's replica installed")
	assert.Equal(t, T+225+faultL, ev.answer[1][len(ev.answer[1])-1])
	assert.Equal(t, uint64(1), r.PerGPU[1].ReplicasMade)
	assert.Equal(t, uint64(3), r.PerGPU[0].Migrations+r.PerGPU[1].Migrations, "faults 1-3 migrate on-touch")
	p := s.Driver.Table().Page(0)
	assert.Equal(t, uint16(0b11), p.Holders)
	assert.False(t, p.Writable)
	assert.Equal(t, pte.SchemeDuplication, p.Scheme)
	g := s.Policy.Decider.(*GritDecider)
	vpn := s.Layout.BaseVPN
	assert.Equal(t, pte.SchemeDuplication, g.GPUScheme(1, vpn))
	host, ok := g.HostPTE(vpn)
	require.True(t, ok)
	assert.Equal(t, pte.SchemeDuplication, host.Scheme())
	assert.Equal(t, pte.SchemeDuplication, s.Driver.planner.localPTE(0, 0).Scheme(), "GPU 0's PTE carries the decision")
	require.NotNil(t, r.Grit)
	assert.Equal(t, uint64(4), r.Grit.Faults)
	assert.Equal(t, uint64(1), r.Grit.Interrupts)
	assert.Equal(t, uint64(1), r.Grit.ToDuplication)
	assert.Zero(t, r.Grit.StallCycles)
}

// TestGritDecisionStallsTheWalk: PA-Table only, and a host walk of 4 x 10
// = 40 cycles (gpu.walk_cycles = 10). Every fault reads its PA-Table
// record: accepted in the cycle it is taken, the lookup on the host-memory
// port a cycle later, its answer L = 100 cycles after that and the count
// one cycle later, 102 cycles in all (the previous fault's write-back is
// long over). The walk waits 102 - 40 = 62 cycles at every one of the
// four faults, 248 cycles in all, and the fourth fault's steps come 62
// cycles later than in TestGritOnTouchToDuplicationAtFourthFault.
func TestGritDecisionStallsTheWalk(t *testing.T) {
	cfg := directedConfig(t, GritPolicy)
	cfg.Grit.PACache = false
	cfg.GPU.WalkCycles = 10
	const stall = 102 - 4*10
	_, r, ev := run(t, cfg, pingPong())
	T := ev.remote[1][1]
	assert.Equal(t, T+3+faultL+stall, ev.update[0][len(ev.update[0])-1])
	assert.Equal(t, T+225+faultL+stall, ev.answer[1][len(ev.answer[1])-1])
	require.NotNil(t, r.Grit)
	assert.Equal(t, uint64(4), r.Grit.Stalls)
	assert.Equal(t, uint64(4*stall), r.Grit.StallCycles)
	assert.Equal(t, uint64(4), r.Grit.TableReads, "PA-Table only: every fault reads its record")
	assert.Equal(t, uint64(1), r.Grit.ToDuplication)
}

// TestGritAblationAndThresholdConfigsRun: GRIT Fig. 20's configurations
// and Fig. 21's thresholds run the small system to the end with the
// invariants checked; the PA-Table-only point reads the PA-Table once per
// fault, the PA-Cache points only on misses.
func TestGritAblationAndThresholdConfigsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a workload under seven configurations")
	}
	base := func() *config.Config {
		cfg := config.Default()
		require.NoError(t, cfg.ApplyPreset("grit"))
		cfg.MultiGPU.Policy = GritPolicy
		cfg.Run.Workload, cfg.Run.Scale = "grit-bfs", 0.002
		cfg.GPU.SMs = 1
		cfg.Check.Invariants = true
		return &cfg
	}
	for _, a := range grit.Ablation() {
		cfg := base()
		cfg.Grit.PACache, cfg.Grit.Prediction = a.Config.PACache, a.Config.Prediction
		s, err := New(cfg)
		require.NoError(t, err, a.Name)
		r, err := s.Run()
		require.NoError(t, err, a.Name)
		require.NoError(t, s.Check(), a.Name)
		require.NotNil(t, r.Grit, a.Name)
		faults := r.Total.LocalFaults + r.Total.ProtectionFaults
		assert.Equal(t, faults, r.Grit.Faults, "%s: GRIT counts every local and protection fault", a.Name)
		if a.Config.PACache {
			assert.Less(t, r.Grit.TableReads, faults, a.Name)
		} else {
			assert.Equal(t, faults, r.Grit.TableReads, a.Name)
		}
		if !a.Config.Prediction {
			assert.Zero(t, r.Grit.Rewrites, a.Name)
		}
	}
	for _, th := range grit.ThresholdStudy {
		cfg := base()
		cfg.Grit.Threshold = th
		s, err := New(cfg)
		require.NoError(t, err)
		r, err := s.Run()
		require.NoError(t, err, "threshold %d", th)
		require.NotNil(t, r.Grit)
		assert.Positive(t, r.Cycles)
	}
}

// TestGritStallWithoutTheBatchLatency: PA-Table only, a 40-cycle host walk
// (as in TestGritDecisionStallsTheWalk: each decision waits 102 - 40 = 62
// cycles beyond the walk), and GPUs 0 and 1 faulting on their own cold
// pages in one batch (coldEach). GPU 0's plan pays the batch's latency and
// its stall in one wait: taken at T+1, waiting T+2..T+2+L+62, its copy at
// T+3+L+62, answered at A0 = T+3+L+62+pcieCopy+3 = T+697+L. GPU 1's plan
// pays no latency but still waits for its decision, a step of its own:
// taken at A0, the wait A0+1..A0+63, the copy at A0+64, answered at
// A0+64+pcieCopy+3 = T+1393+L.
func TestGritStallWithoutTheBatchLatency(t *testing.T) {
	cfg := directedConfig(t, GritPolicy)
	cfg.Grit.PACache = false
	cfg.GPU.WalkCycles = 10
	_, r, ev := run(t, cfg, coldEach(2))
	require.Equal(t, ev.remote[0], ev.remote[1], "both faults arrive in one cycle")
	T := ev.remote[0][0]
	assert.Equal(t, []uint64{T + 697 + faultL}, ev.answer[0])
	assert.Equal(t, []uint64{T + 1393 + faultL}, ev.answer[1])
	require.NotNil(t, r.Grit)
	assert.Equal(t, uint64(2), r.Grit.Stalls)
	assert.Equal(t, uint64(2*62), r.Grit.StallCycles)
}
