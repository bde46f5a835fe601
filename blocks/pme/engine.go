package pme

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/rtl"
)

// Engine is the GPU-side Page Migration Engine: a table of command slots,
// a link output stage that issues page reads, victim page writes and
// flushes to the device-to-host direction, a receive side that takes page
// data and flush acknowledgements from the host-to-device direction, and
// an event stage that reports progress.
type Engine struct {
	rtl.Base
	Ports

	cfg Config

	busy      *rtl.Vec[uint8]
	cmd       *rtl.Vec[Command]
	readyAt   *rtl.Vec[uint64] // first cycle the slot may issue
	age       *rtl.Vec[uint64] // slots are served oldest first
	reads     *rtl.Vec[uint16] // page reads issued
	arrived   *rtl.Vec[uint16] // pages received
	landed    *rtl.Vec[uint16] // pages reported
	writes    *rtl.Vec[uint16] // victim pages issued
	flushSent *rtl.Vec[uint8]
	flushAck  *rtl.Vec[uint8]
	victimRep *rtl.Vec[uint8] // victim event reported
	seq       *rtl.Reg[uint64]

	outstanding *rtl.Reg[uint16] // reads and flushes not yet answered

	outValid *rtl.Reg[bool]
	out      *rtl.Reg[pcie.Packet]
	evValid  *rtl.Reg[bool]
	ev       *rtl.Reg[Event]

	errSeen *rtl.Reg[bool]
	errCmd  *rtl.Reg[Command]
}

// Ports are the engine's ports.
type Ports struct {
	Cmd      *rtl.Decoupled[Command]     // commands in; Ready while a slot is free
	Events   *rtl.Decoupled[Event]       // progress out, one event per cycle
	ToHost   *rtl.Decoupled[pcie.Packet] // to the device-to-host direction
	FromHost *rtl.Decoupled[pcie.Packet] // from the host-to-device direction; always ready
}

// NewPorts makes the command and event channels of an engine named path
// (path.cmd, path.events) and connects it to the link: toHost is a
// device-to-host input port of the link (In[i]), fromHost the
// host-to-device output of the port the host answers on (Out[j]).
func NewPorts(s *rtl.Sim, path string, toHost, fromHost *rtl.Decoupled[pcie.Packet]) Ports {
	return Ports{
		Cmd:      rtl.NewDecoupledOf[Command](s, path+".cmd", CommandBits),
		Events:   rtl.NewDecoupledOf[Event](s, path+".events", EventBits),
		ToHost:   toHost,
		FromHost: fromHost,
	}
}

// New builds an engine under path on ports p. Call Config.CheckLink to
// make sure the link carries whole pages.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{Ports: p, cfg: cfg}
	s.Add(e, path)
	b, n := &e.Base, cfg.Slots
	e.busy = rtl.NewVec[uint8](b, "busy", n, 1, 0)
	e.cmd = rtl.NewVecOf(b, "cmd", n, CommandBits, Command{})
	e.readyAt = rtl.NewVec[uint64](b, "ready_at", n, 64, 0)
	e.age = rtl.NewVec[uint64](b, "age", n, 64, 0)
	e.reads = rtl.NewVec[uint16](b, "reads", n, posBits+1, 0)
	e.arrived = rtl.NewVec[uint16](b, "arrived", n, posBits+1, 0)
	e.landed = rtl.NewVec[uint16](b, "landed", n, posBits+1, 0)
	e.writes = rtl.NewVec[uint16](b, "writes", n, posBits+1, 0)
	e.flushSent = rtl.NewVec[uint8](b, "flush_sent", n, 1, 0)
	e.flushAck = rtl.NewVec[uint8](b, "flush_ack", n, 1, 0)
	e.victimRep = rtl.NewVec[uint8](b, "victim_reported", n, 1, 0)
	e.seq = rtl.NewReg[uint64](b, "seq", 64, 0)
	e.outstanding = rtl.NewReg[uint16](b, "outstanding", 13, 0)
	e.outValid = rtl.NewFlag(b, "out_valid", false)
	e.out = rtl.NewRegOf(b, "out", pcie.PacketBits, pcie.Packet{})
	e.evValid = rtl.NewFlag(b, "ev_valid", false)
	e.ev = rtl.NewRegOf(b, "ev", EventBits, Event{})
	e.errSeen = rtl.NewFlag(b, "err_seen", false)
	e.errCmd = rtl.NewRegOf(b, "err_cmd", CommandBits, Command{})
	e.Cmd.Consumer(b)
	e.FromHost.Consumer(b)
	e.ToHost.Producer(b)
	e.Events.Producer(b)
	return e, nil
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

func (e *Engine) freeSlot() int {
	for s := range e.busy.Len() {
		if e.busy.At(s).Q() == 0 {
			return s
		}
	}
	return -1
}

// Drive presents the link and event stages and the ports' readiness.
func (e *Engine) Drive() {
	e.Cmd.Ready.Set(e.freeSlot() >= 0)
	e.FromHost.Ready.Set(true)
	e.ToHost.Valid.Set(e.outValid.Q())
	e.ToHost.Bits.Set(e.out.Q())
	e.Events.Valid.Set(e.evValid.Q())
	e.Events.Bits.Set(e.ev.Q())
}

// Eval takes a packet from the host, reports one event, issues one packet
// to the host and accepts one command, each at most once per cycle.
func (e *Engine) Eval() {
	now := e.Now()
	active := false
	outstanding := int(e.outstanding.Q())

	arrSlot, ackSlot := -1, -1
	if e.FromHost.Fire() {
		active = true
		kind, s, _ := splitTag(e.FromHost.Bits.Get().Tag)
		if kind == kindFlush {
			ackSlot = s
			e.flushAck.At(s).Set(1)
		} else {
			arrSlot = s
			e.arrived.At(s).Set(e.arrived.At(s).Q() + 1)
		}
		outstanding--
	}

	if !e.evValid.Q() || e.Events.Fire() {
		if e.report(arrSlot, ackSlot, e.heldWrite()) {
			active = true
		} else if e.evValid.Q() {
			active = true
			e.evValid.Set(false)
		}
	}

	if !e.outValid.Q() || e.ToHost.Fire() {
		if p, ok := e.issue(now, &outstanding); ok {
			active = true
			e.out.Set(p)
			e.outValid.Set(true)
		} else if e.outValid.Q() {
			active = true
			e.outValid.Set(false)
		}
	}
	if outstanding != int(e.outstanding.Q()) {
		e.outstanding.Set(uint16(outstanding))
	}

	if e.Cmd.Fire() {
		active = true
		e.accept(now, e.Cmd.Bits.Get())
	}

	if !active {
		e.sleep(now)
	}
}

// heldWrite is the slot whose victim page waits in the link output stage
// and does not leave this cycle, or -1.
func (e *Engine) heldWrite() int {
	if !e.outValid.Q() || e.ToHost.Fire() {
		return -1
	}
	kind, s, _ := splitTag(e.out.Q().Tag)
	if kind != kindWrite {
		return -1
	}
	return s
}

// report loads the event stage with the oldest slot's next event: its next
// page in order once that page has arrived (and, in a swap, once the victim
// page it overwrites has left for the host), or its victim event once the
// flush is answered. arrSlot and ackSlot name the slots whose page or flush
// answer arrives this cycle; heldSlot the one whose latest victim page is
// still in the output stage.
func (e *Engine) report(arrSlot, ackSlot, heldSlot int) bool {
	best, victim := -1, false
	for s := range e.busy.Len() {
		if e.busy.At(s).Q() == 0 || (best >= 0 && e.age.At(s).Q() > e.age.At(best).Q()) {
			continue
		}
		c := e.cmd.At(s).Q()
		arrived := e.arrived.At(s).Q()
		if s == arrSlot {
			arrived++
		}
		landed := e.landed.At(s).Q()
		left := e.writes.At(s).Q()
		if s == heldSlot {
			left--
		}
		switch {
		case c.Op.fetches() && landed < arrived && (c.Op != Swap || left > landed):
			best, victim = s, false
		case c.Op.evicts() && e.victimRep.At(s).Q() == 0 && (e.flushAck.At(s).Q() == 1 || s == ackSlot):
			best, victim = s, true
		}
	}
	if best < 0 {
		return false
	}
	c := e.cmd.At(best).Q()
	landed := e.landed.At(best).Q()
	fetchDone := !c.Op.fetches() || landed == c.Pages
	victimDone := !c.Op.evicts() || e.victimRep.At(best).Q() == 1
	if victim {
		e.ev.Set(Event{Tag: c.Tag, Victim: true})
		e.victimRep.At(best).Set(1)
		victimDone = true
	} else {
		pos := landed
		e.ev.Set(Event{Tag: c.Tag, Page: (c.First + pos) % c.Pages, Critical: pos == 0, Last: pos+1 == c.Pages})
		e.landed.At(best).Set(pos + 1)
		fetchDone = pos+1 == c.Pages
	}
	if fetchDone && victimDone {
		e.busy.At(best).Set(0)
	}
	e.evValid.Set(true)
	return true
}

// issue picks the next packet for the host: the oldest slot's next page
// read while read tags are free, else the oldest slot's next victim page,
// else the oldest slot's flush once all its victim pages are out.
func (e *Engine) issue(now uint64, outstanding *int) (pcie.Packet, bool) {
	tagsFree := *outstanding < e.cfg.ReadTags
	read, write, flush := -1, -1, -1
	older := func(s, than int) bool { return than < 0 || e.age.At(s).Q() < e.age.At(than).Q() }
	for s := range e.busy.Len() {
		if e.busy.At(s).Q() == 0 || e.readyAt.At(s).Q() > now {
			continue
		}
		c := e.cmd.At(s).Q()
		switch {
		case c.Op.fetches() && tagsFree && e.reads.At(s).Q() < c.Pages:
			if older(s, read) {
				read = s
			}
		case c.Op.evicts() && e.writes.At(s).Q() < c.Pages:
			if older(s, write) {
				write = s
			}
		case c.Op.evicts() && tagsFree && e.flushSent.At(s).Q() == 0:
			if older(s, flush) {
				flush = s
			}
		}
	}
	switch {
	case read >= 0:
		n := e.reads.At(read).Q()
		e.reads.At(read).Set(n + 1)
		*outstanding++
		return pcie.Packet{Tag: linkTag(kindRead, read, int(n)), Bytes: uint16(e.cfg.RequestBytes)}, true
	case write >= 0:
		n := e.writes.At(write).Q()
		e.writes.At(write).Set(n + 1)
		return pcie.Packet{Tag: linkTag(kindWrite, write, int(n)), Bytes: uint16(e.cfg.PageBytes)}, true
	case flush >= 0:
		e.flushSent.At(flush).Set(1)
		*outstanding++
		return pcie.Packet{Tag: linkTag(kindFlush, flush, 0), Bytes: uint16(e.cfg.RequestBytes)}, true
	}
	return pcie.Packet{}, false
}

// accept puts a command into a free slot, or records it as malformed.
func (e *Engine) accept(now uint64, c Command) {
	if c.Op > Evict || c.Pages < 1 || int(c.Pages) > e.cfg.MaxPages || c.First >= c.Pages {
		if !e.errSeen.Q() {
			e.errSeen.Set(true)
			e.errCmd.Set(c)
		}
		return
	}
	s := e.freeSlot()
	e.busy.At(s).Set(1)
	e.cmd.At(s).Set(c)
	e.readyAt.At(s).Set(now + uint64(e.cfg.SetupCycles) - 1)
	e.age.At(s).Set(e.seq.Q())
	e.seq.Set(e.seq.Q() + 1)
	e.reads.At(s).Set(0)
	e.arrived.At(s).Set(0)
	e.landed.At(s).Set(0)
	e.writes.At(s).Set(0)
	e.flushSent.At(s).Set(0)
	e.flushAck.At(s).Set(0)
	e.victimRep.At(s).Set(0)
}

// sleep lets an idle engine skip to the next slot whose setup ends; all
// other work waits for an input to change.
func (e *Engine) sleep(now uint64) {
	wake := rtl.Never
	for s := range e.busy.Len() {
		if e.busy.At(s).Q() == 1 {
			if t := e.readyAt.At(s).Q(); t > now {
				wake = min(wake, t)
			}
		}
	}
	e.SleepUntil(wake)
}

// Err reports the first malformed command the engine dropped.
func (e *Engine) Err() error {
	if !e.errSeen.Q() {
		return nil
	}
	c := e.errCmd.Q()
	return fmt.Errorf("pme: %s dropped command tag %d: Op %d must be 0..2, Pages %d must be in 1..%d, First %d must be below Pages",
		e.Path(), c.Tag, c.Op, c.Pages, e.cfg.MaxPages, c.First)
}
