package multigpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
)

// TestParallelEvalIsExact: random multi-GPU systems (scheme, workload,
// GPUs, SMs, fault flow, L1 cache and seed drawn from a seeded
// generator, the L2 cache in every other one) give
// the same result, field for field (wall time aside), at 1, 2, 3 and 4
// threads (run.threads). The invariant checks are off: checked mode
// evaluates on one goroutine.
func TestParallelEvalIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 3))
	workloads := []string{"grit-bfs", "grit-gemm", "grit-st"}
	for i := range 6 {
		cfg := config.Default()
		require.NoError(t, cfg.ApplyPreset("grit"))
		names := Names()
		cfg.MultiGPU.Policy = names[rng.IntN(len(names))]
		cfg.Run.Workload = workloads[rng.IntN(len(workloads))]
		cfg.Run.Scale = testScale[cfg.Run.Workload]
		cfg.Run.Seed = rng.Uint64N(1000) + 1
		cfg.MultiGPU.GPUs = 2 + rng.IntN(3)
		cfg.GPU.SMs, cfg.GPU.WarpsPerSM = 1+rng.IntN(4), 32
		cfg.MultiGPU.FaultFlow = Flows[rng.IntN(len(Flows))]
		cfg.Cache.L2 = i%2 == 1
		cfg.Cache.L1 = cfg.Cache.L2 && rng.IntN(2) == 0
		name := fmt.Sprintf("%d/%s/%s/%dx%d/%s/l1=%t,l2=%t", i, cfg.MultiGPU.Policy, cfg.Run.Workload,
			cfg.MultiGPU.GPUs, cfg.GPU.SMs, cfg.MultiGPU.FaultFlow, cfg.Cache.L1, cfg.Cache.L2)
		t.Run(name, func(t *testing.T) {
			var serial Result
			for threads := 1; threads <= 4; threads++ {
				cfg.Run.Threads = threads
				s, err := New(&cfg)
				require.NoError(t, err)
				s.Sim.SpreadAlways()
				r, err := s.Run()
				require.NoError(t, err)
				r.WallSeconds, r.SimCyclesPerSecond = 0, 0
				if threads == 1 {
					serial = r
					continue
				}
				require.Empty(t, cmp.Diff(serial, r), "at %d threads", threads)
			}
		})
	}
}
