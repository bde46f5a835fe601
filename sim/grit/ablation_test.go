package grit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPATableOnlySlowerThanPACache: eight faults reach the driver in
// cycle 0, pages A and B alternating (A, B, A, B, ...; four GPUs faulting
// on two shared pages), each with a 300-cycle walk (three levels of 100
// cycles, GRIT Table I). The host-memory port has one port and L = 100.
//
// PA-Table only (Counter): fault 1 is accepted in cycle 0, its lookup in
// 1, answered in 1+L = 101, so its count is out in 102; its write-back
// holds the port 102..201. Each later fault is accepted the cycle after
// the previous write is offered, and its lookup waits for that write:
// fault 2's lookup is accepted in 202, answered in 302, counted in 303,
// and its write holds the port to 402. Every fault is 2L+1 = 201 cycles
// after the previous one: fault i's count is out at 102 + 201(i-1) =
// 102, 303, 504, 705, 906, 1107, 1308, 1509 (faults 7 and 8 reach the
// threshold and delete instead of writing back: same port time).
//
// PA-Cache: fault 1 (A) misses: 102 as above, the fill needs no
// write-back. Fault 2 (B) is accepted in 102, misses, its lookup accepted
// in 103 (the port is free since 101), answered in 203, out in 204.
// Faults 3-7 hit, one per cycle: 205, 206, 207, 208, 209. Fault 7 (A's
// fourth) reaches the threshold: its delete is accepted in 209 and
// req_ready returns in 210, so fault 8 (B's fourth) is accepted in 210 and
// out in 211.
//
// The walk waits for a slower decision: with the PA-Cache no decision
// exceeds 300, so the walks end at 300; PA-Table only, faults 2..8 stall
// 3 + 204 + 405 + 606 + 807 + 1008 + 1209 = 4242 cycles in all.
func TestPATableOnlySlowerThanPACache(t *testing.T) {
	const a, b, walk = 0x1000, 0x2001, 300
	run := func(withCache bool) ([]uint64, *Engine) {
		cfg := DefaultConfig()
		cfg.PACache = withCache
		pt := newFakeTables(a, 1)
		pt.host[b] = pt.host[a]
		e, err := newEngine(cfg, pt, true)
		require.NoError(t, err)
		var out []uint64
		for i := range 8 {
			vpn := uint64(a)
			if i%2 == 1 {
				vpn = b
			}
			d, err := e.Fault(0, Fault{GPU: i / 2, VPN: vpn, Kind: LocalFault}, walk)
			require.NoError(t, err)
			assert.Equal(t, i/2+1, d.Count)
			assert.Equal(t, max(walk, d.DecisionCycles), d.Cycles)
			out = append(out, d.DecisionCycles)
		}
		return out, e
	}
	table, te := run(false)
	cache, ce := run(true)
	var wantTable []uint64
	for i := range 8 {
		wantTable = append(wantTable, 102+201*uint64(i))
	}
	assert.Equal(t, wantTable, table, "PA-Table only: 102 + 201(i-1)")
	assert.Equal(t, []uint64{102, 204, 205, 206, 207, 208, 209, 211}, cache, "PA-Cache")
	assert.Equal(t, uint64(4242), te.StallCycles)
	assert.Equal(t, uint64(7), te.Stalls)
	assert.Equal(t, uint64(0), ce.StallCycles)
	// Host-memory accesses when the last count is out: PA-Table only has
	// read every fault's record and written seven (the eighth write is
	// offered with the last count); the PA-Cache has read the two misses
	// and deleted A's record (B's delete is offered with the last count).
	tt, ct := te.Initiator().Table(), ce.Initiator().Table()
	assert.Equal(t, [2]uint64{8, 7}, [2]uint64{tt.Reads, tt.Writes})
	assert.Equal(t, [2]uint64{2, 1}, [2]uint64{ct.Reads, ct.Writes})
}

// TestTwoHostMemoryPorts: with two ports the PA-Table-only counter's
// write of one fault overlaps the next fault's lookup. Fault 1 is counted
// at 102 as before and its write takes port 0 at 102..201; fault 2 is
// accepted in 103, its lookup takes port 1 in 104, is answered in 204 and
// counted in 205; its write takes port 0 (free since 202) in 205. Each
// fault is L+3 = 103 cycles after the previous one instead of 2L+1 = 201.
func TestTwoHostMemoryPorts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PACache, cfg.Table.Ports = false, 2
	in, err := NewInitiator(cfg, true)
	require.NoError(t, err)
	for i := range 6 {
		c, err := in.Count(0, LocalFault, uint64(0x100+i%2), false)
		require.NoError(t, err)
		assert.Equal(t, 102+103*uint64(i), c.Cycles, "fault %d", i+1)
	}
}
