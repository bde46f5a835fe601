package rtl

import (
	"fmt"

	"golang.org/x/exp/constraints"
)

// Signal is a wire that a block can listen to (see Base.Listen).
type Signal interface {
	traced
	addSink(b *Base)
}

// Wire is a net between blocks. Exactly one block (or the testbench) drives
// it, in the Drive phase; any number of blocks read it in Eval. It holds its
// value until driven again, so a sleeping driver's outputs stay valid.
type Wire[T comparable] struct {
	v       T
	checked bool // the Sim's checked mode, kept beside the value
	sinks   []*Base
	taps    []busTap // bits of buses that follow a one-bit wire (BitBus)
	sim     *Sim
	name    string
	width   int
	driver  *Base
	pack    func(T) uint64
}

// NewWire makes an unsigned wire of the given width.
func NewWire[T constraints.Unsigned](s *Sim, name string, width int) *Wire[T] {
	w := &Wire[T]{}
	initWire(w, s, name, width, packerFor[T]())
	return w
}

// NewBit makes a one-bit wire.
func NewBit(s *Sim, name string) *Wire[bool] {
	w := &Wire[bool]{}
	initWire(w, s, name, 1, packerFor[bool]())
	return w
}

// NewWireOf makes a wire carrying a small struct that packs into width bits.
func NewWireOf[T interface {
	comparable
	Packer
}](s *Sim, name string, width int) *Wire[T] {
	w := &Wire[T]{}
	initWire(w, s, name, width, func(v T) uint64 { return v.Pack() })
	return w
}

func initWire[T comparable](w *Wire[T], s *Sim, name string, width int, pack func(T) uint64) {
	if width < 1 || width > 64 {
		panic(fmt.Sprintf("rtl: wire %s width %d outside 1..64", name, width))
	}
	*w = Wire[T]{checked: s.checked, sim: s, name: name, width: width, pack: pack}
	s.wires = append(s.wires, w)
	s.addSignal(w)
}

// Set drives the wire. Blocks call it only from Drive; a testbench calls it
// between cycles to apply inputs. A change of value wakes the listeners.
func (w *Wire[T]) Set(v T) {
	if w.v != v || w.checked {
		w.set(v)
	}
}

// set applies a change of value (or, in checked mode, any drive, which
// it checks first); it is out of line so that Set and Get inline into
// the blocks' Drive and Eval.
//
//go:noinline
func (w *Wire[T]) set(v T) {
	if w.checked && !w.checkSet(v) {
		return
	}
	w.v = v
	w.wakeSinks()
	// Only a one-bit wire has taps: a change flips its bit.
	for _, t := range w.taps {
		*t.word ^= t.bit
	}
}

// checkSet checks a drive in checked mode, records it if it changes the
// wire, and reports whether it does.
func (w *Wire[T]) checkSet(v T) bool {
	w.sim.checkWireDrive(w.name, &w.driver, w.width, w.pack(v))
	if w.v == v {
		return false
	}
	w.sim.wireChanges++
	w.sim.lastChanged = w.name
	return true
}

//go:noinline
func (w *Wire[T]) checkGet() { w.sim.checkWireRead(w.name) }

func (w *Wire[T]) wakeSinks() {
	for _, b := range w.sinks {
		b.wake()
	}
}

// Get reads the wire. Blocks call it only from Eval.
func (w *Wire[T]) Get() T {
	if w.checked {
		w.checkGet()
	}
	return w.v
}

// Name is the wire's hierarchical name.
func (w *Wire[T]) Name() string { return w.name }

// Width is the wire's width in bits.
func (w *Wire[T]) Width() int { return w.width }

func (w *Wire[T]) bits() uint64 { return w.pack(w.v) }

func (w *Wire[T]) addSink(b *Base) { w.sinks = append(w.sinks, b) }

func (w *Wire[T]) resetValue() {
	var zero T
	w.v = zero
}

// Decoupled is a ready/valid channel: the producer drives Valid and Bits, the
// consumer drives Ready, and a transfer happens in a cycle where both Valid
// and Ready are high.
type Decoupled[T comparable] struct {
	Valid *Wire[bool]
	Ready *Wire[bool]
	Bits  *Wire[T]
}

// NewDecoupled makes a channel carrying an unsigned payload of width bits.
func NewDecoupled[T constraints.Unsigned](s *Sim, name string, width int) *Decoupled[T] {
	return newDecoupled(s, name, width, packerFor[T]())
}

// decoupledWires keeps a channel's three wires in one allocation, so that
// the handshake a block reads each cycle sits on one or two cache lines.
type decoupledWires[T comparable] struct {
	ch           Decoupled[T]
	valid, ready Wire[bool]
	bits         Wire[T]
}

func newDecoupled[T comparable](s *Sim, name string, width int, pack func(T) uint64) *Decoupled[T] {
	w := &decoupledWires[T]{}
	initWire(&w.valid, s, name+".valid", 1, packerFor[bool]())
	initWire(&w.ready, s, name+".ready", 1, packerFor[bool]())
	initWire(&w.bits, s, name+".bits", width, pack)
	w.ch = Decoupled[T]{Valid: &w.valid, Ready: &w.ready, Bits: &w.bits}
	return &w.ch
}

// NewDecoupledOf makes a channel carrying a struct payload packed into width
// bits.
func NewDecoupledOf[T interface {
	comparable
	Packer
}](s *Sim, name string, width int) *Decoupled[T] {
	return newDecoupled(s, name, width, func(v T) uint64 { return v.Pack() })
}

// Fire reports whether a transfer happens in this cycle.
func (d *Decoupled[T]) Fire() bool {
	v := d.Valid
	if v.checked {
		return d.checkedFire()
	}
	return v.v && d.Ready.v
}

// checkedFire is Fire with the read checks of Get; it is out of line so
// that Fire inlines.
//
//go:noinline
func (d *Decoupled[T]) checkedFire() bool { return d.Valid.Get() && d.Ready.Get() }

// Producer declares b as the channel's producer: b listens to Ready.
func (d *Decoupled[T]) Producer(b *Base) { b.Listen(d.Ready) }

// Consumer declares b as the channel's consumer: b listens to Valid and Bits.
func (d *Decoupled[T]) Consumer(b *Base) { b.Listen(d.Valid, d.Bits) }
