package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/incpage"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
)

// pages2MConfig is the GTX 480 preset on 2 MB pages with the invariants
// checked, 2dconv at a quarter of its size (two 1 MB arrays).
func pages2MConfig(t *testing.T, name string, sets ...string) config.Config {
	cfg := config.Default()
	require.NoError(t, cfg.ApplyPreset("gtx480"))
	for _, s := range append([]string{"run.page_size=2MB", "run.policy=" + name, "run.workload=2dconv", "run.scale=0.25", "check.invariants=true"}, sets...) {
		require.NoError(t, cfg.Set(s))
	}
	return cfg
}

func runPages2M(t *testing.T, cfg config.Config) system.Result {
	p, err := policy.New(cfg.Run.Policy, &cfg)
	require.NoError(t, err)
	s, err := system.New(&cfg, p)
	require.NoError(t, err)
	r, err := s.Run(p, system.Options{})
	require.NoError(t, err)
	return r
}

// The three policies of the 2 MB page system run under the invariant
// checks (page table and TLB records hold only landed units), and the
// copy+execute time is the formula's: 2dconv's two 1 MB arrays,
// 2,097,152 B at 16 GB/s and 1,400 MHz take 2,097,152 x round(2^16 x
// 1400/16000 = 5,734.4) / 2^16 = 183,487.6 -> 183,488 cycles after half
// the 1 us round trip (700 cycles): T_copy = 184,188, longer than the
// kernel, so T = T_copy.
func TestPages2MPolicies(t *testing.T) {
	ce := runPages2M(t, pages2MConfig(t, "copy-execute"))
	assert.Equal(t, uint64(184_188), ce.Cycles)
	assert.Less(t, ce.TimelineCycles, ce.Cycles, "the kernel is shorter than the copy")
	assert.Equal(t, uint64(2*1<<20), ce.PCIeH2DBytes)

	comp := runPages2M(t, pages2MConfig(t, "complete"))
	assert.Equal(t, uint64(2), comp.MigrationRequests, "one whole 2 MB page per array")
	assert.Equal(t, uint64(2), comp.Frames2M)
	assert.Equal(t, uint64(4<<20), comp.MigratedBytes)

	inc := runPages2M(t, pages2MConfig(t, "incomplete"))
	assert.Equal(t, uint64(2), inc.Frames2M)
	assert.LessOrEqual(t, inc.MigratedBytes, uint64(4<<20))
	assert.Positive(t, inc.L1RangeMisses)
	assert.Less(t, inc.Cycles, comp.Cycles, "incomplete migrates only what is touched, without the fault latency")
}

// The 2 MB page system's configuration errors name the keys.
func TestPages2MConfigErrors(t *testing.T) {
	cfg := pages2MConfig(t, "incomplete", "run.oversub_pct=150")
	assert.ErrorContains(t, cfg.Validate(), "run.oversub_pct = 150 with run.page_size = \"2MB\"; allowed: 100")
	cfg = pages2MConfig(t, "um")
	assert.ErrorContains(t, cfg.Validate(), "run.page_size = \"2MB\" runs the policies incomplete, complete and copy-execute")
	cfg = pages2MConfig(t, "complete", "run.page_size=4KB")
	assert.ErrorContains(t, cfg.Validate(), "run.policy = \"complete\" needs run.page_size = \"2MB\"")
	cfg = pages2MConfig(t, "incomplete", "incomplete.min_length=bdp", "incomplete.max_request_bytes=8192")
	assert.ErrorContains(t, cfg.Validate(), "incomplete.min_length = \"bdp\" is 16 units")
}

// The range invariant check fails when the page table records a unit the
// GPU memory does not hold: after a run, a GPU memory reported empty.
func TestPages2MCheckCatchesAMissingUnit(t *testing.T) {
	cfg := pages2MConfig(t, "incomplete", "run.workload=ispass-cp")
	p, err := policy.New(cfg.Run.Policy, &cfg)
	require.NoError(t, err)
	s, err := system.New(&cfg, p)
	require.NoError(t, err)
	_, err = s.Run(p, system.Options{})
	require.NoError(t, err)
	require.NoError(t, p.Check())
	empty := make(incpage.Bitmap, s.Pages2M.Cfg.UnitsPerPage()/64)
	assert.ErrorContains(t, s.Pages2M.Check(func(uint64) incpage.Bitmap { return empty }), "is recorded present in the page table but is not in GPU memory")
}
