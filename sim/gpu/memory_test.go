package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

func memBench(t *testing.T, sms int, byteTime uint64) (*rtl.Sim, *Memory, []*rtl.Decoupled[DataReq], []*rtl.Decoupled[DataReq]) {
	t.Helper()
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	var reqs, resps []*rtl.Decoupled[DataReq]
	for i := 0; i < sms; i++ {
		reqs = append(reqs, rtl.NewDecoupledOf[DataReq](s, "req"+string(rune('0'+i)), DataReqWidth))
		resps = append(resps, rtl.NewDecoupledOf[DataReq](s, "resp"+string(rune('0'+i)), DataReqWidth))
	}
	m, err := NewMemoryOn(s, "dram", MemoryConfig{SMs: sms, Warps: 64, LineBytes: 128, Latency: 100, ByteTime: byteTime}, reqs, resps)
	require.NoError(t, err)
	s.Reset()
	for _, r := range resps {
		r.Ready.Set(true)
	}
	return s, m, reqs, resps
}

// Two SMs ask in the same cycle at 1 byte per cycle: SM 0 is served first
// (its 256 bytes end at 256), SM 1 behind it (at 512), each then 100 cycles
// of latency.
func TestMemoryBandwidthOrder(t *testing.T) {
	s, m, reqs, resps := memBench(t, 2, 1<<FixedPointBits)
	reqs[0].Valid.Set(true)
	reqs[0].Bits.Set(DataReq{Warp: 3, Lines: 2})
	reqs[1].Valid.Set(true)
	reqs[1].Bits.Set(DataReq{Warp: 9, Lines: 2})
	require.NoError(t, s.Step())
	reqs[0].Valid.Set(false)
	reqs[1].Valid.Set(false)
	at := map[int]uint64{}
	ok, err := s.RunUntil(func() bool {
		for i, r := range resps {
			if r.Valid.Get() {
				if _, seen := at[i]; !seen {
					at[i] = s.Cycle()
					assert.Equal(t, []uint8{3, 9}[i], r.Bits.Get().Warp)
				}
			}
		}
		return len(at) == 2
	}, 10000)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, map[int]uint64{0: 256 + 100, 1: 512 + 100}, at)
	assert.Equal(t, uint64(512), m.Bytes())
}

// Random requests from four SMs: every response comes back once, to its SM,
// in that SM's request order, no earlier than the latency after its request.
func TestMemoryRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 8))
	s, _, reqs, resps := memBench(t, 4, 200)
	sent := make([][]uint64, 4)
	got := make([][]uint64, 4)
	next := 0
	for cycle := 0; cycle < 20000; cycle++ {
		for i, r := range resps {
			if r.Valid.Get() {
				got[i] = append(got[i], uint64(r.Bits.Get().Warp))
			}
		}
		for i, r := range reqs {
			offer := cycle < 2500 && rng.IntN(8) == 0 && len(sent[i])-len(got[i]) < 60
			r.Valid.Set(offer)
			if offer {
				w := uint8(next % 64)
				next++
				r.Bits.Set(DataReq{Warp: w, Lines: uint8(1 + rng.IntN(8))})
				sent[i] = append(sent[i], uint64(w))
			}
		}
		require.NoError(t, s.Step())
	}
	assert.Equal(t, sent, got)
}

// A zero-copy load does not hold back a later local one of the same SM.
// The remote load of warp 1 (one 128 B line) is accepted in cycle 0: its
// line takes 128 x 0.1 = 12.8 cycles on the link, rounded up to 13, then
// 200 cycles of remote latency: due at 213. The local load of warp 2,
// accepted in cycle 1, takes 1 cycle of DRAM time and 100 of latency: due
// at 102, so it is answered first.
func TestMemoryRemoteDoesNotBlockLocal(t *testing.T) {
	s, m, reqs, resps := memBench(t, 1, 1<<FixedPointBits/128)
	m.SetRemoteTiming(200, 1<<FixedPointBits/10)
	reqs[0].Valid.Set(true)
	reqs[0].Bits.Set(DataReq{Warp: 1, Lines: 1, Remote: true})
	require.NoError(t, s.Step())
	reqs[0].Bits.Set(DataReq{Warp: 2, Lines: 1})
	require.NoError(t, s.Step())
	reqs[0].Valid.Set(false)
	var got []DataReq
	var at []uint64
	for s.Cycle() < 300 {
		if resps[0].Valid.Get() {
			got = append(got, resps[0].Bits.Get())
			at = append(at, s.Cycle())
		}
		require.NoError(t, s.Step())
	}
	assert.Equal(t, []DataReq{{Warp: 2, Lines: 1}, {Warp: 1, Lines: 1, Remote: true}}, got)
	assert.Equal(t, []uint64{102, 213}, at)
	assert.Equal(t, uint64(1), m.RemoteLoads())
	assert.Equal(t, uint64(128), m.Bytes())
}

func TestDataReqPackRoundTrip(t *testing.T) {
	for _, d := range []DataReq{{Warp: 0, Lines: 1}, {Warp: 63, Lines: 64, Remote: true}, {Warp: 5, Lines: 127}} {
		assert.Equal(t, d, UnpackDataReq(d.Pack()))
		assert.Less(t, d.Pack(), uint64(1)<<DataReqWidth)
	}
}
