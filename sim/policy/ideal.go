package policy

import (
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/system"
)

// Ideal maps every page to GPU memory before the first kernel, so no
// access is ever remote: the upper bound the other policies are normalised
// to. Host phases cost nothing.
type Ideal struct {
	host *hostAck
}

// Name is "ideal".
func (*Ideal) Name() string { return "ideal" }

// Attach loads a local PTE for every page-group, managed or not, in
// frame-groups numbered in address order.
func (p *Ideal) Attach(s *system.System) error {
	frame := uint64(0)
	for _, rs := range [][]system.Range{s.Layout.Device, s.Layout.Managed} {
		for _, r := range rs {
			for g := 0; g < r.Count; g++ {
				if err := s.LoadGroup(r.First+uint64(g), frame, false); err != nil {
					return err
				}
				frame++
			}
		}
	}
	p.host = newHostAck(s)
	return nil
}

// Stats reports no migrations.
func (*Ideal) Stats() system.PolicyStats { return system.PolicyStats{} }

// Check has nothing to check: nothing moves.
func (*Ideal) Check() error { return nil }

// Busy names no units: the ideal policy holds no work.
func (*Ideal) Busy() []string { return nil }

// hostAck finishes every host phase in the cycle after it starts.
type hostAck struct {
	rtl.Base
	host, done *rtl.Decoupled[uint16]
	pending    *rtl.Reg[bool]
	phase      *rtl.Reg[uint16]
}

func newHostAck(s *system.System) *hostAck {
	h := &hostAck{host: s.Dispatcher.Host, done: s.Dispatcher.HostDone}
	s.Sim.Add(h, "host")
	h.pending = rtl.NewFlag(&h.Base, "pending", false)
	h.phase = rtl.NewReg[uint16](&h.Base, "phase", 16, 0)
	h.host.Consumer(&h.Base)
	h.done.Producer(&h.Base)
	return h
}

func (h *hostAck) Drive() {
	h.host.Ready.Set(!h.pending.Q())
	h.done.Valid.Set(h.pending.Q())
	h.done.Bits.Set(h.phase.Q())
}

func (h *hostAck) Eval() {
	switch {
	case h.host.Fire():
		h.pending.Set(true)
		h.phase.Set(h.host.Bits.Get())
	case h.done.Fire():
		h.pending.Set(false)
	}
}
