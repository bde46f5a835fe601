package rtl

import (
	"fmt"
	"math/bits"

	"golang.org/x/exp/constraints"
)

// Ring is a FIFO kept in a block's own registers: the entry vector, head and
// tail pointers and a fill count of a queue whose pushes and pops the block
// decides itself (a packet it has just finished, an answer it computed).
// A timed ring also keeps each entry's arrival cycle, for delay lines.
// Queue is a Ring behind ready/valid ports.
type Ring[T comparable] struct {
	// The ring's registers sit in the ring itself, the fill count and
	// depth first, so that Full and Len read one cache line.
	depth   uint32
	timed   bool
	fill    Reg[uint32]
	head    Reg[uint32]
	tail    Reg[uint32]
	entries Vec[T]
	due     Vec[uint64] // arrival cycle per entry of a timed ring
}

// NewRing makes a ring of depth unsigned entries of the given width in
// block b, named name[i], name_head, name_tail and name_fill (and
// name_due[i] when timed).
func NewRing[T constraints.Unsigned](b *Base, name string, depth, width int, timed bool) *Ring[T] {
	return newRing(b, name, depth, width, packerFor[T](), timed)
}

// NewRingOf makes a ring of struct entries packed into width bits.
func NewRingOf[T interface {
	comparable
	Packer
}](b *Base, name string, depth, width int, timed bool) *Ring[T] {
	return newRing(b, name, depth, width, func(v T) uint64 { return v.Pack() }, timed)
}

func newRing[T comparable](b *Base, name string, depth, width int, pack func(T) uint64, timed bool) *Ring[T] {
	if depth < 1 || depth > 1<<30 {
		panic(fmt.Sprintf("rtl: ring %s depth %d outside 1..2^30", b.Child(name), depth))
	}
	r := &Ring[T]{depth: uint32(depth), timed: timed}
	initVec(&r.entries, b, name, depth, width, *new(T), pack)
	if timed {
		initVec(&r.due, b, name+"_due", depth, 64, 0, packerFor[uint64]())
	}
	initReg(&r.head, b, name+"_head", countWidth(depth-1), 0, packerFor[uint32]())
	initReg(&r.tail, b, name+"_tail", countWidth(depth-1), 0, packerFor[uint32]())
	initReg(&r.fill, b, name+"_fill", countWidth(depth), 0, packerFor[uint32]())
	return r
}

// countWidth is the number of bits needed to hold values 0..n.
func countWidth(n int) int {
	if n < 1 {
		return 1
	}
	return bits.Len(uint(n))
}

// Len is the number of entries held.
func (r *Ring[T]) Len() uint32 { return r.fill.Q() }

// Depth is the number of entries the ring can hold.
func (r *Ring[T]) Depth() uint32 { return r.depth }

// Full reports that no entry can be pushed.
func (r *Ring[T]) Full() bool { return r.fill.Q() == r.depth }

// Head is the oldest entry; meaningful only when Len is not zero.
func (r *Ring[T]) Head() T { return r.entries.At(int(r.head.Q())).Q() }

// HeadDue is the arrival cycle of the oldest entry of a timed ring.
func (r *Ring[T]) HeadDue() uint64 { return r.due.At(int(r.head.Q())).Q() }

// HeadIndex and TailIndex are the indices of the oldest entry and of the
// entry the next push writes: a block keeps a payload too wide for one
// register in a Vec of its own beside the ring's entries, at these indices.
func (r *Ring[T]) HeadIndex() int { return int(r.head.Q()) }

// TailIndex: see HeadIndex.
func (r *Ring[T]) TailIndex() int { return int(r.tail.Q()) }

// Update pushes v (arriving at cycle due, for a timed ring) and pops the
// head, each when asked; both may happen in one cycle. A block calls it at
// most once per cycle, from Eval; pushing into a full ring or popping an
// empty one is the caller's error.
func (r *Ring[T]) Update(push bool, v T, due uint64, pop bool) {
	if push {
		t := r.tail.Q()
		r.entries.At(int(t)).Set(v)
		if r.timed {
			r.due.At(int(t)).Set(due)
		}
		r.tail.Set(r.wrap(t + 1))
	}
	if pop {
		r.head.Set(r.wrap(r.head.Q() + 1))
	}
	switch {
	case push && !pop:
		r.fill.Set(r.fill.Q() + 1)
	case pop && !push:
		r.fill.Set(r.fill.Q() - 1)
	}
}

func (r *Ring[T]) wrap(i uint32) uint32 {
	if i == r.depth {
		return 0
	}
	return i
}
