package incpage

import (
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// FillPort installs a 2 MB translation in an L1 TLB: Bits is the 2 MB
// page number, PTE its entry and Spans its record, one packed Span per
// wire (0: no span).
type FillPort struct {
	*rtl.Decoupled[uint64]
	PTE   *rtl.Wire[pte.PTE]
	Spans []*rtl.Wire[uint64]
}

// NewFillPort makes a fill port of k span wires under path.
func NewFillPort(s *rtl.Sim, path string, k int) FillPort {
	p := FillPort{
		Decoupled: rtl.NewDecoupled[uint64](s, path, pte.VPNBits),
		PTE:       rtl.NewWire[pte.PTE](s, path+".pte", 64),
	}
	for i := 0; i < k; i++ {
		p.Spans = append(p.Spans, rtl.NewWire[uint64](s, path+".span"+string(rune('0'+i)), SpanBits))
	}
	return p
}

// Consumer declares b as the port's consumer.
func (p FillPort) Consumer(b *rtl.Base) {
	p.Decoupled.Consumer(b)
	b.Listen(p.PTE)
	for _, w := range p.Spans {
		b.Listen(w)
	}
}

// Producer declares b as the port's producer.
func (p FillPort) Producer(b *rtl.Base) { p.Decoupled.Producer(b) }

// Landed is a completed migration the GMMU broadcasts to every L1 TLB:
// units Span of 2 MB page Page are now in GPU memory.
type Landed struct {
	Page uint64
	Span Span
}

// LandedBits is Landed's packed width: a 27-bit page number (48-bit
// addresses) and a span.
const LandedBits = 48 - PageShift + SpanBits

// Pack lays the broadcast out as {Page, Span}.
func (l Landed) Pack() uint64 { return l.Page<<SpanBits | l.Span.Pack() }

// Broadcast is a valid/bits pair with one driver (the GMMU) and every L1
// TLB listening; the listeners are always ready, so it has no Ready.
type Broadcast struct {
	Valid *rtl.Wire[bool]
	Bits  *rtl.Wire[Landed]
}

// NewBroadcast makes the broadcast wires under path.
func NewBroadcast(s *rtl.Sim, path string) Broadcast {
	return Broadcast{Valid: rtl.NewBit(s, path+".valid"), Bits: rtl.NewWireOf[Landed](s, path+".bits", LandedBits)}
}

// MigRequest is a migration request the GMMU sends to the host: units
// First..First+Count-1 of 2 MB page Page, under MRQ entry Tag.
type MigRequest struct {
	Tag   uint16
	Page  uint64
	First uint16
	Count uint16
}

// MigRequestBits is MigRequest's packed width.
const MigRequestBits = mrqTagBits + (48 - PageShift) + 2*unitFieldBits

// mrqTagBits is the MRQ index width.
const mrqTagBits = 8

// Pack lays the request out as {Count, First, Page, Tag}.
func (m MigRequest) Pack() uint64 {
	const pageLSB = mrqTagBits
	const firstLSB = pageLSB + 48 - PageShift
	return uint64(m.Tag) | m.Page<<pageLSB | uint64(m.First)<<firstLSB | uint64(m.Count)<<(firstLSB+unitFieldBits)
}
