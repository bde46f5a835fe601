package uvm

import (
	"fmt"
	"slices"

	"github.com/uvmmu/uvmmu/blocks/accessctr"
	"github.com/uvmmu/uvmmu/rtl"
)

// Prefetcher names (UVMSmart simulator, gpu-sim.cc: -hardware_prefetch
// 0..3 and -hwprefetch_oversub 0..3).
const (
	PrefetchNone     = "none"     // on-demand: only the faulting pages
	PrefetchTree     = "tree"     // tree-based neighborhood, 64 KB leaves, 2 MB roots
	PrefetchSeqLocal = "seqlocal" // the faulting page's whole 64 KB block
	PrefetchRandom   = "random"   // one random 4 KB page of the faulting page's 2 MB region
)

// Eviction policy names (UVMSmart simulator, gpu-sim.cc: -eviction_policy
// 0..5).
const (
	EvictLRU2M   = "lru2m"    // LRU over 2 MB regions
	EvictLRUTree = "lrutree"  // LRU 64 KB block, then the tree's <50% rule
	EvictLRU64K  = "lru64k"   // LRU 64 KB block (sequential-local)
	EvictRandom  = "random4k" // a random 4 KB page
	EvictLFU2M   = "lfu2m"    // access-counter LFU over 2 MB regions, read-only first
	EvictLRU4K   = "lru4k"    // LRU over 4 KB pages
)

// Remote-access (zero-copy) modes (UVMSmart simulator, gpu-sim.cc:
// -enable_dma 0..3; UVMSmart paper Section VI: Disabled, Adaptive, Always,
// Oversub).
const (
	RemoteOff      = "off"      // migrate on first touch
	RemoteAdaptive = "adaptive" // dynamic threshold t_d of Eq. 1
	RemoteAlways   = "always"   // static threshold t_s from the start
	RemoteOversub  = "oversub"  // static threshold t_s once oversubscribed
)

var (
	prefetcherNames = []string{PrefetchNone, PrefetchTree, PrefetchSeqLocal, PrefetchRandom}
	evictorNames    = []string{EvictLRU2M, EvictLRUTree, EvictLRU64K, EvictRandom, EvictLFU2M, EvictLRU4K}
	remoteNames     = []string{RemoteOff, RemoteAdaptive, RemoteAlways, RemoteOversub}
)

// PrefetcherNames lists the prefetchers, for the CLI.
func PrefetcherNames() []string { return slices.Clone(prefetcherNames) }

// EvictorNames lists the eviction policies, for the CLI.
func EvictorNames() []string { return slices.Clone(evictorNames) }

// RemoteModeNames lists the remote-access modes, for the CLI.
func RemoteModeNames() []string { return slices.Clone(remoteNames) }

// Bounds of the numeric parameters.
const (
	// MaxPenalty is the largest multiplicative migration penalty p: UVMSmart
	// Table I's 1048576, the setting that pins every page to the host.
	MaxPenalty = 1 << 20
	// MaxFreeBufferPercent bounds the free-page buffer below all of memory.
	MaxFreeBufferPercent = 99
	// MaxFaultBuffer bounds the UM driver's fault buffer (sim/umdriver,
	// um.fault_buffer).
	MaxFaultBuffer = 1 << 16
)

// PenaltyRange is the Penalty Validate allows.
var PenaltyRange = rtl.Range{Min: 1, Max: MaxPenalty}

// FaultBufferRange is the fault buffer sizes the UM driver's
// Config.Validate allows (sim/umdriver). It is defined here, with the rest
// of the driver's parameters, so that the configuration layer, which
// sim/umdriver depends on through sim/system, checks the same range.
var FaultBufferRange = rtl.Range{Min: 1, Max: MaxFaultBuffer}

// Config is the driver's policy menu.
type Config struct {
	// Prefetcher runs until memory first fills (UVMSmart simulator
	// -hardware_prefetch; default tree, its default).
	Prefetcher string `toml:"prefetcher" oneof:"none,tree,seqlocal,random" doc:"prefetcher until memory first fills"`
	// OversubPrefetcher replaces Prefetcher once memory has filled for the
	// first time (-hwprefetch_oversub; default tree as in the simulator's
	// configs/GeForceGTX1080Ti/gpgpusim.config, so the prefetcher stays in
	// action under oversubscription, UVMSmart Section II-C).
	OversubPrefetcher string `toml:"oversub_prefetcher" oneof:"none,tree,seqlocal,random" doc:"prefetcher once memory has filled"`
	// Evictor chooses victims (-eviction_policy; default LRU 2 MB, the
	// NVIDIA driver's policy, UVMSmart Section II-C).
	Evictor string `toml:"evictor" oneof:"lru2m,lrutree,lru64k,random4k,lfu2m,lru4k" doc:"eviction policy"`
	// Remote selects zero-copy remote access (-enable_dma; default off, the
	// UVMSmart baseline that migrates on first touch).
	Remote string `toml:"remote" oneof:"off,adaptive,always,oversub" doc:"remote zero-copy access mode"`
	// StaticThreshold is t_s, accesses before a read migrates (SPEC 2 and
	// UVMSmart Table I/Section VI-A: 8; -migrate_threshold).
	StaticThreshold uint32 `toml:"static_threshold" min:"1" max:"134217727" doc:"static access-counter threshold t_s"`
	// Penalty is p, the multiplicative migration penalty once
	// oversubscribed (SPEC 2 and UVMSmart Table I: 2, 4, 8; default 2 as in
	// the simulator's GTX 1080 Ti config, -multiply_dma_penalty).
	Penalty uint32 `toml:"penalty" min:"1" max:"1048576" doc:"multiplicative migration penalty p"`
	// FreeBufferPercent of capacity is kept free by evicting ahead
	// (-percentage_of_free_page_buffer; default 0 as in the simulator).
	FreeBufferPercent float64 `toml:"free_buffer_percent" min:"0" max:"99" doc:"percentage of GPU memory kept free by evicting ahead"`
	// Seed seeds the random prefetcher and the random evictor.
	Seed uint64 `toml:"seed" doc:"seed of the random prefetcher and evictor"`
}

// DefaultConfig is the UVMSmart baseline: tree prefetcher before and after
// oversubscription, LRU 2 MB eviction, no remote access, t_s = 8, p = 2,
// no free-page buffer.
func DefaultConfig() Config {
	return Config{
		Prefetcher:        PrefetchTree,
		OversubPrefetcher: PrefetchTree,
		Evictor:           EvictLRU2M,
		Remote:            RemoteOff,
		StaticThreshold:   8,
		Penalty:           2,
		FreeBufferPercent: 0,
		Seed:              1,
	}
}

// Validate reports the first field outside its allowed values.
func (c Config) Validate() error {
	oneOf := func(field, v string, allowed []string) error {
		if slices.Contains(allowed, v) {
			return nil
		}
		return fmt.Errorf("uvm: %s = %q is not one of %v", field, v, allowed)
	}
	if err := oneOf("Prefetcher", c.Prefetcher, prefetcherNames); err != nil {
		return err
	}
	if err := oneOf("OversubPrefetcher", c.OversubPrefetcher, prefetcherNames); err != nil {
		return err
	}
	if err := oneOf("Evictor", c.Evictor, evictorNames); err != nil {
		return err
	}
	if err := oneOf("Remote", c.Remote, remoteNames); err != nil {
		return err
	}
	switch {
	case !accessctr.ThresholdRange.Has(int64(c.StaticThreshold)):
		return fmt.Errorf("uvm: StaticThreshold = %d is outside %s (the 27-bit access count)", c.StaticThreshold, accessctr.ThresholdRange)
	case !PenaltyRange.Has(int64(c.Penalty)):
		return fmt.Errorf("uvm: Penalty = %d is outside %s", c.Penalty, PenaltyRange)
	case !(c.FreeBufferPercent >= 0 && c.FreeBufferPercent <= MaxFreeBufferPercent):
		return fmt.Errorf("uvm: FreeBufferPercent = %g is outside 0..%d", c.FreeBufferPercent, MaxFreeBufferPercent)
	}
	return nil
}
