package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
)

func walkPort(s *rtl.Sim, name string) *rtl.Decoupled[ptw.Walk] {
	return rtl.NewDecoupledOf[ptw.Walk](s, name, ptw.WalkBits)
}

// A request offered to an idle arbiter is latched in its cycle, moves to
// the output register the next, and is taken by the GMMU the cycle after.
func TestWalkArbiterTiming(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true})
	in := []*rtl.Decoupled[ptw.Walk]{walkPort(s, "a"), walkPort(s, "b")}
	out := walkPort(s, "out")
	_, err := NewWalkArbiter(s, "arb", in, out)
	require.NoError(t, err)
	s.Reset()
	out.Ready.Set(true)
	in[1].Valid.Set(true)
	in[1].Bits.Set(ptw.Walk{VPN: 7, Requester: 1})
	require.True(t, in[1].Ready.Get())
	require.NoError(t, s.Step())
	in[1].Valid.Set(false)
	assert.False(t, out.Valid.Get(), "cycle 1: held")
	require.NoError(t, s.Step())
	assert.True(t, out.Valid.Get(), "cycle 2: on the output")
	assert.Equal(t, ptw.Walk{VPN: 7, Requester: 1}, out.Bits.Get())
	require.NoError(t, s.Step())
	assert.False(t, out.Valid.Get())
}

// Random offers on eight ports and a random-ready output: every request
// comes out exactly once, each port's in order, and no held request waits
// more than one output slot per other port.
func TestWalkArbiterRandom(t *testing.T) {
	const ports = 8
	rng := rand.New(rand.NewPCG(3, 9))
	s := rtl.New(rtl.Options{Checked: true})
	var in []*rtl.Decoupled[ptw.Walk]
	for i := 0; i < ports; i++ {
		in = append(in, walkPort(s, "in"+string(rune('0'+i))))
	}
	out := walkPort(s, "out")
	_, err := NewWalkArbiter(s, "arb", in, out)
	require.NoError(t, err)
	s.Reset()
	want := make([][]ptw.Walk, ports)
	got := make([][]ptw.Walk, ports)
	next := make([]int, ports)
	for i := range want {
		for k := 0; k < 200; k++ {
			want[i] = append(want[i], ptw.Walk{VPN: uint64(rng.IntN(1 << 20)), Requester: uint16(i<<WarpBits | k%64)})
		}
	}
	heldSince := make([]int, ports)
	outSlots := 0
	for cycle := 0; cycle < 20000; cycle++ {
		for i, p := range in {
			offer := next[i] < len(want[i]) && rng.IntN(3) > 0
			p.Valid.Set(offer)
			if offer {
				p.Bits.Set(want[i][next[i]])
			}
		}
		out.Ready.Set(rng.IntN(4) > 0)
		if out.Valid.Get() && out.Ready.Get() {
			w := out.Bits.Get()
			port := int(w.Requester >> WarpBits)
			got[port] = append(got[port], w)
			outSlots++
			require.LessOrEqual(t, outSlots-heldSince[port], ports+1, "port %d starved", port)
		}
		for i, p := range in {
			if p.Valid.Get() && p.Ready.Get() {
				next[i]++
				heldSince[i] = outSlots
			}
		}
		require.NoError(t, s.Step())
	}
	assert.Empty(t, cmp.Diff(want, got))
}

// Router: local PTEs (from the GMMU or the policy) reach their SM's fill
// and replay ports together, remote ones the policy, each class in order.
func TestRouterRandom(t *testing.T) {
	const sms = 4
	rng := rand.New(rand.NewPCG(5, 1))
	s := rtl.New(rtl.Options{Checked: true})
	walks := NewResolvedPort(s, "gmmu.resp")
	var fills []tlb.FillPort
	var replays []*rtl.Decoupled[ptw.Walk]
	for i := 0; i < sms; i++ {
		n := "sm" + string(rune('0'+i))
		fills = append(fills, tlb.FillPort{Decoupled: rtl.NewDecoupled[uint64](s, n+".fill", pte.VPNBits), PTE: rtl.NewWire[pte.PTE](s, n+".fill.pte", 64)})
		replays = append(replays, walkPort(s, n+".replay"))
	}
	r := NewRouter(s, "router", walks, fills, replays)
	s.Reset()
	type item struct {
		W ptw.Walk
		E pte.PTE
	}
	var sentLocal, sentRemote, gotLocal, gotRemote []item
	mk := func(k int, remote bool) item {
		w := ptw.Walk{VPN: uint64(k), Requester: uint16(rng.IntN(sms)<<WarpBits | rng.IntN(64))}
		e := pte.Local(uint64(k))
		if remote {
			e = pte.Remote(uint64(k))
		}
		return item{w, e}
	}
	k := 0
	for cycle := 0; cycle < 5000; cycle++ {
		var fromGMMU, fromPolicy item
		offerG, offerP := rng.IntN(2) == 0, rng.IntN(3) == 0
		if offerG {
			fromGMMU = mk(k, rng.IntN(2) == 0)
			k++
		}
		if offerP {
			fromPolicy = mk(k, false)
			k++
		}
		walks.Valid.Set(offerG)
		walks.Bits.Set(fromGMMU.W)
		walks.PTE.Set(fromGMMU.E)
		r.Migrated.Valid.Set(offerP)
		r.Migrated.Bits.Set(fromPolicy.W)
		r.Migrated.PTE.Set(fromPolicy.E)
		r.Remote.Ready.Set(rng.IntN(2) == 0)
		for i := range fills {
			fills[i].Ready.Set(true)
			replays[i].Ready.Set(true)
		}
		if offerG && walks.Ready.Get() {
			if fromGMMU.E.IsRemote() {
				sentRemote = append(sentRemote, fromGMMU)
			} else {
				sentLocal = append(sentLocal, fromGMMU)
			}
		} else if offerG {
			k--
		}
		if offerP && r.Migrated.Ready.Get() {
			sentLocal = append(sentLocal, fromPolicy)
		}
		for i := range fills {
			require.Equal(t, fills[i].Valid.Get(), replays[i].Valid.Get())
			if fills[i].Valid.Get() {
				w := replays[i].Bits.Get()
				require.Equal(t, i, int(w.Requester>>WarpBits))
				require.Equal(t, w.VPN, fills[i].Bits.Get())
				gotLocal = append(gotLocal, item{w, fills[i].PTE.Get()})
			}
		}
		if r.Remote.Valid.Get() && r.Remote.Ready.Get() {
			gotRemote = append(gotRemote, item{r.Remote.Bits.Get(), r.Remote.PTE.Get()})
		}
		require.NoError(t, s.Step())
	}
	walks.Valid.Set(false)
	r.Migrated.Valid.Set(false)
	r.Remote.Ready.Set(true)
	for cycle := 0; cycle < 100; cycle++ {
		for i := range fills {
			if fills[i].Valid.Get() {
				gotLocal = append(gotLocal, item{replays[i].Bits.Get(), fills[i].PTE.Get()})
			}
		}
		if r.Remote.Valid.Get() {
			gotRemote = append(gotRemote, item{r.Remote.Bits.Get(), r.Remote.PTE.Get()})
		}
		require.NoError(t, s.Step())
	}
	assert.Empty(t, cmp.Diff(sentRemote, gotRemote))
	assert.ElementsMatch(t, sentLocal, gotLocal)
	assert.Equal(t, uint64(len(sentRemote)), r.RemoteSeen())
}
