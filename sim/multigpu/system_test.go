package multigpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
)

func gritConfig(t *testing.T, policy, wl string, scale float64) *config.Config {
	cfg := config.Default()
	require.NoError(t, cfg.ApplyPreset("grit"))
	cfg.MultiGPU.Policy = policy
	cfg.Run.Workload = wl
	cfg.Run.Scale = scale
	cfg.Check.Invariants = true
	return &cfg
}

func TestWorkloadsRunUnderEveryPolicy(t *testing.T) {
	for _, pol := range Names() {
		for _, wl := range []string{"grit-gemm", "grit-st"} {
			t.Run(pol+"/"+wl, func(t *testing.T) {
				s, err := New(gritConfig(t, pol, wl, 0.02))
				require.NoError(t, err)
				r, err := s.Run()
				require.NoError(t, err)
				t.Logf("%s %s: %d cycles, total %+v", pol, wl, r.Cycles, r.Total)
			})
		}
	}
}
