package ptw

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// FuzzConfig holds that any configuration is either rejected by Validate,
// with the same error from New, or builds a GMMU that answers a walk.
func FuzzConfig(f *testing.F) {
	for _, c := range []Config{DefaultConfig(), GRITConfig(), {}, {Walkers: -1, Levels: 9, BaseVPN: 1 << 40}} {
		f.Add(c.Walkers, c.QueueDepth, c.Levels, c.LevelLatency, c.PWCEntries, c.BaseVPN, c.Pages)
	}
	f.Fuzz(func(t *testing.T, walkers, depth, levels, latency, pwc int, base uint64, pages int) {
		cfg := Config{Walkers: walkers, QueueDepth: depth, Levels: levels, LevelLatency: latency, PWCEntries: pwc, BaseVPN: base, Pages: pages}
		err := cfg.Validate()
		if err == nil && (walkers > 256 || depth > 256 || pwc > 256 || pages > 1<<16 || latency > 1<<10) {
			t.Skip("valid, but large; slow to build and run for every input")
		}
		s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
		g, nerr := New(s, "gmmu", cfg, NewPorts(s, "gmmu"))
		if err != nil {
			require.EqualError(t, nerr, err.Error())
			return
		}
		require.NoError(t, nerr)
		s.Reset()
		g.Req.Valid.Set(true)
		g.Req.Bits.Set(Walk{VPN: base})
		g.Resp.Ready.Set(true)
		ok, rerr := s.RunUntil(g.Resp.Valid.Get, cfg.WalkCycles(false)+2)
		require.NoError(t, rerr)
		require.True(t, ok)
	})
}
