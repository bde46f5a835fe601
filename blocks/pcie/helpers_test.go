package pcie

import (
	"github.com/uvmmu/uvmmu/rtl"
)

// offer is one packet a test client sends, not before cycle At.
type offer struct {
	At     uint64
	Packet Packet
}

// client offers its packets in order on one port, each as soon as the
// previous one was taken and its own offer time has come.
type client struct {
	rtl.Base
	out    *rtl.Decoupled[Packet]
	offers []offer
	sentAt []uint64 // cycle each offer was accepted

	idx *rtl.Reg[uint32]
}

func newClient(s *rtl.Sim, path string, out *rtl.Decoupled[Packet], offers []offer) *client {
	c := &client{out: out, offers: offers, sentAt: make([]uint64, 0, len(offers))}
	s.Add(c, path)
	c.idx = rtl.NewReg[uint32](&c.Base, "idx", 32, 0)
	out.Producer(&c.Base)
	return c
}

func (c *client) Drive() {
	i := int(c.idx.Q())
	ok := i < len(c.offers) && c.offers[i].At <= c.Now()
	c.out.Valid.Set(ok)
	if ok {
		c.out.Bits.Set(c.offers[i].Packet)
	}
}

func (c *client) Eval() {
	i := int(c.idx.Q())
	switch {
	case c.out.Fire():
		c.sentAt = append(c.sentAt, c.Now())
		c.idx.Set(uint32(i + 1))
	case i < len(c.offers) && c.offers[i].At > c.Now():
		c.SleepUntil(c.offers[i].At)
	default:
		c.Sleep()
	}
}

// arrival is one packet as a receiver saw it.
type arrival struct {
	Cycle  uint64
	Packet Packet
}

// receiver takes every packet on every output of a direction the moment it
// is valid and logs it.
type receiver struct {
	rtl.Base
	in        []*rtl.Decoupled[Packet]
	got       []arrival
	misrouted int // packets seen on an output other than their Source's
}

func newReceiver(s *rtl.Sim, path string, in []*rtl.Decoupled[Packet]) *receiver {
	r := &receiver{in: in}
	s.Add(r, path)
	for _, p := range in {
		p.Consumer(&r.Base)
	}
	return r
}

func (r *receiver) Drive() {
	for _, p := range r.in {
		p.Ready.Set(true)
	}
}

func (r *receiver) Eval() {
	fired := false
	for i, p := range r.in {
		if p.Fire() {
			fired = true
			got := p.Bits.Get()
			if int(got.Source) != i {
				r.misrouted++
			}
			r.got = append(r.got, arrival{Cycle: r.Now(), Packet: got})
		}
	}
	if !fired {
		r.Sleep()
	}
}

// bench is a link with a client on every input port and a receiver on each
// output.
type bench struct {
	sim      *rtl.Sim
	link     *Link
	h2d, d2h []*client
	atDevice *receiver
	atHost   *receiver
}

func newBench(cfg Config, skip bool, h2d, d2h [][]offer) (*bench, error) {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	l, err := New(s, "pcie", cfg, NewPorts(s, "pcie", cfg))
	if err != nil {
		return nil, err
	}
	b := &bench{sim: s, link: l}
	for i := range cfg.Ports {
		var ho, do []offer
		if i < len(h2d) {
			ho = h2d[i]
		}
		if i < len(d2h) {
			do = d2h[i]
		}
		b.h2d = append(b.h2d, newClient(s, "host.client"+string(rune('0'+i)), l.H2D.In[i], ho))
		b.d2h = append(b.d2h, newClient(s, "gpu.client"+string(rune('0'+i)), l.D2H.In[i], do))
	}
	b.atDevice = newReceiver(s, "gpu.rx", l.H2D.Out)
	b.atHost = newReceiver(s, "host.rx", l.D2H.Out)
	s.Reset()
	return b, nil
}
