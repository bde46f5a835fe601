package tlb

import (
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// Lookup asks for the translation of a VPN on behalf of a requester.
type Lookup struct {
	VPN       uint64 // pte.VPNBits wide
	Requester uint16 // returned unchanged in the response
	// Write marks a store: it is returned in the response, and a hit on a
	// read-only entry answers Miss.
	Write bool
}

// LookupBits is the packed width of a Lookup.
const LookupBits = pte.RequestBits

// Pack lays the lookup out as a translation request (pte.PackRequest):
// {Write, Requester, VPN}.
func (l Lookup) Pack() uint64 { return pte.PackRequest(l.VPN, l.Requester, l.Write) }

// UnpackLookup is the inverse of Lookup.Pack.
func UnpackLookup(p uint64) Lookup {
	vpn, who, write := pte.UnpackRequest(p)
	return Lookup{VPN: vpn, Requester: who, Write: write}
}

// Status is a lookup's outcome.
type Status uint8

const (
	// Miss: no entry for the VPN, or a write hit a read-only entry; the
	// requester goes to the next level.
	Miss Status = iota
	// Hit: Resp.PTE carries the entry.
	Hit
	// Refused: the VPN missed while Frozen was high; the requester retries
	// once the TLB is unfrozen.
	Refused
)

func (s Status) String() string { return [...]string{"miss", "hit", "refused"}[s] }

// Response is a lookup's result, without the PTE (which rides on its own
// wire, Resp.PTE, because a port payload is at most 64 bits).
type Response struct {
	VPN       uint64
	Requester uint16
	Write     bool // the lookup's
	Status    Status
}

// ResponseBits is the packed width of a Response.
const ResponseBits = LookupBits + 2

// Pack lays the response out as {Status, Write, Requester, VPN}.
func (r Response) Pack() uint64 {
	return pte.PackRequest(r.VPN, r.Requester, r.Write) | uint64(r.Status)<<LookupBits
}

// ResponsePort is a ready/valid response with the PTE of a hit on a
// parallel 64-bit wire.
type ResponsePort struct {
	*rtl.Decoupled[Response]
	PTE *rtl.Wire[pte.PTE]
}

// Consumer declares b as the port's consumer.
func (p ResponsePort) Consumer(b *rtl.Base) {
	p.Decoupled.Consumer(b)
	b.Listen(p.PTE)
}

// FillPort installs a translation: Bits is the VPN, PTE its entry.
type FillPort struct {
	*rtl.Decoupled[uint64]
	PTE *rtl.Wire[pte.PTE]
}

// Consumer declares b as the port's consumer.
func (p FillPort) Consumer(b *rtl.Base) {
	p.Decoupled.Consumer(b)
	b.Listen(p.PTE)
}

// Invalidate removes the entry for VPN, or every entry when All is set.
type Invalidate struct {
	VPN uint64
	All bool
}

// InvalidateBits is the packed width of an Invalidate.
const InvalidateBits = pte.VPNBits + 1

// Pack lays the request out as {All, VPN}.
func (v Invalidate) Pack() uint64 {
	p := v.VPN
	if v.All {
		p |= 1 << pte.VPNBits
	}
	return p
}

// Ports are the TLB's wires.
type Ports struct {
	Req      *rtl.Decoupled[Lookup]     // lookups in, one per cycle
	Resp     ResponsePort               // results out, HitLatency cycles later
	Fill     FillPort                   // translations in, one per cycle, always ready
	Inval    *rtl.Decoupled[Invalidate] // shootdowns in
	InvalAck *rtl.Decoupled[Invalidate] // one per shootdown, once the entry is gone
	Frozen   *rtl.Wire[bool]            // in: while high, a missing lookup is Refused
}

// NewPorts makes the wires under path (path.req, path.resp, ...).
func NewPorts(s *rtl.Sim, path string) Ports {
	return Ports{
		Req:      rtl.NewDecoupledOf[Lookup](s, path+".req", LookupBits),
		Resp:     ResponsePort{rtl.NewDecoupledOf[Response](s, path+".resp", ResponseBits), rtl.NewWire[pte.PTE](s, path+".resp.pte", 64)},
		Fill:     FillPort{rtl.NewDecoupled[uint64](s, path+".fill", pte.VPNBits), rtl.NewWire[pte.PTE](s, path+".fill.pte", 64)},
		Inval:    rtl.NewDecoupledOf[Invalidate](s, path+".inval", InvalidateBits),
		InvalAck: rtl.NewDecoupledOf[Invalidate](s, path+".inval_ack", InvalidateBits),
		Frozen:   rtl.NewBit(s, path+".frozen"),
	}
}
