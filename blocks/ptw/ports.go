package ptw

import (
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// Walk is a translation request, and the header of its result.
type Walk struct {
	VPN       uint64 // pte.VPNBits wide
	Requester uint16 // returned unchanged with the result
}

// WalkBits is the packed width of a Walk.
const WalkBits = pte.VPNBits + pte.RequesterBits

// Pack lays the walk out as {Requester, VPN}.
func (w Walk) Pack() uint64 { return w.VPN | uint64(w.Requester)<<pte.VPNBits }

// PTEPort is a ready/valid channel whose header rides on Bits and whose
// 64-bit PTE rides on a parallel wire (a port payload is at most 64 bits).
type PTEPort[T comparable] struct {
	*rtl.Decoupled[T]
	PTE *rtl.Wire[pte.PTE]
}

// Consumer declares b as the port's consumer.
func (p PTEPort[T]) Consumer(b *rtl.Base) {
	p.Decoupled.Consumer(b)
	b.Listen(p.PTE)
}
