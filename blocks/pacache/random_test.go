package pacache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// fault is the reference's view of a page: faults since its record was
// last deleted and the OR of their write bits.
type fault struct {
	count int
	write bool
}

// reference is a plain model of the PA-Cache. sem alone gives the
// response semantics of SPEC 8.3; sets and table give the cache contents
// (an MRU-first list of VPNs per set) and the PA-Table, and so the exact
// sequence of PA-Table operations.
type reference struct {
	cfg   Config
	sem   map[uint64]fault
	sets  [][]uint64
	lines map[uint64]Record
	table map[uint64]Record
}

func newReference(cfg Config) *reference {
	return &reference{cfg: cfg, sem: map[uint64]fault{}, sets: make([][]uint64, cfg.Sets),
		lines: map[uint64]Record{}, table: map[uint64]Record{}}
}

// apply serves one request and returns its response, the PA-Table
// operations it causes in order, and whether it hits in the cache.
func (r *reference) apply(q Request) (Response, []TableReq, bool) {
	f := r.sem[q.VPN]
	f.count++
	f.write = f.write || q.Write
	trigger := f.count == r.cfg.Threshold
	if trigger {
		delete(r.sem, q.VPN)
	} else {
		r.sem[q.VPN] = f
	}
	resp := Response{Trigger: trigger, Write: f.write, Count: uint8(f.count)}

	set := r.cfg.Set(q.VPN)
	lru := r.sets[set]
	rec := Record{RW: f.write, Count: uint8(f.count - 1)}
	if i := slices.Index(lru, q.VPN); i >= 0 {
		lru = slices.Delete(lru, i, i+1)
		delete(r.lines, q.VPN)
		var ops []TableReq
		if trigger {
			ops = append(ops, TableReq{Op: OpDelete, VPN: q.VPN})
			delete(r.table, q.VPN)
		} else {
			lru = slices.Insert(lru, 0, q.VPN)
			r.lines[q.VPN] = rec
		}
		r.sets[set] = lru
		return resp, ops, true
	}
	ops := []TableReq{{Op: OpLookup, VPN: q.VPN}}
	_, found := r.table[q.VPN]
	switch {
	case trigger && found:
		ops = append(ops, TableReq{Op: OpDelete, VPN: q.VPN})
		delete(r.table, q.VPN)
	case !trigger:
		lru = slices.Insert(lru, 0, q.VPN)
		r.lines[q.VPN] = rec
		if len(lru) > r.cfg.Ways {
			v := lru[len(lru)-1]
			lru = lru[:len(lru)-1]
			w := r.lines[v]
			delete(r.lines, v)
			r.table[v] = w
			ops = append(ops, TableReq{Op: OpWriteBack, VPN: v, RW: w.RW, Count: w.Count})
		}
	}
	r.sets[set] = lru
	return resp, ops, false
}

// randomRun drives cfg with random faults on a small pool of pages that
// crowd a few sets, checks every response and PA-Table operation against
// the reference as it happens, and the final contents of cache and table.
func randomRun(t *testing.T, cfg Config, tcfg TableConfig, seed uint64, requests int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := newBench(t, cfg, tcfg)
	ref := newReference(cfg)
	pool := make([]uint64, 3*cfg.Ways*4)
	for i := range pool {
		set := uint64(rng.IntN(min(4, cfg.Sets)))
		pool[i] = set | uint64(rng.Uint64N(1<<uint(cfg.TagBits())))<<uint(cfg.IndexBits())
	}

	var wantResp []Response
	var wantOps []TableReq
	var wantHit []bool
	var acceptAt []uint64
	sent, answered, opsSeen := 0, 0, 0
	lastAnswer := uint64(0)
	check := func(events []event) {
		for _, e := range events {
			switch e.Kind {
			case evAccept:
				acceptAt = append(acceptAt, e.Cycle)
			case evAnswer:
				lastAnswer = e.Cycle
			case evTbl:
				require.Less(t, opsSeen, len(wantOps), "unexpected PA-Table operation %+v in cycle %d", e.Tbl, e.Cycle)
				if d := cmp.Diff(wantOps[opsSeen], e.Tbl); d != "" {
					t.Fatalf("PA-Table operation %d in cycle %d (-want +got):\n%s", opsSeen, e.Cycle, d)
				}
				opsSeen++
			case evResp:
				i := answered
				require.Less(t, i, len(acceptAt), "response without a request in cycle %d", e.Cycle)
				if d := cmp.Diff(wantResp[i], e.Resp); d != "" {
					t.Fatalf("response %d in cycle %d (-want +got):\n%s", i, e.Cycle, d)
				}
				if wantHit[i] {
					require.Equal(t, acceptAt[i]+1, e.Cycle, "hit %d answered one cycle after acceptance", i)
				} else {
					require.Equal(t, lastAnswer+1, e.Cycle, "miss %d answered the cycle after the PA-Table", i)
				}
				answered++
			}
		}
	}
	for answered < requests {
		require.Less(t, b.sim.Cycle(), uint64(requests)*100, "stuck")
		if len(b.pending) == 0 && sent < requests && rng.IntN(4) != 0 {
			q := Request{VPN: pool[rng.IntN(len(pool))], Write: rng.IntN(3) == 0}
			b.send(q)
			sent++
			resp, ops, hit := ref.apply(q)
			wantResp = append(wantResp, resp)
			wantOps = append(wantOps, ops...)
			wantHit = append(wantHit, hit)
		}
		b.step()
		check(b.events)
		b.events = b.events[:0]
	}
	check(b.drain())
	require.Equal(t, len(wantOps), opsSeen, "PA-Table operations")
	hits, triggers := 0, 0
	for i, h := range wantHit {
		if h {
			hits++
		}
		if wantResp[i].Trigger {
			triggers++
		}
	}
	require.Positive(t, hits, "the run must hit")
	require.Less(t, hits, requests, "the run must miss")
	require.Positive(t, triggers, "the run must trigger")
	require.Positive(t, b.table.WriteBacks, "the run must evict")
	require.Positive(t, b.table.Deletes, "the run must delete")

	for set := range cfg.Sets {
		var got []uint64
		for w := range cfg.Ways {
			if l := b.cache.Line(set, w); l.Valid {
				got = append(got, cfg.VPN(l.Tag, set))
				require.Equal(t, ref.lines[cfg.VPN(l.Tag, set)], Record{RW: l.Write, Count: l.Faults}, "line %d.%d", set, w)
			}
		}
		want := append([]uint64{}, ref.sets[set]...)
		got = append([]uint64{}, got...)
		slices.Sort(want)
		slices.Sort(got)
		require.Equal(t, want, got, "contents of set %d", set)
	}
	for _, v := range pool {
		rec, found := b.table.Lookup(v)
		wrec, wfound := ref.table[v]
		require.Equal(t, wfound, found, "PA-Table record of %#x", v)
		require.Equal(t, wrec, rec, "PA-Table record of %#x", v)
	}
}

func TestRandomAgainstReference(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		tcfg TableConfig
	}{
		{DefaultConfig(), TableConfig{Latency: 3}},
		{DefaultConfig(), TableConfig{Latency: 1, StallSeed: 0x1d2c}},
		{Config{Sets: 32, Ways: 2, VPNBits: 20, Threshold: 2}, TableConfig{Latency: 5, StallSeed: 0x0bad}},
		{Config{Sets: 8, Ways: 8, VPNBits: 48, Threshold: 5}, TableConfig{Latency: 2}},
		{Config{Sets: 2, Ways: 3, VPNBits: 12, Threshold: 3}, TableConfig{Latency: 4, StallSeed: 0x7}},
	} {
		for seed := range uint64(3) {
			name := fmt.Sprintf("sets%d_ways%d_vpn%d_thr%d_lat%d/seed%d", tc.cfg.Sets, tc.cfg.Ways, tc.cfg.VPNBits, tc.cfg.Threshold, tc.tcfg.Latency, seed)
			t.Run(name, func(t *testing.T) { randomRun(t, tc.cfg, tc.tcfg, seed, 3000) })
		}
	}
}
