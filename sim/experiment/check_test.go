package experiment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
)

// Every run of `uvmsim experiment fig4 --quick` holds the SPEC 6.5
// invariants (`--check`) from its first cycle to its last, and so do the
// fault-based runs whose allocations end inside a 2 MB region followed by
// another allocation (bfs, backprop at a tenth of their size), where the
// prefetchers plan pages outside every allocation.
func TestFig4QuickRunsHoldInvariants(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every fig4 --quick simulation with invariant checks")
	}
	base := config.Default()
	base.Check.Invariants = true
	specs := fig4Specs(DefaultParams(true))
	for _, wl := range []string{"bfs", "backprop"} {
		specs = append(specs, Spec{Workload: wl, Policy: PolicyUM, OversubPct: 150, Scale: 0.1, Seed: 1})
	}
	out, err := Run(specs, Options{Jobs: 2, Base: base})
	require.NoError(t, err)
	require.NoError(t, Failures(out))
}
