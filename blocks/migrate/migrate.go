// Package migrate holds the parts that every migration controller has:
// the UVMMU migration unit (blocks/mu) and the UM driver (sim/umdriver)
// both write PTEs through the GMMU's one update port, shoot pages down in
// every L1 TLB, and read a host phase's data back over the PME before the
// host touches it (SPEC 6.4). Each part is a set of registers in its
// owner's block, created on that block's Base, with the Drive and Eval
// halves its owner calls: the same logic, written once.
package migrate

import (
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
)

// PageShift is the 4 KB page (SPEC 2).
const PageShift = 12

// HostTag marks the PME command of a host read-back; a controller's own
// tags (migration slots, fetch runs, write-backs) are below it.
const HostTag = 1<<16 - 1

// HostPages counts the 4 KB pages a host access touches: the pages of
// every byte range [lo, hi), a page shared by consecutive ranges once.
func HostPages(ranges [][2]uint64) int {
	n := 0
	last := ^uint64(0)
	for _, r := range ranges {
		for p := r[0] >> PageShift; r[1] > r[0] && p <= (r[1]-1)>>PageShift; p++ {
			if p != last {
				n++
				last = p
			}
		}
	}
	return n
}

// PTEWriter arbitrates the GMMU's page-table update port, one write per
// cycle: the PTE of a page that has just landed (held in a register the
// cycle after its PME event) goes first; otherwise the owner's sequencer
// (a victim being unmapped, a cudaMalloc'd page being mapped) writes. The
// update port is always ready, so a landed page's write takes one cycle.
type PTEWriter struct {
	port  ptw.PTEPort[uint64]
	valid *rtl.Reg[bool]
	vpn   *rtl.Reg[uint64]
	pte   *rtl.Reg[pte.PTE]
}

// NewPTEWriter makes the landing register (upd_valid, upd_vpn, upd_pte)
// in block b and declares b the producer of port.
func NewPTEWriter(b *rtl.Base, port ptw.PTEPort[uint64]) *PTEWriter {
	w := &PTEWriter{port: port}
	w.valid = rtl.NewFlag(b, "upd_valid", false)
	w.vpn = rtl.NewReg[uint64](b, "upd_vpn", pte.VPNBits, 0)
	w.pte = rtl.NewReg[pte.PTE](b, "upd_pte", 64, 0)
	port.Producer(b)
	return w
}

// Drive offers the landed page's write, else the sequencer's: when seq is
// set, its VPN and PTE with valid as the valid bit; else nothing.
func (w *PTEWriter) Drive(seq, valid bool, vpn uint64, e pte.PTE) {
	switch {
	case w.valid.Q():
		w.port.Valid.Set(true)
		w.port.Bits.Set(w.vpn.Q())
		w.port.PTE.Set(w.pte.Q())
	case seq:
		w.port.Valid.Set(valid)
		w.port.Bits.Set(vpn)
		w.port.PTE.Set(e)
	default:
		w.port.Valid.Set(false)
	}
}

// Landing reports a landed page's write waiting for the port: the PME's
// event port stays closed meanwhile.
func (w *PTEWriter) Landing() bool { return w.valid.Q() }

// LandingAt reports that the landed page being written is vpn: its PTE in
// the page table is still the old one this cycle.
func (w *PTEWriter) LandingAt(vpn uint64) bool { return w.valid.Q() && w.vpn.Q() == vpn }

// Land holds a landed page's local PTE for the next cycle's write; at most
// once per cycle, never while Landing.
func (w *PTEWriter) Land(vpn uint64, e pte.PTE) {
	w.valid.Set(true)
	w.vpn.Set(vpn)
	w.pte.Set(e)
}

// Retire clears the landing register when its write went out this cycle,
// and reports it.
func (w *PTEWriter) Retire() bool {
	if w.valid.Q() && w.port.Fire() {
		w.valid.Set(false)
		return true
	}
	return false
}

// SequencerWrote reports that the sequencer's write went out this cycle.
func (w *PTEWriter) SequencerWrote() bool { return w.port.Fire() && !w.valid.Q() }

// Written reports any write on the port this cycle.
func (w *PTEWriter) Written() bool { return w.port.Fire() }

// Shootdown sends one page's invalidation to every L1 TLB at once and
// keeps, in the sent mask, the TLBs that have taken it; the page is done
// when every TLB has (and its owner's condition holds), and the mask
// clears for the next page. Acknowledgements are always accepted.
type Shootdown struct {
	inval    []*rtl.Decoupled[tlb.Invalidate]
	invalAck []*rtl.Decoupled[tlb.Invalidate]
	sent     *rtl.Reg[uint64]
	all      uint64
}

// MaxTLBs is the width of the sent mask.
const MaxTLBs = 64

// NewShootdown makes the sent mask in block b and declares b the producer
// of every invalidation port and the consumer of every acknowledgement
// port (at most MaxTLBs of each).
func NewShootdown(b *rtl.Base, inval, invalAck []*rtl.Decoupled[tlb.Invalidate]) *Shootdown {
	d := &Shootdown{inval: inval, invalAck: invalAck, all: uint64(1)<<len(inval) - 1}
	if len(inval) == MaxTLBs {
		d.all = ^uint64(0)
	}
	d.sent = rtl.NewReg[uint64](b, "sent", 64, 0)
	for i := range inval {
		inval[i].Producer(b)
		invalAck[i].Consumer(b)
	}
	return d
}

// Drive offers vpn's invalidation, when active, to every TLB that has not
// taken it.
func (d *Shootdown) Drive(active bool, vpn uint64) {
	sent := d.sent.Q()
	for i, in := range d.inval {
		in.Valid.Set(active && sent&(1<<i) == 0)
		in.Bits.Set(tlb.Invalidate{VPN: vpn})
		d.invalAck[i].Ready.Set(true)
	}
}

// Step records this cycle's takers and reports the page done when every
// TLB has taken it and next allows moving on; the mask then clears.
func (d *Shootdown) Step(next bool) bool {
	sent := d.sent.Q()
	for i, in := range d.inval {
		if in.Fire() {
			sent |= 1 << i
		}
	}
	done := sent == d.all && next
	if done {
		sent = 0
	}
	if sent != d.sent.Q() {
		d.sent.Set(sent)
	}
	return done
}

// Clear empties the mask for a new page list.
func (d *Shootdown) Clear() { d.sent.Set(0) }

// HostReadBack reads a host phase's data back to the host before the host
// touches it: the dispatcher names the phase on Host, the owner hands the
// PME Evict commands of up to pme.MaxPagesLimit pages tagged HostTag
// until the phase's pages are all written back, then answers on HostDone.
type HostReadBack struct {
	host     *rtl.Decoupled[uint16]
	hostDone *rtl.Decoupled[uint16]
	pages    []int // per phase: the pages it reads back (0 for kernels)
	phase    *rtl.Reg[uint16]
	chunk    *rtl.Reg[uint32] // next MaxPagesLimit-page chunk
}

// NewHostReadBack makes the phase and chunk registers in block b and
// declares b the consumer of host and the producer of hostDone.
func NewHostReadBack(b *rtl.Base, host, hostDone *rtl.Decoupled[uint16], pages []int) *HostReadBack {
	h := &HostReadBack{host: host, hostDone: hostDone, pages: pages}
	h.phase = rtl.NewReg[uint16](b, "host_phase", 16, 0)
	h.chunk = rtl.NewReg[uint32](b, "host_chunk", 32, 0)
	host.Consumer(b)
	hostDone.Producer(b)
	return h
}

// Drive opens Host when the owner is ready for a host phase and answers
// on HostDone when it is done.
func (h *HostReadBack) Drive(ready, done bool) {
	h.host.Ready.Set(ready)
	h.hostDone.Valid.Set(done)
	h.hostDone.Bits.Set(h.phase.Q())
}

// Command is the PME command of the next chunk.
func (h *HostReadBack) Command() pme.Command {
	left := h.pages[h.phase.Q()] - int(h.chunk.Q())*pme.MaxPagesLimit
	return pme.Command{Tag: HostTag, Op: pme.Evict, Pages: uint16(min(left, pme.MaxPagesLimit))}
}

// Start takes the host phase that Host transfers this cycle and reports
// whether it has pages to read back.
func (h *HostReadBack) Start() bool {
	ph := h.host.Bits.Get()
	h.phase.Set(ph)
	h.chunk.Set(0)
	return h.pages[ph] > 0
}

// ChunkDone counts a chunk whose event came back and reports the phase's
// read-back over.
func (h *HostReadBack) ChunkDone() bool {
	c := h.chunk.Q() + 1
	h.chunk.Set(c)
	return int(c)*pme.MaxPagesLimit >= h.pages[h.phase.Q()]
}

// Done reports HostDone taken this cycle.
func (h *HostReadBack) Done() bool { return h.hostDone.Fire() }
