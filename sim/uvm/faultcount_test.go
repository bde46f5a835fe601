package uvm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Faults as the reference counts them, by hand, with a 45 us latency at
// 1481 MHz (66,645 cycles, the simulator's -page_fault_latency default):
//
//	fault 5          counts (1)
//	fault 5 again    pending on the same MSHR entry: no
//	prefetch 6..20   requested with page 5's transfer
//	fault 17         requested by the prefetch: no
//	fault 21         counts (2)
//	evict 5          back in host memory
//	fault 5          counts (3)
//
// Three faults: 3 * 66,645 = 199,935 cycles added to the total.
func TestFaultCountAsTheReference(t *testing.T) {
	f, err := NewFaultCount(64, 1)
	require.NoError(t, err)
	assert.True(t, f.Fault(5))
	assert.False(t, f.Fault(5))
	for p := 6; p <= 20; p++ {
		f.Requested(p)
	}
	assert.False(t, f.Fault(17))
	assert.True(t, f.Fault(21))
	f.Evicted(5)
	assert.True(t, f.Fault(5))
	assert.Equal(t, uint64(3), f.Count())
	assert.Equal(t, uint64(199_935), f.Cycles(66_645))
}

// Pages in different words of the bitmap are independent: 63, 64 and 127
// each count once, and evicting 64 leaves 63 and 127 requested.
func TestFaultCountWordBoundaries(t *testing.T) {
	f, err := NewFaultCount(128, 1)
	require.NoError(t, err)
	for _, p := range []int{63, 64, 127, 63, 64, 127} {
		f.Fault(p)
	}
	assert.Equal(t, uint64(3), f.Count())
	f.Evicted(64)
	assert.False(t, f.Fault(63))
	assert.True(t, f.Fault(64))
	assert.False(t, f.Fault(127))
	assert.Equal(t, uint64(4), f.Count())
}

// With block units (the tree prefetcher plans the faulting page's whole
// 64 KB block in the fault's cycle), by hand:
//
//	fault 17   counts (1); requests pages 16-31
//	fault 30   requested: no
//	fault 32   counts (2); requests 32-47
//	evict 20   page 20 back in host memory
//	fault 20   counts (3); requests 16-31 again
//	fault 63   counts (4); requests 48-63
func TestFaultCountBlockUnits(t *testing.T) {
	f, err := NewFaultCount(64, PagesPerBlock)
	require.NoError(t, err)
	assert.True(t, f.Fault(17))
	assert.False(t, f.Fault(30))
	assert.True(t, f.Fault(32))
	f.Evicted(20)
	assert.True(t, f.Fault(20))
	assert.True(t, f.Fault(63))
	assert.Equal(t, uint64(4), f.Count())
	assert.Equal(t, PagesPerBlock, FaultUnit(PrefetchTree))
	assert.Equal(t, 1, FaultUnit(PrefetchNone))
	_, err = NewFaultCount(64, 4)
	assert.ErrorContains(t, err, "fault unit = 4 pages is not 1 or 16")
}
