package pacache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// FuzzConfig checks that any parameter values either build a working
// PA-Cache or are rejected with an error, never a panic.
func FuzzConfig(f *testing.F) {
	f.Add(16, 4, 36, 4, 3)
	f.Add(2, 2, 2, 1, 1)
	f.Add(1024, 16, 52, 5, 65535)
	f.Add(12, 0, -1, 9, 0)
	f.Fuzz(func(t *testing.T, sets, ways, vpnBits, threshold, latency int) {
		cfg := Config{Sets: sets, Ways: ways, VPNBits: vpnBits, Threshold: threshold}
		s := rtl.New(rtl.Options{Checked: true})
		p := NewPorts(s, "pac", Config{VPNBits: MaxVPNBits, Threshold: MaxThreshold})
		_, err := New(s, "pac", cfg, p)
		if cfg.Validate() != nil {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		_, err = NewTable(s, "pat", TableConfig{Latency: latency}, p)
		if latency < 1 || latency > MaxTableLatency {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		s.Reset()
		p.Req.Valid.Set(true)
		p.Req.Set(Request{VPN: uint64(sets) & (1<<uint(vpnBits) - 1)})
		require.NoError(t, s.Run(8))
	})
}
