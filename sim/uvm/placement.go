package uvm

import "fmt"

// Placement is a page's memory-management advice, the driver actions of
// SUV's enhanced UVM driver (SUV, Section V-D) and NVIDIA's access-counter
// migration. Every page starts at PlaceFault, the menu's own behaviour.
type Placement uint8

const (
	// PlaceFault: the menu decides (remote mode, Eq. 1, or a far fault);
	// SUV's "unset all policies" for on-demand migration (action 3).
	PlaceFault Placement = iota
	// PlaceHost: pinned on host memory (suvPinOnHost, action 2, and
	// suvSetNoMigrateRegion, action 5): mapped for the GPU's remote access,
	// reads and writes, never migrated by a fault or a counter.
	PlaceHost
	// PlaceCounters: access-counter migration (suvEnableAccessCounter,
	// action 5; NVIDIA's access-counter migration, SUV Section II-A): the
	// GPU accesses the page remotely, reads and writes, until its 64 KB
	// block's access count reaches ACThreshold, then it migrates.
	PlaceCounters
	// PlaceGPU: pinned on GPU memory (suvPinOnGPU, action 1): prefetched and
	// held out of the eviction order by a pin in the Space.
	PlaceGPU
)

func (p Placement) String() string {
	switch p {
	case PlaceFault:
		return "fault"
	case PlaceHost:
		return "host"
	case PlaceCounters:
		return "counters"
	case PlaceGPU:
		return "gpu"
	}
	return fmt.Sprintf("Placement(%d)", uint8(p))
}

// ACThreshold is the access count at which NVIDIA's access-counter
// migration moves a block: the driver's default, 256 (SUV Section II-A and
// Section VI-B). The count is kept per 64 KB block, the menu's counter
// granularity (one of the sizes the driver offers: 64 KB, 2 MB, 16 MB,
// 1 GB).
const ACThreshold = 256

// placements is the per-page advice, allocated on first use so that a
// policy that never advises pays nothing.
func (d *Driver) placementOf(p int) Placement {
	if d.placement == nil {
		return PlaceFault
	}
	return d.placement[p]
}

// Placement is page p's advice.
func (d *Driver) Placement(p int) Placement {
	if uint(p) >= uint(d.space.pages) {
		return PlaceFault
	}
	return d.placementOf(p)
}

// Place gives pages [first, first+n) the advice pl. PlaceGPU pins them (a
// page already pinned by advice keeps one pin); any other advice releases
// an advice pin. Residency does not change: the caller fetches (Prefetch)
// or writes back (Release) what it wants moved.
func (d *Driver) Place(first, n int, pl Placement) error {
	if n < 0 || first < 0 || first+n > d.space.pages {
		return fmt.Errorf("uvm: Place: pages %d+%d outside 0..%d", first, n, d.space.pages)
	}
	if d.placement == nil {
		d.placement = make([]Placement, d.space.pages)
	}
	for p := first; p < first+n; p++ {
		was := d.placement[p]
		if was == PlaceGPU && pl != PlaceGPU {
			d.unpin(p)
		}
		if was != PlaceGPU && pl == PlaceGPU {
			d.pin(p)
		}
		d.placement[p] = pl
	}
	return nil
}

func (d *Driver) pin(p int) {
	s := d.space
	s.pinPage[p]++
	s.pinBlock[p>>blockShift]++
	s.pinRegion[p>>regionPageShift]++
}

func (d *Driver) unpin(p int) {
	s := d.space
	s.pinPage[p]--
	s.pinBlock[p>>blockShift]--
	s.pinRegion[p>>regionPageShift]--
}

// RemoteWritable reports whether a remote mapping of page p may take
// stores: pages pinned on host or under access counters are mapped for the
// GPU read-write (SetAccessedBy), the menu's zero-copy mappings read-only.
func (d *Driver) RemoteWritable(p int) bool {
	pl := d.Placement(p)
	return pl == PlaceHost || pl == PlaceCounters
}

// DecidePage is Decide for an access to non-resident page p with its
// block's counter c (this access counted): a host-pinned page is always
// served remotely, a page under access counters remotely until the count
// reaches ACThreshold, reads and writes alike; any other page as Decide.
func (d *Driver) DecidePage(p int, c Counter, write bool) Decision {
	switch d.Placement(p) {
	case PlaceHost:
		return Remote
	case PlaceCounters:
		if c.Count >= ACThreshold {
			return Migrate
		}
		return Remote
	}
	return d.Decide(c, write)
}

// Prefetch plans the migration of the non-resident pages among pages (one
// 2 MB region's worth, ascending) as HandleFaults does for a batch whose
// faults they are: victims chosen by the evictor among unpinned units, the
// prefetcher in force adding neighbours, pages that find no room deferred
// (they stay where they are). It is cudaMemPrefetchAsync's work on one
// region.
func (d *Driver) Prefetch(pages []int) (Plan, error) {
	want := d.scratch[:0]
	for _, p := range pages {
		if uint(p) >= uint(d.space.pages) {
			return Plan{}, d.space.pageErr("Prefetch", p)
		}
		if !d.space.IsResident(p) {
			want = append(want, p)
		}
	}
	d.scratch = want
	return d.HandleFaults(want)
}

// Release plans the write-back of the resident, unpinned pages among pages
// (ascending): SUV's eviction of an earlier iteration's span. They are no
// longer resident; Plan.Evict lists them.
func (d *Driver) Release(pages []int) (Plan, error) {
	d.plan = Plan{Fetch: d.plan.Fetch[:0], Evict: d.plan.Evict[:0], Deferred: d.plan.Deferred[:0]}
	for _, p := range pages {
		if uint(p) >= uint(d.space.pages) {
			return Plan{}, d.space.pageErr("Release", p)
		}
		if d.space.IsResident(p) && d.space.pinPage[p] == 0 {
			d.plan.Evict = append(d.plan.Evict, p)
		}
	}
	d.drop(d.plan.Evict)
	return d.plan, nil
}
