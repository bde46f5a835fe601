package incpage

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// PageShift is log2 of the 2 MB page of the incomplete-pages system
// (Shen et al., NPC 2018, Section 4.2: "the page size is 2MB").
const PageShift = 21

// MaxRanges bounds K, the spans a TLB entry records.
const MaxRanges = 8

// Limits of the configuration.
var (
	// UnitShiftRange: units of 256 B (two 128 B lines) up to the whole
	// 2 MB page; a unit index fits the 14-bit span fields.
	UnitShiftRange  = rtl.Range{Min: 8, Max: PageShift}
	RangesRange     = rtl.Range{Min: 1, Max: MaxRanges}
	L2EntriesRange  = rtl.Range{Min: 1, Max: 1 << 16}
	LatencyRange    = rtl.Range{Min: 1, Max: 1 << 16}
	QueueRange      = rtl.Range{Min: 1, Max: 4096}
	SuspendRange    = rtl.Range{Min: 1, Max: 1 << 16}
	MRQRange        = rtl.Range{Min: 1, Max: 1 << mrqTagBits}
	WalkersRange    = rtl.Range{Min: 1, Max: 1024}
	MaxPages2MRange = rtl.Range{Min: 1, Max: 1 << 15} // 64 GB of 2 MB pages
)

// Config sizes the 2 MB translation path: the shared L2 TLB, the walkers
// and page table, the suspended-request table and the migration request
// queue (MRQ) with its merge rule.
type Config struct {
	UnitShift int // log2 of the migration unit in bytes (1 KB: 10)
	Ranges    int // K: spans per TLB entry record

	L2Entries, L2Ways, L2Latency int
	Walkers, WalkCycles          int
	Queue                        int // requests in L2 lookup, walk or waiting for an MRQ entry
	Suspend                      int // requests suspended on a migration
	MRQ                          int // migration requests pending or in flight

	MinUnits int // a new migration request's length
	MaxUnits int // a merged request's largest length
	GapUnits int // a miss merges into a pending request at most this many units away

	BasePage uint64 // first 2 MB virtual page (VA >> 21)
	Pages    int    // 2 MB pages of the managed range
	SMs      int
}

// UnitsPerPage is the units of one 2 MB page.
func (c Config) UnitsPerPage() int { return 1 << (PageShift - c.UnitShift) }

// UnitBits is the width of a unit index within the page.
func (c Config) UnitBits() int { return PageShift - c.UnitShift }

// Validate names the first parameter outside its range.
func (c Config) Validate() error {
	checks := []struct {
		name string
		r    rtl.Range
		v    int
	}{
		{"incpage: UnitShift", UnitShiftRange, c.UnitShift},
		{"incpage: Ranges", RangesRange, c.Ranges},
		{"incpage: L2Entries", L2EntriesRange, c.L2Entries},
		{"incpage: L2Ways", L2EntriesRange, c.L2Ways},
		{"incpage: L2Latency", LatencyRange, c.L2Latency},
		{"incpage: Walkers", WalkersRange, c.Walkers},
		{"incpage: WalkCycles", LatencyRange, c.WalkCycles},
		{"incpage: Queue", QueueRange, c.Queue},
		{"incpage: Suspend", SuspendRange, c.Suspend},
		{"incpage: MRQ", MRQRange, c.MRQ},
		{"incpage: Pages", MaxPages2MRange, c.Pages},
	}
	for _, k := range checks {
		if !k.r.Has(int64(k.v)) {
			return k.r.Check(k.name, int64(k.v))
		}
	}
	units := c.UnitsPerPage()
	switch {
	case c.L2Entries%c.L2Ways != 0 || bits.OnesCount(uint(c.L2Entries/c.L2Ways)) != 1:
		return fmt.Errorf("incpage: L2Entries %d must be L2Ways (%d) times a power of two", c.L2Entries, c.L2Ways)
	case c.MinUnits < 1 || c.MinUnits > units:
		return fmt.Errorf("incpage: MinUnits %d outside 1..%d", c.MinUnits, units)
	case c.MaxUnits < c.MinUnits || c.MaxUnits > units:
		return fmt.Errorf("incpage: MaxUnits %d outside MinUnits (%d)..%d", c.MaxUnits, c.MinUnits, units)
	case c.GapUnits < 0 || c.GapUnits > units:
		return fmt.Errorf("incpage: GapUnits %d outside 0..%d", c.GapUnits, units)
	case c.SMs < 1 || c.SMs > 63:
		return fmt.Errorf("incpage: SMs %d outside 1..63", c.SMs)
	case c.BasePage+uint64(c.Pages) > 1<<(48-PageShift):
		return fmt.Errorf("incpage: pages %#x..+%d exceed the 48-bit address space", c.BasePage, c.Pages)
	}
	return nil
}

// RecordBits is the storage of one TLB entry's record: K spans
// (2 unit indexes of UnitBits and a valid bit each) and the exact bit: 93
// bits at 1 KB units and K = 4. The registers of the model hold each span
// in SpanBits, wide enough for every unit size.
func (c Config) RecordBits() int { return c.Ranges*(2*c.UnitBits()+1) + 1 }

// BitmapBytes is the page table's record of one page: a bit per unit,
// 256 B at 1 KB units.
func (c Config) BitmapBytes() int { return (c.UnitsPerPage() + 7) / 8 }

// bitmapWords is the 64-bit words of one page's bitmap.
func (c Config) bitmapWords() int { return (c.UnitsPerPage() + 63) / 64 }
