package ptw

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// request is a walk a test requester offers, not before cycle At.
type request struct {
	At   uint64
	Walk Walk
}

// requester offers its walks in order.
type requester struct {
	rtl.Base
	out      *rtl.Decoupled[Walk]
	reqs     []request
	accepted []uint64
	idx      *rtl.Reg[uint32]
}

func newRequester(s *rtl.Sim, out *rtl.Decoupled[Walk], reqs []request) *requester {
	r := &requester{out: out, reqs: reqs}
	s.Add(r, "tb.requester")
	r.idx = rtl.NewReg[uint32](&r.Base, "idx", 32, 0)
	out.Producer(&r.Base)
	return r
}

func (r *requester) Drive() {
	i := int(r.idx.Q())
	ok := i < len(r.reqs) && r.reqs[i].At <= r.Now()
	r.out.Valid.Set(ok)
	if ok {
		r.out.Bits.Set(r.reqs[i].Walk)
	}
}

func (r *requester) Eval() {
	i := int(r.idx.Q())
	switch {
	case r.out.Fire():
		r.accepted = append(r.accepted, r.Now())
		r.idx.Set(uint32(i + 1))
	case i < len(r.reqs) && r.reqs[i].At > r.Now():
		r.SleepUntil(r.reqs[i].At)
	default:
		r.Sleep()
	}
}

// result is one walk result as the sink saw it: Cycle is when it was
// taken, ValidFrom when it was first offered.
type result struct {
	Cycle     uint64
	Walk      Walk
	PTE       pte.PTE
	ValidFrom uint64
}

// sink takes results, refusing them in the cycles stall marks.
type sink struct {
	rtl.Base
	in    PTEPort[Walk]
	stall func(cycle uint64) bool
	got   []result
	since uint64 // cycle the offered result first showed, 0 if none
	ready *rtl.Reg[bool]
}

func newSink(s *rtl.Sim, in PTEPort[Walk], stall func(uint64) bool) *sink {
	k := &sink{in: in, stall: stall}
	s.Add(k, "tb.sink")
	k.ready = rtl.NewFlag(&k.Base, "ready", true)
	in.Consumer(&k.Base)
	return k
}

func (k *sink) Drive() { k.in.Ready.Set(k.ready.Q()) }

func (k *sink) Eval() {
	now := k.Now()
	if k.in.Valid.Get() && k.since == 0 {
		k.since = now
	}
	if k.in.Fire() {
		k.got = append(k.got, result{now, k.in.Bits.Get(), k.in.PTE.Get(), k.since})
		k.since = 0
	}
	if k.stall == nil {
		if !k.in.Fire() {
			k.Sleep()
		}
		return
	}
	k.ready.Set(!k.stall(now + 1))
}

// updater writes PTEs through the Update port at given cycles.
type updater struct {
	rtl.Base
	port PTEPort[uint64]
	ups  []update
	took []uint64 // cycle each update was accepted
	idx  *rtl.Reg[uint32]
}

type update struct {
	At  uint64
	VPN uint64
	PTE pte.PTE
}

func newUpdater(s *rtl.Sim, port PTEPort[uint64], ups []update) *updater {
	u := &updater{port: port, ups: ups}
	s.Add(u, "tb.updater")
	u.idx = rtl.NewReg[uint32](&u.Base, "idx", 32, 0)
	port.Producer(&u.Base)
	return u
}

func (u *updater) Drive() {
	i := int(u.idx.Q())
	ok := i < len(u.ups) && u.ups[i].At <= u.Now()
	u.port.Valid.Set(ok)
	if ok {
		u.port.Bits.Set(u.ups[i].VPN)
		u.port.PTE.Set(u.ups[i].PTE)
	}
}

func (u *updater) Eval() {
	i := int(u.idx.Q())
	switch {
	case u.port.Fire():
		u.took = append(u.took, u.Now())
		u.idx.Set(uint32(i + 1))
	case i < len(u.ups) && u.ups[i].At > u.Now():
		u.SleepUntil(u.ups[i].At)
	default:
		u.Sleep()
	}
}

type bench struct {
	sim  *rtl.Sim
	gmmu *GMMU
	req  *requester
	sink *sink
	upd  *updater
}

// newBench builds a GMMU with test clients; with idle skipping on, the
// blocks are also evaluated in a shuffled order.
func newBench(t *testing.T, cfg Config, skip bool, reqs []request, ups []update, stall func(uint64) bool) *bench {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	g, err := New(s, "gmmu", cfg, NewPorts(s, "gmmu"))
	require.NoError(t, err)
	b := &bench{sim: s, gmmu: g, req: newRequester(s, g.Req, reqs), sink: newSink(s, g.Resp, stall)}
	b.upd = newUpdater(s, g.Update, ups)
	if skip {
		s.Shuffle(rand.New(rand.NewPCG(uint64(len(reqs)), 9)))
	}
	for v := range uint64(cfg.Pages) {
		require.NoError(t, g.Load(cfg.BaseVPN+v, pte.Remote(0x1000+v)))
	}
	s.Reset()
	return b
}

func (b *bench) runUntilResults(t *testing.T, n int) {
	ok, err := b.sim.RunUntil(func() bool { return len(b.sink.got) >= n }, 1_000_000)
	require.NoError(t, err)
	require.True(t, ok, "only %d of %d results", len(b.sink.got), n)
}

func small(pages int) Config {
	c := DefaultConfig()
	c.Pages = pages
	return c
}

func TestWalkLatency(t *testing.T) {
	b := newBench(t, small(64), true, []request{{0, Walk{VPN: 5, Requester: 77}}}, nil, nil)
	b.runUntilResults(t, 1)
	// Accepted in cycle 0, dispatched in 1, leaf PTE read in 1+100-1 = 100,
	// result valid in 101.
	assert.Equal(t, []result{{101, Walk{VPN: 5, Requester: 77}, pte.Remote(0x1005), 101}}, b.sink.got)
	assert.Equal(t, Stats{Walks: 1}, b.gmmu.Stats())
}

func TestMultiLevelWalkWithPageWalkCache(t *testing.T) {
	cfg := GRITConfig()
	cfg.Pages = 2048
	// 3 and 9 share a 2 MB region, 600 is in the next one.
	reqs := []request{{0, Walk{VPN: 3, Requester: 1}}, {500, Walk{VPN: 9, Requester: 2}}, {1000, Walk{VPN: 600, Requester: 3}}}
	b := newBench(t, cfg, true, reqs, nil, nil)
	b.runUntilResults(t, 3)
	// Four levels of 100 cycles on a page-walk cache miss, the leaf level
	// alone on a hit; each plus the cycle in the queue.
	var at []uint64
	for _, r := range b.sink.got {
		at = append(at, r.Cycle)
	}
	assert.Equal(t, []uint64{401, 500 + 101, 1000 + 401}, at)
	assert.Equal(t, Stats{Walks: 3, PWCHits: 1}, b.gmmu.Stats())
}

func TestWalkerSaturation(t *testing.T) {
	var reqs []request
	for i := range 65 {
		reqs = append(reqs, request{0, Walk{VPN: uint64(i), Requester: uint16(i)}})
	}
	b := newBench(t, small(128), true, reqs, nil, nil)
	b.runUntilResults(t, 65)
	for i := range 64 {
		require.Equal(t, uint64(101+i), b.sink.got[i].Cycle, "walk %d", i)
	}
	// The 65th, accepted in cycle 64, gets walker 0 in cycle 101, the cycle
	// the first walk's result is out, and finishes 100 cycles later.
	assert.Equal(t, result{201, Walk{VPN: 64, Requester: 64}, pte.Remote(0x1000 + 64), 201}, b.sink.got[64])
}

func TestQueueFullBackPressure(t *testing.T) {
	cfg := small(64)
	cfg.Walkers, cfg.QueueDepth, cfg.LevelLatency = 2, 4, 10
	var reqs []request
	for i := range 7 {
		reqs = append(reqs, request{0, Walk{VPN: uint64(i), Requester: uint16(i)}})
	}
	b := newBench(t, cfg, false, reqs, nil, nil)
	b.runUntilResults(t, 7)
	// Two walks start in cycles 1 and 2, four requests fill the queue in
	// cycles 2..5; the first walker frees in cycle 11, a queued request
	// takes it, and the queue has room again in cycle 12.
	assert.Equal(t, []uint64{0, 1, 2, 3, 4, 5, 12}, b.req.accepted)
}

func TestConcurrentWalksOfOneVPNMerge(t *testing.T) {
	reqs := []request{{0, Walk{VPN: 7, Requester: 0}}, {0, Walk{VPN: 7, Requester: 1}}, {0, Walk{VPN: 7, Requester: 2}}, {0, Walk{VPN: 8, Requester: 3}}}
	b := newBench(t, small(64), true, reqs, nil, nil)
	b.runUntilResults(t, 4)
	want := []result{
		{101, Walk{VPN: 7, Requester: 0}, pte.Remote(0x1007), 101},
		{102, Walk{VPN: 7, Requester: 1}, pte.Remote(0x1007), 102}, // merged: answered one per cycle
		{103, Walk{VPN: 7, Requester: 2}, pte.Remote(0x1007), 103}, // after the walk of 7
		{104, Walk{VPN: 8, Requester: 3}, pte.Remote(0x1008), 104},
	}
	assert.Empty(t, gocmp.Diff(want, b.sink.got))
	assert.Equal(t, Stats{Walks: 2, Merged: 2}, b.gmmu.Stats())
}

// Merging keeps each request's write bit: the walk of 7 is a store's, and
// a load and a store merge into it; the walk of 9 is a load's, and a store
// merges into it. Every result carries its own request's bit, with the
// timing of TestConcurrentWalksOfOneVPNMerge: requests accepted in cycles
// 0..5, walks dispatched the cycle after, 100 cycles each; merged requests
// answered one per cycle after their walk.
func TestWriteBitSurvivesWalkAndMerge(t *testing.T) {
	reqs := []request{
		{0, Walk{VPN: 7, Requester: 0, Write: true}},
		{0, Walk{VPN: 7, Requester: 1}},
		{0, Walk{VPN: 7, Requester: 2, Write: true}},
		{0, Walk{VPN: 8, Requester: 3, Write: true}},
		{0, Walk{VPN: 9, Requester: 4}},
		{0, Walk{VPN: 9, Requester: 5, Write: true}},
	}
	b := newBench(t, small(64), true, reqs, nil, nil)
	b.runUntilResults(t, 6)
	want := []result{
		{101, Walk{VPN: 7, Requester: 0, Write: true}, pte.Remote(0x1007), 101},
		{102, Walk{VPN: 7, Requester: 1}, pte.Remote(0x1007), 102},
		{103, Walk{VPN: 7, Requester: 2, Write: true}, pte.Remote(0x1007), 103},
		{104, Walk{VPN: 8, Requester: 3, Write: true}, pte.Remote(0x1008), 104},
		{105, Walk{VPN: 9, Requester: 4}, pte.Remote(0x1009), 105},
		{106, Walk{VPN: 9, Requester: 5, Write: true}, pte.Remote(0x1009), 106},
	}
	assert.Empty(t, gocmp.Diff(want, b.sink.got))
	assert.Equal(t, []uint64{0, 1, 2, 3, 4, 5}, b.req.accepted)
	assert.Equal(t, Stats{Walks: 3, Merged: 3}, b.gmmu.Stats())
}

// The packed walk keeps the write bit above the requester, as
// pte.PackRequest lays it out.
func TestPackedWalk(t *testing.T) {
	assert.Equal(t, uint64(1)<<52|0xBEEF<<36|0x123, Walk{VPN: 0x123, Requester: 0xBEEF, Write: true}.Pack())
	assert.Equal(t, uint64(0xBEEF)<<36|0x123, Walk{VPN: 0x123, Requester: 0xBEEF}.Pack())
	assert.Equal(t, 53, WalkBits)
}

func TestUpdatePort(t *testing.T) {
	ups := []update{{50, 5, pte.Local(9)}, {60, 1 << 30, pte.Local(1)}}
	// The walk of 5 reads its PTE in cycle 100, after the update.
	b := newBench(t, small(64), true, []request{{0, Walk{VPN: 5, Requester: 0}}, {200, Walk{VPN: 99, Requester: 1}}}, ups, nil)
	b.runUntilResults(t, 2)
	assert.Equal(t, pte.Local(9), b.sink.got[0].PTE)
	assert.Equal(t, pte.Local(9), b.gmmu.Read(5))
	// A walk outside the managed range answers an invalid PTE.
	assert.Equal(t, pte.PTE(0), b.sink.got[1].PTE)
	assert.Equal(t, Stats{Walks: 2, Updates: 1}, b.gmmu.Stats())
	require.EqualError(t, b.gmmu.Err(), "ptw: gmmu update of VPN 0x40000000 dropped; VPN must be in 0x0..0x3f")
	require.EqualError(t, b.gmmu.Load(64, 0), "ptw: Load of VPN 0x40 outside the managed range 0x0..0x3f")
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Walkers = 0 }, "ptw: Walkers 0 outside 1..1024"},
		{func(c *Config) { c.QueueDepth = 5000 }, "ptw: QueueDepth 5000 outside 1..4096"},
		{func(c *Config) { c.Levels = 6 }, "ptw: Levels 6 outside 1..5"},
		{func(c *Config) { c.LevelLatency = 0 }, "ptw: LevelLatency 0 outside 1..65536"},
		{func(c *Config) { c.PWCEntries = -1 }, "ptw: PWCEntries -1 outside 0..4096"},
		{func(c *Config) { c.Pages = 0 }, "ptw: Pages 0 outside 1..16777216"},
		{func(c *Config) { c.BaseVPN = 1 << 36 }, "ptw: BaseVPN 0x1000000000 plus Pages 1048576 exceeds the 36-bit VPN space"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		require.EqualError(t, cfg.Validate(), tc.want)
		_, err := New(rtl.New(rtl.Options{}), "gmmu", cfg, Ports{})
		require.EqualError(t, err, tc.want)
	}
	require.NoError(t, GRITConfig().Validate())
}

// pteAt is the reference page table's value of vpn before cycle c: the
// initial mapping overwritten by every update accepted before c.
func pteAt(ups []update, took []uint64, vpn, c uint64) pte.PTE {
	e := pte.Remote(0x1000 + vpn)
	for i, at := range took {
		if ups[i].VPN == vpn && at < c {
			e = ups[i].PTE
		}
	}
	return e
}

func TestRandomWalksAgainstReference(t *testing.T) {
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 5))
		cfg := small(256)
		cfg.Walkers, cfg.QueueDepth, cfg.Levels, cfg.LevelLatency, cfg.PWCEntries = 4, 8, 2, 7, 4
		var reqs []request
		at := uint64(0)
		for i := range 600 {
			at += uint64(rng.IntN(6))
			reqs = append(reqs, request{at, Walk{VPN: rng.Uint64N(24) * 37 % 256, Requester: uint16(i), Write: rng.IntN(2) == 0}})
		}
		var ups []update
		for at := uint64(0); at < 3000; at += uint64(1 + rng.IntN(15)) {
			ups = append(ups, update{at, rng.Uint64N(24) * 37 % 256, pte.Local(rng.Uint64N(1 << 30))})
		}
		stall := func(c uint64) bool { return (c*2654435761)>>7%5 == 0 }
		var logs [2][]result
		for mode, skip := range []bool{false, true} {
			b := newBench(t, cfg, skip, reqs, ups, stall)
			b.runUntilResults(t, len(reqs))
			logs[mode] = b.sink.got
			// Every request is answered exactly once, with its own write bit
			// and the PTE the table held when the result was read, and no
			// faster than a walk.
			seen := map[uint16]bool{}
			for _, r := range b.sink.got {
				require.False(t, seen[r.Walk.Requester], "requester %d answered twice", r.Walk.Requester)
				seen[r.Walk.Requester] = true
				require.Equal(t, reqs[r.Walk.Requester].Walk, r.Walk)
				acc := b.req.accepted[r.Walk.Requester]
				require.GreaterOrEqual(t, r.ValidFrom, acc+2, "result too early")
				// The PTE was read the cycle before the result was offered,
				// and every update until the cycle it was taken is forwarded.
				require.Equal(t, pteAt(ups, b.upd.took, r.Walk.VPN, r.Cycle), r.PTE,
					"requester %d vpn %d offered in %d", r.Walk.Requester, r.Walk.VPN, r.ValidFrom)
			}
			st := b.gmmu.Stats()
			require.Equal(t, uint64(len(reqs)), st.Walks+st.Merged)
			require.Positive(t, st.Merged)
			require.Positive(t, st.PWCHits)
		}
		require.Empty(t, gocmp.Diff(logs[0], logs[1]), "idle skipping changed the results (seed %d)", seed)
	}
}

// TestDerivedStateTracksTheRegisters checks the GMMU's derived state
// against its registers after every cycle of random traffic: no busy
// walker is done in a cycle before firstDone, so skipping the search for
// a finished walk until then skips nothing, the age orders list the
// waiting and the answered entries exactly, oldest first, and the walker
// orders list the busy walkers with their registers' ages and leaf-read
// cycles, both growing along each order, and the filter counts each.
func TestDerivedStateTracksTheRegisters(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 11))
		cfg := small(256)
		cfg.Walkers, cfg.QueueDepth, cfg.Levels, cfg.LevelLatency = 1+rng.IntN(8), 4+rng.IntN(70), 2, 1+rng.IntN(9)
		cfg.PWCEntries = rng.IntN(2) * 4
		var reqs []request
		at := uint64(0)
		for i := range 600 {
			at += uint64(rng.IntN(4))
			// Few VPNs: many requests merge into walks under way.
			reqs = append(reqs, request{at, Walk{VPN: rng.Uint64N(12) * 23, Requester: uint16(i)}})
		}
		stall := func(c uint64) bool { return (c*2654435761)>>5%3 == 0 }
		b := newBench(t, cfg, seed%2 == 0, reqs, nil, stall)
		g := b.gmmu
		busy, answered := 0, 0
		byAge := func(v *rtl.BitVec) ageOrder {
			o := ageOrder{}
			for e := range v.Len() {
				if v.Has(e) {
					o = append(o, agedEntry{g.age.At(e).Q(), int32(e)})
				}
			}
			slices.SortFunc(o, func(x, y agedEntry) int { return cmp.Compare(x.age, y.age) })
			return o
		}
		b.sim.Probe(func(c uint64) {
			for w := range cfg.Walkers {
				if g.busy.Has(w) {
					require.GreaterOrEqual(t, max(g.doneAt.At(w).Q(), c+1), g.firstDone,
						"seed %d cycle %d: walker %d done at %d before firstDone", seed, c, w, g.doneAt.At(w).Q())
					busy++
				}
			}
			listed := map[int]bool{}
			for ci, o := range g.walkOrders {
				for i := range o.n {
					p := o.walks[(o.head+i)%len(o.walks)]
					w := int(p.walker)
					require.True(t, g.busy.Has(w) && !listed[w], "seed %d cycle %d: walker %d listed but not busy, or twice", seed, c, w)
					listed[w] = true
					require.Equal(t, pendingWalk{g.doneAt.At(w).Q(), g.wAge.At(w).Q(), int32(w)}, p, "seed %d cycle %d: class %d", seed, c, ci)
					require.True(t, g.walkVPNs.mayHold(g.wVPN.At(w).Q()), "seed %d cycle %d: walker %d's VPN filtered out", seed, c, w)
					if i > 0 {
						prev := o.walks[(o.head+i-1)%len(o.walks)]
						require.True(t, prev.age < p.age && prev.doneAt < p.doneAt, "seed %d cycle %d: class %d out of order", seed, c, ci)
					}
				}
			}
			require.Len(t, listed, int(g.active.Q()), "seed %d cycle %d: walkers listed", seed, c)
			require.Equal(t, g.active.Q(), g.walkVPNs.n, "seed %d cycle %d: walkers filtered", seed, c)
			require.Equal(t, byAge(g.waitingSet), append(ageOrder{}, g.waitOrder...), "seed %d cycle %d: waiting order", seed, c)
			require.Equal(t, byAge(g.answerSet), append(ageOrder{}, g.answerOrder...), "seed %d cycle %d: answer order", seed, c)
			answered += len(g.answerOrder)
		})
		b.runUntilResults(t, len(reqs))
		require.Positive(t, busy)
		require.Positive(t, answered)
	}
}
