package rtl_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// queueBench wires a Queue between testbench-driven ports.
type queueBench struct {
	sim      *rtl.Sim
	enq, deq *rtl.Decoupled[uint8]
	q        *rtl.Queue[uint8]
}

func newQueueBench(t *testing.T, depth, latency int, skip bool) *queueBench {
	t.Helper()
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	b := &queueBench{sim: s, enq: rtl.NewDecoupled[uint8](s, "enq", 8), deq: rtl.NewDecoupled[uint8](s, "deq", 8)}
	b.q = rtl.NewPipe(s, "q", depth, latency, b.enq, b.deq)
	s.Reset()
	return b
}

// cycle applies inputs for the current cycle, records the outputs seen in
// it, and steps the clock.
func (b *queueBench) cycle(t *testing.T, push bool, v uint8, pop bool) (enqReady, deqValid bool, head uint8, count uint32) {
	t.Helper()
	b.enq.Valid.Set(push)
	b.enq.Bits.Set(v)
	b.deq.Ready.Set(pop)
	enqReady, deqValid, head, count = b.enq.Ready.Get(), b.deq.Valid.Get(), b.deq.Bits.Get(), b.q.Count.Get()
	require.NoError(t, b.sim.Step())
	return
}

func TestQueueFullEmptyAndSimultaneous(t *testing.T) {
	b := newQueueBench(t, 2, 1, false)
	type obs struct {
		EnqReady, DeqValid bool
		Head               uint8
		Count              uint32
	}
	at := func(push bool, v uint8, pop bool) obs {
		r, val, h, c := b.cycle(t, push, v, pop)
		if !val {
			h = 0
		}
		return obs{r, val, h, c}
	}
	// Empty: no valid output; a push shows up on the next cycle (fall-through).
	require.Equal(t, obs{true, false, 0, 0}, at(true, 10, true))
	require.Equal(t, obs{true, true, 10, 1}, at(true, 11, false))
	// Full after two pushes: ready drops.
	require.Equal(t, obs{false, true, 10, 2}, at(true, 12, false))
	// Full: push and pop in one cycle; the push is refused (Moore ready).
	require.Equal(t, obs{false, true, 10, 2}, at(true, 12, true))
	require.Equal(t, obs{true, true, 11, 1}, at(true, 12, true))
	// One entry: push and pop together keep the count.
	require.Equal(t, obs{true, true, 12, 1}, at(false, 0, true))
	require.Equal(t, obs{true, false, 0, 0}, at(false, 0, true))
	// Back-pressure: the head stays put while the consumer is not ready.
	at(true, 20, false)
	for range 5 {
		require.Equal(t, obs{true, true, 20, 1}, at(false, 0, false))
	}
	require.Equal(t, obs{true, true, 20, 1}, at(false, 0, true))
	require.Equal(t, obs{true, false, 0, 0}, at(false, 0, false))
}

func TestPipeLatency(t *testing.T) {
	b := newQueueBench(t, 4, 5, true)
	_, valid, _, _ := b.cycle(t, true, 42, true) // pushed in cycle 0
	require.False(t, valid)
	for c := 1; c < 5; c++ {
		_, valid, _, _ = b.cycle(t, false, 0, true)
		require.False(t, valid, "cycle %d", c)
	}
	_, valid, head, _ := b.cycle(t, false, 0, true)
	require.True(t, valid, "entry visible at cycle 5")
	require.Equal(t, uint8(42), head)
	_, valid, _, _ = b.cycle(t, false, 0, true)
	require.False(t, valid)
}

// TestQueueRandomAgainstReference drives random pushes and pops and checks
// every cycle against a plain slice FIFO with the same timing rules.
func TestQueueRandomAgainstReference(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		depth, latency := 1+rng.IntN(6), 1+rng.IntN(4)
		b := newQueueBench(t, depth, latency, seed%2 == 0)
		type item struct {
			v   uint8
			due int
		}
		var ref []item
		for c := range 5000 {
			push, pop := rng.IntN(3) > 0, rng.IntN(3) > 0
			v := uint8(rng.Uint32())
			wantReady := len(ref) < depth
			wantValid := len(ref) > 0 && ref[0].due <= c
			ready, valid, head, count := b.cycle(t, push, v, pop)
			require.Equal(t, wantReady, ready, "seed %d cycle %d ready", seed, c)
			require.Equal(t, wantValid, valid, "seed %d cycle %d valid", seed, c)
			require.Equal(t, uint32(len(ref)), count, "seed %d cycle %d count", seed, c)
			if valid {
				require.Equal(t, ref[0].v, head, "seed %d cycle %d head", seed, c)
			}
			if valid && pop {
				ref = ref[1:]
			}
			if ready && push {
				ref = append(ref, item{v, c + latency})
			}
		}
	}
}
