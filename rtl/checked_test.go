package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// faulty is a block whose Drive and Eval run whatever a test plugs in.
type faulty struct {
	rtl.Base
	drive, eval func()
	r           *rtl.Reg[uint8]
}

func newFaulty(s *rtl.Sim, name string) *faulty {
	f := &faulty{drive: func() {}, eval: func() {}}
	s.Add(f, name)
	f.r = rtl.NewReg[uint8](&f.Base, "r", 4, 0)
	return f
}

func (f *faulty) Drive() { f.drive() }
func (f *faulty) Eval()  { f.eval() }

func TestCheckedModeCatchesModelingErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(s *rtl.Sim)
		want  string
	}{
		{"register written twice", func(s *rtl.Sim) {
			f := newFaulty(s, "a")
			f.eval = func() { f.r.Set(1); f.r.Set(2) }
		}, "register a.r written twice in cycle 0"},
		{"wire driven by two blocks", func(s *rtl.Sim) {
			w := rtl.NewBit(s, "shared")
			a, b := newFaulty(s, "a"), newFaulty(s, "b")
			a.drive = func() { w.Set(true) }
			b.drive = func() { w.Set(false) }
		}, "wire shared driven by two blocks (block a and block b)"},
		{"wire read during drive", func(s *rtl.Sim) {
			in, out := rtl.NewBit(s, "in"), rtl.NewBit(s, "out")
			a := newFaulty(s, "a")
			a.drive = func() { out.Set(in.Get()) }
		}, "wire in read by block a during Drive"},
		{"register written during drive", func(s *rtl.Sim) {
			a := newFaulty(s, "a")
			a.drive = func() { a.r.Set(1) }
		}, "register a.r written by block a during Drive"},
		{"wire driven during eval", func(s *rtl.Sim) {
			w := rtl.NewBit(s, "w")
			a := newFaulty(s, "a")
			a.eval = func() { w.Set(true) }
		}, "wire w driven by block a during Eval"},
		{"register of another block", func(s *rtl.Sim) {
			a, b := newFaulty(s, "a"), newFaulty(s, "b")
			b.eval = func() { _ = a.r.Q() }
		}, "register a.r read by block b"},
		{"drive from state other than registers", func(s *rtl.Sim) {
			w := rtl.NewWire[uint8](s, "w", 4)
			a := newFaulty(s, "a")
			n := uint8(0) // a Go variable, not a register
			a.eval = func() { n++ }
			a.drive = func() { w.Set(n) }
		}, "block a changed wire w in its Drive in cycle 1 though none of its registers changed"},
		{"value wider than register", func(s *rtl.Sim) {
			a := newFaulty(s, "a")
			a.eval = func() { a.r.Set(16) }
		}, "register a.r: value 0x10 does not fit 4 bits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := rtl.New(rtl.Options{Checked: true})
			tc.build(s)
			s.Reset()
			err := s.Step()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)

			unchecked := rtl.New(rtl.Options{})
			tc.build(unchecked)
			unchecked.Reset()
			require.NoError(t, unchecked.Step(), "unchecked mode reports nothing")
		})
	}
}

func TestTestbenchAndBlockDrivingOneWire(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true})
	w := rtl.NewBit(s, "w")
	a := newFaulty(s, "a")
	w.Set(true) // the testbench claims w
	a.drive = func() { w.Set(false) }
	s.Reset()
	require.ErrorContains(t, s.Step(), "wire w driven by two blocks (the testbench and block a)")
}

// pair is a register value that is not one aligned word.
type pair struct {
	A uint8
	B uint16
}

func (p pair) Pack() uint64 { return uint64(p.A) | uint64(p.B)<<8 }

// words is a register value of two aligned words.
type words struct{ A, B uint64 }

func (w words) Pack() uint64 { return w.A | w.B<<32 }

// TestUncheckedLastWriteWins covers what fast mode does with the writes
// checked mode reports or a testbench makes: a register written twice in
// a cycle takes the last value, and a Poke after a write keeps the poked
// value past the clock edge, for word, multi-word and other values
// alike.
func TestUncheckedLastWriteWins(t *testing.T) {
	s := rtl.New(rtl.Options{})
	f := newFaulty(s, "a")
	wide := rtl.NewRegOf(&f.Base, "wide", 24, pair{})
	two := rtl.NewRegOf(&f.Base, "two", 64, words{})
	f.eval = func() {
		f.r.Set(1)
		wide.Set(pair{1, 2})
		two.Set(words{1, 2})
		f.r.Set(2)
		wide.Set(pair{3, 4})
		two.Set(words{3, 4})
	}
	s.Reset()
	require.NoError(t, s.Step())
	require.Equal(t, uint8(2), f.r.Q())
	require.Equal(t, pair{3, 4}, wide.Q())
	require.Equal(t, words{3, 4}, two.Q())

	f.eval = func() {}
	f.r.Set(5) // a testbench write between cycles, then a Poke
	wide.Set(pair{5, 6})
	f.r.Poke(7)
	wide.Poke(pair{7, 8})
	two.Set(words{5, 6})
	two.Poke(words{7, 8})
	require.NoError(t, s.Step())
	require.Equal(t, uint8(7), f.r.Q())
	require.Equal(t, pair{7, 8}, wide.Q())
	require.Equal(t, words{7, 8}, two.Q())
}
