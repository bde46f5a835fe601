package pme

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/rtl"
)

// Config sizes the Page Migration Engine and its host-side DMA responder.
type Config struct {
	// Slots is the number of commands in progress at once.
	Slots int
	// MaxPages is the largest command, in 4 KB pages.
	MaxPages int
	// PageBytes is the size of one page's data packet.
	PageBytes int
	// RequestBytes is the size of a read request, a flush request and a
	// flush acknowledgement on the link.
	RequestBytes int
	// ReadTags bounds the engine's outstanding non-posted requests (page
	// reads and flushes) and sizes the host responder's queue.
	ReadTags int
	// SetupCycles is the time from accepting a command to offering its
	// first request to the link.
	SetupCycles int
	// HostLatency is the host memory's extra time to answer a request,
	// beyond the responder's one-cycle input register.
	HostLatency int
}

// Limits on the configuration, fixed by the tag and event layouts.
const (
	MaxSlots       = 1 << slotBits
	MaxPagesLimit  = 1 << posBits
	MaxReadTags    = 4096
	MaxSetupCycles = 1 << 16
	MaxHostLatency = 1 << 20
)

// SetupCyclesRange is the SetupCycles Validate allows.
var SetupCyclesRange = rtl.Range{Min: 2, Max: MaxSetupCycles}

// DefaultConfig: 16 commands in flight; up to 512 pages per command, the
// 2 MB unit of the UM baseline's tree prefetcher and LRU eviction
// (UVMSmart paper Sections II-B and II-C); 4 KB pages (SPEC 2); 16 B requests, one four-doubleword PCIe TLP header;
// 32 outstanding reads, the PCIe 5-bit tag space without extended tags,
// which covers the link's bandwidth-delay product (a 1481-cycle round trip
// is under four 380-cycle pages); 8 setup cycles, the PME's share of the
// UVMMU paper's 10-cycle migration handling latency (Table I: destination
// selection by the DA and PME configuration); host memory answering
// within the link's round trip, as the UVMMU paper's PCIe delay-queue
// model assumes (Section V-A).
func DefaultConfig() Config {
	return Config{Slots: 16, MaxPages: 512, PageBytes: 4096, RequestBytes: 16, ReadTags: 32, SetupCycles: 8, HostLatency: 0}
}

// Validate reports the first field outside its allowed range.
func (c Config) Validate() error {
	switch {
	case c.Slots < 1 || c.Slots > MaxSlots:
		return fmt.Errorf("pme: Slots %d outside 1..%d", c.Slots, MaxSlots)
	case c.MaxPages < 1 || c.MaxPages > MaxPagesLimit:
		return fmt.Errorf("pme: MaxPages %d outside 1..%d", c.MaxPages, MaxPagesLimit)
	case c.PageBytes < 1 || c.PageBytes > pcie.MaxPacketLimit:
		return fmt.Errorf("pme: PageBytes %d outside 1..%d", c.PageBytes, pcie.MaxPacketLimit)
	case c.RequestBytes < 1 || c.RequestBytes > c.PageBytes:
		return fmt.Errorf("pme: RequestBytes %d outside 1..PageBytes (%d)", c.RequestBytes, c.PageBytes)
	case c.ReadTags < 1 || c.ReadTags > MaxReadTags:
		return fmt.Errorf("pme: ReadTags %d outside 1..%d", c.ReadTags, MaxReadTags)
	case !SetupCyclesRange.Has(int64(c.SetupCycles)):
		return SetupCyclesRange.Check("pme: SetupCycles", int64(c.SetupCycles))
	case c.HostLatency < 0 || c.HostLatency > MaxHostLatency:
		return fmt.Errorf("pme: HostLatency %d outside 0..%d", c.HostLatency, MaxHostLatency)
	}
	return nil
}

// CheckLink reports a link whose packets cannot carry this engine's pages.
func (c Config) CheckLink(l pcie.Config) error {
	if c.PageBytes > l.MaxPacketBytes {
		return fmt.Errorf("pme: PageBytes %d exceeds the link's MaxPacketBytes %d", c.PageBytes, l.MaxPacketBytes)
	}
	return nil
}
