package accessctr

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// refOp is an accepted operation with the cycle the block issues it.
type refOp struct {
	accept, issue uint64
	access        *Access
	roundTrip     uint32
}

// threshold change: value fired in a cycle.
type thrChange struct {
	cycle uint64
	value uint32
}

// replay is the reference model: it applies the accepted operations in
// issue order to plain counters, inserting each halving after every
// operation accepted up to the cycle of the saturating update, and returns
// the notifications expected and the fields halved (halveCount,
// halveRoundTrip) by the sweeps.
func replay(cfg Config, words []Counter, ops []refOp, thr []thrChange, reset uint32) ([]event, int) {
	var notes []event
	pending, deadline, halved := 0, uint64(0), 0
	halve := func() {
		halved |= pending
		for i := range words {
			if pending&halveCount != 0 {
				words[i].Count >>= 1
			}
			if pending&halveRoundTrip != 0 {
				words[i].RoundTrips >>= 1
			}
		}
		pending = 0
	}
	threshold := func(update uint64) uint32 {
		t := reset
		for _, c := range thr {
			if c.cycle < update {
				t = c.value
			}
		}
		return t
	}
	for _, o := range ops {
		if pending != 0 && o.accept > deadline {
			halve()
		}
		sat := 0
		if o.access != nil {
			c := &words[o.access.Block]
			if (o.access.Remote || cfg.CountLocal) && c.Count < MaxCount {
				c.Count++
			}
			if c.Count == MaxCount {
				sat = halveCount
			}
			if o.access.Remote && c.Count >= threshold(o.issue+1) {
				notes = append(notes, event{Cycle: o.issue + 2, Kind: evNotify, Notice: Notice{Block: o.access.Block, Counter: *c}})
			}
		} else {
			c := &words[o.roundTrip]
			if c.RoundTrips < MaxRoundTrip {
				c.RoundTrips++
			}
			if c.RoundTrips == MaxRoundTrip {
				sat = halveRoundTrip
			}
		}
		if sat != 0 {
			pending |= sat
			deadline = max(deadline, o.issue+1)
		}
	}
	if pending != 0 {
		halve()
	}
	return notes, halved
}

func randomRun(t *testing.T, cfg Config, seed uint64, cycles int) {
	rng := rand.New(rand.NewPCG(seed, 3))
	b := newBench(t, cfg)
	b.settle()
	words := make([]Counter, cfg.Blocks)
	for i := range words {
		c := Counter{Count: uint32(rng.IntN(20)), RoundTrips: uint8(rng.IntN(MaxRoundTrip))}
		if rng.IntN(4) == 0 {
			c.Count = MaxCount - uint32(rng.IntN(4))
		}
		words[i] = c
		b.ctr.words.Load(i, c.Pack())
	}
	start := b.sim.Cycle()
	var thr []thrChange
	for range cycles {
		if len(b.inc) == 0 && rng.IntN(3) != 0 {
			b.inc = append(b.inc, Access{Block: uint32(rng.IntN(cfg.Blocks)), Remote: rng.IntN(2) == 0})
		}
		if len(b.rt) == 0 && rng.IntN(5) == 0 {
			b.rt = append(b.rt, uint32(rng.IntN(cfg.Blocks)))
		}
		if len(b.thr) == 0 && rng.IntN(200) == 0 {
			v := uint32(1 + rng.IntN(40))
			b.thr = append(b.thr, v)
			thr = append(thr, thrChange{cycle: b.sim.Cycle(), value: v})
		}
		b.step()
	}
	b.inc, b.rt = nil, nil
	for !b.p.Inc.Ready.Get() || b.p.NotifyValid.Get() {
		b.step()
	}
	b.run(2)

	var ops []refOp
	var got []event
	incAt := map[uint64]bool{}
	for _, e := range b.events {
		if e.Kind == evInc {
			incAt[e.Cycle] = true
		}
	}
	for _, e := range b.events {
		switch e.Kind {
		case evInc:
			ops = append(ops, refOp{accept: e.Cycle, issue: e.Cycle, access: &e.Access})
		case evRoundTrip:
			o := refOp{accept: e.Cycle, issue: e.Cycle, roundTrip: e.Block}
			if incAt[e.Cycle] {
				o.issue++
			}
			ops = append(ops, o)
		case evNotify:
			got = append(got, e)
		}
	}
	// Events are logged in cycle order; a buffered round trip issues one
	// cycle after its access, before anything accepted later.
	for i := 1; i < len(ops); i++ {
		for j := i; j > 0 && ops[j].issue < ops[j-1].issue; j-- {
			ops[j], ops[j-1] = ops[j-1], ops[j]
		}
	}
	want, halved := replay(cfg, words, ops, thr, cfg.Threshold)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("notifications (-want +got):\n%s", d)
	}
	for i := range words {
		require.Equal(t, words[i], b.ctr.Peek(i), "block %d", i)
	}
	require.Equal(t, halveCount|halveRoundTrip, halved, "the run must halve both fields")
	require.NotEmpty(t, got, "the run must notify")
	require.Greater(t, len(ops), cycles/2, "the run must be busy")
	require.Greater(t, b.sim.Cycle()-start, uint64(cycles))
}

func TestRandomAgainstReference(t *testing.T) {
	for _, cfg := range []Config{
		{Blocks: 16, Threshold: 8, CountLocal: true},
		{Blocks: 5, Threshold: 3, CountLocal: false},
		{Blocks: 64, Threshold: 20, CountLocal: true},
	} {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("blocks%d_thr%d_local%v/seed%d", cfg.Blocks, cfg.Threshold, cfg.CountLocal, seed), func(t *testing.T) {
				randomRun(t, cfg, seed, 4000)
			})
		}
	}
}
