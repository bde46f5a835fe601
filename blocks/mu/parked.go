package mu

import (
	"math/bits"

	"github.com/uvmmu/uvmmu/internal/parking"
)

// parkedRequests marks the waiting requests whose page a migration still
// moves: the slot migrating the request's page-group has not landed its
// page. Such a request is not answerable, and stays so until that slot's
// landed pages change or the slot is started or retired (the only writes
// that change what the search finds for it), so the reply search passes
// it by, visiting only the requests that may be answerable.
//
// It is derived from the registers, never a source of truth: the search
// parks the requests it finds waiting so, an arrival takes its entry out,
// and at the end of every cycle the requests of the slots whose landed
// pages or use the cycle changed are unparked (a search later in the same
// cycle reads the registers before the change). A parked bit of a free
// entry means nothing: the search visits valid requests only.
// checkParked verifies it against the registers.
type parkedRequests struct {
	parking.Lot // the parked requests, each filed under its slot
	// changed is the slots whose landed pages or use changed this cycle.
	changed uint64
}

func newParkedRequests(requests, slots int) parkedRequests {
	return parkedRequests{Lot: parking.New(requests, slots)}
}

// unparkChanged unparks the requests of the slots changed this cycle.
func (p *parkedRequests) unparkChanged() {
	for ; p.changed != 0; p.changed &= p.changed - 1 {
		s := bits.TrailingZeros64(p.changed)
		for i := p.First(s); i >= 0; i = p.First(s) {
			p.Unpark(i)
		}
	}
}
