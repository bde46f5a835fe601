package pcie

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// Direction is one direction of the link: K input ports, each with a
// one-packet input register, a round-robin arbiter that grants one packet
// at a time to the serializer, the serializer's byte budget, and a delay
// line that presents each packet on the output of its port, Out[Source],
// once its last byte has arrived.
//
// Timing of a packet offered on In[i] in cycle c with the wire idle: it is
// latched in cycle c, granted in cycle c+1, occupies the wire for
// k = SerializationCycles(bytes) cycles (c+2 .. c+1+k), and is valid on Out
// from cycle c+1+k+delay. A packet granted in the cycle its predecessor
// finishes starts on the next cycle and inherits the predecessor's unused
// fraction of a cycle's budget, so a back-to-back stream moves exactly
// BandwidthMBps/ClockMHz bytes per cycle on average.
type Direction struct {
	rtl.Base

	// In are the client ports. A packet with Bytes outside
	// 1..MaxPacketBytes is accepted, dropped and recorded (see Err).
	// Out[i] delivers the packets that entered on In[i], with Source set,
	// all outputs together in the order the packets' last bytes arrived.
	// The delay line is one buffer: an output held not ready holds every
	// packet behind its head. Receivers that are always ready see the exact
	// link timing.
	DirectionPorts

	maxBytes  uint16
	bandwidth uint64 // bucket units added per cycle
	byteCost  uint64 // bucket units one byte costs
	delay     uint64
	depth     uint32

	held []*rtl.Reg[Packet] // input registers; Bytes 0 means empty
	next *rtl.Reg[uint16]   // round-robin pointer: the port favoured next

	cur        *rtl.Reg[Packet] // packet on the wire; Bytes 0 means idle
	finishAt   *rtl.Reg[uint64] // cycle in which cur's last byte leaves
	carryAfter *rtl.Reg[uint64] // bucket remainder once cur has left

	line *rtl.Ring[Packet] // delay line: each entry with the cycle it arrives

	errSeen   *rtl.Reg[bool]
	errPacket *rtl.Reg[Packet] // first malformed packet, Source = its port

	packets, bytes, wireCycles *rtl.Reg[uint64]
}

// Stats are a direction's activity counters: packets and bytes granted the
// wire, and the cycles the wire was busy with them.
type Stats struct {
	Packets, Bytes, WireCycles uint64
}

func newDirection(s *rtl.Sim, path string, cfg Config, delay uint64, p DirectionPorts) *Direction {
	d := &Direction{
		DirectionPorts: p,
		maxBytes:       uint16(cfg.MaxPacketBytes),
		bandwidth:      cfg.BandwidthMBps,
		byteCost:       cfg.ClockMHz,
		delay:          delay,
		// At most one packet enters the delay line per cycle, so delay+1
		// entries never hold up an always-ready receiver.
		depth: uint32(delay) + 1,
	}
	s.Add(d, path)
	for i := range cfg.Ports {
		d.held = append(d.held, rtl.NewRegOf(&d.Base, fmt.Sprintf("held%d", i), PacketBits, Packet{}))
		d.In[i].Consumer(&d.Base)
	}
	d.next = rtl.NewReg[uint16](&d.Base, "next", sourceBits+1, 0)
	d.cur = rtl.NewRegOf(&d.Base, "cur", PacketBits, Packet{})
	d.finishAt = rtl.NewReg[uint64](&d.Base, "finish_at", 64, 0)
	d.carryAfter = rtl.NewReg[uint64](&d.Base, "carry_after", 32, 0)
	d.line = rtl.NewRingOf[Packet](&d.Base, "line", int(d.depth), PacketBits, true)
	d.errSeen = rtl.NewFlag(&d.Base, "err_seen", false)
	d.errPacket = rtl.NewRegOf(&d.Base, "err_packet", PacketBits, Packet{})
	d.packets = rtl.NewReg[uint64](&d.Base, "packets", 64, 0)
	d.bytes = rtl.NewReg[uint64](&d.Base, "bytes", 64, 0)
	d.wireCycles = rtl.NewReg[uint64](&d.Base, "wire_cycles", 64, 0)
	for _, o := range d.Out {
		o.Producer(&d.Base)
	}
	return d
}

// finishing reports whether the packet on the wire leaves it this cycle.
func (d *Direction) finishing(now uint64) bool {
	return d.cur.Q().Bytes != 0 && d.finishAt.Q() <= now && !d.line.Full()
}

// winner is the input port granted the wire this cycle, or -1: the first
// occupied input register at or after the round-robin pointer, when the
// wire is free or frees up this cycle.
func (d *Direction) winner(now uint64) int {
	if d.cur.Q().Bytes != 0 && !d.finishing(now) {
		return -1
	}
	k := len(d.held)
	start := int(d.next.Q())
	for n := range k {
		i := start + n
		if i >= k {
			i -= k
		}
		if d.held[i].Q().Bytes != 0 {
			return i
		}
	}
	return -1
}

// Drive offers each port room when its input register is empty or granted,
// and presents the delay line's head on its port's output once it has
// arrived.
func (d *Direction) Drive() {
	now := d.Now()
	w := d.winner(now)
	for i, in := range d.In {
		in.Ready.Set(d.held[i].Q().Bytes == 0 || i == w)
	}
	arrived := d.line.Len() > 0 && d.line.HeadDue() <= now
	p := d.line.Head()
	for i, o := range d.Out {
		mine := arrived && int(p.Source) == i
		o.Valid.Set(mine)
		if mine {
			o.Bits.Set(p)
		}
	}
}

// Eval moves packets: input ports to input registers, the granted register
// to the wire, the finished packet into the delay line, the head out.
func (d *Direction) Eval() {
	now := d.Now()
	w := d.winner(now)
	finishing := d.finishing(now)
	pop := d.line.Len() > 0 && d.Out[d.line.Head().Source].Fire()
	active := finishing || pop || w >= 0

	d.line.Update(finishing, d.cur.Q(), now+d.delay, pop)

	for i, in := range d.In {
		switch {
		case in.Fire():
			active = true
			d.accept(i, in.Bits.Get())
		case i == w:
			d.held[i].Set(Packet{})
		}
	}

	switch {
	case w >= 0:
		d.start(now, d.held[w].Q(), finishing)
		nx := w + 1
		if nx == len(d.held) {
			nx = 0
		}
		d.next.Set(uint16(nx))
	case finishing:
		d.cur.Set(Packet{})
	}

	if !active {
		d.sleep(now)
	}
}

// accept latches a packet from port i, or records it as malformed.
func (d *Direction) accept(i int, p Packet) {
	p.Source = uint8(i)
	if p.Bytes == 0 || p.Bytes > d.maxBytes {
		if !d.errSeen.Q() {
			d.errSeen.Set(true)
			d.errPacket.Set(p)
		}
		d.held[i].Set(Packet{})
		return
	}
	d.held[i].Set(p)
}

// start puts p on the wire. The bucket gains bandwidth units per cycle and
// a byte costs byteCost units; the packet leaves in the first cycle the
// bucket covers it. A packet started back to back inherits the remainder
// its predecessor left; after an idle cycle the bucket starts empty. At
// most one packet starts per cycle, so a remainder is capped below one
// cycle's gain.
func (d *Direction) start(now uint64, p Packet, backToBack bool) {
	var carry uint64
	if backToBack && d.finishAt.Q() == now {
		carry = d.carryAfter.Q()
	}
	need := uint64(p.Bytes) * d.byteCost
	k := uint64(1)
	if need > carry {
		k = max(1, (need-carry+d.bandwidth-1)/d.bandwidth)
	}
	d.cur.Set(p)
	d.finishAt.Set(now + k)
	d.packets.Set(d.packets.Q() + 1)
	d.bytes.Set(d.bytes.Q() + uint64(p.Bytes))
	d.wireCycles.Set(d.wireCycles.Q() + k)
	d.carryAfter.Set(min(carry+k*d.bandwidth-need, d.bandwidth-1))
}

// sleep lets an idle direction skip to its next timed event: the packet on
// the wire finishing or the delay line's head arriving. Anything else
// waits for an input to change.
func (d *Direction) sleep(now uint64) {
	wake := rtl.Never
	if d.cur.Q().Bytes != 0 && d.finishAt.Q() > now {
		wake = d.finishAt.Q()
	}
	if d.line.Len() > 0 {
		if t := d.line.HeadDue(); t > now {
			wake = min(wake, t)
		}
	}
	d.SleepUntil(wake)
}

// Stats reads the activity counters between cycles.
func (d *Direction) Stats() Stats {
	return Stats{Packets: d.packets.Q(), Bytes: d.bytes.Q(), WireCycles: d.wireCycles.Q()}
}

// Err reports the first malformed packet the direction dropped, naming the
// port and the allowed size range. It reads status registers and may be
// called between cycles.
func (d *Direction) Err() error {
	if !d.errSeen.Q() {
		return nil
	}
	p := d.errPacket.Q()
	return fmt.Errorf("pcie: %s port %d sent a packet of %d bytes (tag %#x); Bytes must be in 1..%d",
		d.Path(), p.Source, p.Bytes, p.Tag, d.maxBytes)
}
