package da

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLatencyFigures measures the DA at the default parameters for IPgT
// latencies 100 (local DRAM, SPEC 2) and 300, logs the figures, and pins
// the cycle-exact ones.
func TestLatencyFigures(t *testing.T) {
	for _, lat := range []int{100, 300} {
		f, err := Measure(DefaultConfig(), lat)
		require.NoError(t, err)
		t.Logf("IPgT latency %d: reset to first destination %d cycles; dst_ready to destination %d cycles; back-to-back %.2f cycles/destination; refill %.4f frame-groups/cycle from free regions, %.4f in victim mode",
			lat, f.ResetToFirst, f.Handshake, f.BackToBack, f.RefillFree, f.RefillVictim)
		words := DefaultConfig().AFM().FrAB().Words()
		assert.Equal(t, uint64(words+lat+41), f.ResetToFirst, "FrAB sweep + IPgT latency + 41 (docs/da.md)")
		assert.Zero(t, f.Handshake)
		assert.Equal(t, 1.0, f.BackToBack)
		assert.Greater(t, f.RefillFree, f.RefillVictim)
	}
}
