package rtl

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel evaluation. In Eval a block reads wires and its own registers
// and writes only its own state: the next values of its registers, its
// pending list, its SRAMs and its activity flags. No block's Eval can see
// another's writes before the commit, so the blocks of one Eval phase may
// run on several goroutines at once and the cycle's result is the same
// bit for bit. Drive stays serial (a wire change wakes listeners) and so
// does commit, which runs block by block in the evaluation order.
//
// A block's software model must keep the same discipline: state shared by
// blocks is read-only while Eval runs.

// MaxThreads bounds Options.Threads.
const MaxThreads = 64

// parChunk is how many blocks a goroutine claims at once: enough that the
// shared counter is touched rarely, few enough to balance SMs against
// small queues.
const parChunk = 4

// parMinBlocks is the fewest awake blocks worth spreading; below it the
// hand-off costs more than it saves.
const parMinBlocks = 16

// evalPool is the Sim's set of helper goroutines for the Eval phase. The
// caller never waits for a helper to show up: it evaluates whatever chunks
// are left itself and waits only for chunks a helper has claimed, so a
// helper the operating system does not schedule costs nothing.
type evalPool struct {
	helpers int
	blocks  []*Base // the blocks of the current Eval phase, in order

	// gen is bumped to start an Eval phase; open is true while blocks may
	// be read. Workers claim chunks through next and count evaluated
	// blocks in finished; inside counts helpers that may read blocks.
	gen      atomic.Uint64
	open     atomic.Bool
	next     atomic.Int64
	finished atomic.Int64
	inside   atomic.Int64

	mu      sync.Mutex
	wake    *sync.Cond
	sleepy  int  // helpers waiting on wake
	stopped bool // close was called
}

func newEvalPool(helpers int) *evalPool {
	p := &evalPool{helpers: helpers}
	p.wake = sync.NewCond(&p.mu)
	for range helpers {
		go p.helper()
	}
	return p
}

// spinRounds is how long an idle helper polls for the next Eval phase
// before it blocks: long enough to span a Drive and a commit.
const spinRounds = 2000

func (p *evalPool) helper() {
	seen := uint64(0)
	for {
		g := p.gen.Load()
		for spin := 0; g == seen; spin++ {
			if spin < spinRounds {
				if spin%64 == 63 {
					runtime.Gosched()
				}
				g = p.gen.Load()
				continue
			}
			p.mu.Lock()
			for g = p.gen.Load(); g == seen && !p.stopped; g = p.gen.Load() {
				p.sleepy++
				p.wake.Wait()
				p.sleepy--
			}
			stopped := p.stopped
			p.mu.Unlock()
			if stopped {
				return
			}
		}
		seen = g
		// A helper that wakes late must not read blocks while the caller
		// rewrites them for a later phase.
		p.inside.Add(1)
		if p.open.Load() && p.gen.Load() == g {
			p.work()
		}
		p.inside.Add(-1)
	}
}

// work evaluates chunks of blocks until none is left.
func (p *evalPool) work() {
	blocks := p.blocks
	n := int64(len(blocks))
	for {
		i := p.next.Add(parChunk) - parChunk
		if i >= n {
			return
		}
		end := min(i+parChunk, n)
		for _, b := range blocks[i:end] {
			b.self.Eval()
		}
		p.finished.Add(end - i)
	}
}

// eval runs the Eval of blocks on the helpers and the calling goroutine
// and returns when every one has finished.
func (p *evalPool) eval(blocks []*Base) {
	p.blocks = blocks
	p.next.Store(0)
	p.finished.Store(0)
	p.open.Store(true)
	p.gen.Add(1)
	p.mu.Lock()
	if p.sleepy > 0 {
		p.wake.Broadcast()
	}
	p.mu.Unlock()
	p.work()
	for spin := 0; p.finished.Load() != int64(len(blocks)); spin++ {
		if spin%64 == 63 {
			runtime.Gosched()
		}
	}
	p.shut()
	p.blocks = nil // the pool must not keep the Sim reachable
}

// shut stops helpers from reading blocks and waits for those reading.
func (p *evalPool) shut() {
	p.open.Store(false)
	for spin := 0; p.inside.Load() != 0; spin++ {
		if spin%64 == 63 {
			runtime.Gosched()
		}
	}
}

// close stops the helpers.
func (p *evalPool) close() {
	p.mu.Lock()
	p.stopped = true
	p.wake.Broadcast()
	p.mu.Unlock()
}
