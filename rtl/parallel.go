package rtl

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Parallel evaluation. In Eval a block reads wires and its own registers
// and writes only its own state: the next values of its registers, its
// pending list, its SRAMs and its activity flags. No block's Eval can see
// another's writes before the commit, so the blocks of one Eval phase may
// run on several goroutines at once and the cycle's result is the same
// bit for bit. A block's registers and SRAMs are read by that block
// alone, so the goroutine that evaluates a block commits it right after
// its Eval: nothing else looks at them before the Drive phase, which sees
// every register committed as in the serial kernel. Each goroutine sums
// the write-backs it commits, and the sums are added after the phase (an
// integer sum does not depend on the order). Sleep decisions, writes made
// outside Eval and the Drive phase stay serial (a wire change wakes
// listeners).
//
// Whether a cycle is spread or evaluated on the caller alone changes
// nothing but speed, so the Sim measures which is faster and does that:
// a cache line's round trip between two cores took 0.4 to 1 microsecond
// on the 2-core virtual machine this was measured on, against Eval phases
// of a few microseconds (one block, a GPU's data caches, taking most of
// them on GRIT's workloads), and on a machine whose other cores are busy
// a helper's polling takes processor time from the caller without
// paying.
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

// cacheLine separates data written by different goroutines: two lines,
// as the hardware prefetches pairs of lines.
const cacheLine = 128

const (
	// The caller times windows of parWindow evaluated cycles and, per
	// window, the time per block evaluated. A trial is parTrials windows
	// (an even number), alternately spread and alone. Spreading wins if
	// its windows took under parWin of the alone ones' time per block in
	// sum (it keeps a second processor busy polling, and a near tie is
	// the machine's noise); the winner holds for the next parHold
	// windows, then a trial runs again. Each trial in a row that
	// spreading loses doubles the hold, up to parHoldMax windows: on a
	// busy machine, where spreading loses, the trials' spread windows
	// fall from one in ten to under one in two hundred.
	parWindow  = 1 << 11
	parTrials  = 8
	parWin     = 0.95
	parHold    = 32
	parHoldMax = 1 << 10
	// pollFor is how long an idle helper polls for the next Eval phase
	// before it naps, when the caller stops stepping. pollYield is how
	// many looks it takes between two yields of its processor (to
	// goroutines waiting for one, such as other helpers when there are
	// more threads than processors) and two looks at the time and at
	// wanted: a yield costs as long as a short Eval phase.
	pollFor   = 2 * time.Millisecond
	pollYield = 1 << 12
	// A napping helper looks whether it is wanted after napMin, then
	// after twice as long each time up to napMax.
	napMin = 20 * time.Microsecond
	napMax = time.Millisecond
)

// evalPool is the Sim's set of helper goroutines for the Eval phase. The
// caller never waits for a helper to show up: it evaluates whatever chunks
// are left itself and waits only for chunks a helper has claimed, so a
// helper the operating system does not schedule costs little. It never
// wakes a helper either: a helper woken from the caller's goroutine waits
// for that goroutine's processor, which the cycle loop does not give up,
// and arrives after the phase is over. Instead the caller sets wanted
// while it spreads phases; a wanted helper polls for them, and otherwise
// naps.
type evalPool struct {
	blocks  []*Base      // the blocks of the current Eval phase, in order
	workers []evalWorker // [0] is the caller's, then one per helper

	// The caller's own: whether it spreads phases, the current window's
	// start, cycles left and blocks evaluated, the trial windows left
	// (0 while a mode holds), the hold windows left and the length of
	// the last hold of the caller alone (0 after spreading won), and the
	// trial's time per block, alone and spread.
	spread      bool
	start       time.Time
	cyclesLeft  int
	evaluated   int
	trialsLeft  int
	holdLeft    int
	holdFor     int
	alone, with float64
	// always spreads every phase, wanted helper or not (tests).
	always bool

	// gen is bumped to start an Eval phase; open is true while blocks may
	// be read. Workers claim chunks through next and count evaluated
	// blocks in finished; inside counts helpers that may read blocks.
	// wanted asks helpers to poll; stopped is set when the pool closes.
	// The lines written in every phase are apart from each other and
	// from the rest.
	_        [cacheLine]byte
	gen      atomic.Uint64
	_        [cacheLine - 8]byte
	next     atomic.Int64
	_        [cacheLine - 8]byte
	finished atomic.Int64
	_        [cacheLine - 8]byte
	open     atomic.Bool
	inside   atomic.Int64
	_        [cacheLine - 16]byte
	wanted   atomic.Bool
	stopped  atomic.Bool
	_        [cacheLine]byte
}

// evalWorker is what one goroutine of the pool writes during a phase, on
// lines of its own.
type evalWorker struct {
	commits uint64 // write-backs committed in this phase
	_       [cacheLine - 8]byte
}

func newEvalPool(helpers int) *evalPool {
	p := &evalPool{workers: make([]evalWorker, helpers+1), trialsLeft: parTrials}
	for i := range helpers {
		go p.helper(&p.workers[i+1])
	}
	return p
}

// SpreadAlways makes the Sim spread every Eval phase of enough awake
// blocks over its threads, whether it pays or not, so that a test
// exercises the parallel phase on any machine. It does nothing on one
// thread.
func (s *Sim) SpreadAlways() {
	if s.par != nil {
		s.par.always = true
		s.par.wanted.Store(true)
	}
}

// plan reports whether to spread the Eval phase of a cycle with awake
// blocks awake, and keeps the windows, trials and holds.
func (p *evalPool) plan(awake int) bool {
	if p.always {
		return awake >= parMinBlocks
	}
	switch p.cyclesLeft {
	case 0:
		p.nextWindow()
	case parWindow / 8:
		// A napping helper needs a while to wake: call it ahead of a
		// spread window.
		if !p.spread && p.nextSpread() {
			p.wanted.Store(true)
			p.gen.Add(1) // a phase without blocks, seen by napping helpers
		}
	}
	p.cyclesLeft--
	p.evaluated += awake
	return p.spread && awake >= parMinBlocks
}

// nextSpread is whether the window after the current one is spread, if
// no trial ends with it.
func (p *evalPool) nextSpread() bool {
	switch {
	case p.trialsLeft > 1:
		return (p.trialsLeft-1)%2 == 0
	case p.trialsLeft == 0 && p.holdLeft == 1:
		return true // a trial starts with a spread window
	}
	return p.spread
}

// nextWindow ends the current window and chooses the mode of the next.
func (p *evalPool) nextWindow() {
	now := time.Now()
	switch {
	case p.evaluated == 0:
	case p.trialsLeft > 0:
		perBlock := float64(now.Sub(p.start)) / float64(p.evaluated)
		if p.spread {
			p.with += perBlock
		} else {
			p.alone += perBlock
		}
		if p.trialsLeft--; p.trialsLeft == 0 {
			p.spread = p.with < parWin*p.alone
			if p.spread {
				p.holdFor, p.holdLeft = 0, parHold
			} else {
				p.holdFor = min(max(2*p.holdFor, parHold), parHoldMax)
				p.holdLeft = p.holdFor
			}
			p.with, p.alone = 0, 0
		}
	default:
		if p.holdLeft--; p.holdLeft == 0 {
			p.trialsLeft = parTrials
		}
	}
	if p.trialsLeft > 0 {
		p.spread = p.trialsLeft%2 == 0
	}
	p.wanted.Store(p.spread)
	p.start, p.cyclesLeft, p.evaluated = now, parWindow, 0
}

func (p *evalPool) helper(w *evalWorker) {
	seen := uint64(0)
	for {
		for {
			g, ok := p.poll(seen)
			if !ok {
				break
			}
			seen = g
			// A helper that sees a phase late must not read blocks
			// while the caller rewrites them for a later phase.
			p.inside.Add(1)
			if p.open.Load() && p.gen.Load() == g {
				p.work(w)
			}
			p.inside.Add(-1)
		}
		if !p.nap(seen) {
			return
		}
	}
}

// poll returns the first phase after seen, or false once the helper is
// not wanted or pollFor passed without a phase.
func (p *evalPool) poll(seen uint64) (uint64, bool) {
	start := time.Now()
	for spin := 1; ; spin++ {
		if g := p.gen.Load(); g != seen {
			return g, true
		}
		if spin%pollYield == 0 {
			if !p.wanted.Load() || time.Since(start) > pollFor {
				return 0, false
			}
			runtime.Gosched()
		}
	}
}

// nap sleeps until the caller wants help and has started a phase after
// seen (true) or the pool is closed (false): a helper does not poll a Sim
// that has stopped stepping.
func (p *evalPool) nap(seen uint64) bool {
	for d := napMin; ; d = min(2*d, napMax) {
		time.Sleep(d)
		switch {
		case p.stopped.Load():
			return false
		case p.wanted.Load() && p.gen.Load() != seen:
			return true
		}
	}
}

// work evaluates and commits chunks of blocks until none is left.
func (p *evalPool) work(w *evalWorker) {
	blocks := p.blocks
	n := int64(len(blocks))
	for {
		i := p.next.Add(parChunk) - parChunk
		if i >= n {
			return
		}
		end := min(i+parChunk, n)
		commits := uint64(0)
		for _, b := range blocks[i:end] {
			b.wrote, b.readTime, b.sleepAsked = false, false, false
			b.self.Eval()
			if b.written() {
				commits += b.commit()
			}
		}
		w.commits += commits
		p.finished.Add(end - i)
	}
}

// eval runs the Eval of blocks on the helpers and the calling goroutine,
// commits each block, and returns when every one has finished, with the
// number of write-backs committed.
func (p *evalPool) eval(blocks []*Base) uint64 {
	p.blocks = blocks
	for i := range p.workers {
		p.workers[i].commits = 0
	}
	p.next.Store(0)
	p.finished.Store(0)
	p.open.Store(true)
	p.gen.Add(1)
	p.work(&p.workers[0])
	for spin := 0; p.finished.Load() != int64(len(blocks)); spin++ {
		if spin%64 == 63 {
			runtime.Gosched()
		}
	}
	p.shut()
	p.blocks = nil // the pool must not keep the Sim reachable
	commits := uint64(0)
	for i := range p.workers {
		commits += p.workers[i].commits
	}
	return commits
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
func (p *evalPool) close() { p.stopped.Store(true) }
