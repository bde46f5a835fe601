package evict

import "github.com/uvmmu/uvmmu/rtl"

// LRUList is sequential-local eviction at the UVMMU's migration unit: LRU
// over 64 KB frame-groups (UVMSmart's LRU at 64 KB basic-block
// granularity, UVMMU paper Section II-B; sim/uvm's lru64k mirrors the
// driver version). The LRU order is a doubly linked list kept in two SRAMs
// indexed by PFgN, with the head (least recently used) and tail in
// registers, and a membership bitmap:
//
//	prev, next: NFG words of clog2(NFG+1) bits (NFG marks the list end)
//	member:     ceil(NFG/64) words of 64 bits
//
// A map puts the frame-group at the tail (moving it there if it is
// already listed); a walk touch moves a listed frame-group to the tail;
// the candidate is the head, and a taken candidate leaves the list until
// its next map. One event takes two cycles (read the links, unlink) or
// three (and insert at the tail).
type LRUList struct {
	rtl.Base
	Ports
	monitor

	nfg         uint64
	end         uint64 // link value marking the list's end: NFG
	prev, next  *rtl.SRAM[uint64]
	member      *rtl.SRAM[uint64]
	head, tail  *rtl.Reg[uint64]
	state       *rtl.Reg[uint8]
	op          *rtl.Reg[uint8]
	cur         *rtl.Reg[uint64] // frame-group of the event in flight
	curMember   *rtl.Reg[uint64] // its membership word with its bit set, for the insert
	sweep       *rtl.Reg[uint64] // membership word cleared by the init sweep
	storageBits int
}

// LRUList FSM states.
const (
	slInit   uint8 = iota // clearing the membership bitmap, one word per cycle
	slIdle                // taking the next event, reading its links
	slUnlink              // links arrived: unlink if listed
	slInsert              // link at the tail
)

// seqLocalLayout is the SRAMs New builds and the block's registers.
func seqLocalLayout(nfg uint64) layout {
	lb := linkBits(nfg)
	return layout{
		srams: []rtl.SRAMConfig{
			{Depth: int(nfg), Width: lb, Ports: 1, ReadLatency: 1}, // prev
			{Depth: int(nfg), Width: lb, Ports: 2, ReadLatency: 1}, // next
			{Depth: bitmapWords(nfg), Width: wordBits, Ports: 1, ReadLatency: 1},
		},
		regs: 2*lb + 2 + 2 + lb + wordBits + lb + monitorRegBits(lb),
	}
}

func newSeqLocal(s *rtl.Sim, path string, cfg Config, p Ports) *LRUList {
	l := &LRUList{Ports: p, nfg: cfg.NFG, end: cfg.NFG}
	s.Add(l, path)
	b := &l.Base
	lay := seqLocalLayout(cfg.NFG)
	l.storageBits = lay.bits()
	l.prev = rtl.NewSRAM[uint64](b, "prev", lay.srams[0])
	l.next = rtl.NewSRAM[uint64](b, "next", lay.srams[1])
	l.member = rtl.NewSRAM[uint64](b, "member", lay.srams[2])
	lb := linkBits(cfg.NFG)
	l.head = rtl.NewReg[uint64](b, "head", lb, l.end)
	l.tail = rtl.NewReg[uint64](b, "tail", lb, l.end)
	l.state = rtl.NewReg[uint8](b, "state", 2, slInit)
	l.op = rtl.NewReg[uint8](b, "op", 2, evNone)
	l.cur = rtl.NewReg[uint64](b, "cur", lb, 0)
	l.curMember = rtl.NewReg[uint64](b, "cur_member", wordBits, 0)
	l.sweep = rtl.NewReg[uint64](b, "sweep", lb, 0)
	l.monitor = newMonitor(b, p, cfg)
	return l
}

// StorageBits is the SRAM and register storage.
func (l *LRUList) StorageBits() int { return l.storageBits }

// Drive offers the least recently used frame-group.
func (l *LRUList) Drive() {
	l.Victim.Valid.Set(l.state.Q() != slInit && l.head.Q() != l.end && !l.taken.Q())
	l.Victim.Bits.Set(l.head.Q())
}

// Eval advances the list FSM by one step.
func (l *LRUList) Eval() {
	served := evNone
	x := l.cur.Q()
	word, bit := int(x/wordBits), uint64(1)<<(x%wordBits)
	switch l.state.Q() {
	case slInit:
		w := l.sweep.Q()
		l.member.Write(0, int(w), 0)
		if w+1 == uint64(bitmapWords(l.nfg)) {
			l.state.Set(slIdle)
		} else {
			l.sweep.Set(w + 1)
		}

	case slIdle:
		op, y := l.nextEvent(true)
		if op == evNone {
			break
		}
		served = op
		l.prev.Read(0, int(y))
		l.next.Read(0, int(y))
		l.member.Read(0, int(y/wordBits))
		l.op.Set(op)
		l.cur.Set(y)
		l.state.Set(slUnlink)

	case slUnlink:
		m := l.member.RData(0)
		listed := m&bit != 0
		op := l.op.Q()
		if !listed && op != evMap {
			// A touch or take of a frame-group not listed (taken, in
			// flight, or never mapped): nothing to do.
			l.state.Set(slIdle)
			break
		}
		head, tail := l.head.Q(), l.tail.Q()
		if listed {
			p, n := l.prev.RData(0), l.next.RData(0)
			if p == l.end {
				head = n
			} else {
				l.next.Write(0, int(p), n)
			}
			if n == l.end {
				tail = p
			} else {
				l.prev.Write(0, int(n), p)
			}
		}
		if op == evTake {
			l.member.Write(0, word, m&^bit)
			l.state.Set(slIdle)
		} else {
			l.curMember.Set(m | bit)
			l.state.Set(slInsert)
		}
		if head != l.head.Q() {
			l.head.Set(head)
		}
		if tail != l.tail.Q() {
			l.tail.Set(tail)
		}

	case slInsert:
		t := l.tail.Q()
		if t == l.end {
			l.head.Set(x)
		} else {
			l.next.Write(0, int(t), x)
		}
		l.prev.Write(0, int(x), t)
		l.next.Write(1, int(x), l.end)
		l.member.Write(0, word, l.curMember.Q())
		l.tail.Set(x)
		l.state.Set(slIdle)
	}
	l.step(served)
}
