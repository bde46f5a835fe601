package evict

import (
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

// Events a block's FSM serves, in priority order.
const (
	evNone  uint8 = iota
	evTake        // the AFM took the candidate: it leaves the metadata
	evMap         // a page-group arrived: the frame-group becomes most recently used
	evTouch       // a walk touched the frame-group
)

// Queue depths of the monitor. Maps arrive at most one per completed
// 64 KB migration (6,066 cycles of link time each at 16 GB/s, SPEC 2) and
// a block serves one in at most three cycles, so four entries never fill
// in practice; LostMaps reports it if they do. Touches can come one per
// cycle from 64 walkers and are hints: the queue keeps the last eight
// distinct ones and drops the rest.
const (
	mapDepth   = 4
	touchDepth = 8
)

// monitor is the front end every block shares: it snoops the walk and
// IPgT channels into two small queues, remembers a candidate the AFM took, and
// hands the FSM one event at a time.
type monitor struct {
	p    Ports
	nfg  uint64
	base uint64 // IPGT_BASE

	mapQ                 *rtl.Vec[uint64]
	mapHead, mapCount    *rtl.Reg[uint8]
	touchQ               *rtl.Vec[uint64]
	touchHead, touchN    *rtl.Reg[uint8]
	lastTouch            *rtl.Reg[uint64] // a repeat of the last queued touch is not queued
	taken                *rtl.Reg[bool]   // the AFM took takenPFgN; its removal is pending
	takenPFgN            *rtl.Reg[uint64]
	lostMaps, droppedTch *rtl.Reg[uint64]
}

// monitorRegBits is the register storage of the monitor for fg-bit
// frame-group numbers (queues, pointers, last touch, taken candidate;
// the two 64-bit event counters are statistics, not counted).
func monitorRegBits(fg int) int {
	return (mapDepth+touchDepth)*fg + 4*4 + fg + 1 + fg
}

func newMonitor(b *rtl.Base, p Ports, cfg Config) monitor {
	nfg := cfg.NFG
	fg := linkBits(nfg)
	m := monitor{p: p, nfg: nfg, base: cfg.IPGTBase}
	m.mapQ = rtl.NewVec[uint64](b, "map_q", mapDepth, fg, 0)
	m.mapHead = rtl.NewReg[uint8](b, "map_head", 4, 0)
	m.mapCount = rtl.NewReg[uint8](b, "map_count", 4, 0)
	m.touchQ = rtl.NewVec[uint64](b, "touch_q", touchDepth, fg, 0)
	m.touchHead = rtl.NewReg[uint8](b, "touch_head", 4, 0)
	m.touchN = rtl.NewReg[uint8](b, "touch_count", 4, 0)
	m.lastTouch = rtl.NewReg[uint64](b, "last_touch", fg, nfg)
	m.taken = rtl.NewFlag(b, "taken", false)
	m.takenPFgN = rtl.NewReg[uint64](b, "taken_pfgn", fg, 0)
	m.lostMaps = rtl.NewReg[uint64](b, "lost_maps", 64, 0)
	m.droppedTch = rtl.NewReg[uint64](b, "dropped_touches", 64, 0)
	b.Listen(p.WalkValid, p.WalkReady, p.WalkPTE, p.IPgT.ReqValid, p.IPgT.ReqReady, p.IPgT.ReqWrite, p.IPgT.ReqAddr, p.IPgT.ReqWData)
	p.Victim.Producer(b)
	return m
}

// nextEvent is the event the FSM would serve: a take, then a map, then (when
// touches is set) a touch.
func (m *monitor) nextEvent(touches bool) (uint8, uint64) {
	switch {
	case m.taken.Q():
		return evTake, m.takenPFgN.Q()
	case m.mapCount.Q() > 0:
		return evMap, m.mapQ.At(int(m.mapHead.Q())).Q()
	case touches && m.touchN.Q() > 0:
		return evTouch, m.touchQ.At(int(m.touchHead.Q())).Q()
	}
	return evNone, 0
}

// step retires the event the FSM served this cycle (evNone for none) and
// records this cycle's handshakes on the snooped channels and the victim
// port.
func (m *monitor) step(served uint8) {
	if served == evTake {
		m.taken.Set(false)
	}
	if m.p.Victim.Fire() {
		m.taken.Set(true)
		m.takenPFgN.Set(m.p.Victim.Bits.Get())
	}

	head, n := m.mapHead.Q(), m.mapCount.Q()
	if served == evMap {
		head, n = (head+1)%mapDepth, n-1
	}
	if mem := m.p.IPgT; mem.ReqValid.Get() && mem.ReqReady.Get() && mem.ReqWrite.Get() && ipgt.Victim(mem.ReqWData.Get()) {
		if x := (mem.ReqAddr.Get() - m.base) / ipgt.EntryBytes; x < m.nfg {
			if n < mapDepth {
				m.mapQ.At(int((head + n) % mapDepth)).Set(x)
				n++
			} else {
				m.lostMaps.Set(m.lostMaps.Q() + 1)
			}
		}
	}
	if head != m.mapHead.Q() {
		m.mapHead.Set(head)
	}
	if n != m.mapCount.Q() {
		m.mapCount.Set(n)
	}

	head, n = m.touchHead.Q(), m.touchN.Q()
	if served == evTouch {
		head, n = (head+1)%touchDepth, n-1
	}
	if e := m.p.WalkPTE.Get(); m.p.WalkValid.Get() && m.p.WalkReady.Get() && e.Valid() && !e.IsRemote() {
		if x := e.Frame() / pagesPerGroup; x < m.nfg && x != m.lastTouch.Q() {
			if n < touchDepth {
				m.touchQ.At(int((head + n) % touchDepth)).Set(x)
				m.lastTouch.Set(x)
				n++
			} else {
				m.droppedTch.Set(m.droppedTch.Q() + 1)
			}
		}
	}
	if head != m.touchHead.Q() {
		m.touchHead.Set(head)
	}
	if n != m.touchN.Q() {
		m.touchN.Set(n)
	}
}

func (m *monitor) LostMaps() uint64       { return m.lostMaps.Q() }
func (m *monitor) DroppedTouches() uint64 { return m.droppedTch.Q() }
