package uvm

import "github.com/uvmmu/uvmmu/blocks/accessctr"

// Access kinds a region has seen, as the UVMSmart simulator's
// update_access_type records them (gpu-sim.cc): read 1, write 2, OR-ed.
// LFU eviction orders regions by this value, so never-accessed (0) and
// read-only (1) regions go before written ones (UVMSmart Section IV).
const (
	accessRead  uint8 = 1
	accessWrite uint8 = 2
)

// Counters is the functional mirror of blocks/accessctr with CountLocal
// set: one word per 64 KB block, a 27-bit access count of every access,
// local or remote, and a 5-bit round-trip count of evictions (UVMSmart
// Section IV, "Access Counter Maintenance"). An update that leaves a
// field at its maximum halves that field in every block, as the hardware
// block's sweep does; increments saturate. Per region it also keeps the
// total access count, halved with the block counts (the simulator's root
// counter), and the access kinds, for LFU eviction. A halving visits every
// block, but a count saturates at most once per 2^26 accesses and a
// round-trip count once per 16 evictions of its block, so the cost per
// update stays O(1) amortised.
type Counters struct {
	words       []Counter
	regionCount []uint64
	regionKind  []uint8
}

func newCounters(blocks, regions int) Counters {
	return Counters{
		words:       make([]Counter, blocks),
		regionCount: make([]uint64, regions),
		regionKind:  make([]uint8, regions),
	}
}

// Get is block b's counter word.
func (c *Counters) Get(b int) Counter { return c.words[b] }

// count records an access to page p and reports whether it halved every
// count.
func (c *Counters) count(p int, write bool) bool {
	b, r := p>>blockShift, p>>regionPageShift
	kind := accessRead
	if write {
		kind = accessWrite
	}
	c.regionKind[r] |= kind
	c.regionCount[r]++
	w := &c.words[b]
	if w.Count < accessctr.MaxCount {
		w.Count++
	}
	if w.Count < accessctr.MaxCount {
		return false
	}
	for i := range c.words {
		c.words[i].Count >>= 1
	}
	for i := range c.regionCount {
		c.regionCount[i] >>= 1
	}
	return true
}

// roundTrip records that block b was evicted once more.
func (c *Counters) roundTrip(b int) {
	w := &c.words[b]
	if w.RoundTrips < accessctr.MaxRoundTrip {
		w.RoundTrips++
	}
	if w.RoundTrips < accessctr.MaxRoundTrip {
		return
	}
	for i := range c.words {
		c.words[i].RoundTrips >>= 1
	}
}
