// Package evict holds the eviction-metadata blocks of the UVMMU eviction
// sensitivity study (UVMMU paper Section V-C1, Figure 5; SPEC 6.4): the
// paper's Destination Allocator picks swap victims with an LFSR
// (linear-random); these blocks replace that draw, through the AFM's
// victim candidate port (afm.VictimExternal), with sequential-local (LRU
// over 64 KB frame-groups), NRU, and tree-based (LRU over 2 MB
// frame-regions with UVMSmart's tree-based neighbourhood grouping).
//
// A block only proposes. The AFM reads every candidate's IPgT entry and
// takes it only when it is mapped, unprotected and idle (M=1, P=0, B=0),
// so a stale or wrong proposal costs one IPgT read and nothing else.
//
// What the blocks observe is what the UVMMU sees beside the GMMU (UVMMU
// paper Figure 2): every page-table walk result (a local PTE names the
// frame-group an L1 TLB miss touched) and every IPgT map write the DA
// issues when the migration unit reports a page-group arrived (the DA's
// memory-port write of an entry with M=1, P=0, B=0). They do not see loads
// that hit in an L1 TLB: no hardware on the GMMU side does. Both are
// snooped from existing channels, so a block adds no back-pressure.
//
// Snooping the map at the IPgT write, not at the DA's map port, keeps the
// metadata complete: an entry becomes a legal victim only through that
// write, and the AFM reads a candidate's entry after it takes the
// candidate, through the same in-order port. So a frame-group the AFM
// rejects was not a victim when it was read, and if it becomes one later
// its map write lists it again; no victim is ever missing from the
// metadata.
package evict

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// Variant names, as the configuration key uvmmu.eviction spells them.
const (
	Random   = "random"   // the DA's LFSR picker: no metadata block
	SeqLocal = "seqlocal" // LRU list over frame-groups
	NRU      = "nru"      // referenced bits with a clock hand
	Tree     = "tree"     // LRU over frame-regions, tree-based neighbourhood
)

// Names lists the variants in the order the configuration documents them.
var Names = []string{Random, SeqLocal, NRU, Tree}

// pagesPerGroup is the number of 4 KB pages in a 64 KB frame-group (SPEC 2).
const pagesPerGroup = 16

// regionGroups is the number of frame-groups in a 2 MB frame-region (SPEC 2).
const regionGroups = frab.FrameGroupsPerRegion

// wordBits is the width of the bitmap SRAM words (NRU and the seqlocal
// membership bits): one 64-bit word covers 64 frame-groups.
const wordBits = 64

// DefaultNRUClearCycles is the period of NRU's referenced-bit clear: 2^16
// core cycles, 44 us at 1481 MHz (UVMMU Table I), the UM baseline's fault
// latency and about ten 64 KB page-group transfers at 16 GB/s (6,066
// cycles each, SPEC 2): a frame-group counts as recently used if a walk or
// a migration touched it within the last few migrations. The paper gives
// no period for its NRU (Section V-C1 cites the textbook policy).
const DefaultNRUClearCycles = 1 << 16

// Config is what a metadata block needs.
type Config struct {
	Name           string // one of Names other than Random
	NFG            uint64 // frame-groups of GPU memory
	IPGTBase       uint64 // IPGT_BASE: where the snooped writes' entries start
	NRUClearCycles uint64 // NRU only: referenced bits clear period
}

// Validate names the first parameter outside its range.
func (c Config) Validate() error {
	switch c.Name {
	case SeqLocal, NRU, Tree:
	default:
		return fmt.Errorf("evict: variant %q is not one of %s, %s, %s (%s needs no block)", c.Name, SeqLocal, NRU, Tree, Random)
	}
	if c.NFG < 1 || c.NFG >= 1<<32 {
		return fmt.Errorf("evict: NFG %d outside 1..2^32-1", c.NFG)
	}
	if c.Name == NRU && c.NRUClearCycles < 1 {
		return fmt.Errorf("evict: NRUClearCycles %d must be positive", c.NRUClearCycles)
	}
	return nil
}

// Ports are a block's connections. The walk and IPgT wires are read only
// (snooped); the victim port is the AFM's candidate input.
type Ports struct {
	// The GMMU's walk-result channel: a handshake with a valid local PTE
	// is a touch of its frame-group.
	WalkValid, WalkReady *rtl.Wire[bool]
	WalkPTE              *rtl.Wire[pte.PTE]
	// The DA's IPgT memory port: a write of a victim entry (M=1, P=0,
	// B=0) is a page-group arriving in that frame-group.
	IPgT ipgt.MemPorts
	// Candidates to the AFM (out: valid, bits; in: ready).
	Victim *rtl.Decoupled[uint64]
}

// Metadata is a built eviction-metadata block.
type Metadata interface {
	rtl.Block
	// StorageBits is the block's state: its SRAM macros and registers.
	StorageBits() int
	// LostMaps counts map writes that found the map queue full. A lost
	// map leaves a frame-group out of the metadata (still safe: the AFM
	// checks every candidate); the system's checker requires zero.
	LostMaps() uint64
	// DroppedTouches counts walk touches that found the touch queue full.
	DroppedTouches() uint64
}

// New builds the block cfg.Name under path.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (Metadata, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Name {
	case SeqLocal:
		return newSeqLocal(s, path, cfg, p), nil
	case NRU:
		return newNRU(s, path, cfg, p), nil
	}
	return newTree(s, path, cfg, p), nil
}

// StorageBits is the storage a variant needs for nfg frame-groups: the
// same layout New builds (0 for Random, whose LFSR belongs to the DA).
func StorageBits(name string, nfg uint64) (int, error) {
	if name == Random {
		return 0, nil
	}
	cfg := Config{Name: name, NFG: nfg, NRUClearCycles: DefaultNRUClearCycles}
	if err := cfg.Validate(); err != nil {
		return 0, err
	}
	return layoutOf(cfg).bits(), nil
}

// layout is a block's storage: SRAM macros and register bits.
type layout struct {
	srams []rtl.SRAMConfig
	regs  int
}

func (l layout) bits() int {
	n := l.regs
	for _, m := range l.srams {
		n += m.Depth * m.Width
	}
	return n
}

func layoutOf(c Config) layout {
	switch c.Name {
	case SeqLocal:
		return seqLocalLayout(c.NFG)
	case NRU:
		return nruLayout(c.NFG)
	}
	return treeLayout(c.NFG)
}

// linkBits is the width of a list link over n nodes: 0..n-1 and the end
// marker n.
func linkBits(n uint64) int { return bits.Len64(n) }

// bitmapWords is the number of 64-bit words covering n bits.
func bitmapWords(n uint64) int { return int((n + wordBits - 1) / wordBits) }
