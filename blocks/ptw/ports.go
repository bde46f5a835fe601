package ptw

import (
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// Walk is a translation request, and the header of its result.
type Walk struct {
	VPN       uint64 // pte.VPNBits wide
	Requester uint16 // returned unchanged with the result
	// Write marks a store, returned unchanged with the result, so that the
	// policy taking a remote result knows whether the access writes
	// (UVMSmart Section III-C: a write migrates the page whatever its
	// access count).
	Write bool
}

// WalkBits is the packed width of a Walk.
const WalkBits = pte.RequestBits

// Pack lays the walk out as a translation request (pte.PackRequest):
// {Write, Requester, VPN}.
func (w Walk) Pack() uint64 { return pte.PackRequest(w.VPN, w.Requester, w.Write) }

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
