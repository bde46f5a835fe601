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

	In  *rtl.Decoupled[pcie.Packet] // the engine's packets, from the device-to-host output
	Out *rtl.Decoupled[pcie.Packet] // answers, to a host-to-device input port

	cfg   Config
	depth uint32

	queue  *rtl.Vec[pcie.Packet]
	due    *rtl.Vec[uint64]
	head   *rtl.Reg[uint32]
	tail   *rtl.Reg[uint32]
	count  *rtl.Reg[uint32]
	writes *rtl.Reg[uint64] // victim pages absorbed
}

// NewHostDMA builds the responder under path between in and out.
func NewHostDMA(s *rtl.Sim, path string, cfg Config, in, out *rtl.Decoupled[pcie.Packet]) (*HostDMA, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &HostDMA{In: in, Out: out, cfg: cfg, depth: uint32(cfg.ReadTags)}
	s.Add(h, path)
	b := &h.Base
	h.queue = rtl.NewVecOf(b, "queue", cfg.ReadTags, pcie.PacketBits, pcie.Packet{})
	h.due = rtl.NewVec[uint64](b, "due", cfg.ReadTags, 64, 0)
	h.head = rtl.NewReg[uint32](b, "head", 13, 0)
	h.tail = rtl.NewReg[uint32](b, "tail", 13, 0)
	h.count = rtl.NewReg[uint32](b, "count", 13, 0)
	h.writes = rtl.NewReg[uint64](b, "writes", 64, 0)
	in.Consumer(b)
	out.Producer(b)
	return h, nil
}

// Drive presents the oldest answer once due.
func (h *HostDMA) Drive() {
	h.In.Ready.Set(h.count.Q() < h.depth)
	hd := int(h.head.Q())
	ok := h.count.Q() > 0 && h.due.At(hd).Q() <= h.Now()
	h.Out.Valid.Set(ok)
	if ok {
		h.Out.Bits.Set(h.queue.At(hd).Q())
	}
}

// Eval takes one request and sends one answer per cycle.
func (h *HostDMA) Eval() {
	now := h.Now()
	push, pop := false, h.Out.Fire()
	if h.In.Fire() {
		p := h.In.Bits.Get()
		kind, _, _ := splitTag(p.Tag)
		switch kind {
		case kindWrite:
			h.writes.Set(h.writes.Q() + 1)
		default:
			push = true
			answer := pcie.Packet{Tag: p.Tag, Bytes: uint16(h.cfg.RequestBytes)}
			if kind == kindRead {
				answer.Bytes = uint16(h.cfg.PageBytes)
			}
			t := h.tail.Q()
			h.queue.At(int(t)).Set(answer)
			h.due.At(int(t)).Set(now + 1 + uint64(h.cfg.HostLatency))
			h.tail.Set(h.wrap(t + 1))
		}
	}
	if pop {
		h.head.Set(h.wrap(h.head.Q() + 1))
	}
	if push != pop {
		if push {
			h.count.Set(h.count.Q() + 1)
		} else {
			h.count.Set(h.count.Q() - 1)
		}
	}
	if !push && !pop && !h.In.Fire() {
		if hd := int(h.head.Q()); h.count.Q() > 0 && h.due.At(hd).Q() > now {
			h.SleepUntil(h.due.At(hd).Q())
		} else {
			h.Sleep()
		}
	}
}

func (h *HostDMA) wrap(i uint32) uint32 {
	if i == h.depth {
		return 0
	}
	return i
}

// Writes is the number of victim pages the host has absorbed, read between
// cycles.
func (h *HostDMA) Writes() uint64 { return h.writes.Q() }
