package rtl

import "fmt"

// Queue is a registered FIFO block with first-word fall-through: the head
// entry is on Deq whenever the queue holds one, an entry pushed in cycle c is
// visible on Deq from cycle c+Latency, and a push and a pop may both happen
// in one cycle (also when full: Enq.Ready is a Moore output, so a full queue
// does not accept a push even if it pops in the same cycle).
//
// With Latency 1 it is an ordinary FIFO; a larger Latency makes it a
// pipelined delay line (each entry carries its arrival cycle), which is how
// links and fixed-latency memories are modelled.
type Queue[T comparable] struct {
	Base

	Enq   *Decoupled[T]
	Deq   *Decoupled[T]
	Count *Wire[uint32] // occupancy, for blocks that act on fill level

	latency uint64
	ring    *Ring[T] // timed when latency is above one
}

// NewQueue makes a FIFO of the given depth between enq (which it consumes)
// and deq (which it produces).
func NewQueue[T comparable](s *Sim, path string, depth int, enq, deq *Decoupled[T]) *Queue[T] {
	return NewPipe(s, path, depth, 1, enq, deq)
}

// NewPipe makes a FIFO whose entries become visible latency cycles after
// they are pushed.
func NewPipe[T comparable](s *Sim, path string, depth, latency int, enq, deq *Decoupled[T]) *Queue[T] {
	if latency < 1 {
		panic(fmt.Sprintf("rtl: queue %s latency %d must be at least 1", path, latency))
	}
	q := &Queue[T]{Enq: enq, Deq: deq, latency: uint64(latency)}
	s.Add(q, path)
	q.Count = NewWire[uint32](s, q.Child("count"), countWidth(depth))
	q.ring = newRing(&q.Base, "entries", depth, enq.Bits.width, enq.Bits.pack, latency > 1)
	enq.Consumer(&q.Base)
	deq.Producer(&q.Base)
	return q
}

// headVisible reports whether the head entry has arrived. Only a pipe with
// latency above one depends on time.
func (q *Queue[T]) headVisible() bool {
	if q.ring.Len() == 0 {
		return false
	}
	return !q.ring.timed || q.ring.HeadDue() <= q.Now()
}

// Drive presents the head entry and whether there is room.
func (q *Queue[T]) Drive() {
	q.Enq.Ready.Set(!q.ring.Full())
	visible := q.headVisible()
	q.Deq.Valid.Set(visible)
	if visible {
		q.Deq.Bits.Set(q.ring.Head())
	}
	q.Count.Set(q.ring.Len())
}

// Eval accepts a push and retires a pop.
func (q *Queue[T]) Eval() {
	push, pop := q.Enq.Fire(), q.Deq.Fire()
	var due uint64
	if push && q.ring.timed {
		due = q.Now() + q.latency
	}
	q.ring.Update(push, q.Enq.Bits.Get(), due, pop)
	if q.ring.timed && !push && !pop {
		q.sleepUntilHead()
	}
}

// sleepUntilHead lets an idle pipe sleep until its head entry arrives, or,
// once it has arrived and waits for the consumer, until an input changes.
func (q *Queue[T]) sleepUntilHead() {
	if q.ring.Len() == 0 {
		q.Sleep()
		return
	}
	switch arrive, now := q.ring.HeadDue(), q.Now(); {
	case arrive <= now:
		q.Sleep()
	case arrive > now+1:
		q.SleepUntil(arrive)
	}
}
