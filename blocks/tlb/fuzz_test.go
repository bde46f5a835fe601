package tlb

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// FuzzConfig holds that any configuration is either rejected by Validate,
// with the same error from New, or builds a TLB that answers a lookup.
func FuzzConfig(f *testing.F) {
	for _, c := range []Config{DefaultL1Config(), GRITL2Config(), {}, {Sets: 3, Ways: -1, HitLatency: 5000}} {
		f.Add(c.Sets, c.Ways, c.HitLatency)
	}
	f.Fuzz(func(t *testing.T, sets, ways, latency int) {
		cfg := Config{Sets: sets, Ways: ways, HitLatency: latency}
		err := cfg.Validate()
		if err == nil && cfg.Entries() > 1<<12 {
			t.Skip("valid, but a large TLB is slow to build for every input")
		}
		s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
		tl, nerr := New(s, "tlb", cfg, NewPorts(s, "tlb"))
		if err != nil {
			require.EqualError(t, nerr, err.Error())
			return
		}
		require.NoError(t, nerr)
		s.Reset()
		tl.Req.Valid.Set(true)
		tl.Resp.Ready.Set(true)
		require.NoError(t, s.Run(uint64(latency)+1))
		require.True(t, tl.Resp.Valid.Get())
	})
}
