package pme

import (
	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/rtl"
)

// HostDMA is the host end of the engine's transfers: host memory's DMA
// responder. It takes the engine's packets from the device-to-host
// direction in arrival order: a page read is answered with the page's data,
// a victim page write is absorbed, and a flush is answered with a short
// acknowledgement, which therefore leaves after every earlier write has
// arrived. Answers wait in a queue of ReadTags entries, one cycle plus
// HostLatency after their request arrived.
type HostDMA struct {
	rtl.Base
	HostPorts

	cfg Config

	answers *rtl.Ring[pcie.Packet] // each with the cycle it is due
	writes  *rtl.Reg[uint64]       // victim pages absorbed
}

// HostPorts are the responder's ports, both the link's: it owns none.
type HostPorts struct {
	In  *rtl.Decoupled[pcie.Packet] // the engine's packets, from the device-to-host output
	Out *rtl.Decoupled[pcie.Packet] // answers, to a host-to-device input port
}

// NewHostDMA builds the responder under path on ports p.
func NewHostDMA(s *rtl.Sim, path string, cfg Config, p HostPorts) (*HostDMA, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &HostDMA{HostPorts: p, cfg: cfg}
	s.Add(h, path)
	b := &h.Base
	h.answers = rtl.NewRingOf[pcie.Packet](b, "answers", cfg.ReadTags, pcie.PacketBits, true)
	h.writes = rtl.NewReg[uint64](b, "writes", 64, 0)
	p.In.Consumer(b)
	p.Out.Producer(b)
	return h, nil
}

// Drive presents the oldest answer once due.
func (h *HostDMA) Drive() {
	h.In.Ready.Set(!h.answers.Full())
	ok := h.answers.Len() > 0 && h.answers.HeadDue() <= h.Now()
	h.Out.Valid.Set(ok)
	if ok {
		h.Out.Bits.Set(h.answers.Head())
	}
}

// Eval takes one request and sends one answer per cycle.
func (h *HostDMA) Eval() {
	now := h.Now()
	push, pop := false, h.Out.Fire()
	var answer pcie.Packet
	if h.In.Fire() {
		p := h.In.Bits.Get()
		kind, _, _ := splitTag(p.Tag)
		switch kind {
		case kindWrite:
			h.writes.Set(h.writes.Q() + 1)
		default:
			push = true
			answer = pcie.Packet{Tag: p.Tag, Bytes: uint16(h.cfg.RequestBytes)}
			if kind == kindRead {
				answer.Bytes = uint16(h.cfg.PageBytes)
			}
		}
	}
	h.answers.Update(push, answer, now+1+uint64(h.cfg.HostLatency), pop)
	if !push && !pop && !h.In.Fire() {
		if h.answers.Len() > 0 && h.answers.HeadDue() > now {
			h.SleepUntil(h.answers.HeadDue())
		} else {
			h.Sleep()
		}
	}
}

// Writes is the number of victim pages the host has absorbed, read between
// cycles.
func (h *HostDMA) Writes() uint64 { return h.writes.Q() }
