package evict

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSeqLocalOrder: maps of 5, 7, 9, 11 list them in that order; a touch
// of 7 moves it to the tail (5, 9, 11, 7), so 5 is offered. After 5 is
// taken a touch of 9 gives 11, 7, 9; a touch of 3 (never mapped) and of 5
// (taken) change nothing; 11 is taken; a map of 5 lists it again at the
// tail: 7, 9, 5.
func TestSeqLocalOrder(t *testing.T) {
	b := newBench(t, Config{Name: SeqLocal, NFG: 100})
	_, ok := b.offered()
	require.False(t, ok, "nothing mapped, nothing offered")
	b.mapped(5, 7, 9, 11)
	b.touched(7)
	assert.Equal(t, uint64(5), b.take())
	b.touched(9, 3, 5)
	assert.Equal(t, uint64(11), b.take())
	b.mapped(5)
	assert.Equal(t, []uint64{7, 9, 5}, b.takeAll())
	assert.Zero(t, b.blk.LostMaps())
}

// TestNRUClock (NFG 256, four 64-bit words, clear every 2000 cycles):
// maps of 1, 2, 3 and 70 set their listed and referenced bits. The hand
// (0) finds no unreferenced frame-group in a whole sweep, so it falls back
// to any listed one and offers 1 (the hand moves to 2). The periodic
// clear then clears every referenced bit. A touch of 1 withdraws the
// offer; the scan from 2 offers 2. After 2 is taken the hand (3) offers
// 3; a touch of 3 withdraws it and the scan from 4 offers 70. After 70 is
// taken only 1 and 3 are listed and both referenced: a sweep from 71
// finds nothing unreferenced and the fallback sweep offers 1, then 3.
func TestNRUClock(t *testing.T) {
	b := newBench(t, Config{Name: NRU, NFG: 256, NRUClearCycles: 2000})
	b.mapped(1, 2, 3, 70)
	x, ok := b.offered()
	require.True(t, ok)
	assert.Equal(t, uint64(1), x, "all referenced: the fallback sweep")
	b.run(2000)
	b.touched(1)
	assert.Equal(t, uint64(2), b.take())
	x, _ = b.offered()
	assert.Equal(t, uint64(3), x)
	b.touched(3)
	assert.Equal(t, uint64(70), b.take())
	assert.Equal(t, []uint64{1, 3}, b.takeAll())
}

// TestTreeNeighbourhood (NFG 128, four regions). The offer is recomputed
// after every map of the head region: the first, after the map of 0,
// finds 0 referenced and gives it its second chance (clears its bit); the
// maps of 1, 2, 3 and 8 withdraw the offer and set their own bits. Maps of
// 32 and 33 list region 1 behind region 0; a touch of 2 moves region 0 to
// the tail, so region 1 is the head. Both its frame-groups are referenced:
// the second chance clears them and 32 is the victim; of the node
// {32..35} one leaf is left (33), less than half of four, so 33 goes with
// it and region 1 leaves the list. In region 0 only 0 is unreferenced: it
// is the victim, and the rest ({1, 2, 3, 8}) is a sparse neighbourhood:
// node {8..11} keeps one of four, then node {0..7} three of eight.
func TestTreeNeighbourhood(t *testing.T) {
	b := newBench(t, Config{Name: Tree, NFG: 128})
	b.mapped(0, 1, 2, 3, 8, 32, 33)
	b.touched(2)
	assert.Equal(t, []uint64{32, 33, 0, 1, 2, 3, 8}, b.takeAll())
}

// TestTreePrefersUnreferenced (NFG 64): as above, the offer after the map
// of 0 clears 0's referenced bit and the maps of 1..23 set theirs, so 0 is
// the victim; without it 23 of 32 leaves remain and no node falls below
// half ({0..3} keeps 3 of 4, {16..31} 8 of 16), so 0 goes alone. Now 1..23
// are all referenced: the second chance clears them and the victim is 1
// ({0..3} keeps 2 of 4, not less than half: alone). Touches of 2 and 3
// mark them, so the lowest unreferenced, 4, is next ({4..7} keeps 3 of 4).
func TestTreePrefersUnreferenced(t *testing.T) {
	b := newBench(t, Config{Name: Tree, NFG: 64})
	for x := range uint64(24) {
		b.mapped(x)
	}
	assert.Equal(t, uint64(0), b.take())
	assert.Equal(t, uint64(1), b.take())
	b.touched(2, 3)
	assert.Equal(t, uint64(4), b.take())
}

func TestNeighbourhood(t *testing.T) {
	all := uint32(1<<32 - 1)
	assert.Equal(t, uint32(0b1_0000_1110), neighbourhood(0b1_0000_1110, all), "one of four in {8..11}, then three of eight in {0..7}")
	assert.Equal(t, uint32(0), neighbourhood(1<<24-2, all), "23 of 32 and no sparse node")
	assert.Equal(t, uint32(0), neighbourhood(all&^1, all), "31 of 32: a pair with one leaf is half, not less")
	assert.Equal(t, uint32(0b10), neighbourhood(0b10, all), "a lone leaf goes with its node of four")
	assert.Equal(t, uint32(0b100), neighbourhood(0b100, 0b111), "the last region's missing leaves do not count")
}

// TestStorageBits: the figures docs/uvmmu-eviction.md quotes for the
// default 11 GB GPU (180,224 frame-groups, 5,632 regions).
func TestStorageBits(t *testing.T) {
	const nfg = 180224
	got := map[string]int{}
	for _, n := range Names {
		b, err := StorageBits(n, nfg)
		require.NoError(t, err)
		got[n] = b
		t.Logf("%-8s %9d bits (%.1f KiB)", n, b, float64(b)/8/1024)
	}
	assert.Zero(t, got[Random])
	assert.Greater(t, got[SeqLocal], nfg*2*18, "two 18-bit links per frame-group")
	assert.Greater(t, got[NRU], nfg*2)
	assert.Greater(t, got[Tree], 5632*(64+2*13))
	_, err := StorageBits("lru", nfg)
	assert.ErrorContains(t, err, `variant "lru" is not one of seqlocal, nru, tree`)
}

// TestStorageMatchesBlock: the storage a variant reports is the SRAM
// macros it builds plus every register it declares (read from the VCD
// header), apart from the two 64-bit event counters kept for reports.
func TestStorageMatchesBlock(t *testing.T) {
	for _, name := range []string{SeqLocal, NRU, Tree} {
		for _, nfg := range []uint64{100, 1000, 180224} {
			b := buildBench(t, Config{Name: name, NFG: nfg, NRUClearCycles: DefaultNRUClearCycles})
			var vcd bytes.Buffer
			require.NoError(t, b.sim.TraceVCD(&vcd, "evict.*"))
			require.NoError(t, b.sim.CloseTrace())
			regs := 0
			sc := bufio.NewScanner(&vcd)
			for sc.Scan() {
				if f := strings.Fields(sc.Text()); len(f) > 4 && f[0] == "$var" && f[1] == "reg" {
					w, err := strconv.Atoi(f[2])
					require.NoError(t, err)
					regs += w
				}
			}
			regs -= 2 * 64
			want, err := StorageBits(name, nfg)
			require.NoError(t, err)
			assert.Equal(t, layoutOf(Config{Name: name, NFG: nfg}).regs, regs, "%s NFG %d: register bits", name, nfg)
			assert.Equal(t, want, b.blk.StorageBits())
		}
	}
}
