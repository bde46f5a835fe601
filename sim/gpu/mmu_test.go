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
	"github.com/uvmmu/uvmmu/sim/workload"
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
	r := NewRouter(s, "router", NewRouterPorts(s, "router", walks, fills, replays))
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

// unmapDuringWalk runs the race of a page unmapped while its walk result
// is on the way to the L1 TLB: one SM loads page p, whose local PTE the
// GMMU reads; the testbench, standing in for the policy, writes p's PTE
// remote through the update port in cycle writeAt and shoots p down in
// every L1 TLB in cycle shootAt (-1: never). It answers every remote walk
// with the remote PTE, as a zero-copy reply. It returns the first cycle a
// walk result is on the GMMU's port, the PTE the L1 TLB ends with, whether
// the TLB held the old PTE after the shootdown, and the walks made.
func unmapDuringWalk(t *testing.T, shootAt, writeAt int, skip bool) (int, pte.PTE, bool, uint64) {
	t.Helper()
	const base = 1 << 20
	p := uint64(base + 5)
	old, fresh := pte.Local(0x40), pte.Remote(0x77)
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	phases := oneWarpKernel(access(workload.OpLoad, p<<PageShift))
	l1, err := tlb.New(s, "sm0.l1tlb", tlb.DefaultL1Config(), tlb.NewPorts(s, "sm0.l1tlb"))
	require.NoError(t, err)
	m, err := NewSM(s, "sm0", 0, SMConfig{Warps: 64, LineBytes: 128, TranslateQueue: 64}, Kernels(phases), NewSMPorts(s, "sm0", l1.Ports))
	require.NoError(t, err)
	g, err := ptw.New(s, "gmmu", ptw.Config{Walkers: 4, QueueDepth: 8, Levels: 1, LevelLatency: 100, BaseVPN: base, Pages: 64}, ptw.NewPorts(s, "gmmu"))
	require.NoError(t, err)
	_, err = NewWalkArbiter(s, "walk_arbiter", WalkReqs([]*SM{m}), g.Req)
	require.NoError(t, err)
	r := NewRouter(s, "router", NewRouterPorts(s, "router", g.Resp, []tlb.FillPort{l1.Fill}, []*rtl.Decoupled[ptw.Walk]{m.Replay}))
	r.Watch(g.Update)
	d := NewDispatcher(s, "dispatcher", phases, NewDispatcherPorts(s, "dispatcher", []*SM{m}))
	_, err = NewMemory(s, "dram", MemoryConfig{SMs: 1, Warps: 64, LineBytes: 128, Latency: 100, ByteTime: 200, RemoteLatency: 200, RemoteByteTime: 200}, []*SM{m})
	require.NoError(t, err)
	require.NoError(t, g.Load(p, old))
	s.Reset()

	result := -1
	var reply *ptw.Walk
	var replyPTE pte.PTE
	shotDown, heldStale := false, false
	for !d.Done.Get() {
		now := int(s.Cycle())
		require.Less(t, now, 2000, "the load did not complete")
		if result < 0 && g.Resp.Valid.Get() {
			result = now
		}
		g.Update.Valid.Set(now == writeAt)
		g.Update.Bits.Set(p)
		g.Update.PTE.Set(fresh)
		l1.Inval.Valid.Set(now == shootAt)
		l1.Inval.Bits.Set(tlb.Invalidate{VPN: p})
		l1.InvalAck.Ready.Set(true)
		if now == shootAt {
			require.True(t, l1.Inval.Ready.Get())
			shotDown = true
		}
		r.Remote.Ready.Set(true)
		r.Migrated.Valid.Set(reply != nil)
		if reply != nil {
			r.Migrated.Bits.Set(*reply)
			r.Migrated.PTE.Set(replyPTE)
			if r.Migrated.Ready.Get() {
				reply = nil
			}
		}
		if r.Remote.Valid.Get() {
			w := r.Remote.Bits.Get()
			reply, replyPTE = &w, r.Remote.PTE.Get()
		}
		require.NoError(t, s.Step())
		if e, ok := l1.Probe(p); ok && shotDown && e == old {
			heldStale = true
		}
	}
	e, _ := l1.Probe(p)
	return result, e, heldStale, g.Stats().Walks
}

// A walk reads page p's local PTE in cycle r-1 and its result is on the
// GMMU's port in r, taken by the router in r and filled in r+1. The page
// is unmapped (its PTE written remote, its shootdown in the same cycle or
// later, the order both policies keep) in the read cycle, in the cycle the
// router takes the result, or with the write as the router takes it and
// the shootdown after the fill. The old local PTE must never sit
// in the L1 TLB after the shootdown, and the load completes on the remote
// PTE: the GMMU forwards a write in the read cycle into its result, and
// the router drops the fill of a result whose PTE is written after it left
// the GMMU, replaying the lookup so that it walks again.
func TestUnmapDuringWalk(t *testing.T) {
	r, e, _, walks := unmapDuringWalk(t, -1, -1, false)
	require.Equal(t, 107, r, "reference: result on the GMMU's port")
	require.Equal(t, pte.Local(0x40), e)
	require.Equal(t, uint64(1), walks)
	for _, c := range []struct {
		name         string
		shoot, write int
		walks        uint64
	}{
		{"write and shootdown in the read cycle", r - 1, r - 1, 1},
		{"write and shootdown as the router takes the result", r, r, 2},
		{"write as the router takes the result, shootdown after the fill", r + 2, r, 2},
	} {
		for _, skip := range []bool{false, true} {
			_, e, stale, walks := unmapDuringWalk(t, c.shoot, c.write, skip)
			assert.False(t, stale, "%s (skip idle %v): the L1 TLB held the unmapped page's old PTE", c.name, skip)
			assert.Equal(t, pte.Remote(0x77), e, "%s (skip idle %v): translation at the end", c.name, skip)
			assert.Equal(t, c.walks, walks, "%s (skip idle %v): walks", c.name, skip)
		}
	}
}
