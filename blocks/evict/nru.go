package evict

import (
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// NRUClock is not-recently-used eviction (UVMMU paper Section V-C1, its
// reference [21]): two bitmaps indexed by PFgN in single-port SRAMs of
// 64-bit words,
//
//	listed:     the frame-group was mapped and not taken since
//	referenced: a walk or a map touched it since the last clear
//
// and a clock hand. The hand scans one word per step for the first listed,
// unreferenced frame-group at or after it and offers it; after a whole
// sweep without one it accepts any listed frame-group (every one was used
// recently: NRU's lowest class is empty), and after a second empty sweep it
// stops until the next map. Every NRUClearCycles the referenced bitmap is
// cleared, one word per cycle in which no take or map waits. A map sets
// both bits, a touch sets the
// referenced bit (and withdraws the offer if it names that frame-group), a
// take clears the listed bit. Each event is a read and a write of a word.
type NRUClock struct {
	rtl.Base
	Ports
	monitor

	nfg, words  uint64
	period      uint64
	listed, ref *rtl.SRAM[uint64]
	hand        *rtl.Reg[uint64] // next frame-group the scan looks at
	misses      *rtl.Reg[uint64] // words scanned since the last offer
	idleScan    *rtl.Reg[bool]   // two sweeps found nothing listed: wait for a map
	clearAt     *rtl.Reg[uint64] // cycle of the next referenced-bit clear
	clearing    *rtl.Reg[bool]   // a clear is sweeping the referenced bitmap
	offerValid  *rtl.Reg[bool]
	offer       *rtl.Reg[uint64]
	state       *rtl.Reg[uint8]
	op          *rtl.Reg[uint8]
	cur         *rtl.Reg[uint64]
	sweep       *rtl.Reg[uint64]
	storageBits int
}

// NRUClock FSM states.
const (
	nruInit uint8 = iota // clearing both bitmaps, one word per cycle
	nruIdle              // taking the next event, clearing a word, or starting a scan step
	nruRMW               // the event's word arrived: write it back modified
	nruScan              // the hand's words arrived: offer or move on
)

func nruLayout(nfg uint64) layout {
	lb := linkBits(nfg)
	w := bitmapWords(nfg)
	return layout{
		srams: []rtl.SRAMConfig{
			{Depth: w, Width: wordBits, Ports: 1, ReadLatency: 1}, // listed
			{Depth: w, Width: wordBits, Ports: 1, ReadLatency: 1}, // referenced
		},
		regs: lb + linkBits(2*uint64(w)) + 1 + 64 + 1 + 1 + lb + 2 + 2 + lb + lb + monitorRegBits(lb),
	}
}

func newNRU(s *rtl.Sim, path string, cfg Config, p Ports) *NRUClock {
	n := &NRUClock{Ports: p, nfg: cfg.NFG, words: uint64(bitmapWords(cfg.NFG)), period: cfg.NRUClearCycles}
	s.Add(n, path)
	b := &n.Base
	lay := nruLayout(cfg.NFG)
	n.storageBits = lay.bits()
	n.listed = rtl.NewSRAM[uint64](b, "listed", lay.srams[0])
	n.ref = rtl.NewSRAM[uint64](b, "referenced", lay.srams[1])
	lb := linkBits(cfg.NFG)
	n.hand = rtl.NewReg[uint64](b, "hand", lb, 0)
	n.misses = rtl.NewReg[uint64](b, "misses", linkBits(2*n.words), 0)
	n.idleScan = rtl.NewFlag(b, "idle_scan", true)
	n.clearAt = rtl.NewReg[uint64](b, "clear_at", 64, cfg.NRUClearCycles)
	n.clearing = rtl.NewFlag(b, "clearing", false)
	n.offerValid = rtl.NewFlag(b, "offer_valid", false)
	n.offer = rtl.NewReg[uint64](b, "offer", lb, 0)
	n.state = rtl.NewReg[uint8](b, "state", 2, nruInit)
	n.op = rtl.NewReg[uint8](b, "op", 2, evNone)
	n.cur = rtl.NewReg[uint64](b, "cur", lb, 0)
	n.sweep = rtl.NewReg[uint64](b, "sweep", lb, 0)
	n.monitor = newMonitor(b, p, cfg)
	return n
}

// StorageBits is the SRAM and register storage.
func (n *NRUClock) StorageBits() int { return n.storageBits }

// Drive offers the frame-group the hand found.
func (n *NRUClock) Drive() {
	n.Victim.Valid.Set(n.offerValid.Q() && !n.taken.Q())
	n.Victim.Bits.Set(n.offer.Q())
}

// Eval advances the FSM by one step.
func (n *NRUClock) Eval() {
	served := evNone
	x := n.cur.Q()
	word, bit := int(x/wordBits), uint64(1)<<(x%wordBits)
	offerValid := n.offerValid.Q()
	if n.Victim.Fire() {
		offerValid = false
	}
	switch n.state.Q() {
	case nruInit:
		n.listed.Write(0, int(n.sweep.Q()), 0)
		if n.clearStep() {
			n.state.Set(nruIdle)
		}

	case nruIdle:
		op, y := n.nextEvent(false)
		switch {
		case op != evNone:
			served = op
			n.startRMW(op, y)
		case n.clearing.Q():
			if n.clearStep() {
				n.clearing.Set(false)
			}
		case n.Now() >= n.clearAt.Q():
			n.clearing.Set(true)
		case !n.offerValid.Q() && !n.idleScan.Q():
			// Not in the cycle the offer is taken: the take is served first.
			h := n.hand.Q()
			n.listed.Read(0, int(h/wordBits))
			n.ref.Read(0, int(h/wordBits))
			n.state.Set(nruScan)
		default:
			if op, y := n.nextEvent(true); op != evNone {
				served = op
				n.startRMW(op, y)
			} else {
				n.SleepUntil(n.clearAt.Q())
			}
		}

	case nruRMW:
		switch n.op.Q() {
		case evTake:
			n.listed.Write(0, word, n.listed.RData(0)&^bit)
		case evMap:
			n.listed.Write(0, word, n.listed.RData(0)|bit)
			n.ref.Write(0, word, n.ref.RData(0)|bit)
			n.idleScan.Set(false)
		case evTouch:
			n.ref.Write(0, word, n.ref.RData(0)|bit)
			if offerValid && n.offer.Q() == x {
				offerValid = false
			}
		}
		n.state.Set(nruIdle)

	case nruScan:
		h := n.hand.Q()
		l, r := n.listed.RData(0), n.ref.RData(0)
		from := ^uint64(0) << (h % wordBits)
		candidates := l &^ r & from
		if n.misses.Q() >= n.words {
			candidates = l & from
		}
		if candidates != 0 {
			pick := h - h%wordBits + uint64(bits.TrailingZeros64(candidates))
			n.offer.Set(pick)
			offerValid = true
			n.hand.Set(n.wrap(pick + 1))
			n.misses.Set(0)
		} else {
			n.hand.Set(n.wrap(h - h%wordBits + wordBits))
			n.misses.Set(n.misses.Q() + 1)
			if n.misses.Q()+1 >= 2*n.words {
				n.idleScan.Set(true)
			}
		}
		n.state.Set(nruIdle)
	}
	if offerValid != n.offerValid.Q() {
		n.offerValid.Set(offerValid)
	}
	n.step(served)
}

// clearStep clears the referenced word at the sweep pointer and reports
// the last one; then the next clear is due NRUClearCycles later and the
// hand starts a new sweep.
func (n *NRUClock) clearStep() bool {
	w := n.sweep.Q()
	n.ref.Write(0, int(w), 0)
	if w+1 < n.words {
		n.sweep.Set(w + 1)
		return false
	}
	n.sweep.Set(0)
	n.misses.Set(0)
	n.clearAt.Set(n.Now() + n.period)
	return true
}

// startRMW reads the words event op on frame-group y changes.
func (n *NRUClock) startRMW(op uint8, y uint64) {
	n.listed.Read(0, int(y/wordBits))
	n.ref.Read(0, int(y/wordBits))
	n.op.Set(op)
	n.cur.Set(y)
	n.state.Set(nruRMW)
}

// wrap returns the hand position p, or 0 past the last frame-group.
func (n *NRUClock) wrap(p uint64) uint64 {
	if p >= n.nfg {
		return 0
	}
	return p
}
