package pacache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// Event kinds seen on the ports.
const (
	evAccept = "accept" // a request fired on req
	evResp   = "resp"   // resp_valid was high
	evTbl    = "tbl"    // an operation fired on tbl_req
	evAnswer = "answer" // tbl_resp_valid was high
)

// event is one thing that happened on the PA-Cache's ports in a cycle.
type event struct {
	Cycle uint64
	Kind  string
	Req   Request
	Resp  Response
	Tbl   TableReq
	Ans   TableResp
}

// bench is a PA-Cache with a behavioural PA-Table, a request source fed
// from a list, and a log of every port event.
type bench struct {
	t     testing.TB
	sim   *rtl.Sim
	ports Ports
	cache *PACache
	table *Table

	pending []Request
	events  []event
}

func newBench(t testing.TB, cfg Config, tcfg TableConfig) *bench {
	s := rtl.New(rtl.Options{Checked: true})
	p := NewPorts(s, "pac", cfg)
	c, err := New(s, "pac", cfg, p)
	require.NoError(t, err)
	tb, err := NewTable(s, "pat", tcfg, p)
	require.NoError(t, err)
	s.Reset()
	return &bench{t: t, sim: s, ports: p, cache: c, table: tb}
}

// send queues requests; the source offers them in order, holding each
// until it is accepted.
func (b *bench) send(rs ...Request) { b.pending = append(b.pending, rs...) }

// step logs this cycle's port events and advances the clock.
func (b *bench) step() {
	b.t.Helper()
	p, now := b.ports, b.sim.Cycle()
	p.Req.Valid.Set(len(b.pending) > 0)
	if len(b.pending) > 0 {
		p.Req.Set(b.pending[0])
	}
	if p.Req.Valid.Get() && p.Req.Ready.Get() {
		b.events = append(b.events, event{Cycle: now, Kind: evAccept, Req: b.pending[0]})
		b.pending = b.pending[1:]
	}
	if p.Resp.Valid.Get() {
		b.events = append(b.events, event{Cycle: now, Kind: evResp, Resp: p.Resp.Get()})
	}
	if p.TblReq.Valid.Get() && p.TblReq.Ready.Get() {
		b.events = append(b.events, event{Cycle: now, Kind: evTbl, Tbl: p.TblReq.Get()})
	}
	if p.TblResp.Valid.Get() {
		b.events = append(b.events, event{Cycle: now, Kind: evAnswer, Ans: p.TblResp.Get()})
	}
	require.NoError(b.t, b.sim.Step())
}

// run steps n cycles.
func (b *bench) run(n int) {
	b.t.Helper()
	for range n {
		b.step()
	}
}

// drain steps until every queued request is answered and the cache is
// idle again, and returns the events logged since the last drain.
func (b *bench) drain() []event {
	b.t.Helper()
	for i := 0; ; i++ {
		require.Less(b.t, i, 100000, "PA-Cache did not go idle")
		idle := len(b.pending) == 0 && b.ports.Req.Ready.Get() && !b.ports.Resp.Valid.Get() && !b.ports.TblReq.Valid.Get()
		if idle {
			break
		}
		b.step()
	}
	ev := b.events
	b.events = nil
	return ev
}
