package rtl

import "fmt"

// BitBus is the concatenation of up to 64 one-bit wires into one word,
// {w[n-1], ..., w[0]}: the valid or request lines of many ports seen at
// once, as a hardware block sees a bus of them, so that a block serving
// many ports visits only the ports whose bit is set (a priority encoder
// over the word) instead of testing every port's wire. The word follows
// its wires as they are driven: a wire that changes value flips its bit,
// so reading the bus costs no visit to the wires.
//
// A block that reads a bus still listens to its wires (Base.Listen or the
// channel's Consumer/Producer) to be woken by them.
type BitBus struct {
	v       uint64
	checked bool
	sim     *Sim
	name    string
}

// busTap is one bit of a bus that a wire keeps in step with its value.
type busTap struct {
	word *uint64
	bit  uint64
}

// NewBitBus makes the bus of the given wires (at most 64), wire i in bit i.
func NewBitBus(s *Sim, name string, ws []*Wire[bool]) *BitBus {
	if len(ws) > 64 {
		panic(fmt.Sprintf("rtl: bit bus %s of %d wires outside 0..64", name, len(ws)))
	}
	b := &BitBus{checked: s.checked, sim: s, name: name}
	for i, w := range ws {
		if w.sim != s {
			panic(fmt.Sprintf("rtl: bit bus %s: wire %s belongs to another Sim", name, w.name))
		}
		if w.v {
			b.v |= 1 << i
		}
		w.taps = append(w.taps, busTap{word: &b.v, bit: 1 << i})
	}
	s.wires = append(s.wires, b)
	return b
}

// Get is the bus's value: bit i is wire i's value. Blocks call it only
// from Eval, like Wire.Get.
func (b *BitBus) Get() uint64 {
	if b.checked {
		b.sim.checkWireRead(b.name)
	}
	return b.v
}

// resetValue follows the wires to zero at reset.
func (b *BitBus) resetValue() { b.v = 0 }

// ValidBus is the bus of the Valid wires of channels chs.
func ValidBus[T comparable](s *Sim, name string, chs []*Decoupled[T]) *BitBus {
	ws := make([]*Wire[bool], len(chs))
	for i, ch := range chs {
		ws[i] = ch.Valid
	}
	return NewBitBus(s, name, ws)
}
