package ipgt

import "github.com/uvmmu/uvmmu/rtl"

// Mux shares the GPU-DRAM port that holds the IPgT between the
// Destination Allocator and the migration unit, which reads a victim's
// entry before a swap (docs/da.md: the consumer reads the entry of an S=1
// destination). Each requester has a one-request holding register (its
// ready is high while the register is empty); the DA's register wins when
// both are full. Reads answer in order, so a FIFO of requester bits routes
// each response, which is registered once before it is shown.
type Mux struct {
	rtl.Base

	in  [2]MemPorts // 0: DA, 1: migration unit
	out MemPorts

	held      [2]*rtl.Reg[bool]
	heldWrite [2]*rtl.Reg[bool]
	heldAddr  [2]*rtl.Reg[uint64]
	heldData  [2]*rtl.Reg[uint64]
	order     *rtl.Reg[uint64] // pending reads' requesters, oldest in bit 0
	pending   *rtl.Reg[uint8]  // reads outstanding
	respValid [2]*rtl.Reg[bool]
	respData  *rtl.Reg[uint64]
}

// muxMaxReads bounds outstanding reads to the width of the order register.
const muxMaxReads = 64

// NewMux adds a mux to s under path between the DA's port da, the
// migration unit's port unit and the memory port mem.
func NewMux(s *rtl.Sim, path string, da, unit, mem MemPorts, addrBits int) *Mux {
	m := &Mux{in: [2]MemPorts{da, unit}, out: mem}
	s.Add(m, path)
	b := &m.Base
	for i := range m.in {
		m.held[i] = rtl.NewFlag(b, "held"+string(rune('0'+i)), false)
		m.heldWrite[i] = rtl.NewFlag(b, "held_write"+string(rune('0'+i)), false)
		m.heldAddr[i] = rtl.NewReg[uint64](b, "held_addr"+string(rune('0'+i)), addrBits, 0)
		m.heldData[i] = rtl.NewReg[uint64](b, "held_data"+string(rune('0'+i)), 64, 0)
		m.respValid[i] = rtl.NewFlag(b, "resp_valid"+string(rune('0'+i)), false)
		b.Listen(m.in[i].ReqValid, m.in[i].ReqWrite, m.in[i].ReqAddr, m.in[i].ReqWData)
	}
	m.order = rtl.NewReg[uint64](b, "order", muxMaxReads, 0)
	m.pending = rtl.NewReg[uint8](b, "pending", 7, 0)
	m.respData = rtl.NewReg[uint64](b, "resp_data", 64, 0)
	b.Listen(mem.ReqReady, mem.RespValid, mem.RespData)
	return m
}

// granted is the holding register offered downstream: the DA's first.
func (m *Mux) granted() int {
	switch {
	case m.held[0].Q():
		return 0
	case m.held[1].Q():
		return 1
	}
	return -1
}

// Drive opens each requester's port while its holding register is empty,
// shows each its registered response, and offers the granted request.
func (m *Mux) Drive() {
	room := m.pending.Q() < muxMaxReads-2
	for i := range m.in {
		m.in[i].ReqReady.Set(!m.held[i].Q() && room)
		m.in[i].RespValid.Set(m.respValid[i].Q())
		m.in[i].RespData.Set(m.respData.Q())
	}
	g := m.granted()
	m.out.ReqValid.Set(g >= 0)
	if g >= 0 {
		m.out.ReqWrite.Set(m.heldWrite[g].Q())
		m.out.ReqAddr.Set(m.heldAddr[g].Q())
		m.out.ReqWData.Set(m.heldData[g].Q())
	}
}

// Eval routes a memory response to the oldest read's requester, retires
// the request memory took, and holds each requester's new request.
func (m *Mux) Eval() {
	order, pending := m.order.Q(), m.pending.Q()
	active := false
	// A response from memory goes to the oldest pending read's requester.
	for i := range m.in {
		want := m.out.RespValid.Get() && int(order&1) == i && pending > 0
		if want != m.respValid[i].Q() {
			m.respValid[i].Set(want)
			active = true
		}
	}
	if m.out.RespValid.Get() && pending > 0 {
		m.respData.Set(m.out.RespData.Get())
		order >>= 1
		pending--
		active = true
	}
	g := m.granted()
	if g >= 0 && m.out.ReqValid.Get() && m.out.ReqReady.Get() {
		m.held[g].Set(false)
		if !m.heldWrite[g].Q() {
			order |= uint64(g) << pending
			pending++
		}
		active = true
	}
	for i := range m.in {
		p := m.in[i]
		if p.ReqValid.Get() && !m.held[i].Q() && m.pending.Q() < muxMaxReads-2 {
			m.held[i].Set(true)
			m.heldWrite[i].Set(p.ReqWrite.Get())
			m.heldAddr[i].Set(p.ReqAddr.Get())
			m.heldData[i].Set(p.ReqWData.Get())
			active = true
		}
	}
	if order != m.order.Q() {
		m.order.Set(order)
	}
	if pending != m.pending.Q() {
		m.pending.Set(pending)
	}
	if !active && g < 0 && pending == 0 {
		m.Sleep()
	}
}
