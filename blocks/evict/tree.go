package evict

import (
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// RegionTree is tree-based neighbourhood eviction (UVMSmart's LRU
// tree-based eviction, UVMMU paper Section II-B; sim/uvm's lru-tree mirrors
// the driver version) at frame-group granularity over the UVMMU's 2 MB
// frame-regions of 32 frame-groups. The DA fills GPU memory region by
// region (the FrAB scan), so a frame-region holds page-groups that arrived
// together; it is the physical unit the metadata can index by PFgN, where
// UVMSmart's tree is over virtual 2 MB ranges (indexing those would need a
// VPgN-to-PFgN map per range). Storage, indexed by region:
//
//	word:       NR words of 64 bits: 32 listed bits (mapped, not taken
//	            since) and 32 referenced bits (touched since the region's
//	            last second chance)
//	prev, next: NR words of clog2(NR+1) bits: the LRU list of regions with
//	            a listed frame-group (NR marks the list end)
//
// and, in registers, the list head and tail and the neighbourhood still to
// offer (a region and a 32-bit mask). A map or touch of a listed
// frame-group sets its bits and moves its region to the tail. The
// candidate comes from the head (least recently used) region: first the
// rest of the neighbourhood of its last victim, else the lowest listed,
// unreferenced frame-group (when all are referenced their referenced bits
// are cleared, a second chance). Choosing that victim also chooses its
// neighbourhood: bottom-up over the region's binary tree, every node left
// with some but less than half of its leaves listed gives up all of them
// (UVMSmart's traverse_and_remove_lp_tree rule, the mirror of the tree
// prefetcher's >50% rule); they are offered next, unless a map or touch
// of the region withdraws the offer first (the region is then the most
// recently used and keeps the rest).
type RegionTree struct {
	rtl.Base
	Ports
	monitor

	nfg, regions uint64
	end          uint64 // link value marking the list end: NR
	word         *rtl.SRAM[uint64]
	prev, next   *rtl.SRAM[uint64]
	head, tail   *rtl.Reg[uint64]
	groupRegion  *rtl.Reg[uint64] // region of the neighbourhood being offered
	groupMask    *rtl.Reg[uint32] // its frame-groups not yet offered
	offerValid   *rtl.Reg[bool]
	offer        *rtl.Reg[uint64]
	state        *rtl.Reg[uint8]
	op           *rtl.Reg[uint8]
	cur          *rtl.Reg[uint64] // frame-group of the event in flight
	curWord      *rtl.Reg[uint64] // its region's new word, written with the insert
	sweep        *rtl.Reg[uint64]
	storageBits  int
}

// RegionTree FSM states.
const (
	rtInit   uint8 = iota // clearing the region words, one per cycle
	rtIdle                // taking the next event or reading the head region
	rtUnlink              // the event's region arrived: update, unlink if it moves or empties
	rtInsert              // link the region at the tail
	rtOffer               // the head region's word arrived: choose the candidate
)

// Region word layout.
const (
	listedMask = 1<<regionGroups - 1
	refShift   = regionGroups
)

func treeLayout(nfg uint64) layout {
	nr := (nfg + regionGroups - 1) / regionGroups
	rb, fg := linkBits(nr), linkBits(nfg)
	return layout{
		srams: []rtl.SRAMConfig{
			{Depth: int(nr), Width: 2 * regionGroups, Ports: 1, ReadLatency: 1}, // word
			{Depth: int(nr), Width: rb, Ports: 1, ReadLatency: 1},               // prev
			{Depth: int(nr), Width: rb, Ports: 2, ReadLatency: 1},               // next
		},
		regs: 4*rb + regionGroups + 1 + fg + 3 + 2 + fg + 2*regionGroups + monitorRegBits(fg),
	}
}

func newTree(s *rtl.Sim, path string, cfg Config, p Ports) *RegionTree {
	nr := (cfg.NFG + regionGroups - 1) / regionGroups
	t := &RegionTree{Ports: p, nfg: cfg.NFG, regions: nr, end: nr}
	s.Add(t, path)
	b := &t.Base
	lay := treeLayout(cfg.NFG)
	t.storageBits = lay.bits()
	t.word = rtl.NewSRAM[uint64](b, "word", lay.srams[0])
	t.prev = rtl.NewSRAM[uint64](b, "prev", lay.srams[1])
	t.next = rtl.NewSRAM[uint64](b, "next", lay.srams[2])
	rb, fg := linkBits(nr), linkBits(cfg.NFG)
	t.head = rtl.NewReg[uint64](b, "head", rb, t.end)
	t.tail = rtl.NewReg[uint64](b, "tail", rb, t.end)
	t.groupRegion = rtl.NewReg[uint64](b, "group_region", rb, t.end)
	t.groupMask = rtl.NewReg[uint32](b, "group_mask", regionGroups, 0)
	t.offerValid = rtl.NewFlag(b, "offer_valid", false)
	t.offer = rtl.NewReg[uint64](b, "offer", fg, 0)
	t.state = rtl.NewReg[uint8](b, "state", 3, rtInit)
	t.op = rtl.NewReg[uint8](b, "op", 2, evNone)
	t.cur = rtl.NewReg[uint64](b, "cur", fg, 0)
	t.curWord = rtl.NewReg[uint64](b, "cur_word", 2*regionGroups, 0)
	t.sweep = rtl.NewReg[uint64](b, "sweep", rb, 0)
	t.monitor = newMonitor(b, p, cfg)
	return t
}

// StorageBits is the SRAM and register storage.
func (t *RegionTree) StorageBits() int { return t.storageBits }

// Drive offers the chosen frame-group.
func (t *RegionTree) Drive() {
	t.Victim.Valid.Set(t.offerValid.Q() && !t.taken.Q())
	t.Victim.Bits.Set(t.offer.Q())
}

// Eval advances the FSM by one step.
func (t *RegionTree) Eval() {
	served := evNone
	x := t.cur.Q()
	r, bit := x/regionGroups, uint64(1)<<(x%regionGroups)
	offerValid := t.offerValid.Q()
	if t.Victim.Fire() {
		offerValid = false
	}
	switch t.state.Q() {
	case rtInit:
		w := t.sweep.Q()
		t.word.Write(0, int(w), 0)
		if w+1 == t.regions {
			t.state.Set(rtIdle)
		} else {
			t.sweep.Set(w + 1)
		}

	case rtIdle:
		op, y := t.nextEvent(false)
		switch {
		case op != evNone:
		case !t.offerValid.Q() && t.head.Q() != t.end:
			// Not in the cycle the offer is taken: the take is served first.
			t.word.Read(0, int(t.head.Q()))
			t.state.Set(rtOffer)
		default:
			op, y = t.nextEvent(true)
		}
		if op == evNone {
			break
		}
		served = op
		q := y / regionGroups
		t.word.Read(0, int(q))
		t.prev.Read(0, int(q))
		t.next.Read(0, int(q))
		t.op.Set(op)
		t.cur.Set(y)
		t.state.Set(rtUnlink)

	case rtUnlink:
		w := t.word.RData(0)
		listed := w&bit != 0
		op := t.op.Q()
		if !listed && op != evMap {
			t.state.Set(rtIdle)
			break
		}
		nw := w
		switch op {
		case evTake:
			nw &^= bit | bit<<refShift
		default:
			nw |= bit | bit<<refShift
			// The region is no longer the least recently used: an offer
			// from it is withdrawn, and so is the rest of its
			// neighbourhood.
			if offerValid && t.offer.Q()/regionGroups == r {
				offerValid = false
				t.groupMask.Set(0)
			}
		}
		inList := w&listedMask != 0
		stays := op == evTake && nw&listedMask != 0
		if inList && !stays {
			t.unlink(r)
		}
		if op == evTake || stays {
			t.word.Write(0, int(r), nw)
			t.state.Set(rtIdle)
			break
		}
		t.curWord.Set(nw)
		t.state.Set(rtInsert)

	case rtInsert:
		tl := t.tail.Q()
		if tl == t.end {
			t.head.Set(r)
		} else {
			t.next.Write(0, int(tl), r)
		}
		t.prev.Write(0, int(r), tl)
		t.next.Write(1, int(r), t.end)
		t.word.Write(0, int(r), t.curWord.Q())
		t.tail.Set(r)
		t.state.Set(rtIdle)

	case rtOffer:
		h := t.head.Q()
		w := t.word.RData(0)
		listed := uint32(w & listedMask)
		if g := t.groupMask.Q() & listed; t.groupRegion.Q() == h && g != 0 {
			k := uint64(bits.TrailingZeros32(g))
			t.offer.Set(h*regionGroups + k)
			t.groupMask.Set(g &^ (1 << k))
		} else {
			fresh := listed &^ uint32(w>>refShift)
			if fresh == 0 {
				// Every listed frame-group was used since the last
				// second chance: clear the referenced bits.
				fresh = listed
				t.word.Write(0, int(h), uint64(listed))
			}
			k := uint64(bits.TrailingZeros32(fresh))
			t.offer.Set(h*regionGroups + k)
			t.groupRegion.Set(h)
			t.groupMask.Set(neighbourhood(listed&^(1<<k), t.leaves(h)))
		}
		offerValid = true
		t.state.Set(rtIdle)
	}
	if offerValid != t.offerValid.Q() {
		t.offerValid.Set(offerValid)
	}
	t.step(served)
}

// unlink takes region r out of the LRU list; its links were read with the
// event.
func (t *RegionTree) unlink(r uint64) {
	p, n := t.prev.RData(0), t.next.RData(0)
	if p == t.end {
		t.head.Set(n)
	} else {
		t.next.Write(0, int(p), n)
	}
	if n == t.end {
		t.tail.Set(p)
	} else {
		t.prev.Write(0, int(n), p)
	}
}

// leaves is the mask of frame-groups region r has: all 32, or fewer in the
// last region when NFG is not a multiple of 32.
func (t *RegionTree) leaves(r uint64) uint32 {
	n := min(regionGroups, t.nfg-r*regionGroups)
	return uint32(1<<n - 1)
}

// neighbourhood is the tree rule over a region's 32 frame-groups: listed
// is what remains listed after the victim left, leaves the frame-groups
// the region has. Bottom-up over the binary tree (pairs, then 4, 8, 16,
// 32 leaves), a node with some but less than half of its leaves still
// listed gives all of them up; the result is every frame-group given up.
// It is the frame-group-granularity form of UVMSmart's
// traverse_and_remove_lp_tree (sim/uvm blockLRU.unit), where a 64 KB
// leaf is either wholly listed or not.
func neighbourhood(listed, leaves uint32) uint32 {
	var gone uint32
	for span := 2; span <= regionGroups; span *= 2 {
		for lo := 0; lo < regionGroups; lo += span {
			node := uint32((uint64(1)<<span - 1) << lo)
			size := bits.OnesCount32(node & leaves)
			left := bits.OnesCount32(listed &^ gone & node)
			if left != 0 && 2*left < size {
				gone |= listed & node
			}
		}
	}
	return gone
}
