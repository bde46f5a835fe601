package grit

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/rtl"
)

// Config holds GRIT's parameters: the initiator's fault threshold, the
// PA-Cache geometry, the host-memory port of the PA-Table, and the
// Neighboring-Aware Prediction. The same struct describes the ablation
// points of GRIT Fig. 20 (PACache and Prediction switched off and on).
type Config struct {
	// Threshold is the fault threshold of the Fault-Aware Initiator: the
	// fault (local page fault or page protection fault) that brings a
	// page's count to Threshold interrupts the driver to decide its scheme
	// (GRIT Section V-B: four; Section VI-B1 studies 2, 4, 8 and 16).
	Threshold int
	// PACache puts the PA-Cache (blocks/pacache) in front of the PA-Table
	// (GRIT Section V-C); false is GRIT Fig. 20's "PA-Table only", where
	// every fault reads and writes its PA-Table record in host memory.
	PACache bool
	// CacheSets and CacheWays are the PA-Cache geometry (GRIT Section V-C:
	// 64 entries, 4-way, so 16 sets indexed by the low 4 VPN bits).
	CacheSets, CacheWays int
	// VPNBits is the VPN width of a PA-Table record and of the PA-Cache
	// (GRIT Section V-C: 45 bits of a 48-bit entry).
	VPNBits int
	// Table is the host-memory port the PA-Table is reached through.
	Table TableConfig
	// Prediction runs the Neighboring-Aware Prediction after each scheme
	// change (GRIT Section V-D).
	Prediction bool
	// PredictionCycles is the time the driver's background group check
	// takes from the scheme change to its PTE rewrites being visible (see
	// Predictor).
	PredictionCycles int
}

// TableConfig is the timing of the host-memory port of the PA-Table.
type TableConfig struct {
	// Latency is the cycles one host-memory access takes, read or write,
	// and the cycles it occupies a port. The default, 100, is one level of
	// a page-table walk in GRIT Table I ("100-cycle latency per level"):
	// GRIT Section V-C counts a PA-Table lookup as one memory access, like
	// one level of the walk it runs in parallel with.
	Latency int
	// Ports is the number of accesses the host memory serves at once (1:
	// one at a time). Further accesses wait for a free port.
	Ports int
}

// GRIT's configuration (Sections V-B, V-C, V-D).
const (
	DefaultThreshold    = 4
	DefaultCacheSets    = 16
	DefaultCacheWays    = 4
	DefaultVPNBits      = 45
	DefaultTableLatency = 100
	DefaultTablePorts   = 1
	// DefaultPredictionCycles is three levels of the group check (8, 64
	// and 512 pages), each one host-memory read of the eight members'
	// PTEs and one write of the rewritten ones, at DefaultTableLatency:
	// 3 x 2 x 100.
	DefaultPredictionCycles = 3 * 2 * DefaultTableLatency
)

// Parameter ranges. The threshold's is SPEC 8.3's; the rest are the limits
// of this model.
var (
	ThresholdRange        = rtl.Range{Min: pacache.MinThreshold, Max: pacache.MaxThreshold}
	CacheSetsRange        = rtl.Range{Min: pacache.MinSets, Max: pacache.MaxSets, Pow2: true}
	CacheWaysRange        = rtl.Range{Min: pacache.MinWays, Max: pacache.MaxWays}
	VPNBitsRange          = rtl.Range{Min: 11, Max: pacache.MaxVPNBits}
	TableLatencyRange     = rtl.Range{Min: 1, Max: 1 << 20}
	TablePortsRange       = rtl.Range{Min: 1, Max: 16}
	PredictionCyclesRange = rtl.Range{Min: 0, Max: 1 << 30}
)

// DefaultConfig is GRIT as evaluated (Sections V and VI-A): threshold 4,
// a 64-entry 4-way PA-Cache, prediction on.
func DefaultConfig() Config {
	return Config{
		Threshold: DefaultThreshold, PACache: true,
		CacheSets: DefaultCacheSets, CacheWays: DefaultCacheWays, VPNBits: DefaultVPNBits,
		Table:      TableConfig{Latency: DefaultTableLatency, Ports: DefaultTablePorts},
		Prediction: true, PredictionCycles: DefaultPredictionCycles,
	}
}

// Validate names the first parameter outside its range.
func (c Config) Validate() error {
	for _, p := range []struct {
		name string
		v    int
		r    rtl.Range
	}{
		{"grit: Threshold", c.Threshold, ThresholdRange},
		{"grit: CacheSets", c.CacheSets, CacheSetsRange},
		{"grit: CacheWays", c.CacheWays, CacheWaysRange},
		{"grit: VPNBits", c.VPNBits, VPNBitsRange},
		{"grit: Table.Latency", c.Table.Latency, TableLatencyRange},
		{"grit: Table.Ports", c.Table.Ports, TablePortsRange},
		{"grit: PredictionCycles", c.PredictionCycles, PredictionCyclesRange},
	} {
		if err := p.r.Check(p.name, int64(p.v)); err != nil {
			return err
		}
	}
	if err := c.Cache().Validate(); err != nil {
		return fmt.Errorf("grit: %w", err)
	}
	return nil
}

// Cache is the PA-Cache's configuration.
func (c Config) Cache() pacache.Config {
	return pacache.Config{Sets: c.CacheSets, Ways: c.CacheWays, VPNBits: c.VPNBits, Threshold: c.Threshold}
}
