package incpage

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/rtl"
)

// request is a translation a test requester offers, not before cycle At.
type request struct {
	At   uint64
	Walk ptw.Walk
}

// requester offers its requests in order on the GMMU's request port.
type requester struct {
	rtl.Base
	out      *rtl.Decoupled[ptw.Walk]
	reqs     []request
	accepted []uint64
	idx      *rtl.Reg[uint32]
}

func newRequester(s *rtl.Sim, out *rtl.Decoupled[ptw.Walk], reqs []request) *requester {
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

// answer is a fill and replay an SM sink took.
type answer struct {
	Cycle uint64
	Walk  ptw.Walk
	Page  uint64
	Rec   Record
}

// smSink takes one SM's fills and replays (always ready).
type smSink struct {
	rtl.Base
	fill   FillPort
	replay *rtl.Decoupled[ptw.Walk]
	got    *[]answer
}

func newSMSink(s *rtl.Sim, i int, fill FillPort, replay *rtl.Decoupled[ptw.Walk], got *[]answer) {
	k := &smSink{fill: fill, replay: replay, got: got}
	s.Add(k, "tb.sm"+string(rune('0'+i)))
	fill.Consumer(&k.Base)
	replay.Consumer(&k.Base)
}

func (k *smSink) Drive() {
	k.fill.Ready.Set(true)
	k.replay.Ready.Set(true)
}

func (k *smSink) Eval() {
	if k.fill.Fire() != k.replay.Fire() {
		panic("fill and replay not together")
	}
	if !k.replay.Fire() {
		k.Sleep()
		return
	}
	var r Record
	for _, w := range k.fill.Spans {
		if s, ok := UnpackSpan(w.Get()); ok {
			r.Spans[r.N] = s
			r.N++
		}
	}
	*k.got = append(*k.got, answer{Cycle: k.Now(), Walk: k.replay.Bits.Get(), Page: k.fill.Bits.Get(), Rec: r})
}

// taken is a migration request the host stub took.
type taken struct {
	Cycle uint64
	Req   MigRequest
}

// hostStub takes migration requests from cycle readyFrom on and reports
// each done delay cycles after taking it, in order.
type hostStub struct {
	rtl.Base
	req       *rtl.Decoupled[MigRequest]
	done      *rtl.Decoupled[uint16]
	readyFrom uint64
	delay     uint64
	took      []taken
	doneAt    []uint64 // cycle each completion was taken by the GMMU
	next      int      // next of took to complete
	delays    func() uint64
	due       []uint64
}

func newHostStub(s *rtl.Sim, p Ports, readyFrom, delay uint64) *hostStub {
	h := &hostStub{req: p.MigReq, done: p.MigDone, readyFrom: readyFrom, delay: delay}
	s.Add(h, "tb.host")
	h.req.Consumer(&h.Base)
	h.done.Producer(&h.Base)
	return h
}

func (h *hostStub) Drive() {
	h.req.Ready.Set(h.Now() >= h.readyFrom)
	ok := h.next < len(h.took) && h.due[h.next] <= h.Now()
	h.done.Valid.Set(ok)
	if ok {
		h.done.Bits.Set(h.took[h.next].Req.Tag)
	}
}

func (h *hostStub) Eval() {
	now := h.Now()
	if h.req.Fire() {
		d := h.delay
		if h.delays != nil {
			d = h.delays()
		}
		h.took = append(h.took, taken{now, h.req.Bits.Get()})
		h.due = append(h.due, max(now+d, lastOr(h.due)))
	}
	if h.done.Fire() {
		h.doneAt = append(h.doneAt, now)
		h.next++
	}
}

func lastOr(s []uint64) uint64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

// bench is a GMMU between a requester, SM sinks and a host stub.
type bench struct {
	sim  *rtl.Sim
	g    *GMMU
	req  *requester
	host *hostStub
	got  []answer
}

// Pages of the testbench: four 2 MB pages from VA 4 GB; the last one
// holds cudaMalloc'd data (every unit present).
const (
	basePage    = 1 << (32 - PageShift)
	devicePage  = basePage + 3
	unitShiftTB = 10
)

func testConfig() Config {
	return Config{
		UnitShift: unitShiftTB, Ranges: 4,
		L2Entries: 16, L2Ways: 4, L2Latency: 10,
		Walkers: 8, WalkCycles: 100, Queue: 16, Suspend: 64, MRQ: 8,
		MinUnits: 1, MaxUnits: 64, GapUnits: 4,
		BasePage: basePage, Pages: 4, SMs: 2,
	}
}

func key(page uint64, unit int) uint64 { return page<<(PageShift-unitShiftTB) | uint64(unit) }

func newBench(t *testing.T, cfg Config, reqs []request, hostReady, hostDelay uint64) *bench {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	p := NewPorts(s, "gmmu")
	var fills []FillPort
	var replays []*rtl.Decoupled[ptw.Walk]
	for i := 0; i < cfg.SMs; i++ {
		fills = append(fills, NewFillPort(s, "sm.fill"+string(rune('0'+i)), cfg.Ranges))
		replays = append(replays, rtl.NewDecoupledOf[ptw.Walk](s, "sm.replay"+string(rune('0'+i)), ptw.WalkBits))
	}
	init := make([]PageInit, cfg.Pages)
	for i := range init {
		init[i] = PageInit{PTE: pte.Remote(uint64(i) << 9)}
	}
	init[devicePage-basePage].Present = true
	g, err := NewGMMU(s, "gmmu", cfg, p, fills, replays, 6, init)
	require.NoError(t, err)
	b := &bench{sim: s, g: g}
	for i := range fills {
		newSMSink(s, i, fills[i], replays[i], &b.got)
	}
	b.req = newRequester(s, p.Req, reqs)
	b.host = newHostStub(s, p, hostReady, hostDelay)
	s.Reset()
	return b
}

func (b *bench) run(t *testing.T, cycles uint64) {
	require.NoError(t, b.sim.Run(cycles))
}

// answerOf finds the answer to requester who.
func (b *bench) answerOf(t *testing.T, who uint16) answer {
	for _, a := range b.got {
		if a.Walk.Requester == who {
			return a
		}
	}
	t.Fatalf("no answer for requester %d", who)
	return answer{}
}

// One range migration, every stage's cycle by hand (L2 lookup 10, walk
// 100, host stub 1,000 cycles from taking the request to completing it):
//
//	0     the request is accepted; its L2 lookup is due at 0+10
//	10    L2 TLB miss -> waits for a walker
//	11    a walker starts; the walk reads the PTE at 11+100 = 111
//	111   the bitmap lacks unit 37: range miss at the page table
//	112   the MRQ entry {page, 37, 37} is built, the request suspended
//	113   the entry is loaded into the request register
//	114   the host takes it (Valid from 114)
//	1114  the host reports it done (114+1000); bitmap and L2 updated,
//	      Landed broadcast from 1115, the request moves to the answers
//	1115  the answer is loaded into the fill/replay register
//	1116  the SM takes the fill and the replay
func TestRangeMigrationCycles(t *testing.T) {
	page := uint64(basePage + 1)
	b := newBench(t, testConfig(), []request{{0, ptw.Walk{VPN: key(page, 37), Requester: 1<<6 | 5}}}, 0, 1000)
	b.run(t, 2000)
	require.Len(t, b.host.took, 1)
	assert.Equal(t, taken{114, MigRequest{Tag: 0, Page: page, First: 37, Count: 1}}, b.host.took[0])
	assert.Equal(t, []uint64{0}, b.req.accepted)
	require.Len(t, b.got, 1)
	a := b.got[0]
	assert.Equal(t, uint64(114+1000+2), a.Cycle)
	assert.Equal(t, page, a.Page)
	assert.Equal(t, ptw.Walk{VPN: key(page, 37), Requester: 1<<6 | 5}, a.Walk)
	assert.True(t, a.Rec.Contains(37))
	st := b.g.Stats()
	assert.Equal(t, Stats{L2Misses: 1, Walks: 1, PTRangeMisses: 1, Requests: 1, Units: 1, Completions: 1, Suspended: 1}, st)
	e, bm := b.g.PageRecord(page)
	assert.False(t, e.IsRemote(), "the first touch takes the page's frame")
	assert.True(t, bm.Has(37))
	assert.False(t, bm.Has(36))
	rec, ok := b.g.L2Probe(page)
	require.True(t, ok)
	assert.Equal(t, Record{N: 1, Spans: [MaxRanges]Span{{37, 37}}, Exact: true}, rec)
}

// The L2 TLB's two steps after a migration: unit 37 hits (answered
// 0+10+2 cycles after acceptance, no walk); unit 900 is a range miss on
// an exact record, so it goes to the migration builder without a walk.
func TestL2RangeHitAndMiss(t *testing.T) {
	page := uint64(basePage + 1)
	reqs := []request{
		{0, ptw.Walk{VPN: key(page, 37), Requester: 1}},
		{2000, ptw.Walk{VPN: key(page, 37), Requester: 2}},
		{2100, ptw.Walk{VPN: key(page, 900), Requester: 3}},
	}
	b := newBench(t, testConfig(), reqs, 0, 1000)
	b.run(t, 4000)
	assert.Equal(t, uint64(2000+10+2), b.answerOf(t, 2).Cycle, "L2 range hit: lookup 10, answer register 1, fill 1")
	// Range miss at the L2 at 2110, MRQ entry built 2111, register 2112,
	// taken 2113, done 3113, answered 3115.
	require.Len(t, b.host.took, 2)
	assert.Equal(t, taken{2113, MigRequest{Tag: 0, Page: page, First: 900, Count: 1}}, b.host.took[1])
	assert.Equal(t, uint64(3115), b.answerOf(t, 3).Cycle)
	st := b.g.Stats()
	assert.Equal(t, uint64(1), st.Walks, "the L2 answered both later requests without a walk")
	assert.Equal(t, uint64(1), st.L2Hits)
	assert.Equal(t, uint64(1), st.L2RangeMisses)
}

// The page table's two steps: with one range per TLB entry, the L2 keeps
// only the latest span and its record is no longer exact, so a request for
// the earlier span is an L2 range miss that walks and hits in the page
// table's bitmap (a page-table range hit: no migration).
func TestPageTableRangeHit(t *testing.T) {
	cfg := testConfig()
	cfg.Ranges = 1
	page := uint64(basePage + 2)
	reqs := []request{
		{0, ptw.Walk{VPN: key(page, 10), Requester: 1}},
		{2000, ptw.Walk{VPN: key(page, 500), Requester: 2}},
		{5000, ptw.Walk{VPN: key(page, 10), Requester: 3}},
	}
	b := newBench(t, cfg, reqs, 0, 1000)
	b.run(t, 4000)
	rec, _ := b.g.L2Probe(page)
	assert.Equal(t, Record{N: 1, Spans: [MaxRanges]Span{{500, 500}}}, rec, "K = 1 keeps the newest span, inexact")
	b.run(t, 3000)
	rec, _ = b.g.L2Probe(page)
	assert.Equal(t, Record{N: 1, Spans: [MaxRanges]Span{{10, 10}}}, rec, "the walk refills the L2 around unit 10")
	assert.Len(t, b.host.took, 2, "no migration for the unit the page table holds")
	// 5000 accepted, L2 range miss at 5010, walk 5011..5111, answered 5113.
	assert.Equal(t, uint64(5113), b.answerOf(t, 3).Cycle)
	st := b.g.Stats()
	assert.Equal(t, uint64(2), st.Walks)
	assert.Equal(t, uint64(2), st.L2RangeMisses)
	assert.Equal(t, uint64(1), st.PTRangeMisses, "only the first request missed in the page table's bitmap")
}

// A suspended request does not hold up another page's translation: the
// first request waits 100,000 cycles for its migration while a request to
// the cudaMalloc'd page, accepted a cycle later, walks and is answered at
// 1+10+1+100+2 = 114.
func TestSuspendedRequestDoesNotBlock(t *testing.T) {
	reqs := []request{
		{0, ptw.Walk{VPN: key(basePage, 3), Requester: 1}},
		{1, ptw.Walk{VPN: key(devicePage, 3), Requester: 1<<6 | 2}},
	}
	b := newBench(t, testConfig(), reqs, 0, 100_000)
	b.run(t, 1000)
	require.Len(t, b.got, 1)
	assert.Equal(t, answer{Cycle: 114, Walk: reqs[1].Walk, Page: devicePage, Rec: Record{N: 1, Spans: [MaxRanges]Span{{0, 2047}}}}, b.got[0])
	assert.Equal(t, uint64(1), b.g.Stats().Suspended)
	b.run(t, 100_000)
	assert.Len(t, b.got, 2)
}

// Merging: while the host is busy (it takes nothing before cycle 5,000)
// requests queue in the MRQ. Units 100 and 102 of one page are 1 apart
// (gap threshold 4): the second extends the first to 100..102. Unit 200
// is 97 units away: a request of its own. The first request, to another
// page, is the one already in the request register and is not merged.
func TestMergePendingRequests(t *testing.T) {
	p := uint64(basePage + 1)
	reqs := []request{
		{0, ptw.Walk{VPN: key(basePage, 0), Requester: 1}},
		{10, ptw.Walk{VPN: key(p, 100), Requester: 2}},
		{20, ptw.Walk{VPN: key(p, 102), Requester: 3}},
		{30, ptw.Walk{VPN: key(p, 200), Requester: 4}},
		{40, ptw.Walk{VPN: key(p, 101), Requester: 5}},
	}
	b := newBench(t, testConfig(), reqs, 5000, 500)
	b.run(t, 10_000)
	var got []MigRequest
	for _, x := range b.host.took {
		got = append(got, x.Req)
	}
	assert.Equal(t, []MigRequest{
		{Tag: 0, Page: basePage, First: 0, Count: 1},
		{Tag: 1, Page: p, First: 100, Count: 3},
		{Tag: 2, Page: p, First: 200, Count: 1},
	}, got)
	st := b.g.Stats()
	assert.Equal(t, uint64(1), st.Merged)
	assert.Equal(t, uint64(1), st.Attached, "unit 101 waits for the merged request that covers it")
	assert.Len(t, b.got, 5)
	for _, a := range b.got {
		_, u := a.Walk.VPN>>11, uint16(a.Walk.VPN&2047)
		assert.True(t, a.Rec.Contains(u), "answer %v carries its unit", a)
	}
}

// The minimum length: a new request covers MinUnits from the missing
// unit, stopping before a unit already present.
func TestMinimumLength(t *testing.T) {
	cfg := testConfig()
	cfg.MinUnits = 16
	p := uint64(basePage + 1)
	reqs := []request{
		{0, ptw.Walk{VPN: key(p, 20), Requester: 1}},
		{3000, ptw.Walk{VPN: key(p, 10), Requester: 2}},
	}
	b := newBench(t, cfg, reqs, 0, 1000)
	b.run(t, 6000)
	require.Len(t, b.host.took, 2)
	assert.Equal(t, MigRequest{Tag: 0, Page: p, First: 20, Count: 16}, b.host.took[0].Req)
	assert.Equal(t, MigRequest{Tag: 0, Page: p, First: 10, Count: 10}, b.host.took[1].Req, "10..19: stops before unit 20, present")
}

// Seeded random requests over three pages with random host delays: every
// request is answered exactly once, with its unit in the fill's record and
// in the page table; TLB records never claim a unit the bitmap lacks.
func TestRandomAgainstInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := testConfig()
		cfg.Ranges = 1 + rng.IntN(4)
		cfg.GapUnits = rng.IntN(8)
		cfg.MinUnits = 1 + rng.IntN(4)
		var reqs []request
		at := uint64(0)
		for i := 0; i < 300; i++ {
			at += uint64(rng.IntN(20))
			page := basePage + uint64(rng.IntN(4))
			reqs = append(reqs, request{at, ptw.Walk{VPN: key(page, rng.IntN(64)), Requester: uint16(i % 128)}})
		}
		b := newBench(t, cfg, reqs, 0, 0)
		b.host.delays = func() uint64 { return 50 + uint64(rng.IntN(2000)) }
		for k := 0; k < 200 && len(b.got) < len(reqs); k++ {
			b.run(t, 1000)
			for i := 0; i < cfg.Pages; i++ {
				page := basePage + uint64(i)
				_, bm := b.g.PageRecord(page)
				if r, ok := b.g.L2Probe(page); ok {
					require.True(t, r.SubsetOf(bm), "seed %d: L2 record %v of page %#x", seed, r.Spans[:r.N], page)
				}
			}
		}
		require.Len(t, b.got, len(reqs), "seed %d", seed)
		for _, a := range b.got {
			u := uint16(a.Walk.VPN & 2047)
			_, bm := b.g.PageRecord(a.Page)
			assert.True(t, a.Rec.Contains(u) && bm.Has(int(u)), "seed %d: %v", seed, a)
		}
	}
}
