package accessctr

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// BasicBlockBytes is the span one counter covers: a 64 KB basic block, the
// tree prefetcher's migration unit (UVMSmart Section IV, "Access Counter
// Granularity").
const BasicBlockBytes = 64 << 10

// Counter word layout (UVMSmart Section IV, "Access Counter Maintenance"):
// a 32-bit word whose lower 27 bits count accesses and whose upper 5 bits
// count round trips (times the block was evicted and migrated back).
const (
	CountLo       = 0
	CountBits     = 27
	RoundTripLo   = CountLo + CountBits
	RoundTripBits = 5
	WordBits      = RoundTripLo + RoundTripBits

	MaxCount     = 1<<CountBits - 1
	MaxRoundTrip = 1<<RoundTripBits - 1
)

// Counter is one basic block's counter word.
type Counter struct {
	Count      uint32
	RoundTrips uint8
}

// Pack is the 32-bit word as the SRAM stores it.
func (c Counter) Pack() uint32 {
	return c.Count<<CountLo | uint32(c.RoundTrips)<<RoundTripLo
}

// Unpack is the inverse of Counter.Pack.
func Unpack(w uint32) Counter {
	return Counter{Count: w >> CountLo & MaxCount, RoundTrips: uint8(w >> RoundTripLo & MaxRoundTrip)}
}

// Config holds the access-counter block's parameters.
type Config struct {
	// Blocks is the number of 64 KB basic blocks covered, one SRAM word
	// each: the managed footprint divided by BasicBlockBytes.
	Blocks int
	// Threshold is the reset value of the threshold register: a remote
	// access that leaves a block's count at or above it raises a
	// notification. SPEC 2 and UVMSmart Table I: static threshold t_s = 8.
	Threshold uint32
	// CountLocal counts device-local accesses as well as remote ones, as
	// UVMSmart does to keep a historic view of hotness (Section IV); Volta's
	// counters count only remote accesses.
	CountLocal bool
}

// DefaultConfig covers 256 MB of managed memory (4096 basic blocks) with
// UVMSmart's static threshold t_s = 8 and local accesses counted.
func DefaultConfig() Config {
	return Config{Blocks: 4096, Threshold: 8, CountLocal: true}
}

// MaxBlocks bounds Config.Blocks: 2^24 blocks of 64 KB cover 1 TB.
const MaxBlocks = 1 << 24

// ThresholdRange is the Threshold Validate allows: a count the counters
// can reach.
var ThresholdRange = rtl.Range{Min: 1, Max: MaxCount}

// Validate reports the first parameter outside its range.
func (c Config) Validate() error {
	switch {
	case c.Blocks < 2 || c.Blocks > MaxBlocks:
		return fmt.Errorf("accessctr: Blocks = %d is outside 2..%d", c.Blocks, MaxBlocks)
	case !ThresholdRange.Has(int64(c.Threshold)):
		return fmt.Errorf("accessctr: Threshold = %d is outside %s", c.Threshold, ThresholdRange)
	}
	return nil
}

// BlockBits is the width of a basic-block index.
func (c Config) BlockBits() int { return bits.Len(uint(c.Blocks - 1)) }
