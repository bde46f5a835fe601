package rtl

import (
	"fmt"
	"unsafe"
)

// SRAMConfig describes an SRAM macro.
type SRAMConfig struct {
	Depth       int // words
	Width       int // bits per word; T must hold them (e.g. [4]uint64 for 256)
	Ports       int // read/write ports; each does one access per cycle
	ReadLatency int // cycles from a read to its data; 1 is a registered output
}

// SRAM is an on-chip memory macro owned by one block. Each port performs at
// most one read or one write per cycle. A read issued in cycle c returns the
// word as it was at the start of cycle c (read-first) on RData from cycle
// c+ReadLatency on, and RData holds it until the next read lands. Writes take
// effect at the clock edge. Contents are not cleared by reset.
//
// Reads and Writes count accesses for activity and energy reports.
type SRAM[T comparable] struct {
	owner *Base
	sim   *Sim
	name  string
	cfg   SRAMConfig
	mem   []T
	ports []sramPort[T]
	dirty bool

	Reads, Writes uint64
}

// sramPort is a port's access state. Its reads sit in a ring: the read
// that landed last, whose word is RData, in slot out, and the reads in
// flight, oldest first, in the n slots from head on. A port does one
// access per cycle, so ReadLatency+1 slots hold them; a port read more
// often (a modeling error that checked mode reports) grows its ring.
type sramPort[T comparable] struct {
	usedAt uint64 // cycle+1 of the last access, 0 if none
	reads  []sramRead[T]
	out    int
	head   int
	n      int
	outAt  uint64 // cycle at which out landed (0: no read yet; a read lands at cycle 1 at the earliest)
	write  bool
	waddr  int
	wdata  T
}

type sramRead[T comparable] struct {
	due  uint64
	data T
}

// reset empties the port's ring: slot 0 stands for the zero word that
// RData shows before the first read lands.
func (p *sramPort[T]) reset() {
	clear(p.reads)
	p.out, p.head, p.n = 0, 1, 0
}

// slot is the ring's slot i places after slot j.
func (p *sramPort[T]) slot(j, i int) int {
	if j += i; j >= len(p.reads) {
		j -= len(p.reads)
	}
	return j
}

// grow doubles the ring, keeping the landed read and those in flight.
func (p *sramPort[T]) grow() {
	reads := make([]sramRead[T], 2*len(p.reads))
	reads[0] = p.reads[p.out]
	for i := range p.n {
		reads[1+i] = p.reads[p.slot(p.head, i)]
	}
	p.reads, p.out, p.head = reads, 0, 1
}

// NewSRAM makes an SRAM macro owned by block b.
func NewSRAM[T comparable](b *Base, name string, cfg SRAMConfig) *SRAM[T] {
	if cfg.ReadLatency == 0 {
		cfg.ReadLatency = 1
	}
	if cfg.Ports == 0 {
		cfg.Ports = 1
	}
	switch {
	case cfg.Depth < 1:
		panic(fmt.Sprintf("rtl: SRAM %s depth %d must be positive", b.Child(name), cfg.Depth))
	case cfg.Width < 1 || cfg.Width > 8*int(unsafe.Sizeof(*new(T))):
		panic(fmt.Sprintf("rtl: SRAM %s width %d does not fit its word type %T", b.Child(name), cfg.Width, *new(T)))
	case cfg.Ports < 1 || cfg.ReadLatency < 1:
		panic(fmt.Sprintf("rtl: SRAM %s needs at least one port and a read latency of at least 1", b.Child(name)))
	}
	m := &SRAM[T]{owner: b, sim: b.sim, name: b.Child(name), cfg: cfg, mem: make([]T, cfg.Depth), ports: make([]sramPort[T], cfg.Ports)}
	for i := range m.ports {
		m.ports[i].reads = make([]sramRead[T], cfg.ReadLatency+1)
		m.ports[i].reset()
	}
	b.sim.srams = append(b.sim.srams, m)
	return m
}

// Config returns the macro's geometry.
func (m *SRAM[T]) Config() SRAMConfig { return m.cfg }

// Name is the macro's hierarchical name.
func (m *SRAM[T]) Name() string { return m.name }

func (m *SRAM[T]) access(port, addr int, what string) *sramPort[T] {
	s := m.sim
	p := &m.ports[port]
	if s.checked {
		switch {
		case s.phase != phaseEval || s.cur != m.owner:
			s.fail(fmt.Errorf("SRAM %s %s by %s during %s in cycle %d: only its owner accesses it, in Eval", m.name, what, s.who(), s.phase, s.cycle))
		case p.usedAt == s.cycle+1:
			s.fail(fmt.Errorf("SRAM %s port %d accessed twice in cycle %d", m.name, port, s.cycle))
		case addr < 0 || addr >= m.cfg.Depth:
			s.fail(fmt.Errorf("SRAM %s %s address %d outside 0..%d in cycle %d", m.name, what, addr, m.cfg.Depth-1, s.cycle))
			return nil
		}
	}
	p.usedAt = s.cycle + 1
	m.owner.wrote = true
	return p
}

// Read starts a read of word addr on a port.
func (m *SRAM[T]) Read(port, addr int) {
	p := m.access(port, addr, "read")
	if p == nil {
		return
	}
	m.settle(p)
	if p.n == len(p.reads)-1 {
		p.grow()
	}
	due := m.sim.cycle + uint64(m.cfg.ReadLatency)
	p.reads[p.slot(p.head, p.n)] = sramRead[T]{due: due, data: m.mem[addr]}
	p.n++
	if due > m.owner.holdUntil {
		m.owner.holdUntil = due
	}
	m.Reads++
}

// Write stores data at word addr at the end of the cycle.
func (m *SRAM[T]) Write(port, addr int, data T) {
	p := m.access(port, addr, "write")
	if p == nil {
		return
	}
	p.write, p.waddr, p.wdata = true, addr, data
	if !m.dirty {
		m.dirty = true
		m.owner.pending = append(m.owner.pending, m)
	}
	m.Writes++
}

// RData is the port's registered read data: the word of the most recent
// read that has landed.
func (m *SRAM[T]) RData(port int) T {
	p := &m.ports[port]
	m.settle(p)
	return p.reads[p.out].data
}

// RValid reports whether a read lands on the port in this cycle.
func (m *SRAM[T]) RValid(port int) bool {
	p := &m.ports[port]
	m.settle(p)
	return p.outAt == m.sim.cycle && p.outAt != 0
}

// settle lands the reads whose latency has elapsed: the last of them
// becomes the port's output.
func (m *SRAM[T]) settle(p *sramPort[T]) {
	now := m.sim.cycle
	for p.n > 0 && p.reads[p.head].due <= now {
		p.out, p.outAt = p.head, p.reads[p.head].due
		p.head = p.slot(p.head, 1)
		p.n--
	}
}

// commit stores the cycle's writes; the macro counts as one write-back.
func (m *SRAM[T]) commit() uint64 {
	for i := range m.ports {
		p := &m.ports[i]
		if p.write {
			m.mem[p.waddr] = p.wdata
			p.write = false
		}
	}
	m.dirty = false
	return 1
}

func (m *SRAM[T]) resetValue() {
	for i := range m.ports {
		p := &m.ports[i]
		p.reset()
		p.outAt, p.usedAt, p.write = 0, 0, false
	}
	m.dirty = false
}

// Load writes a word directly, outside the clocked path: a testbench
// backdoor for preloading contents.
func (m *SRAM[T]) Load(addr int, data T) { m.mem[addr] = data }

// Peek reads a word directly, outside the clocked path: a testbench
// backdoor for checking contents.
func (m *SRAM[T]) Peek(addr int) T { return m.mem[addr] }
