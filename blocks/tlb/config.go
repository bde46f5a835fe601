package tlb

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// Config sizes a TLB.
type Config struct {
	Sets       int // power of two; 1 makes the TLB fully associative
	Ways       int // entries per set
	HitLatency int // cycles from an accepted lookup to its response
}

// Limits on the configuration. Every entry is a set of registers, which
// bounds the capacity.
const (
	MaxSets       = 1 << 16
	MaxWays       = 1 << 10
	MaxEntries    = 1 << 16
	MaxHitLatency = 1 << 10
)

// The ranges Validate checks, for configuration layers that set these
// parameters from their own keys.
var (
	WaysRange       = rtl.Range{Min: 1, Max: MaxWays}
	HitLatencyRange = rtl.Range{Min: 1, Max: MaxHitLatency}
)

// DefaultL1Config is the per-SM L1 TLB of the UVMMU paper's Table I: 128
// entries, fully associative, LRU. Table I gives no lookup latency; one
// cycle is GRIT Table I's L1 TLB lookup latency.
func DefaultL1Config() Config { return Config{Sets: 1, Ways: 128, HitLatency: 1} }

// GRITL1Config is GRIT Table I's per-CU L1 TLB: 32 entries, 32-way, 1-cycle
// lookup, LRU.
func GRITL1Config() Config { return Config{Sets: 1, Ways: 32, HitLatency: 1} }

// GRITL2Config is GRIT Table I's shared L2 TLB: 512 entries, 16-way (32
// sets), 10-cycle lookup, LRU.
func GRITL2Config() Config { return Config{Sets: 32, Ways: 16, HitLatency: 10} }

// Validate reports the first field outside its allowed range.
func (c Config) Validate() error {
	switch {
	case c.Sets < 1 || c.Sets > MaxSets || bits.OnesCount(uint(c.Sets)) != 1:
		return fmt.Errorf("tlb: Sets %d must be a power of two in 1..%d", c.Sets, MaxSets)
	case !WaysRange.Has(int64(c.Ways)):
		return WaysRange.Check("tlb: Ways", int64(c.Ways))
	case c.Entries() > MaxEntries:
		return fmt.Errorf("tlb: Sets %d x Ways %d = %d entries exceeds %d", c.Sets, c.Ways, c.Entries(), MaxEntries)
	case !HitLatencyRange.Has(int64(c.HitLatency)):
		return HitLatencyRange.Check("tlb: HitLatency", int64(c.HitLatency))
	}
	return nil
}

// Entries is the TLB's capacity.
func (c Config) Entries() int { return c.Sets * c.Ways }
