package multigpu

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// smallGRIT is the grit preset on 4 GPUs of one SM of 32 warps (BFS's
// blocks have 32), so that a small input spreads over every GPU, with the
// invariants checked.
func smallGRIT(t *testing.T, policy, wl string, scale float64) *config.Config {
	cfg := config.Default()
	require.NoError(t, cfg.ApplyPreset("grit"))
	cfg.MultiGPU.Policy = policy
	cfg.GPU.SMs, cfg.GPU.WarpsPerSM = 1, 32
	cfg.Run.Workload, cfg.Run.Scale = wl, scale
	cfg.Check.Invariants = true
	return &cfg
}

// testScale sizes each workload to a few hundred KB (grit-c2d cannot go
// below 5.8 MB, one image of its batch, and is left to the experiments).
var testScale = map[string]float64{
	"grit-bfs": 0.003, "grit-bs": 0.001, "grit-fir": 0.001, "grit-gemm": 0.02,
	"grit-mm": 0.003, "grit-sc": 0.001, "grit-st": 0.003,
}

// GRIT's workloads under the schemes, the invariants checked every 4,096
// cycles and at the end: the blocks spread over the GPUs, and what the
// schemes do shows in their counts. Every scheme runs the random (BFS),
// scatter-gather (GEMM) and adjacent (ST) patterns; the other workloads run
// under on-touch and duplication, the schemes with the most page movement.
func TestWorkloadsRunUnderEveryPolicy(t *testing.T) {
	for _, wl := range workload.GRITNames() {
		scale, ok := testScale[wl]
		if !ok {
			continue
		}
		for _, pol := range Names() {
			if !slices.Contains([]string{"grit-bfs", "grit-gemm", "grit-st"}, wl) && pol != "ot" && pol != "dup" {
				continue
			}
			t.Run(wl+"/"+pol, func(t *testing.T) {
				t.Parallel()
				s, err := New(smallGRIT(t, pol, wl, scale))
				require.NoError(t, err)
				r, err := s.Run()
				require.NoError(t, err)
				require.NoError(t, s.Check())
				tot := r.Total
				active := 0
				for _, g := range r.PerGPU {
					if g.WarpInstr > 0 {
						active++
					}
				}
				assert.Greater(t, active, 1, "the blocks spread over the GPUs")
				assert.Positive(t, tot.LocalFaults)
				switch pol {
				case "ot":
					assert.Zero(t, tot.RemoteAccesses+tot.ReplicasMade+tot.Promotions+tot.Prefetched)
				case "ot-prefetch":
					assert.Zero(t, tot.RemoteAccesses+tot.ReplicasMade+tot.Promotions)
					assert.Positive(t, tot.Prefetched)
				case "first-touch":
					assert.Zero(t, tot.ReplicasMade+tot.Promotions)
				case "dup":
					assert.Zero(t, tot.RemoteAccesses+tot.Promotions)
				case "ideal":
					assert.Zero(t, tot.RemoteAccesses+tot.Invalidations+tot.Evictions)
				}
			})
		}
	}
}
