// Package accessctr models per-64 KB access counters (UVMSmart Section IV):
// one 32-bit word per basic block in an SRAM, a 27-bit access count and a
// 5-bit round-trip count, incremented by the GMMU on accesses and by the
// driver when a block migrates back, with a threshold notification for the
// dynamic-threshold migration of Eq. 1 and halving of every counter when
// one saturates.
//
// # Pipeline
//
// The SRAM (one read port, one write port, 1-cycle registered read) is
// updated by a two-stage read-modify-write pipeline that accepts one
// operation per cycle:
//
//   - issue (cycle i): the operation reads its block's word on port 0;
//   - update (cycle i+1): the word arrives (or, if the previous cycle wrote
//     the same block, the value written is forwarded), the new word is
//     written on port 1, and a notification is registered; it is on Notify
//     in cycle i+2.
//
// An access accepted on Inc in cycle a issues in cycle a, and so does a
// round trip accepted alone on RoundTrip. A round trip accepted together
// with an access is held in a one-entry buffer and issues in cycle a+1;
// both ports are not ready while the buffer is full. SetThreshold is always
// ready; a new threshold applies to updates from the next cycle on.
//
// # Halving
//
// When an update leaves a count at MaxCount (or a round-trip count at
// MaxRoundTrip) every block's corresponding field is halved (UVMSmart
// Section IV: halve rather than reset, keeping the relative view of
// hotness). Increments saturate, so nothing wraps. From the cycle after the
// saturating update both ports are held not ready; once the operations
// accepted up to the saturating update's cycle have written, a sweep issues
// one halving per cycle through the same pipeline, block 0 first, and the
// ports are ready again in the cycle after the last block issues. A
// halving therefore applies after every operation accepted up to the cycle
// of the saturating update (the saturating one, and at most one access and
// one round trip after it) and costs Blocks+2 cycles of back-pressure
// (Blocks+3 if a buffered round trip is still to issue). The same sweep
// clears every word after reset (SRAM contents are not reset), so the
// ports are ready Blocks cycles after reset.
package accessctr

import "github.com/uvmmu/uvmmu/rtl"

// Access is one counted access: the basic block and whether it was remote.
type Access struct {
	Block  uint32
	Remote bool
}

// Pack is {block, remote}.
func (a Access) Pack() uint64 { return uint64(a.Block)<<1 | b2u(a.Remote) }

// Notice reports a block whose count reached the threshold on a remote
// access, with its counters after that access.
type Notice struct {
	Block uint32
	Counter
}

// Pack is {block, round trips, count}.
func (n Notice) Pack() uint64 { return uint64(n.Block)<<WordBits | uint64(n.Counter.Pack()) }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// op is the operation in the update stage.
type op uint8

const (
	opLocal op = iota
	opRemote
	opRoundTrip
	opHalve
	opClear
)

const opBits = 3

// Halving masks: which fields a sweep halves.
const (
	halveCount     = 1
	halveRoundTrip = 2
	halveBits      = 2
)

// sweepMode is what the sweep is doing.
type sweepMode uint8

const (
	sweepIdle sweepMode = iota
	sweepClear
	sweepHalve
)

// AccessCounters is the block.
type AccessCounters struct {
	rtl.Base
	Inc          *rtl.Decoupled[Access]
	RoundTrip    *rtl.Decoupled[uint32]
	SetThreshold *rtl.Decoupled[uint32]
	NotifyValid  *rtl.Wire[bool]
	Notify       *rtl.Wire[Notice]

	cfg Config

	words *rtl.SRAM[uint32]

	threshold *rtl.Reg[uint32]
	// The round-trip buffer.
	rtValid *rtl.Reg[bool]
	rtBlock *rtl.Reg[uint32]
	// The update stage.
	updValid *rtl.Reg[bool]
	updOp    *rtl.Reg[op]
	updBlock *rtl.Reg[uint32]
	// The word written in the previous cycle, for forwarding.
	fwdValid *rtl.Reg[bool]
	fwdBlock *rtl.Reg[uint32]
	fwdWord  *rtl.Reg[uint32]
	// Halvings requested by saturating updates, not yet started.
	pending *rtl.Reg[uint8]
	// The sweep.
	mode      *rtl.Reg[sweepMode]
	mask      *rtl.Reg[uint8]
	sweepNext *rtl.Reg[uint32]

	notifyValid *rtl.Reg[bool]
	notice      *rtl.Reg[Notice]
}

// Ports are the block's channels.
type Ports struct {
	Inc          *rtl.Decoupled[Access]
	RoundTrip    *rtl.Decoupled[uint32]
	SetThreshold *rtl.Decoupled[uint32]
	NotifyValid  *rtl.Wire[bool]
	Notify       *rtl.Wire[Notice]
}

// NewPorts makes the channels of a block named path.
func NewPorts(s *rtl.Sim, path string, cfg Config) Ports {
	bb := cfg.BlockBits()
	return Ports{
		Inc:          rtl.NewDecoupledOf[Access](s, path+".inc", bb+1),
		RoundTrip:    rtl.NewDecoupled[uint32](s, path+".round_trip", bb),
		SetThreshold: rtl.NewDecoupled[uint32](s, path+".set_threshold", CountBits),
		NotifyValid:  rtl.NewBit(s, path+".notify.valid"),
		Notify:       rtl.NewWireOf[Notice](s, path+".notify.bits", bb+WordBits),
	}
}

// New makes the block named path on ports p.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*AccessCounters, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &AccessCounters{Inc: p.Inc, RoundTrip: p.RoundTrip, SetThreshold: p.SetThreshold,
		NotifyValid: p.NotifyValid, Notify: p.Notify, cfg: cfg}
	s.Add(a, path)
	bb := cfg.BlockBits()
	a.words = rtl.NewSRAM[uint32](&a.Base, "words", rtl.SRAMConfig{Depth: cfg.Blocks, Width: WordBits, Ports: 2, ReadLatency: 1})
	a.threshold = rtl.NewReg[uint32](&a.Base, "threshold", CountBits, cfg.Threshold)
	a.rtValid = rtl.NewFlag(&a.Base, "rt_valid", false)
	a.rtBlock = rtl.NewReg[uint32](&a.Base, "rt_block", bb, 0)
	a.updValid = rtl.NewFlag(&a.Base, "upd_valid", false)
	a.updOp = rtl.NewReg[op](&a.Base, "upd_op", opBits, opLocal)
	a.updBlock = rtl.NewReg[uint32](&a.Base, "upd_block", bb, 0)
	a.fwdValid = rtl.NewFlag(&a.Base, "fwd_valid", false)
	a.fwdBlock = rtl.NewReg[uint32](&a.Base, "fwd_block", bb, 0)
	a.fwdWord = rtl.NewReg[uint32](&a.Base, "fwd_word", WordBits, 0)
	a.pending = rtl.NewReg[uint8](&a.Base, "pending", halveBits, 0)
	a.mode = rtl.NewReg[sweepMode](&a.Base, "sweep_mode", 2, sweepClear)
	a.mask = rtl.NewReg[uint8](&a.Base, "sweep_mask", halveBits, 0)
	a.sweepNext = rtl.NewReg[uint32](&a.Base, "sweep_next", bb, 0)
	a.notifyValid = rtl.NewFlag(&a.Base, "notify_valid", false)
	a.notice = rtl.NewRegOf[Notice](&a.Base, "notice", bb+WordBits, Notice{})
	p.Inc.Consumer(&a.Base)
	p.RoundTrip.Consumer(&a.Base)
	p.SetThreshold.Consumer(&a.Base)
	return a, nil
}

// Config is the block's configuration.
func (a *AccessCounters) Config() Config { return a.cfg }

// accepting is the Moore condition for both request ports.
func (a *AccessCounters) accepting() bool {
	return a.mode.Q() == sweepIdle && a.pending.Q() == 0 && !a.rtValid.Q()
}

// Drive sets the outputs from registers.
func (a *AccessCounters) Drive() {
	ok := a.accepting()
	a.Inc.Ready.Set(ok)
	a.RoundTrip.Ready.Set(ok)
	a.SetThreshold.Ready.Set(true)
	a.NotifyValid.Set(a.notifyValid.Q())
	a.Notify.Set(a.notice.Q())
}

// Eval runs the update stage, then issues the next operation.
func (a *AccessCounters) Eval() {
	a.update()
	a.issue()
	if a.SetThreshold.Fire() {
		a.threshold.Set(a.SetThreshold.Bits.Get())
	}
}

// update completes the operation read in the previous cycle.
func (a *AccessCounters) update() {
	notify := false
	if !a.updValid.Q() {
		if a.fwdValid.Q() {
			a.fwdValid.Set(false)
		}
		if a.notifyValid.Q() {
			a.notifyValid.Set(false)
		}
		return
	}
	block := a.updBlock.Q()
	word := a.words.RData(0)
	if a.fwdValid.Q() && a.fwdBlock.Q() == block {
		word = a.fwdWord.Q()
	}
	c := Unpack(word)
	sat := a.pending.Q()
	switch a.updOp.Q() {
	case opLocal, opRemote:
		remote := a.updOp.Q() == opRemote
		if (remote || a.cfg.CountLocal) && c.Count < MaxCount {
			c.Count++
		}
		if c.Count == MaxCount {
			sat |= halveCount
		}
		notify = remote && c.Count >= a.threshold.Q()
	case opRoundTrip:
		if c.RoundTrips < MaxRoundTrip {
			c.RoundTrips++
		}
		if c.RoundTrips == MaxRoundTrip {
			sat |= halveRoundTrip
		}
	case opHalve:
		if a.mask.Q()&halveCount != 0 {
			c.Count >>= 1
		}
		if a.mask.Q()&halveRoundTrip != 0 {
			c.RoundTrips >>= 1
		}
	case opClear:
		c = Counter{}
	}
	w := c.Pack()
	a.words.Write(1, int(block), w)
	a.fwdValid.Set(true)
	a.fwdBlock.Set(block)
	a.fwdWord.Set(w)
	if sat != a.pending.Q() {
		a.pending.Set(sat)
	}
	if notify {
		a.notice.Set(Notice{Block: block, Counter: c})
	}
	if notify != a.notifyValid.Q() {
		a.notifyValid.Set(notify)
	}
}

// issue starts the next operation: a sweep step, the start of a requested
// halving once the pipeline is empty, a buffered round trip, or an access.
func (a *AccessCounters) issue() {
	start := func(o op, block uint32) {
		a.words.Read(0, int(block))
		a.updOp.Set(o)
		a.updBlock.Set(block)
	}
	issued := true
	switch {
	case a.mode.Q() != sweepIdle:
		o := opClear
		if a.mode.Q() == sweepHalve {
			o = opHalve
		}
		next := a.sweepNext.Q()
		start(o, next)
		if int(next) == a.cfg.Blocks-1 {
			a.mode.Set(sweepIdle)
			a.sweepNext.Set(0)
		} else {
			a.sweepNext.Set(next + 1)
		}
	case a.rtValid.Q():
		start(opRoundTrip, a.rtBlock.Q())
		a.rtValid.Set(false)
	case a.pending.Q() != 0:
		issued = false
		if !a.updValid.Q() {
			a.mode.Set(sweepHalve)
			a.mask.Set(a.pending.Q())
			a.pending.Set(0)
		}
	case a.Inc.Fire():
		in := a.Inc.Bits.Get()
		o := opLocal
		if in.Remote {
			o = opRemote
		}
		start(o, in.Block)
		if a.RoundTrip.Fire() {
			a.rtValid.Set(true)
			a.rtBlock.Set(a.RoundTrip.Bits.Get())
		}
	case a.RoundTrip.Fire():
		start(opRoundTrip, a.RoundTrip.Bits.Get())
	default:
		issued = false
	}
	if issued != a.updValid.Q() {
		a.updValid.Set(issued)
	}
}

// Peek reads a block's counter through the backdoor: a testbench view.
func (a *AccessCounters) Peek(block int) Counter { return Unpack(a.words.Peek(block)) }

// Threshold is the threshold register's value: a testbench view.
func (a *AccessCounters) Threshold() uint32 { return a.threshold.Q() }
