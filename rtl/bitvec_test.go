package rtl_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// bitVecBlock sets slot on and clears slot off of its vector each cycle
// (an index of n or more means none), both edits possibly in one word.
type bitVecBlock struct {
	rtl.Base
	on, off *rtl.Wire[uint16]
	v       *rtl.BitVec
}

func (b *bitVecBlock) Drive() {}

func (b *bitVecBlock) Eval() {
	if i := int(b.on.Get()); i < b.v.Len() {
		b.v.Put(i, true)
	}
	if i := int(b.off.Get()); i < b.v.Len() {
		b.v.Put(i, false)
	}
	b.v.Flush()
}

// TestBitVecAgainstReference puts random bits into a 130-slot vector
// (three words, the last partly used) and compares, every cycle, each
// slot and the lowest clear slot with a reference array; an edit is seen
// only from the next cycle.
func TestBitVecAgainstReference(t *testing.T) {
	const n = 130
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	b := &bitVecBlock{on: rtl.NewWire[uint16](s, "on", 16), off: rtl.NewWire[uint16](s, "off", 16)}
	s.Add(b, "blk")
	b.Listen(b.on, b.off)
	b.v = rtl.NewBitVec(&b.Base, "v", n)
	s.Reset()
	var ref [n]bool
	rng := rand.New(rand.NewPCG(1, 2))
	for cycle := range 3000 {
		on, off := rng.IntN(n+10), rng.IntN(n+10)
		if cycle > 1500 {
			off = n // fill up, so the vector runs out of clear slots
		}
		b.on.Set(uint16(on))
		b.off.Set(uint16(off))
		require.NoError(t, s.Step())
		if on < n {
			ref[on] = true
		}
		if off < n {
			ref[off] = false
		}
		free := -1
		for i := range n {
			require.Equal(t, ref[i], b.v.Has(i), "cycle %d slot %d", cycle, i)
			if free < 0 && !ref[i] {
				free = i
			}
		}
		require.Equal(t, free, rtl.FirstClear(n, b.v), "cycle %d", cycle)
	}
	require.Equal(t, -1, rtl.FirstClear(n, b.v))
}
