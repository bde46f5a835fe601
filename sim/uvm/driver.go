package uvm

import "github.com/uvmmu/uvmmu/blocks/accessctr"

// Decision is the answer for an access to a non-resident page.
type Decision uint8

const (
	// Migrate: raise a far fault and migrate the page (and its
	// prefetches) to GPU memory.
	Migrate Decision = iota
	// Remote: serve the access over the link from host memory (zero-copy)
	// and leave the page where it is.
	Remote
)

func (d Decision) String() string {
	if d == Remote {
		return "remote"
	}
	return "migrate"
}

// Plan is what one far-fault batch does. Its slices belong to the Driver
// and are overwritten by the next HandleFaults.
type Plan struct {
	// Fetch are the pages to migrate to GPU memory, ascending: the faulting
	// pages and the prefetched ones. They are resident from now on.
	Fetch []int
	// Prefetched is how many of Fetch were not faulting pages.
	Prefetched int
	// Evict are the pages written back to make room, one victim unit after
	// another, each ascending; the simulator writes a victim back whole,
	// dirty or not. They are no longer resident.
	Evict []int
	// Deferred are faulting pages that found no room because every
	// resident unit is pinned; the policy raises them again later.
	Deferred []int
}

// Driver is the UVM driver's software state: the resident set, the access
// counters, the prefetcher and evictor, and the remote-access decision. A
// policy calls it when it handles a far-fault batch (HandleFaults), on
// every access it is told about (Count), and for an access to a
// non-resident page (Decide / ShouldMigrate). The Driver keeps no time;
// the policy charges the fault latency and the transfers in its cycle
// loop.
type Driver struct {
	cfg        Config
	space      *Space
	counters   Counters
	prefetch   Prefetcher
	oversubPf  Prefetcher
	evict      Evictor
	bufferPage int

	// The DATE'21 smart runtime, when attached: it sees every transfer and
	// switches the remote mode and, to tree, the evictor (tree is kept
	// up to date alongside evict until then).
	smart *SmartRuntime
	tree  Evictor

	oversubscribed bool

	batch Batch
	plan  Plan

	// placement is the per-page advice (placement.go), nil until the
	// first Place; scratch holds Prefetch's batch.
	placement []Placement
	scratch   []int
}

// New makes a driver for an address space of pages pages (a whole number
// of 64 KB blocks) with capacity pages of GPU memory.
func New(cfg Config, pages, capacity int) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := NewSpace(pages, capacity)
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, space: s, counters: newCounters(s.blocks, s.regions)}
	if d.prefetch, err = NewPrefetcher(cfg.Prefetcher, cfg.Seed); err != nil {
		return nil, err
	}
	if d.oversubPf, err = NewPrefetcher(cfg.OversubPrefetcher, cfg.Seed); err != nil {
		return nil, err
	}
	if d.evict, err = NewEvictor(cfg.Evictor, s, &d.counters, cfg.Seed); err != nil {
		return nil, err
	}
	// The buffer is a fraction of GPU memory kept free (gpu-sim.cc
	// should_evict_page: evict once allocated plus buffer pages exceed the
	// total).
	d.bufferPage = int(float64(capacity) * cfg.FreeBufferPercent / 100)
	d.batch = newBatch(s)
	return d, nil
}

// Config is the driver's configuration.
func (d *Driver) Config() Config { return d.cfg }

// Space is the resident set.
func (d *Driver) Space() *Space { return d.space }

// Counters are the access counters.
func (d *Driver) Counters() *Counters { return &d.counters }

// Prefetcher is the prefetcher the next fault batch uses.
func (d *Driver) Prefetcher() Prefetcher {
	// The smart runtime takes the place of the switch to the
	// oversubscription prefetcher (gpu-sim.cc:3769-3773).
	if d.oversubscribed && d.smart == nil {
		return d.oversubPf
	}
	return d.prefetch
}

// Evictor is the eviction policy.
func (d *Driver) Evictor() Evictor { return d.evict }

// Oversubscribed reports whether memory has filled: a fault batch needed
// more than the free pages less the buffer (gpu-sim.cc
// do_hardware_prefetch sets over_sub once; it stays set).
func (d *Driver) Oversubscribed() bool { return d.oversubscribed }

// BufferPages is the free-page buffer in pages.
func (d *Driver) BufferPages() int { return d.bufferPage }

// Count records an access to page p, resident or not: it increments the
// block's access counter (halving all of them on saturation), records the
// access kind for LFU, and refreshes the page's recency if it is resident
// (the simulator counts at TLB lookup, shader.cc, and refreshes the LRU
// list on TLB hits). With the hardware block in use a policy still calls
// Count, so that LFU and the recency lists see the access.
func (d *Driver) Count(p int, write bool) error {
	if uint(p) >= uint(d.space.pages) {
		return d.space.pageErr("Count", p)
	}
	if d.counters.count(p, write) {
		if h, ok := d.evict.(halvingAware); ok {
			h.countsHalved()
		}
	}
	d.touched(p)
	return nil
}

// touched and removed tell the evictor in force, and the tree evictor the
// smart runtime may switch to, about an access or arrival and a departure.
func (d *Driver) touched(p int) {
	d.evict.Touched(p)
	if d.tree != nil {
		d.tree.Touched(p)
	}
}

func (d *Driver) removed(p int) {
	d.evict.Removed(p)
	if d.tree != nil {
		d.tree.Removed(p)
	}
}

// AttachSmartRuntime makes the driver run the DATE'21 smart runtime r:
// every fault batch's blocks are reported to it, and whenever a batch has
// to evict, its decision switches the remote mode to oversub and the
// evictor to lrutree (gpu-sim.cc:3101-3104, 3769-3770). Attach it before
// the first fault.
func (d *Driver) AttachSmartRuntime(r *SmartRuntime) error {
	d.smart = r
	if d.evict.Name() == EvictLRUTree {
		return nil
	}
	var err error
	d.tree, err = NewEvictor(EvictLRUTree, d.space, &d.counters, d.cfg.Seed)
	return err
}

// SmartRuntime is the attached smart runtime, or nil.
func (d *Driver) SmartRuntime() *SmartRuntime { return d.smart }

// KernelEnded tells the smart runtime, if attached, that a kernel ended.
func (d *Driver) KernelEnded() {
	if d.smart != nil {
		d.smart.KernelEnded()
	}
}

// applySmart takes the smart runtime's decision; the switches are never
// undone (the simulator only ever sets dma_mode and evict_policy there).
func (d *Driver) applySmart() {
	zeroCopy, tree := d.smart.Decide()
	if zeroCopy {
		d.cfg.Remote = RemoteOversub
	}
	if tree && d.tree != nil {
		d.evict, d.tree = d.tree, nil
	}
}

// Threshold is the access count at which a read of a non-resident block
// with roundTrips evictions behind it migrates; 0 means every access
// migrates. UVMSmart Eq. 1 and gpu-sim.cc should_cause_page_migration:
//
//   - off: 0.
//   - always: t_s.
//   - oversub: 0 until oversubscribed, then t_s.
//   - adaptive, until oversubscribed: t_s*occupancy + 1, truncated, with
//     occupancy the allocated fraction of GPU memory counting the
//     free-page buffer as allocated (the simulator's projected occupancy);
//     from 1 on an empty GPU to t_s+1 when full.
//   - adaptive, once oversubscribed: t_s * p * (r+1).
func (d *Driver) Threshold(roundTrips uint8) uint64 {
	ts := uint64(d.cfg.StaticThreshold)
	switch d.cfg.Remote {
	case RemoteAlways:
		return ts
	case RemoteOversub:
		if d.oversubscribed {
			return ts
		}
	case RemoteAdaptive:
		if d.oversubscribed {
			return ts * uint64(d.cfg.Penalty) * (uint64(roundTrips) + 1)
		}
		allocated := uint64(d.space.resident + d.bufferPage)
		return 1 + ts*allocated/uint64(d.space.capacity)
	}
	return 0
}

// BaseThreshold is Threshold for a block never evicted, clamped to the
// hardware counter's range: the value a policy driving blocks/accessctr
// keeps in its threshold register. Every block's threshold is at least
// this, so the block's notification is a safe first filter and Decide on
// the notified counter gives the answer.
func (d *Driver) BaseThreshold() uint32 {
	return uint32(max(1, min(d.Threshold(0), accessctr.MaxCount)))
}

// Decide answers for an access to a non-resident page whose block's
// counter, with this access already counted, is c: writes always migrate
// (UVMSmart Section III-C: a write invalidates the host copy and migrates
// exclusively), reads migrate once the count reaches the threshold and are
// served remotely before that.
func (d *Driver) Decide(c Counter, write bool) Decision {
	if write || uint64(c.Count) >= d.Threshold(c.RoundTrips) {
		return Migrate
	}
	return Remote
}

// ShouldMigrate is Decide on page p's block counter in the functional
// mirror; call Count for the access first.
func (d *Driver) ShouldMigrate(p int, write bool) (Decision, error) {
	if uint(p) >= uint(d.space.pages) {
		return Migrate, d.space.pageErr("ShouldMigrate", p)
	}
	return d.DecidePage(p, d.counters.words[p>>blockShift], write), nil
}

// HandleFaults handles one far-fault batch. Faulting pages already
// resident or repeated are ignored, and a unit holding a faulting page is
// evicted by this batch only as the last resort. The prefetcher in force
// adds pages. If the batch does not fit in the free pages less the
// free-page buffer, memory is oversubscribed from now on, and the evictor
// frees units until it fits or nothing evictable is left; when nothing
// outside the faulting units was evictable, the faulting units' resident
// pages go too. If the batch still exceeds the free pages, prefetched
// pages and then faults are dropped, highest first; dropped faults come
// back in Plan.Deferred. The pages to fetch become resident and most
// recently used.
func (d *Driver) HandleFaults(faults []int) (Plan, error) {
	for _, p := range faults {
		if uint(p) >= uint(d.space.pages) {
			return Plan{}, d.space.pageErr("HandleFaults", p)
		}
	}
	b, s := &d.batch, d.space
	b.reset()
	d.plan = Plan{Fetch: d.plan.Fetch[:0], Evict: d.plan.Evict[:0], Deferred: d.plan.Deferred[:0]}
	for _, p := range faults {
		b.addFault(p)
	}
	if len(b.faults) == 0 {
		return d.plan, nil
	}
	b.seal()
	d.Prefetcher().Prefetch(s, b)
	faulting := len(b.faults)
	if d.smart != nil {
		d.reportBlocks(b)
	}
	if d.mustEvict(b.n) {
		d.oversubscribed = true
		if d.smart != nil {
			d.applySmart()
		}
	}
	d.pinAll(faults, 1)
	d.evictUntilFits(b.n)
	d.pinAll(faults, -1)
	// The faulting pages' own units are the last resort: when every
	// resident page lies in them (GPU memory smaller than two eviction
	// units), they go too, or the faults would wait for room forever; a
	// unit holding a faulting page already resident stays, as that fault
	// is served by its page staying.
	if len(d.plan.Evict) == 0 && s.resident+b.n > s.capacity {
		d.pinResident(faults, 1)
		d.evictUntilFits(b.n)
		d.pinResident(faults, -1)
	}
	if excess := s.resident + b.n - s.capacity; excess > 0 {
		d.plan.Deferred = b.trim(excess, d.plan.Deferred)
		faulting -= len(d.plan.Deferred)
	}
	d.plan.Fetch = b.appendPages(d.plan.Fetch)
	d.plan.Prefetched = len(d.plan.Fetch) - faulting
	for _, p := range d.plan.Fetch {
		s.add(p)
		d.touched(p)
	}
	return d.plan, nil
}

// pinResident pins (delta 1) or unpins (-1) the units of the resident
// pages among pages.
func (d *Driver) pinResident(pages []int, delta int32) {
	for i, p := range pages {
		if d.space.IsResident(p) {
			d.pinAll(pages[i:i+1], delta)
		}
	}
}

// evictUntilFits frees victim units, unpinned ones only, until a batch of
// reads pages no longer triggers eviction or nothing evictable is left.
func (d *Driver) evictUntilFits(reads int) {
	for d.mustEvict(reads) {
		start := len(d.plan.Evict)
		d.plan.Evict = d.evict.Victim(d.plan.Evict)
		if len(d.plan.Evict) == start {
			return
		}
		d.drop(d.plan.Evict[start:])
	}
}

// mustEvict is the simulator's trigger (ShouldEvict) for a batch of
// reads pages: the resident pages are those valid or on their way (the
// frames a read allocates when it starts), and the victims already
// chosen count as gone, as frames are freed when a write-back starts.
func (d *Driver) mustEvict(reads int) bool {
	return ShouldEvict(d.space.capacity, d.space.resident, reads, 0, d.cfg.FreeBufferPercent)
}

// Invalidate drops resident pages without a round trip, as the
// simulator's cudaDeviceSynchronize invalidates the dirty managed pages it
// has copied back to the host (cuda_runtime_api.cc:2019-2063); their next
// access faults. Pages not resident are ignored.
func (d *Driver) Invalidate(pages []int) error {
	for _, p := range pages {
		if uint(p) >= uint(d.space.pages) {
			return d.space.pageErr("Invalidate", p)
		}
		if d.space.IsResident(p) {
			d.space.drop(p)
			d.removed(p)
		}
	}
	return nil
}

// pinAll adds delta to the pins of every faulting page: while a batch
// evicts, the units its faults touch are not victims, as the simulator
// reserves a page for every access in flight (gpu-sim.cc
// reserve_pages_insert). The pages are in range.
func (d *Driver) pinAll(pages []int, delta int32) {
	s := d.space
	for _, p := range pages {
		s.pinPage[p] += delta
		s.pinBlock[p>>blockShift] += delta
		s.pinRegion[p>>regionPageShift] += delta
	}
}

// drop evicts the pages of one victim unit (ascending) and counts a round
// trip for each block that lost pages.
func (d *Driver) drop(pages []int) {
	last := -1
	for _, p := range pages {
		d.space.drop(p)
		d.removed(p)
		if b := p >> blockShift; b != last {
			d.counters.roundTrip(b)
			last = b
		}
	}
}

// reportBlocks tells the smart runtime the batch's 64 KB blocks,
// ascending, as the simulator logs each batch's schedulable basic blocks
// (gpu-sim.cc:3653).
func (d *Driver) reportBlocks(b *Batch) {
	for _, r := range b.regions {
		first := r * BlocksPerRegion
		for i := range d.space.regionBlocks(r) {
			if b.fetch[first+i] != 0 {
				d.smart.Transferred(first + i)
			}
		}
	}
}
