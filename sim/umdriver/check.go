package umdriver

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/sim/system"
)

// Check verifies SPEC 6.5 between cycles against the page table, which
// read returns a PTE of: a page the driver holds valid has a local PTE
// with its own frame (or has it written this cycle), a page it holds
// remote a remote PTE with its host frame; the pages valid or on their
// way are the menu's resident set (but for victims still being unmapped)
// and fit the managed capacity; each large page's resident count
// matches its pages; the fault buffer's occupied bits are its entries
// that are not free; and every occupied entry the reply search passes by
// (parkedEntries) waits for its page.
func (d *Driver) Check(read func(vpn uint64) pte.PTE) error {
	for i := range d.cfg.FaultBuffer {
		occupied := d.occupied.word(i/64)>>(i%64)&1 != 0
		if occupied != (d.reqKind.At(i).Q() != entryFree) {
			return fmt.Errorf("fault buffer entry %d has kind %d but its occupied bit is %t", i, d.reqKind.At(i).Q(), occupied)
		}
		page := int(d.reqWalk.At(i).Q().VPN - d.cfg.BaseVPN)
		if parked := d.parked.Parked(i); occupied && parked && !waits(d.reqKind.At(i).Q(), d.pageState(page)) {
			return fmt.Errorf("fault buffer entry %d (kind %d) is passed by the reply search but its page %d is in state %d", i, d.reqKind.At(i).Q(), page, d.pageState(page))
		}
	}
	base := d.cfg.BaseVPN
	perRegion := make([]int, d.regions)
	total := 0
	space := d.menu.Space()
	// Victims the menu has dropped and the driver has not unmapped yet.
	unmapping := map[int]bool{}
	if d.fsm.Q() == drvUnmap {
		for _, v := range d.victims[min(int(d.cursor.Q()), len(d.victims)):] {
			unmapping[v] = true
		}
	}
	for _, r := range d.cfg.Managed {
		lo := int(r.First*system.PagesPerGroup - base)
		for page := lo; page < lo+r.Count*system.PagesPerGroup; page++ {
			e := read(base + uint64(page))
			st := d.pageState(page)
			if (st == pageValid && !unmapping[page] || st == pageInFlight) != space.IsResident(page) {
				return fmt.Errorf("page %#x is in state %d but the menu holds it resident = %t", base+uint64(page), st, space.IsResident(page))
			}
			switch st {
			case pageValid:
				perRegion[page/system.PagesPerRegion]++
				total++
				writing := d.writer.LandingAt(base + uint64(page))
				if !writing && (e.IsRemote() || e.Frame() != uint64(page)) {
					return fmt.Errorf("page %#x is valid but its PTE is %#x", base+uint64(page), uint64(e))
				}
			case pageRemote:
				if !e.IsRemote() || e.Frame() != base+uint64(page) {
					return fmt.Errorf("page %#x is in host memory but its PTE is %#x", base+uint64(page), uint64(e))
				}
			}
		}
	}
	for r, n := range perRegion {
		if got := int(d.resident.At(r).Q()); got != n {
			return fmt.Errorf("large page %d counts %d resident pages, holds %d", r, got, n)
		}
	}
	if total > d.cfg.Capacity {
		return fmt.Errorf("%d pages valid, more than the %d-page managed capacity", total, d.cfg.Capacity)
	}
	return nil
}
