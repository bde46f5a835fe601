package gpu

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/cache"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/rtl"
)

// TestCachesOfferRandom streams random loads and stores from four SMs,
// each taking its answers only at random, and checks every cycle that
// each SM is offered what a scan of its answered warps gives: the lowest
// warp whose data is due, or none. Drive visits only the SMs that have a
// warp due or whose answered warps changed, so the scan proves that the
// SMs it leaves out already hold the offer. Every load is answered once.
func TestCachesOfferRandom(t *testing.T) {
	const sms, warps, lineBytes = 4, 8, 128
	rng := rand.New(rand.NewPCG(19, 2))
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	var ports []*SM
	for i := range sms {
		ports = append(ports, &SM{SMPorts: SMPorts{
			LineReq:  rtl.NewDecoupledOf[LineReq](s, fmt.Sprintf("sm%d.line_req", i), LineReqWidth),
			LineResp: rtl.NewDecoupled[uint8](s, fmt.Sprintf("sm%d.line_resp", i), WarpBits),
		}})
	}
	unmap := ptw.PTEPort[uint64]{Decoupled: rtl.NewDecoupled[uint64](s, "unmap", pte.VPNBits), PTE: rtl.NewWire[pte.PTE](s, "unmap.pte", 64)}
	l2 := cache.Config{Sets: 4, Ways: 2, LineBytes: lineBytes, SectorBytes: SectorBytes(lineBytes), WriteBack: true, HitLatency: 5}
	c, err := NewCaches(s, "caches", CachesConfig{SMs: sms, Warps: warps, Slices: 2, L2: l2, L1: l2,
		DRAMLatency: 20, SliceByteTime: 1 << FixedPointBits / 8, InputDepth: 2, InvalidateDepth: 4}, ports, unmap)
	require.NoError(t, err)
	s.Reset()

	// Per SM: the lines of the instruction being sent, and the warps with
	// a load outstanding.
	type stream struct {
		warp  uint8
		lines []uint64
		write bool
		sent  int
	}
	cur := make([]*stream, sms)
	loading := make([]uint64, sms)
	fired := make([]bool, sms)
	answered := 0
	for cycle := 0; cycle < 30000; cycle++ {
		now := s.Cycle()
		for i, p := range ports {
			// The offer must be the scan's.
			want, ok := -1, false
			for d := c.done.At(i).Q(); d != 0; d &= d - 1 {
				if w := bits.TrailingZeros64(d); c.due.At(i*warps+w).Q() <= now {
					want, ok = w, true
					break
				}
			}
			require.Equal(t, ok, p.LineResp.Valid.Get(), "cycle %d SM %d offer", now, i)
			if ok {
				require.Equal(t, uint8(want), p.LineResp.Bits.Get(), "cycle %d SM %d warp", now, i)
			}
			take := rng.IntN(3) != 0
			p.LineResp.Ready.Set(take)
			if ok && take {
				require.NotZero(t, loading[i]&(1<<want), "cycle %d SM %d answered warp %d twice", now, i, want)
				loading[i] &^= 1 << want
				answered++
			}
			// The SM's next line, a new instruction once the last is out.
			if cur[i] == nil && cycle < 25000 && rng.IntN(4) == 0 {
				if w := uint8(rng.IntN(warps)); loading[i]&(1<<w) == 0 {
					st := &stream{warp: w, write: rng.IntN(4) == 0}
					for range 1 + rng.IntN(6) {
						st.lines = append(st.lines, rng.Uint64N(64))
					}
					cur[i] = st
					if !st.write {
						loading[i] |= 1 << w
					}
				}
			}
			st := cur[i]
			p.LineReq.Valid.Set(st != nil)
			if st != nil {
				p.LineReq.Bits.Set(LineReq{Warp: st.warp, Line: st.lines[st.sent], Sectors: 1, Write: st.write,
					First: st.sent == 0, Count: uint8(len(st.lines))})
				fired[i] = p.LineReq.Ready.Get()
			}
		}
		require.NoError(t, s.Step())
		for i, st := range cur {
			if st != nil && fired[i] {
				if st.sent++; st.sent == len(st.lines) {
					cur[i] = nil
				}
			}
			fired[i] = false
		}
	}
	require.NoError(t, c.Err())
	require.Equal(t, make([]uint64, sms), loading, "loads never answered")
	require.Greater(t, answered, 1000)
}
