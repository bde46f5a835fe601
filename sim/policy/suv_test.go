package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
)

// The SUV policies on oversubscribed runs complete with the invariants
// checked (the driver's page table against the GMMU's). ra at 150% and
// scale 0.5: input is Temporal (density 0.0025, not above 5: pinned on
// host), table and output Density and pinned while memory lasts, so suv
// takes no far fault; under ac ra's random reads bring no 64 KB block to
// 256 accesses, so every access is remote and nothing faults; mvt at
// scale 0.1 has no Unknown structure and sc pins whole structures or maps
// them remotely: no fault either.
func TestSUVPoliciesRun(t *testing.T) {
	for _, tc := range []struct {
		policy, workload string
		scale            float64
	}{
		{"suv", "ra", 0.5},
		{"sc", "mvt", 0.1},
		{"ac", "ra", 0.5},
	} {
		t.Run(tc.policy+"/"+tc.workload, func(t *testing.T) {
			cfg := config.Default()
			cfg.Run.Policy, cfg.Run.Workload, cfg.Run.OversubPct, cfg.Run.Scale = tc.policy, tc.workload, 150, tc.scale
			cfg.Check.Invariants = true
			p, err := policy.New(cfg.Run.Policy, &cfg)
			require.NoError(t, err)
			s, err := system.New(&cfg, p)
			require.NoError(t, err)
			r, err := s.Run(p, system.Options{})
			require.NoError(t, err)
			assert.Zero(t, r.FarFaults)
			assert.Positive(t, r.RemoteAccesses)
		})
	}
}

// A workload without a static description cannot run under suv.
func TestSUVNeedsADescription(t *testing.T) {
	cfg := config.Default()
	cfg.Run.Policy, cfg.Run.Workload, cfg.Run.Scale = "suv", "grit-fir", 0.01
	p, err := policy.New("suv", &cfg)
	require.NoError(t, err)
	_, err = system.New(&cfg, p)
	require.Error(t, err)
}
