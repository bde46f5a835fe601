package ptw

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// Config sizes the GMMU walk queue, walker pool, page-walk cache and the
// page table's managed range.
type Config struct {
	Walkers      int // concurrent walks
	QueueDepth   int // requests waiting for a walker or merged into a walk
	Levels       int // page-table levels a walk visits without a page-walk cache hit
	LevelLatency int // cycles per level
	PWCEntries   int // page-walk cache entries; 0 disables it
	BaseVPN      uint64
	Pages        int // managed range: VPNs BaseVPN .. BaseVPN+Pages-1
}

// Limits on the configuration.
const (
	MaxWalkers      = 1024
	MaxQueueDepth   = 4096
	MaxLevels       = 5
	MaxLevelLatency = 1 << 16
	MaxPWCEntries   = 4096
	MaxPages        = 1 << 24 // 64 GB of 4 KB pages; the table is held in memory
)

// The ranges Validate checks, for configuration layers that set these
// parameters from their own keys.
var (
	WalkersRange      = rtl.Range{Min: 1, Max: MaxWalkers}
	QueueDepthRange   = rtl.Range{Min: 1, Max: MaxQueueDepth}
	LevelLatencyRange = rtl.Range{Min: 1, Max: MaxLevelLatency}
)

// DefaultConfig is the UVMMU system: 64 page-table walkers (UVMMU Table I),
// a single 100-cycle access per walk (UVMSmart Table I, page-table walk
// latency 100 core cycles), no page-walk cache, and a 64-entry walk queue
// (UVMMU Table I gives none; GRIT Table I's 64). The managed range of 2^20
// pages (4 GB) is a placeholder the system sets from the workload.
func DefaultConfig() Config {
	return Config{Walkers: 64, QueueDepth: 64, Levels: 1, LevelLatency: 100, Pages: 1 << 20}
}

// GRITConfig is GRIT Table I's GMMU: 8 shared walkers, 100 cycles per
// level of a four-level table, a 128-entry page-walk cache and a 64-entry
// walk queue.
func GRITConfig() Config {
	return Config{Walkers: 8, QueueDepth: 64, Levels: 4, LevelLatency: 100, PWCEntries: 128, Pages: 1 << 20}
}

// Validate reports the first field outside its allowed range.
func (c Config) Validate() error {
	switch {
	case !WalkersRange.Has(int64(c.Walkers)):
		return WalkersRange.Check("ptw: Walkers", int64(c.Walkers))
	case !QueueDepthRange.Has(int64(c.QueueDepth)):
		return QueueDepthRange.Check("ptw: QueueDepth", int64(c.QueueDepth))
	case c.Levels < 1 || c.Levels > MaxLevels:
		return fmt.Errorf("ptw: Levels %d outside 1..%d", c.Levels, MaxLevels)
	case !LevelLatencyRange.Has(int64(c.LevelLatency)):
		return LevelLatencyRange.Check("ptw: LevelLatency", int64(c.LevelLatency))
	case c.PWCEntries < 0 || c.PWCEntries > MaxPWCEntries:
		return fmt.Errorf("ptw: PWCEntries %d outside 0..%d", c.PWCEntries, MaxPWCEntries)
	case c.Pages < 1 || c.Pages > MaxPages:
		return fmt.Errorf("ptw: Pages %d outside 1..%d", c.Pages, MaxPages)
	case c.BaseVPN >= 1<<36-uint64(c.Pages):
		return fmt.Errorf("ptw: BaseVPN %#x plus Pages %d exceeds the 36-bit VPN space", c.BaseVPN, c.Pages)
	}
	return nil
}

// WalkCycles is a walk's latency from dispatch to result: every level
// without a page-walk cache hit, the leaf level alone with one.
func (c Config) WalkCycles(pwcHit bool) uint64 {
	if pwcHit {
		return uint64(c.LevelLatency)
	}
	return uint64(c.Levels * c.LevelLatency)
}
