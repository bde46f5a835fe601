package pacache

import (
	"fmt"
	"math/bits"
)

// Config holds the PA-Cache parameters. The same struct feeds the Go model,
// the Verilog generator (module parameters SETS, WAYS, VPN_BITS, THRESHOLD)
// and the co-simulation testbenches.
type Config struct {
	// Sets is the number of sets; the set index is the low log2(Sets) bits
	// of the VPN (GRIT Section V-C: 64 entries, 4-way, index = lower 4 bits).
	Sets int
	// Ways is the associativity (GRIT Section V-C: 4-way).
	Ways int
	// VPNBits is the width of a virtual page number (SPEC 8.3: 36, a 48-bit
	// virtual address with 4 KB pages).
	VPNBits int
	// Threshold is the fault threshold: the fault that brings a page's count
	// to Threshold triggers a scheme change (GRIT Section V-B and VI-B1:
	// four, the best of 2/4/8/16).
	Threshold int
}

// DefaultConfig is the PA-Cache of SPEC 8.3 and GRIT Section V-C: 16 sets
// of 4 ways (64 entries), 36-bit VPNs, fault threshold 4.
func DefaultConfig() Config {
	return Config{Sets: 16, Ways: 4, VPNBits: 36, Threshold: 4}
}

// Parameter ranges. The paper fixes none of them beyond its one design
// point; they are the limits of this implementation, except the threshold's,
// which is SPEC 8.3's (GRIT's threshold study uses 2, 4, 8 and 16).
const (
	MinSets = 2
	// MaxSets keeps the unrolled reset of the generated tag store (one
	// statement per line) at a reviewable size.
	MaxSets = 1 << 10
	MinWays = 2
	// MaxWays lets a set's LRU ages (Ways x log2(Ways) bits) fit one
	// 64-bit register.
	MaxWays    = 16
	MaxVPNBits = 52 // a 64-bit virtual address with 4 KB pages
	// MinThreshold is one: every fault then triggers at once.
	MinThreshold = 1
	// MaxThreshold is SPEC 8.3's largest threshold.
	MaxThreshold = 16
)

// Validate reports the first parameter outside its allowed range.
func (c Config) Validate() error {
	switch {
	case c.Sets < MinSets || c.Sets > MaxSets || c.Sets&(c.Sets-1) != 0:
		return fmt.Errorf("pacache: Sets = %d must be a power of two in %d..%d", c.Sets, MinSets, MaxSets)
	case c.Ways < MinWays || c.Ways > MaxWays:
		return fmt.Errorf("pacache: Ways = %d is outside %d..%d", c.Ways, MinWays, MaxWays)
	case c.VPNBits < c.IndexBits()+1 || c.VPNBits > MaxVPNBits:
		return fmt.Errorf("pacache: VPNBits = %d is outside %d..%d (at least one tag bit above the %d index bits)",
			c.VPNBits, c.IndexBits()+1, MaxVPNBits, c.IndexBits())
	case c.Threshold < MinThreshold || c.Threshold > MaxThreshold:
		return fmt.Errorf("pacache: Threshold = %d is outside %d..%d", c.Threshold, MinThreshold, MaxThreshold)
	}
	return nil
}

// CountBits is CNT_W, the width of the fault counter and of the PA-Table
// port's count fields (SPEC 8.3): max(1, clog2(Threshold)). The counter
// holds count-1 for a live record, and a live record has a count below
// Threshold, so Threshold-2 fits.
func (c Config) CountBits() int { return max(1, bits.Len(uint(c.Threshold-1))) }

// RespBits is RESP_W, the width of resp_count (SPEC 8.3):
// clog2(Threshold+1), enough for a count of Threshold.
func (c Config) RespBits() int { return bits.Len(uint(c.Threshold)) }

// Entries is the number of cache entries, Sets x Ways.
func (c Config) Entries() int { return c.Sets * c.Ways }

// IndexBits is the width of the set index, log2(Sets).
func (c Config) IndexBits() int { return bits.Len(uint(c.Sets)) - 1 }

// TagBits is the width of a tag: the VPN above the index bits.
func (c Config) TagBits() int { return c.VPNBits - c.IndexBits() }

// AgeBits is the width of one way's LRU age, ceil(log2(Ways)).
func (c Config) AgeBits() int { return bits.Len(uint(c.Ways - 1)) }

// AgesBits is the width of a set's LRU state: one age per way.
func (c Config) AgesBits() int { return c.Ways * c.AgeBits() }

// Set is the set a VPN maps to.
func (c Config) Set(vpn uint64) int { return int(vpn & uint64(c.Sets-1)) }

// Tag is the tag of a VPN.
func (c Config) Tag(vpn uint64) uint64 { return vpn >> uint(c.IndexBits()) }

// VPN rebuilds a VPN from its tag and set.
func (c Config) VPN(tag uint64, set int) uint64 { return tag<<uint(c.IndexBits()) | uint64(set) }

// ResetAges is a set's packed LRU ages after reset: way w has age w.
func (c Config) ResetAges() uint64 {
	var a uint64
	for w := range c.Ways {
		a |= uint64(w) << uint(w*c.AgeBits())
	}
	return a
}
