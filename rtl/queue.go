package rtl

import (
	"fmt"
	"math/bits"
)

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

	depth   uint32
	latency uint64

	entries *Vec[T]
	due     *Vec[uint64] // arrival cycle of each entry; nil when latency is 1
	head    *Reg[uint32]
	tail    *Reg[uint32]
	count   *Reg[uint32]
}

// NewQueue makes a FIFO of the given depth between enq (which it consumes)
// and deq (which it produces).
func NewQueue[T comparable](s *Sim, path string, depth int, enq, deq *Decoupled[T]) *Queue[T] {
	return NewPipe(s, path, depth, 1, enq, deq)
}

// NewPipe makes a FIFO whose entries become visible latency cycles after
// they are pushed.
func NewPipe[T comparable](s *Sim, path string, depth, latency int, enq, deq *Decoupled[T]) *Queue[T] {
	if depth < 1 || depth > 1<<30 {
		panic(fmt.Sprintf("rtl: queue %s depth %d outside 1..2^30", path, depth))
	}
	if latency < 1 {
		panic(fmt.Sprintf("rtl: queue %s latency %d must be at least 1", path, latency))
	}
	q := &Queue[T]{Enq: enq, Deq: deq, depth: uint32(depth), latency: uint64(latency)}
	s.Add(q, path)
	q.Count = NewWire[uint32](s, q.Child("count"), countWidth(depth))
	w := enq.Bits.width
	pack := enq.Bits.pack
	q.entries = newVec(&q.Base, "entries", depth, w, *new(T), pack)
	if latency > 1 {
		q.due = NewVec[uint64](&q.Base, "due", depth, 64, 0)
	}
	ptrW := countWidth(depth - 1)
	q.head = NewReg[uint32](&q.Base, "head", ptrW, 0)
	q.tail = NewReg[uint32](&q.Base, "tail", ptrW, 0)
	q.count = NewReg[uint32](&q.Base, "fill", countWidth(depth), 0)
	enq.Consumer(&q.Base)
	deq.Producer(&q.Base)
	return q
}

// countWidth is the number of bits needed to hold values 0..n.
func countWidth(n int) int {
	if n < 1 {
		return 1
	}
	return bits.Len(uint(n))
}

// headVisible reports whether the head entry has arrived. Only a pipe with
// latency above one depends on time.
func (q *Queue[T]) headVisible() bool {
	if q.count.Q() == 0 {
		return false
	}
	return q.due == nil || q.due.At(int(q.head.Q())).Q() <= q.Now()
}

// Drive presents the head entry and whether there is room.
func (q *Queue[T]) Drive() {
	q.Enq.Ready.Set(q.count.Q() < q.depth)
	visible := q.headVisible()
	q.Deq.Valid.Set(visible)
	if visible {
		q.Deq.Bits.Set(q.entries.At(int(q.head.Q())).Q())
	}
	q.Count.Set(q.count.Q())
}

// Eval accepts a push and retires a pop.
func (q *Queue[T]) Eval() {
	push, pop := q.Enq.Fire(), q.Deq.Fire()
	if push {
		t := q.tail.Q()
		q.entries.At(int(t)).Set(q.Enq.Bits.Get())
		if q.due != nil {
			q.due.At(int(t)).Set(q.Now() + q.latency)
		}
		q.tail.Set(q.wrap(t + 1))
	}
	if pop {
		q.head.Set(q.wrap(q.head.Q() + 1))
	}
	if push != pop {
		if push {
			q.count.Set(q.count.Q() + 1)
		} else {
			q.count.Set(q.count.Q() - 1)
		}
	}
	if q.due != nil && !push && !pop {
		q.sleepUntilHead()
	}
}

// sleepUntilHead lets an idle pipe sleep until its head entry arrives, or,
// once it has arrived and waits for the consumer, until an input changes.
func (q *Queue[T]) sleepUntilHead() {
	if q.count.Q() == 0 {
		q.Sleep()
		return
	}
	switch arrive, now := q.due.At(int(q.head.Q())).Q(), q.Now(); {
	case arrive <= now:
		q.Sleep()
	case arrive > now+1:
		q.SleepUntil(arrive)
	}
}

func (q *Queue[T]) wrap(i uint32) uint32 {
	if i == q.depth {
		return 0
	}
	return i
}
