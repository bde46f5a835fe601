package uvm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultConfigIsTheBaseline(t *testing.T) {
	want := Config{
		Prefetcher: "tree", OversubPrefetcher: "tree", Evictor: "lru2m", Remote: "off",
		StaticThreshold: 8, Penalty: 2, FreeBufferPercent: 0, Seed: 1,
	}
	assert.Empty(t, cmp.Diff(want, DefaultConfig()))
	require.NoError(t, DefaultConfig().Validate())
}

func TestNames(t *testing.T) {
	assert.Equal(t, []string{"none", "tree", "seqlocal", "random"}, PrefetcherNames())
	assert.Equal(t, []string{"lru2m", "lrutree", "lru64k", "random4k", "lfu2m", "lru4k"}, EvictorNames())
	assert.Equal(t, []string{"off", "adaptive", "always", "oversub"}, RemoteModeNames())
	names := PrefetcherNames()
	names[0] = "changed"
	assert.Equal(t, "none", PrefetcherNames()[0], "callers get a copy")
	for _, n := range PrefetcherNames() {
		p, err := NewPrefetcher(n, 1)
		require.NoError(t, err)
		assert.Equal(t, n, p.Name())
	}
	s, err := NewSpace(PagesPerRegion, PagesPerRegion)
	require.NoError(t, err)
	c := newCounters(s.Blocks(), s.Regions())
	for _, n := range EvictorNames() {
		e, err := NewEvictor(n, s, &c, 1)
		require.NoError(t, err)
		assert.Equal(t, n, e.Name())
	}
}

func TestConfigValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Prefetcher = "stride" }, `uvm: Prefetcher = "stride" is not one of [none tree seqlocal random]`},
		{func(c *Config) { c.OversubPrefetcher = "" }, `uvm: OversubPrefetcher = "" is not one of [none tree seqlocal random]`},
		{func(c *Config) { c.Evictor = "lru" }, `uvm: Evictor = "lru" is not one of [lru2m lrutree lru64k random4k lfu2m lru4k]`},
		{func(c *Config) { c.Remote = "on" }, `uvm: Remote = "on" is not one of [off adaptive always oversub]`},
		{func(c *Config) { c.StaticThreshold = 0 }, "uvm: StaticThreshold = 0 is outside 1..134217727 (the 27-bit access count)"},
		{func(c *Config) { c.StaticThreshold = 1 << 27 }, "uvm: StaticThreshold = 134217728 is outside 1..134217727 (the 27-bit access count)"},
		{func(c *Config) { c.Penalty = 0 }, "uvm: Penalty = 0 is outside 1..1048576"},
		{func(c *Config) { c.Penalty = 1<<20 + 1 }, "uvm: Penalty = 1048577 is outside 1..1048576"},
		{func(c *Config) { c.FreeBufferPercent = -1 }, "uvm: FreeBufferPercent = -1 is outside 0..99"},
		{func(c *Config) { c.FreeBufferPercent = 100 }, "uvm: FreeBufferPercent = 100 is outside 0..99"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		require.EqualError(t, cfg.Validate(), tc.want)
		_, err := New(cfg, PagesPerRegion, PagesPerRegion)
		require.EqualError(t, err, tc.want)
	}
}

func TestSpaceBounds(t *testing.T) {
	for _, tc := range []struct {
		pages, capacity int
		want            string
	}{
		{0, 1, "uvm: pages = 0 is not a multiple of 16 in 16..268435456"},
		{17, 1, "uvm: pages = 17 is not a multiple of 16 in 16..268435456"},
		{MaxPages + PagesPerBlock, 1, "uvm: pages = 268435472 is not a multiple of 16 in 16..268435456"},
		{16, 0, "uvm: capacity = 0 pages is outside 1..268435456"},
	} {
		_, err := New(DefaultConfig(), tc.pages, tc.capacity)
		require.EqualError(t, err, tc.want)
	}
	_, err := NewPrefetcher("x", 1)
	require.Error(t, err)
	s, err := NewSpace(PagesPerBlock, 1)
	require.NoError(t, err)
	c := newCounters(1, 1)
	_, err = NewEvictor("x", s, &c, 1)
	require.Error(t, err)
}
