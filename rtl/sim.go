package rtl

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
)

// Options select the scheduler's behaviour.
type Options struct {
	// Checked reports modeling errors (see the package doc). It costs a few
	// branches per register and wire access; the test suite always uses it.
	Checked bool
	// SkipIdle evaluates only awake blocks and jumps the clock over cycles in
	// which every block sleeps. Results are identical either way.
	SkipIdle bool
	// Threads evaluates the blocks of each Eval phase on this many
	// goroutines (0 or 1: on the caller's alone; at most MaxThreads)
	// while timed trials show that to be faster than the caller alone
	// (parallel.go). Results are identical at any count. Checked mode
	// always evaluates on one goroutine.
	Threads int
}

type phase uint8

const (
	phaseIdle phase = iota
	phaseDrive
	phaseEval
	phaseCommit
)

func (p phase) String() string {
	return [...]string{"idle", "Drive", "Eval", "commit"}[p]
}

type resettable interface {
	resetValue()
}

// regSet is a register or a Vec: what the Sim resets and checks.
type regSet interface {
	resettable
	eachReg(visit func(traced))
}

// Sim is the lockstep scheduler: it owns the clock, the blocks, and every
// register and wire they create.
type Sim struct {
	checked  bool
	skipIdle bool

	cycle    uint64
	executed uint64
	commits  uint64

	blocks []*Base
	order  []*Base
	awake  int
	// Bit i of awakeSet is set while order[i] is awake; bit i of driveSet
	// while order[i] sleeps with outputs still to drive from its last Eval;
	// bit i of timedSet while order[i] sleeps until a set cycle (an input
	// may have woken it since). soonest is at or before the earliest wake
	// time of a sleeping block.
	awakeSet []uint64
	driveSet []uint64
	timedSet []uint64
	soonest  uint64

	stray   []*Base // blocks written outside Eval (see Base.mark)
	regs    []regSet
	regInfo []any // per register or Vec, by number: its *regInfo
	wires   []resettable
	signals []traced // the wires and scalar registers
	vecs    []regSet // the Vecs, whose registers are signals too
	// The signal names taken: every wire's and scalar register's in
	// names, every Vec's name and length in vecNames (it takes name[0]
	// to name[n-1]), and every wire or scalar register named like a Vec
	// element, base[i], by its base in elemNames.
	names     map[string]bool
	vecNames  map[string]int
	elemNames map[string][]int
	srams     []resettable

	phase phase
	cur   *Base
	err   error
	// In checked mode, the number of wire changes so far and the last
	// wire changed (see driveStale).
	wireChanges uint64
	lastChanged string

	par      *evalPool // helpers of a parallel Eval phase, nil when serial
	evalList []*Base   // the blocks of a parallel Eval phase

	probes []func(cycle uint64)

	vcd *vcdWriter
}

// New makes an empty simulator.
func New(opts Options) *Sim {
	if opts.Threads < 0 || opts.Threads > MaxThreads {
		panic(fmt.Sprintf("rtl: Options.Threads = %d outside 0..%d", opts.Threads, MaxThreads))
	}
	s := &Sim{checked: opts.Checked, skipIdle: opts.SkipIdle, names: map[string]bool{}, vecNames: map[string]int{}, elemNames: map[string][]int{}}
	if opts.Threads > 1 && !opts.Checked {
		s.par = newEvalPool(opts.Threads - 1)
		// The helpers hold the pool, not the Sim; they stop once the Sim
		// is unreachable.
		runtime.AddCleanup(s, func(p *evalPool) { p.close() }, s.par)
	}
	return s
}

// addSignal records a register or wire under its unique hierarchical name.
func (s *Sim) addSignal(t traced) {
	name := t.Name()
	taken := s.names[name]
	base, i, elem := splitElemName(name)
	if elem {
		taken = taken || i < s.vecNames[base]
	}
	if taken {
		panic(fmt.Sprintf("rtl: two signals named %s", name))
	}
	s.names[name] = true
	if elem {
		s.elemNames[base] = append(s.elemNames[base], i)
	}
	s.signals = append(s.signals, t)
}

// addVec records the registers name[0] to name[n-1] of a Vec of n > 0,
// whose names must all be unique.
func (s *Sim) addVec(name string, n int, v regSet) {
	taken := s.vecNames[name] != 0
	for _, i := range s.elemNames[name] {
		taken = taken || i < n
	}
	if taken {
		panic(fmt.Sprintf("rtl: two signals named %s", elemName(name, 0)))
	}
	s.vecNames[name] = n
	s.vecs = append(s.vecs, v)
}

// eachSignal visits every register and wire.
func (s *Sim) eachSignal(visit func(traced)) {
	for _, t := range s.signals {
		visit(t)
	}
	for _, v := range s.vecs {
		v.eachReg(visit)
	}
}

// elemName is the name of element i of a Vec named base.
func elemName(base string, i int) string {
	return base + "[" + strconv.Itoa(i) + "]"
}

// splitElemName reports whether name is the name of a Vec element,
// base[i] with i written as elemName writes it, and splits it.
func splitElemName(name string) (base string, i int, ok bool) {
	open := strings.LastIndexByte(name, '[')
	if open < 0 || !strings.HasSuffix(name, "]") {
		return "", 0, false
	}
	digits := name[open+1 : len(name)-1]
	i, err := strconv.Atoi(digits)
	if err != nil || i < 0 || strconv.Itoa(i) != digits {
		return "", 0, false
	}
	return name[:open], i, true
}

// Add registers a block under a hierarchical name. It must be called before
// the block creates registers, SRAMs or listens to wires. Blocks start awake.
func (s *Sim) Add(blk Block, path string) {
	b := blk.base()
	if b.sim != nil {
		panic(fmt.Sprintf("rtl: block %s added twice", b.path))
	}
	*b = Base{sim: s, checked: s.checked, path: path, self: blk, wakeAt: Never, idx: len(s.order)}
	s.blocks = append(s.blocks, b)
	s.order = append(s.order, b)
	s.awake++
	if b.idx&63 == 0 {
		s.awakeSet = append(s.awakeSet, 0)
		s.driveSet = append(s.driveSet, 0)
		s.timedSet = append(s.timedSet, 0)
	}
	s.awakeSet[b.idx>>6] |= 1 << (b.idx & 63)
}

// index recomputes the blocks' positions and the awake, drive and timed
// sets after the evaluation order changed.
func (s *Sim) index() {
	clear(s.awakeSet)
	clear(s.driveSet)
	clear(s.timedSet)
	for i, b := range s.order {
		b.idx = i
		switch {
		case !b.asleep:
			s.awakeSet[i>>6] |= 1 << (i & 63)
		case b.wrote:
			s.driveSet[i>>6] |= 1 << (i & 63)
		}
		if b.asleep && b.wakeAt != Never {
			s.timedSet[i>>6] |= 1 << (i & 63)
		}
	}
}

// Reset puts every register at its reset value, every wire at zero, the
// clock at cycle 0, wakes every block, and drives the outputs of cycle 0.
// SRAM contents are not reset, as in hardware.
func (s *Sim) Reset() {
	for _, r := range s.regs {
		r.resetValue()
	}
	for _, w := range s.wires {
		w.resetValue()
	}
	for _, m := range s.srams {
		m.resetValue()
	}
	for _, b := range s.blocks {
		b.dropRegs()
		clear(b.pending)
		b.pending = b.pending[:0]
	}
	s.stray = s.stray[:0]
	s.cycle, s.executed, s.commits, s.err = 0, 0, 0, nil
	s.awake = len(s.blocks)
	s.soonest = Never
	for _, b := range s.blocks {
		b.asleep, b.wakeAt, b.holdUntil = false, Never, 0
		b.wrote, b.readTime, b.sleepAsked, b.driveTime = true, false, false, false
	}
	s.index()
	s.drive()
}

// Cycle is the current cycle number: the cycle whose outputs are driven and
// whose inputs the next Step evaluates.
func (s *Sim) Cycle() uint64 { return s.cycle }

// Executed counts the cycles actually evaluated since reset; with SkipIdle
// it is smaller than Cycle by the number of skipped cycles.
func (s *Sim) Executed() uint64 { return s.executed }

// Commits counts register and SRAM-port write-backs since reset: the
// kernel's unit of work, and a proxy for switching activity.
func (s *Sim) Commits() uint64 { return s.commits }

// Err is the first modeling error found in checked mode, if any.
func (s *Sim) Err() error { return s.err }

// Shuffle permutes the order in which blocks are driven and evaluated. A
// correct design gives the same results for every order.
func (s *Sim) Shuffle(rng *rand.Rand) {
	rng.Shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
	s.index()
}

// Probe adds an observer that is called after the commit of every
// evaluated cycle with that cycle's number. It sees the registers at
// their new values and the wires still at the values they had in the
// cycle (a handshake that fired in it still shows as fired). A probe
// records (statistics, latency samples) and changes nothing, so it costs
// no Eval a line and never keeps a block awake; an idle cycle the
// scheduler skips changes nothing and is not probed.
func (s *Sim) Probe(fn func(cycle uint64)) { s.probes = append(s.probes, fn) }

// Step evaluates the current cycle, commits it, and drives the outputs of
// the next one.
func (s *Sim) Step() error {
	if s.vcd != nil {
		s.vcd.dump(s.cycle)
	}
	s.phase = phaseEval
	if s.par != nil && s.par.plan(s.awake) {
		s.evalParallel()
		s.phase = phaseCommit
		s.sleepAndCommitStray()
	} else {
		order := s.order
		for wi, set := range s.awakeSet {
			for ; set != 0; set &= set - 1 {
				b := order[wi<<6|bits.TrailingZeros64(set)]
				b.wrote, b.readTime, b.sleepAsked = false, false, false
				if s.checked {
					s.cur = b // for the checks' messages
				}
				b.self.Eval()
			}
		}
		s.cur = nil
		s.phase = phaseCommit
		s.commitAndSleep()
	}
	// Sleep decisions change no register or wire, so the probes see the
	// committed state as if they ran between commit and sleep.
	for _, p := range s.probes {
		p(s.cycle)
	}
	s.phase = phaseIdle
	s.cycle++
	s.executed++
	s.drive()
	return s.err
}

// evalParallel runs the Eval phase of the awake blocks on the helpers,
// each block committed by the goroutine that evaluated it.
func (s *Sim) evalParallel() {
	list := s.evalList[:0]
	for wi, set := range s.awakeSet {
		for ; set != 0; set &= set - 1 {
			list = append(list, s.order[wi<<6|bits.TrailingZeros64(set)])
		}
	}
	s.evalList = list
	s.commits += s.par.eval(list)
}

// commitAndSleep commits, block by block, the state written in this
// cycle, and with idle skipping puts to sleep every block that is at a
// fixed point or asked to sleep. Eval wakes no block, so the awake set is
// the set just evaluated, and only a block that was evaluated wrote state.
func (s *Sim) commitAndSleep() {
	next := s.cycle + 1
	awakeSet, order, skipIdle, commits := s.awakeSet, s.order, s.skipIdle, s.commits
	for wi := range awakeSet {
		for set := awakeSet[wi]; set != 0; set &= set - 1 {
			b := order[wi<<6|bits.TrailingZeros64(set)]
			if b.written() {
				commits += b.commit()
			}
			// A block that wrote state or read the time stays awake
			// unless it asked to sleep (trySleep's first test, made here
			// to spare most blocks the call).
			if skipIdle && (b.sleepAsked || !b.wrote && !b.readTime) {
				s.trySleep(b, next)
			}
		}
	}
	s.commits = commits
	s.commitStray()
}

// sleepAndCommitStray ends a parallel Eval phase, whose blocks are
// committed already: it makes commitAndSleep's sleep decisions and commits
// the blocks written outside Eval.
func (s *Sim) sleepAndCommitStray() {
	if s.skipIdle {
		next := s.cycle + 1
		awakeSet, order := s.awakeSet, s.order
		for wi := range awakeSet {
			for set := awakeSet[wi]; set != 0; set &= set - 1 {
				s.trySleep(order[wi<<6|bits.TrailingZeros64(set)], next)
			}
		}
	}
	s.commitStray()
}

// commitStray commits the blocks written outside Eval that no Eval phase
// committed.
func (s *Sim) commitStray() {
	for _, b := range s.stray {
		if b.written() {
			s.commits += b.commit()
		}
	}
	s.stray = s.stray[:0]
}

// trySleep puts block b to sleep if it is at a fixed point or asked to
// sleep until after cycle next.
func (s *Sim) trySleep(b *Base, next uint64) {
	until := Never
	switch {
	case b.sleepAsked:
		until = b.sleepUntil
	case b.wrote || b.readTime:
		return
	}
	if b.holdUntil > s.cycle && b.holdUntil < until {
		until = b.holdUntil
	}
	if until <= next {
		return
	}
	b.asleep, b.wakeAt = true, until
	s.awake--
	s.soonest = min(s.soonest, until)
	s.awakeSet[b.idx>>6] &^= 1 << (b.idx & 63)
	if until != Never {
		s.timedSet[b.idx>>6] |= 1 << (b.idx & 63)
	} else {
		s.timedSet[b.idx>>6] &^= 1 << (b.idx & 63)
	}
	if b.wrote {
		s.driveSet[b.idx>>6] |= 1 << (b.idx & 63)
	}
}

// drive wakes the blocks whose timed sleep ends now and runs the Drive phase
// for every awake block and every block that wrote state in its last Eval.
func (s *Sim) drive() {
	s.phase = phaseDrive
	if s.cycle >= s.soonest {
		s.wakeDue()
	}
	// A Drive may wake a block later in the order, which is then driven in
	// this pass too: the sets are read again after every block. (A Drive
	// changes the sets' words, never the slices.)
	awakeSet, driveSet, order := s.awakeSet, s.driveSet, s.order
	driveSet = driveSet[:len(awakeSet)]
	for wi := range awakeSet {
		done := uint64(0)
		for {
			set := (awakeSet[wi] | driveSet[wi]) &^ done
			if set == 0 {
				break
			}
			bit := set & -set
			done |= bit - 1 | bit
			b := order[wi<<6|bits.TrailingZeros64(set)]
			// Outputs follow registers and landed SRAM reads only: a block
			// that committed nothing since its last Drive and has no read
			// landing now would drive the same values again.
			stale := !b.wrote && !b.driveTime && b.holdUntil < s.cycle
			if b.asleep {
				b.wrote = false
			}
			if stale {
				if s.checked {
					s.driveStale(b)
				}
				continue
			}
			if s.checked {
				s.cur = b
			}
			b.driveTime = false
			b.self.Drive()
		}
		driveSet[wi] = 0
	}
	s.cur = nil
	s.phase = phaseIdle
}

// driveStale runs, in checked mode, the Drive that the fast kernel skips
// for a block whose registers did not change since its last Drive, and
// reports a modeling error if it changes a wire: such a Drive reads
// something other than the block's registers.
func (s *Sim) driveStale(b *Base) {
	before := s.wireChanges
	s.cur = b
	b.self.Drive()
	b.driveTime = false
	if s.wireChanges != before && s.err == nil {
		s.fail(fmt.Errorf("block %s changed wire %s in its Drive in cycle %d though none of its registers changed since its last Drive: outputs must depend only on registers", b.path, s.lastChanged, s.cycle))
	}
}

// wakeDue wakes the blocks whose timed sleep ends by now and recomputes
// soonest over those still asleep. It visits only the blocks of the timed
// set, and drops from it those that are awake or woken now.
func (s *Sim) wakeDue() {
	soonest := Never
	for wi, set := range s.timedSet {
		for ; set != 0; set &= set - 1 {
			i := wi<<6 | bits.TrailingZeros64(set)
			switch b := s.order[i]; {
			case b.asleep && b.wakeAt > s.cycle:
				soonest = min(soonest, b.wakeAt)
			default:
				b.wake()
				s.timedSet[wi] &^= 1 << (i & 63)
			}
		}
	}
	s.soonest = soonest
}

// nextWake is the earliest cycle at which a sleeping block wakes; it is
// called when every block sleeps.
func (s *Sim) nextWake() uint64 {
	t := Never
	for wi, set := range s.timedSet {
		for ; set != 0; set &= set - 1 {
			t = min(t, s.order[wi<<6|bits.TrailingZeros64(set)].wakeAt)
		}
	}
	return t
}

// Run advances the clock by exactly n cycles.
func (s *Sim) Run(n uint64) error {
	target := s.cycle + n
	for s.cycle < target {
		if s.skipIdle && s.awake == 0 {
			s.jump(min(s.nextWake(), target))
			continue
		}
		if err := s.Step(); err != nil {
			return err
		}
	}
	return s.err
}

// RunUntil steps until cond holds or limit cycles have passed, and reports
// whether cond held. cond must depend only on simulated state.
func (s *Sim) RunUntil(cond func() bool, limit uint64) (bool, error) {
	target := s.cycle + limit
	for !cond() {
		if s.cycle >= target {
			return false, s.err
		}
		if s.skipIdle && s.awake == 0 {
			s.jump(min(s.nextWake(), target))
			continue
		}
		if err := s.Step(); err != nil {
			return false, err
		}
	}
	return true, s.err
}

// jump moves the clock over cycles in which every block sleeps. Nothing
// changes in those cycles, so nothing is evaluated or traced.
func (s *Sim) jump(t uint64) {
	if t > s.cycle {
		s.cycle = t
	}
	s.drive()
}

func (s *Sim) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *Sim) who() string {
	if s.cur == nil {
		return "the testbench"
	}
	return "block " + s.cur.path
}

// checkRegRead and checkRegWrite name the register only when they fail:
// a Vec element's name is made when asked.
func (s *Sim) checkRegRead(owner *Base, r traced) {
	if s.cur != nil && s.cur != owner {
		s.fail(fmt.Errorf("register %s read by %s in cycle %d: blocks talk only through ports", r.Name(), s.who(), s.cycle))
	}
}

func (s *Sim) checkRegWrite(owner *Base, r traced, already bool) {
	switch {
	case s.phase != phaseEval:
		s.fail(fmt.Errorf("register %s written by %s during %s in cycle %d: registers are written only in Eval", r.Name(), s.who(), s.phase, s.cycle))
	case s.cur != owner:
		s.fail(fmt.Errorf("register %s written by %s in cycle %d: only its owner %s may write it", r.Name(), s.who(), s.cycle, owner.path))
	case already:
		s.fail(fmt.Errorf("register %s written twice in cycle %d by %s", r.Name(), s.cycle, s.who()))
	}
}

func (s *Sim) checkWireDrive(name string, driver **Base, width int, v uint64) {
	by := s.cur
	if by == nil {
		by = testbench
	}
	switch {
	case s.phase == phaseEval || s.phase == phaseCommit:
		s.fail(fmt.Errorf("wire %s driven by %s during %s in cycle %d: outputs are driven only in Drive", name, s.who(), s.phase, s.cycle))
	case *driver == nil:
		*driver = by
	case *driver != by:
		s.fail(fmt.Errorf("wire %s driven by two blocks (%s and %s) in cycle %d", name, driverName(*driver), s.who(), s.cycle))
	}
	if v&^mask(width) != 0 {
		s.fail(fmt.Errorf("wire %s: value %#x does not fit %d bits in cycle %d", name, v, width, s.cycle))
	}
}

// testbench stands for code outside any block that drives wires between
// cycles.
var testbench = &Base{path: "the testbench"}

func driverName(b *Base) string {
	if b == testbench {
		return b.path
	}
	return "block " + b.path
}

func (s *Sim) checkWireRead(name string) {
	if s.phase == phaseDrive {
		s.fail(fmt.Errorf("wire %s read by %s during Drive in cycle %d: outputs must depend only on registers", name, s.who(), s.cycle))
	}
}

// redrive runs one block's Drive outside the cycle loop, after a backdoor
// change of its state.
func (s *Sim) redrive(b *Base) {
	prev := s.phase
	s.phase, s.cur = phaseDrive, b
	b.self.Drive()
	s.phase, s.cur = prev, nil
}
