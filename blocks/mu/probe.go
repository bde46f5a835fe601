package mu

import "math/bits"

// LatencyProbe samples the unit's migration latencies (UVMMU paper Section
// V-A2: about 1.3 us to a free destination) from outside its Eval, as a
// kernel probe (rtl.Sim.Probe) that reads the unit's registers and ports
// after each evaluated cycle. A migration's latency runs from the cycle it
// is opened (the unit takes the remote walk on Remote, or restarts an
// evicted page-group for a waiting request: a slot leaves the free mask)
// to the cycle the router takes the reply for its critical page on
// Migrated: the requester's PTE is in and its SM can go on. A reply
// answered from the resident table has no migration in flight and gives
// no sample.
type LatencyProbe struct {
	u        *Unit
	prevFree uint64
	openedAt []uint64 // per slot: the cycle its migration was opened
	timed    []bool   // per slot: its critical page's reply has been taken
	// The samples, in cycles, split by whether a victim was swapped out
	// (an S=1 destination whose IPgT entry is no longer mapped is a free
	// destination: nothing is swapped). One is appended per completed
	// migration, in a cycle with a reply.
	free, swap []uint64
}

// NewLatencyProbe attaches a probe to u's simulator; it must be made
// before the simulator's reset, while every slot is free.
func NewLatencyProbe(u *Unit) *LatencyProbe {
	n := u.cfg.Slots
	p := &LatencyProbe{u: u, prevFree: uint64(1)<<n - 1, openedAt: make([]uint64, n), timed: make([]bool, n)}
	if n == 64 {
		p.prevFree = ^uint64(0)
	}
	u.Sim().Probe(p.observe)
	return p
}

// Samples returns the latencies so far, in cycles: to free destinations
// and swaps. The slices are the probe's; callers copy them.
func (p *LatencyProbe) Samples() (free, swap []uint64) { return p.free, p.swap }

// observe runs after the commit of cycle c: a slot that left the free
// mask was opened in c; a reply that fired in c for the critical page of
// an untimed migration completes its sample. The slot answering a reply
// cannot change in the cycle of the reply (a waiting request keeps it from
// retiring, and no other slot takes its page-group), so its registers
// read after the commit are those the reply was made from; a slot opened
// in c was free when the reply was made.
func (p *LatencyProbe) observe(c uint64) {
	u := p.u
	var opened uint64
	if free := u.freeMask.Q(); free != p.prevFree {
		opened = p.prevFree &^ free
		for o := opened; o != 0; o &= o - 1 {
			slot := bits.TrailingZeros64(o)
			p.openedAt[slot], p.timed[slot] = c, false
		}
		p.prevFree = free
	}
	if !u.Migrated.Fire() {
		return
	}
	vpn := u.Migrated.Bits.Get().VPN
	g, k := vpn/PagesPerGroup, uint8(vpn%PagesPerGroup)
	for slot := range u.cfg.Slots {
		if opened&(1<<slot) != 0 || u.state.At(slot).Q() == slotFree || u.vpgn.At(slot).Q() != g {
			continue
		}
		if !p.timed[slot] && u.first.At(slot).Q() == k {
			d := c - p.openedAt[slot]
			if u.swap.At(slot).Q() != 0 {
				p.swap = append(p.swap, d)
			} else {
				p.free = append(p.free, d)
			}
			p.timed[slot] = true
		}
		return
	}
}
