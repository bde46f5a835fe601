package rtl

import "math"

// Never is the wake time of a block that sleeps until an input changes.
const Never = uint64(math.MaxUint64)

// Block is one hardware block: a Go struct that embeds Base, keeps its state
// in Reg, Vec and SRAM values created on that Base, and talks to other blocks
// only through Wire and Decoupled ports.
type Block interface {
	// Drive sets the block's output wires from its registers only.
	Drive()
	// Eval reads inputs and register values and writes next register values.
	Eval()
	base() *Base
}

// Base is embedded in every block. It carries the block's hierarchical name,
// its link to the Sim, and its sleep state.
type Base struct {
	sim     *Sim
	checked bool // the Sim's checked mode, kept here where registers look
	self    Block
	idx     int // position in the Sim's evaluation order

	// asleep blocks are neither driven nor evaluated; wakeAt is the cycle at
	// which a timed sleep ends (Never for sleep-until-input).
	asleep bool
	wakeAt uint64

	// Per-cycle activity, cleared before Eval: whether the block wrote a
	// register or SRAM, read the time, or asked to sleep.
	wrote      bool
	readTime   bool
	sleepAsked bool
	sleepUntil uint64
	// driveTime is set while the block's last Drive read the time: its
	// outputs may then change without a register write, and it is driven
	// every cycle it is awake.
	driveTime bool
	// holdUntil keeps the block awake until an in-flight SRAM read lands.
	holdUntil uint64

	// dirty holds the registers and pending the SRAMs written in this
	// cycle, which the block commits at the clock edge (commit.go);
	// banks are the chunks of its scalar registers by type (each a
	// *regBank[T]).
	dirty   dirtyLists
	pending []committer
	banks   []any

	path string
}

// written reports whether the block wrote a register or an SRAM in this
// cycle.
func (b *Base) written() bool { return b.dirty.n != 0 || len(b.pending) != 0 }

// commit makes this cycle's register and SRAM writes take effect and
// returns the number of write-backs. A block that wrote state is active.
func (b *Base) commit() uint64 {
	n := uint64(b.dirty.n)
	b.commitRegs()
	if len(b.pending) != 0 {
		for _, c := range b.pending {
			n += c.commit()
		}
		b.pending = b.pending[:0]
	}
	b.wrote = true
	return n
}

func (b *Base) base() *Base { return b }

// Path is the block's hierarchical name, for example "da.afm".
func (b *Base) Path() string { return b.path }

// Sim is the simulator the block belongs to.
func (b *Base) Sim() *Sim { return b.sim }

// Now returns the current cycle. A block that reads the time is assumed to
// depend on it and is not put to sleep automatically in that cycle; it may
// call SleepUntil instead.
func (b *Base) Now() uint64 {
	if b.sim.phase == phaseDrive {
		b.driveTime = true
	} else {
		b.readTime = true
	}
	return b.sim.cycle
}

// Sleep declares, from Eval, that the block has nothing to do until one of
// its input wires changes.
func (b *Base) Sleep() { b.SleepUntil(Never) }

// SleepUntil declares, from Eval, that the block has nothing to do before
// cycle t unless an input wire changes first. Register writes made in the
// same cycle still commit; the block is then not evaluated again before t.
func (b *Base) SleepUntil(t uint64) {
	b.sleepAsked = true
	b.sleepUntil = t
}

// Listen makes the block wake when any of the given wires changes value.
// Constructors call it for every input wire of the block.
func (b *Base) Listen(ws ...Signal) {
	for _, w := range ws {
		w.addSink(b)
	}
}

// Child returns the hierarchical name of a sub-block or signal of this block.
func (b *Base) Child(name string) string {
	if b.path == "" {
		return name
	}
	return b.path + "." + name
}

func (b *Base) wake() {
	if b.asleep {
		b.asleep = false
		s := b.sim
		s.awake++
		s.awakeSet[b.idx>>6] |= 1 << (b.idx & 63)
	}
}
