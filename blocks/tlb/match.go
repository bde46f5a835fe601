package tlb

import (
	"iter"
	"math/bits"
)

// wayIndex is the TLB's tag compare as a lookup from VPN to way: an
// open-addressed table with linear probing, each slot one word holding a
// tag (validTag|VPN, so a used slot is never zero) and its way. Every way
// of the array compares its tag at once in hardware; the table gives the
// same answer in a probe or two, where the Go map it replaces hashed and
// grouped each key through the runtime's general machinery.
//
// It holds at most half as many entries as it has slots, so a probe always
// reaches an empty slot. The TLB keeps it to one entry per valid way; only
// entries left behind by a Sim.Reset (which clears the registers, not this
// table) can make it fill up, and the TLB then drops the entries its tag
// registers no longer hold (keep).
type wayIndex struct {
	slots []uint64
	spare []uint64 // keep's rebuilt table, swapped with slots
	shift uint     // 64 - log2(len(slots)): a hash's top bits pick the home slot
	n     int      // entries held
}

const (
	slotTagMask  = validTag<<1 - 1
	slotWayShift = 40 // above the tag; a way is below MaxEntries = 1<<16
)

func newWayIndex(entries int) wayIndex {
	size := 2 << bits.Len(uint(entries)) // more than twice the entries
	return wayIndex{
		slots: make([]uint64, size),
		spare: make([]uint64, size),
		shift: uint(64 - bits.TrailingZeros(uint(size))),
	}
}

// home is the slot where the probe for vpn starts (Fibonacci hashing).
func (x *wayIndex) home(vpn uint64) int {
	return int((vpn * 0x9e3779b97f4a7c15) >> x.shift)
}

// get returns the way recorded for vpn, or -1.
func (x *wayIndex) get(vpn uint64) int {
	mask := len(x.slots) - 1
	for i := x.home(vpn); ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return -1
		}
		if s&slotTagMask == validTag|vpn {
			return int(s >> slotWayShift)
		}
	}
}

// full reports that one more entry would pass the half-full bound.
func (x *wayIndex) full() bool { return 2*(x.n+1) > len(x.slots) }

// put records vpn in way w, replacing any way recorded for it. The caller
// makes room first (full, keep).
func (x *wayIndex) put(vpn uint64, w int) {
	mask := len(x.slots) - 1
	s := uint64(w)<<slotWayShift | validTag | vpn
	for i := x.home(vpn); ; i = (i + 1) & mask {
		switch old := x.slots[i]; {
		case old == 0:
			x.slots[i] = s
			x.n++
			return
		case old&slotTagMask == validTag|vpn:
			x.slots[i] = s
			return
		}
	}
}

// remove forgets vpn. The entries after it in its probe run move back so
// that every entry stays reachable from its home slot without tombstones.
func (x *wayIndex) remove(vpn uint64) {
	mask := len(x.slots) - 1
	i := x.home(vpn)
	for ; x.slots[i]&slotTagMask != validTag|vpn; i = (i + 1) & mask {
		if x.slots[i] == 0 {
			return
		}
	}
	for j := (i + 1) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		// The entry at j stays unless the hole at i lies on its probe
		// path, from its home slot h to j (cyclically).
		h := x.home(x.slots[j] & slotTagMask &^ validTag)
		if (i < j && i < h && h <= j) || (j < i && (i < h || h <= j)) {
			continue
		}
		x.slots[i] = x.slots[j]
		i = j
	}
	x.slots[i] = 0
	x.n--
}

// clear forgets every entry.
func (x *wayIndex) clear() {
	clear(x.slots)
	x.n = 0
}

// keep drops the entries for which holds(vpn, way) is false.
func (x *wayIndex) keep(holds func(vpn uint64, w int) bool) {
	old := x.slots
	x.slots, x.spare = x.spare, old
	x.clear()
	for _, s := range old {
		if vpn, w := s&slotTagMask&^validTag, int(s>>slotWayShift); s != 0 && holds(vpn, w) {
			x.put(vpn, w)
		}
	}
}

// vpns visits the VPNs recorded, for testbenches.
func (x *wayIndex) vpns() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for _, s := range x.slots {
			if s != 0 && !yield(s&slotTagMask&^validTag) {
				return
			}
		}
	}
}
