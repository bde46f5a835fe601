package pcie

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// FuzzConfig holds that any configuration is either rejected by Validate,
// with the same error from New, or builds a link that runs.
func FuzzConfig(f *testing.F) {
	d := DefaultConfig()
	f.Add(d.BandwidthMBps, d.ClockMHz, d.RoundTripCycles, d.MaxPacketBytes, d.Ports)
	f.Add(uint64(0), uint64(1), uint64(1), 0, 0)
	f.Add(uint64(1<<20), uint64(1<<16), uint64(3), 65535, 256)
	f.Fuzz(func(t *testing.T, bw, clock, rtt uint64, maxPacket, ports int) {
		cfg := Config{BandwidthMBps: bw, ClockMHz: clock, RoundTripCycles: rtt, MaxPacketBytes: maxPacket, Ports: ports}
		s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
		err := cfg.Validate()
		if err == nil && rtt > 1<<12 {
			t.Skip("valid, but a long delay line is slow to build for every input")
		}
		var p Ports
		if err == nil {
			p = NewPorts(s, "pcie", cfg)
		}
		l, nerr := New(s, "pcie", cfg, p)
		if err != nil {
			require.EqualError(t, nerr, err.Error())
			return
		}
		require.NoError(t, nerr)
		s.Reset()
		l.H2D.In[0].Valid.Set(true)
		l.H2D.In[0].Bits.Set(Packet{Tag: 1, Bytes: uint16(maxPacket)})
		require.NoError(t, s.Run(10))
	})
}
