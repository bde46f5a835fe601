package accessctr

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// FuzzConfig checks that any parameter values either build working
// counters or are rejected with an error, never a panic.
func FuzzConfig(f *testing.F) {
	f.Add(4096, uint32(8), true)
	f.Add(2, uint32(1), false)
	f.Add(1, uint32(0), true)
	f.Add(-5, uint32(1<<27), false)
	f.Fuzz(func(t *testing.T, blocks int, threshold uint32, local bool) {
		cfg := Config{Blocks: blocks, Threshold: threshold, CountLocal: local}
		if blocks > 1<<12 {
			// Keep the clear sweep short; the range check is the same.
			cfg.Blocks = blocks % (1 << 12)
		}
		s := rtl.New(rtl.Options{Checked: true})
		p := NewPorts(s, "ac", Config{Blocks: MaxBlocks})
		_, err := New(s, "ac", cfg, p)
		if cfg.Validate() != nil {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		s.Reset()
		require.NoError(t, s.Run(uint64(cfg.Blocks)+4))
	})
}
