package grit

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRandomCountsAgainstReference: seeded random faults on a pool of pages
// crowding a few PA-Cache sets, at several thresholds, host-memory
// latencies and port counts, with and without the PA-Cache. Every count,
// R/W bit and interrupt equals a plain reference (a map of VPN to count
// and R/W since the last interrupt), and the answer never comes before the
// fault.
func TestRandomCountsAgainstReference(t *testing.T) {
	for _, tc := range []struct {
		threshold, latency, ports int
	}{{4, 100, 1}, {2, 7, 2}, {8, 1, 1}, {16, 30, 3}, {1, 5, 1}} {
		for _, withCache := range []bool{true, false} {
			cfg := DefaultConfig()
			cfg.Threshold, cfg.Table = tc.threshold, TableConfig{Latency: tc.latency, Ports: tc.ports}
			cfg.PACache = withCache
			in, err := NewInitiator(cfg, true)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(uint64(tc.threshold), uint64(tc.latency)))
			pool := make([]uint64, 40)
			for i := range pool {
				pool[i] = r.Uint64N(1<<20)<<4 | uint64(r.IntN(3))
			}
			type rec struct {
				count int
				rw    bool
			}
			ref := map[uint64]rec{}
			now := uint64(0)
			for i := range 3000 {
				now += uint64(r.IntN(3 * tc.latency))
				vpn := pool[r.IntN(len(pool))]
				kind := FaultKind(r.IntN(2))
				write := r.IntN(4) == 0
				c, err := in.Count(now, kind, vpn, write)
				require.NoError(t, err)
				x := ref[vpn]
				x.count++
				x.rw = x.rw || write || kind == ProtectionFault
				want := Count{Faults: x.count, Write: x.rw, Interrupt: x.count == tc.threshold, Cycles: c.Cycles}
				require.Equal(t, want, c, "fault %d on %#x (threshold %d, cache %v)", i, vpn, tc.threshold, withCache)
				require.Positive(t, c.Cycles)
				if c.Interrupt {
					delete(ref, vpn)
				} else {
					ref[vpn] = x
				}
			}
		}
	}
}
