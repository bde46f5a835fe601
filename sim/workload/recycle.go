package workload

import "sync"

// warpPool recycles the warp streams of one type. The SM asks for a stream
// at every warp launch and drops it when Next reports its end; each stream
// type returns itself to its pool at that point, so a run in steady state
// allocates no streams. sync.Pool keeps the pools safe for concurrent
// simulations (and concurrently evaluated SMs); a stream's contents are set
// in full by fill, so which object is reused never changes a result.
type warpPool[T any] struct{ p sync.Pool }

// fill returns a stream set to v, reusing a finished one when there is one.
func (wp *warpPool[T]) fill(v T) *T {
	s, _ := wp.p.Get().(*T)
	if s == nil {
		s = new(T)
	}
	*s = v
	return s
}

// done returns a finished stream to the pool; the caller must not use it
// again.
func (wp *warpPool[T]) done(s *T) { wp.p.Put(s) }
