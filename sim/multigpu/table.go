package multigpu

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/pte"
)

// MaxGPUs is the largest system: GRIT's sensitivity study goes to 16
// (GRIT Section VI-B2), and a GPU set is a 16-bit mask.
const MaxGPUs = 16

// Host is the location index of host memory in a transfer.
const Host = -1

// Page is one page's entry in the host driver's centralized page table
// (GRIT Section II-B): where its copies are, who maps it remotely, whether
// the copies may be written, its scheme bits, and its data version.
type Page struct {
	// Holders are the GPUs with a copy in their memory; none means the
	// page is in host memory.
	Holders uint16
	// Mapped are the GPUs whose local table maps the page remotely, at
	// Owner's copy (access-counter and first-touch peer access).
	Mapped uint16
	// Owner is the holder remote mappings point at.
	Owner int8
	// Writable is false while the copies are read-only replicas
	// (duplication): a store through one raises a protection fault.
	Writable bool
	// Scheme is the placement scheme of the page's last fault, as the PTE
	// scheme bits hold it (pte.Scheme, GRIT Table IV).
	Scheme pte.Scheme
	// Version counts the grants of write access: a replica made from a
	// copy carries that copy's version, and every replica must be current.
	Version uint32
}

// Copies is the number of GPUs holding the page.
func (p Page) Copies() int { return bits.OnesCount16(p.Holders) }

// Has reports whether GPU g holds the page.
func (p Page) Has(g int) bool { return p.Holders>>g&1 != 0 }

// MapsRemote reports whether GPU g maps the page remotely.
func (p Page) MapsRemote(g int) bool { return p.Mapped>>g&1 != 0 }

// Table is the host driver's centralized page table and the GPUs' frame
// allocators: the software state of the driver (its memory on the host),
// changed only in the driver block's Eval. Each GPU's frames are handed
// out from a free stack and reclaimed in LRU order of the pages' last
// placement or fault (the driver sees faults, not the GPUs' hits).
type Table struct {
	gpus, pages, frames int
	page                []Page
	frame               []int32  // [page*gpus+g]: g's frame of the page, -1 if none
	version             []uint32 // [page*gpus+g]: version of g's copy
	owner               []int32  // [g*frames+f]: page in frame f of GPU g, -1 if free
	free                [][]int32
	// LRU order per GPU over the pages it holds: a doubly linked list in
	// prev/next ([g*pages+page]), head the least recently placed.
	prev, next []int32
	head, tail []int32
}

// NewTable is the table of pages pages over gpus GPUs of frames frames
// each, every page in host memory.
func NewTable(gpus, pages, frames int) *Table {
	t := &Table{gpus: gpus, pages: pages, frames: frames,
		page: make([]Page, pages), frame: make([]int32, pages*gpus), version: make([]uint32, pages*gpus),
		owner: make([]int32, gpus*frames), free: make([][]int32, gpus),
		prev: make([]int32, gpus*pages), next: make([]int32, gpus*pages),
		head: make([]int32, gpus), tail: make([]int32, gpus)}
	for i := range t.page {
		t.page[i].Owner = -1
	}
	for i := range t.frame {
		t.frame[i] = -1
	}
	for i := range t.owner {
		t.owner[i] = -1
	}
	for g := range gpus {
		t.head[g], t.tail[g] = -1, -1
		t.free[g] = make([]int32, frames)
		for f := range frames {
			t.free[g][f] = int32(frames - 1 - f) // frame 0 on top
		}
	}
	return t
}

// Page is page i's entry.
func (t *Table) Page(i int) Page { return t.page[i] }

// Frame is GPU g's frame of page i, -1 if g holds none.
func (t *Table) Frame(i, g int) int32 { return t.frame[i*t.gpus+g] }

// Full reports whether GPU g has no free frame.
func (t *Table) Full(g int) bool { return len(t.free[g]) == 0 }

// Used is the frames GPU g holds.
func (t *Table) Used(g int) int { return t.frames - len(t.free[g]) }

// Victim is GPU g's least recently placed page not marked in busy (the
// pages of the plan under way), or -1.
func (t *Table) Victim(g int, busy []bool) int {
	for p := t.head[g]; p >= 0; p = t.next[g*t.pages+int(p)] {
		if !busy[p] {
			return int(p)
		}
	}
	return -1
}

// setPage replaces page i's entry.
func (t *Table) setPage(i int, p Page) { t.page[i] = p }

// place gives GPU g a frame for page i at version v and makes it the most
// recently placed; g must have a free frame and not hold i.
func (t *Table) place(i, g int, v uint32) {
	n := len(t.free[g])
	f := t.free[g][n-1]
	t.free[g] = t.free[g][:n-1]
	t.frame[i*t.gpus+g] = f
	t.version[i*t.gpus+g] = v
	t.owner[g*t.frames+int(f)] = int32(i)
	t.linkTail(g, i)
}

// drop frees GPU g's frame of page i.
func (t *Table) drop(i, g int) {
	f := t.frame[i*t.gpus+g]
	t.frame[i*t.gpus+g] = -1
	t.owner[g*t.frames+int(f)] = -1
	t.free[g] = append(t.free[g], f)
	t.unlink(g, i)
}

// touch makes page i GPU g's most recently placed.
func (t *Table) touch(i, g int) {
	t.unlink(g, i)
	t.linkTail(g, i)
}

func (t *Table) linkTail(g, i int) {
	k := g*t.pages + i
	t.prev[k], t.next[k] = t.tail[g], -1
	if t.tail[g] >= 0 {
		t.next[g*t.pages+int(t.tail[g])] = int32(i)
	} else {
		t.head[g] = int32(i)
	}
	t.tail[g] = int32(i)
}

func (t *Table) unlink(g, i int) {
	k := g*t.pages + i
	p, n := t.prev[k], t.next[k]
	if p >= 0 {
		t.next[g*t.pages+int(p)] = n
	} else {
		t.head[g] = n
	}
	if n >= 0 {
		t.prev[g*t.pages+int(n)] = p
	} else {
		t.tail[g] = p
	}
}

// Check verifies the table's own invariants (SPEC 8 "Invariants"): a page
// is held by exactly one GPU or replicated read-only with every replica at
// the page's version; remote mappings point at a holder; no frame of any
// GPU holds two pages, and each GPU's frame owners match the pages'
// frames.
func (t *Table) Check(allowWritableReplicas bool) error {
	for i, p := range t.page {
		n := p.Copies()
		switch {
		case n > 1 && p.Writable && !allowWritableReplicas:
			return fmt.Errorf("page %d: %d writable copies (holders %#x)", i, n, p.Holders)
		case p.Mapped != 0 && (p.Owner < 0 || !p.Has(int(p.Owner))):
			return fmt.Errorf("page %d: mapped remotely by %#x at GPU %d, which does not hold it (holders %#x)", i, p.Mapped, p.Owner, p.Holders)
		case p.Mapped&p.Holders != 0:
			return fmt.Errorf("page %d: GPUs %#x both hold and map it remotely", i, p.Mapped&p.Holders)
		}
		for g := range t.gpus {
			f := t.frame[i*t.gpus+g]
			switch {
			case p.Has(g) != (f >= 0):
				return fmt.Errorf("page %d: GPU %d holder bit %v but frame %d", i, g, p.Has(g), f)
			case f >= 0 && t.owner[g*t.frames+int(f)] != int32(i):
				return fmt.Errorf("page %d: GPU %d frame %d is owned by page %d", i, g, f, t.owner[g*t.frames+int(f)])
			case f >= 0 && !allowWritableReplicas && t.version[i*t.gpus+g] != p.Version:
				return fmt.Errorf("page %d: GPU %d's replica is at version %d, the page at %d", i, g, t.version[i*t.gpus+g], p.Version)
			}
		}
	}
	for g := range t.gpus {
		used := 0
		for f := range t.frames {
			if i := t.owner[g*t.frames+f]; i >= 0 {
				used++
				if t.frame[int(i)*t.gpus+g] != int32(f) {
					return fmt.Errorf("GPU %d: frame %d is owned by page %d, whose frame there is %d", g, f, i, t.frame[int(i)*t.gpus+g])
				}
			}
		}
		if used+len(t.free[g]) != t.frames {
			return fmt.Errorf("GPU %d: %d frames used and %d free of %d", g, used, len(t.free[g]), t.frames)
		}
	}
	return nil
}
