package grit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pte"
)

func TestConfigValidation(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Threshold = 0 }, "grit: Threshold 0 outside 1..16"},
		{func(c *Config) { c.Threshold = 17 }, "grit: Threshold 17 outside 1..16"},
		{func(c *Config) { c.CacheSets = 12 }, "grit: CacheSets 12 outside 2..1024, a power of two"},
		{func(c *Config) { c.CacheWays = 1 }, "grit: CacheWays 1 outside 2..16"},
		{func(c *Config) { c.VPNBits = 53 }, "grit: VPNBits 53 outside 11..52"},
		{func(c *Config) { c.Table.Latency = 0 }, "grit: Table.Latency 0 outside 1..1048576"},
		{func(c *Config) { c.Table.Ports = 0 }, "grit: Table.Ports 0 outside 1..16"},
		{func(c *Config) { c.PredictionCycles = -1 }, "grit: PredictionCycles -1 outside 0..1073741824"},
	} {
		c := DefaultConfig()
		tc.mod(&c)
		require.EqualError(t, c.Validate(), tc.want)
		_, err := New(c, newFakeTables(0, 1))
		require.EqualError(t, err, tc.want)
	}
}

// TestEntryLayout: GRIT Section V-C's 48-bit record at its configuration,
// and wider counters at larger thresholds.
func TestEntryLayout(t *testing.T) {
	c := DefaultConfig()
	assert.Equal(t, 48, EntryBits(c), "45-bit VPN + R/W + 2-bit counter")
	e := Entry{VPN: 1<<45 - 3, RW: true, Count: 2}
	assert.Equal(t, uint64(1<<45-3)<<3|1<<2|2, e.Pack(c))
	assert.Equal(t, e, UnpackEntry(c, e.Pack(c)))
	c.Threshold = 16
	assert.Equal(t, 50, EntryBits(c), "4-bit counter at threshold 16")
	e.Count = 14
	assert.Equal(t, e, UnpackEntry(c, e.Pack(c)))
}

func TestDecideAndInitialScheme(t *testing.T) {
	assert.Equal(t, pte.SchemeDuplication, Decide(false))
	assert.Equal(t, pte.SchemeAccessCounter, Decide(true))
	assert.Equal(t, pte.SchemeOnTouch, SchemeOf(pte.Local(5)), "00 scheme bits: on-touch")
	assert.Equal(t, pte.SchemeAccessCounter, SchemeOf(pte.Local(5).WithScheme(pte.SchemeAccessCounter)))
}

// TestInitiatorCount runs a hand-made fault sequence through the
// Initiator at threshold 4, with the PA-Cache and with the PA-Table only:
// the counts, R/W bits and interrupts are the same; only the timing
// differs.
func TestInitiatorCount(t *testing.T) {
	const a, b = 0x1234, 0x5678
	seq := []struct {
		kind      FaultKind
		vpn       uint64
		write     bool
		count     int
		rw        bool
		interrupt bool
	}{
		{LocalFault, a, false, 1, false, false},
		{LocalFault, b, false, 1, false, false},
		{LocalFault, a, false, 2, false, false},
		{ProtectionFault, a, false, 3, true, false}, // a protection fault is a write
		{LocalFault, b, false, 2, false, false},
		{LocalFault, a, false, 4, true, true}, // threshold: record deleted
		{LocalFault, a, false, 1, false, false},
		{LocalFault, b, true, 3, true, false},
		{LocalFault, b, false, 4, true, true},
	}
	for _, withCache := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.PACache = withCache
		in, err := NewInitiator(cfg, true)
		require.NoError(t, err)
		for i, f := range seq {
			c, err := in.Count(uint64(1000*i), f.kind, f.vpn, f.write)
			require.NoError(t, err)
			assert.Equal(t, f.count, c.Faults, "fault %d (cache %v)", i, withCache)
			assert.Equal(t, f.rw, c.Write, "fault %d (cache %v)", i, withCache)
			assert.Equal(t, f.interrupt, c.Interrupt, "fault %d (cache %v)", i, withCache)
		}
		assert.Equal(t, [2]uint64{8, 1}, in.Faults, "local and protection faults")
		assert.Equal(t, uint64(2), in.Interrupts)
		require.NoError(t, in.sim.Run(1000)) // the delete queued behind the response
		_, ok := in.Table().Record(b)
		assert.False(t, ok, "b's record deleted at its interrupt")
	}
}

// TestInitiatorThresholds: the interrupt comes at the threshold's fault.
func TestInitiatorThresholds(t *testing.T) {
	for _, th := range []int{1, 2, 4, 8, 16} {
		for _, withCache := range []bool{true, false} {
			cfg := DefaultConfig()
			cfg.Threshold, cfg.PACache = th, withCache
			in, err := NewInitiator(cfg, true)
			require.NoError(t, err)
			for i := 1; i <= 2*th; i++ {
				c, err := in.Count(uint64(1000*i), LocalFault, 77, false)
				require.NoError(t, err)
				want := (i-1)%th + 1
				require.Equal(t, want, c.Faults, "threshold %d fault %d", th, i)
				require.Equal(t, want == th, c.Interrupt)
			}
		}
	}
}

// TestSchemeChangeInBothPageTables: four read faults on a page from four
// GPUs decide duplication, written into the host PTE (scheme bits only)
// and the faulting GPU's PTE; four more faults with a write move it to
// access-counter and ask the driver to collapse the replicas first.
func TestSchemeChangeInBothPageTables(t *testing.T) {
	const vpn = 0x40
	pt := newFakeTables(vpn, 1)
	before := pt.host[vpn]
	e, err := newEngine(DefaultConfig(), pt, true)
	require.NoError(t, err)
	var d Decision
	for gpu := range 4 {
		d, err = e.Fault(uint64(1000*gpu), Fault{GPU: gpu, VPN: vpn, Kind: LocalFault}, 300)
		require.NoError(t, err)
		assert.Equal(t, gpu+1, d.Count)
	}
	assert.True(t, d.Interrupt)
	assert.Equal(t, pte.SchemeOnTouch, d.Previous)
	assert.Equal(t, pte.SchemeDuplication, d.Scheme)
	assert.False(t, d.LeaveDuplication)
	assert.Equal(t, before.WithScheme(pte.SchemeDuplication), pt.host[vpn], "host PTE: scheme bits 11, nothing else changed")
	assert.Equal(t, uint64(3<<9), uint64(pt.host[vpn]^before), "bits 9-10")
	assert.Equal(t, pte.SchemeDuplication, pt.GPUScheme(3, vpn), "faulting GPU's PTE")
	assert.Equal(t, pte.SchemeOnTouch, pt.GPUScheme(0, vpn), "GPU 0 keeps what its own fault wrote")

	kinds := []FaultKind{ProtectionFault, LocalFault, LocalFault, LocalFault}
	for i, k := range kinds {
		d, err = e.Fault(uint64(10000+1000*i), Fault{GPU: i, VPN: vpn, Kind: k}, 300)
		require.NoError(t, err)
		if i < 3 {
			assert.Equal(t, pte.SchemeDuplication, d.Scheme)
		}
	}
	assert.True(t, d.Interrupt)
	assert.Equal(t, pte.SchemeAccessCounter, d.Scheme, "written page: access-counter")
	assert.True(t, d.LeaveDuplication)
	assert.Equal(t, before.WithScheme(pte.SchemeAccessCounter), pt.host[vpn])
	assert.Equal(t, pte.SchemeAccessCounter, pt.GPUScheme(3, vpn))
	assert.Equal(t, [4]uint64{0, 0, 1, 1}, e.Decisions)
}

// TestPromotionAtFiveOfEight: five of eight pages (the deciding page
// included) on the new scheme make an 8-page group, and every page takes
// the scheme; three of eight do not.
func TestPromotionAtFiveOfEight(t *testing.T) {
	for _, tc := range []struct {
		already int
		promote bool
	}{{4, true}, {2, false}} {
		pt := newFakeTables(0, 512)
		pt.setScheme(0, 8, pte.SchemeAccessCounter)
		pt.setScheme(8, uint64(tc.already), pte.SchemeDuplication)
		pt.setScheme(8+uint64(tc.already), 8-uint64(tc.already), pte.SchemeAccessCounter)
		const vpn = 15 // last page of block 8..15
		pt.setScheme(vpn, 1, pte.SchemeDuplication)
		p := NewPredictor(pt)
		p.Check(vpn, pte.SchemeAccessCounter, pte.SchemeDuplication)
		if !tc.promote {
			assert.Empty(t, pt.groups(0, 512), "%d of 8 agree", tc.already+1)
			assert.Equal(t, pte.SchemeAccessCounter, pt.host[14].Scheme())
			continue
		}
		assert.Equal(t, map[uint64]pte.Group{8: pte.Group8}, pt.groups(0, 512), "5 of 8: base page 8 records 01")
		for v := uint64(8); v < 16; v++ {
			assert.Equal(t, pte.SchemeDuplication, pt.host[v].Scheme(), "page %d", v)
			assert.Equal(t, pte.Remote(0x100+v), pt.host[v].WithScheme(0).WithGroup(0), "only scheme and group bits change")
		}
		assert.Equal(t, pte.SchemeAccessCounter, pt.host[7].Scheme(), "neighbour block untouched")
		assert.Equal(t, uint64(3), p.Rewrites)
		assert.Equal(t, [MaxLevel]uint64{1, 0, 0}, p.Promotions)
	}
}

// TestPromotionUpTheLevels: a block whose eight 8-page groups would be
// five on the new scheme becomes a 64-page group.
func TestPromotionUpTheLevels(t *testing.T) {
	pt := newFakeTables(0, 512)
	// 8-page groups at 0, 8, 16, 24 on duplication; 32..63 access-counter.
	pt.setScheme(0, 64, pte.SchemeAccessCounter)
	for b := uint64(0); b < 32; b += 8 {
		pt.setScheme(b, 8, pte.SchemeDuplication)
		pt.host[b] = pt.host[b].WithGroup(pte.Group8)
	}
	// block 40..47: four pages already duplication, page 47 decides it
	pt.setScheme(40, 4, pte.SchemeDuplication)
	pt.setScheme(47, 1, pte.SchemeDuplication)
	p := NewPredictor(pt)
	p.Check(47, pte.SchemeAccessCounter, pte.SchemeDuplication)
	assert.Equal(t, map[uint64]pte.Group{0: pte.Group64}, pt.groups(0, 512))
	for v := uint64(0); v < 64; v++ {
		require.Equal(t, pte.SchemeDuplication, pt.host[v].Scheme(), "page %d", v)
	}
	assert.Equal(t, [MaxLevel]uint64{1, 1, 0}, p.Promotions)
}

// TestDegradationSplitsA64PageGroup: a page of a 64-page access-counter
// group moves to duplication; the group becomes eight 8-page blocks,
// seven of them groups (01 at their base) and the page's own block eight
// single pages (00), and only the page's scheme changed.
func TestDegradationSplitsA64PageGroup(t *testing.T) {
	pt := newFakeTables(0, 512)
	pt.setScheme(64, 64, pte.SchemeAccessCounter)
	pt.host[64] = pt.host[64].WithGroup(pte.Group64)
	const vpn = 64 + 21 // in the third 8-page block, 80..87
	pt.setScheme(vpn, 1, pte.SchemeDuplication)
	p := NewPredictor(pt)
	p.Check(vpn, pte.SchemeAccessCounter, pte.SchemeDuplication)
	want := map[uint64]pte.Group{}
	for b := uint64(64); b < 128; b += 8 {
		if b != 80 {
			want[b] = pte.Group8
		}
	}
	assert.Equal(t, want, pt.groups(0, 512))
	for v := uint64(64); v < 128; v++ {
		s := pte.SchemeAccessCounter
		if v == vpn {
			s = pte.SchemeDuplication
		}
		require.Equal(t, s, pt.host[v].Scheme(), "page %d", v)
	}
	assert.Equal(t, uint64(2), p.Degradations, "64 -> 8, then the page's 8 -> 1")
	assert.Equal(t, [MaxLevel]uint64{}, p.Promotions, "1 of 8 agrees")
}

// TestNoGroupCheckWhenSchemeUnchanged: GRIT Section V-D's example. An
// 8-page access-counter group loses three pages to duplication; a fourth
// page then decides access-counter again, its old scheme: no check runs,
// so the three duplication pages are not pulled back.
func TestNoGroupCheckWhenSchemeUnchanged(t *testing.T) {
	pt := newFakeTables(0, 8)
	pt.setScheme(0, 8, pte.SchemeAccessCounter)
	pt.host[0] = pt.host[0].WithGroup(pte.Group8)
	p := NewPredictor(pt)
	for _, v := range []uint64{1, 2, 3} {
		pt.setScheme(v, 1, pte.SchemeDuplication)
		p.Check(v, pte.SchemeAccessCounter, pte.SchemeDuplication)
	}
	assert.Empty(t, pt.groups(0, 8), "degraded at the first change, 3 of 8 never promote")
	before := maps(pt)
	p.Check(5, pte.SchemeAccessCounter, pte.SchemeAccessCounter)
	assert.Equal(t, before, maps(pt))
	assert.Equal(t, [MaxLevel]uint64{}, p.Promotions)
}

func maps(pt *fakeTables) map[uint64]pte.PTE {
	m := map[uint64]pte.PTE{}
	for k, v := range pt.host {
		m[k] = v
	}
	return m
}

// TestPredictionInBackgroundAndAdoptedAtNextFault: the engine runs the
// group check PredictionCycles after the decision, rewriting host PTEs
// only; a neighbour takes the predicted scheme at its next fault, without
// reaching the threshold.
func TestPredictionInBackgroundAndAdoptedAtNextFault(t *testing.T) {
	pt := newFakeTables(0, 8)
	for v := uint64(0); v < 4; v++ {
		pt.setScheme(v, 1, pte.SchemeDuplication)
	}
	cfg := DefaultConfig()
	e, err := newEngine(cfg, pt, true)
	require.NoError(t, err)
	// Page 6 was mapped on-touch by GPU 1 earlier.
	pt.SetGPUScheme(1, 6, pte.SchemeOnTouch)
	var d Decision
	for i := range 4 {
		d, err = e.Fault(uint64(i), Fault{GPU: i, VPN: 7, Kind: LocalFault}, 300)
		require.NoError(t, err)
	}
	require.True(t, d.Interrupt)
	require.Equal(t, pte.SchemeDuplication, d.Scheme)
	// The first fault misses and is counted at 0 + L+2 = 102; the next
	// three wait for it and hit, counted at 103, 104 and 105. The fourth
	// decides, and its group check is due 600 cycles later.
	due := uint64(105 + DefaultPredictionCycles)
	e.Advance(due - 1)
	assert.Equal(t, pte.SchemeNone, pt.host[6].Scheme(), "not yet")
	assert.Empty(t, pt.gpu[[2]uint64{2, 6}])
	e.Advance(due)
	assert.Equal(t, pte.SchemeDuplication, pt.host[6].Scheme(), "predicted in the host PTE")
	assert.Equal(t, pte.SchemeOnTouch, pt.GPUScheme(1, 6), "GPU PTE untouched by the prediction")
	d, err = e.Fault(due+10, Fault{GPU: 1, VPN: 6, Kind: LocalFault}, 300)
	require.NoError(t, err)
	assert.False(t, d.Interrupt)
	assert.Equal(t, 1, d.Count)
	assert.True(t, d.Adopted)
	assert.Equal(t, pte.SchemeDuplication, d.Scheme)
	assert.Equal(t, pte.SchemeDuplication, pt.GPUScheme(1, 6))
}
