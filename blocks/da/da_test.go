package da

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

var checked = rtl.Options{Checked: true, SkipIdle: true}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	assert.Equal(t, uint64(180224), DefaultConfig().NFG)
	c := DefaultConfig()
	c.DCQThreshold = 65
	assert.ErrorContains(t, c.Validate(), "Threshold 65 outside 1..Depth (64)")
	c = DefaultConfig()
	c.FrABWord = 100
	assert.ErrorContains(t, c.Validate(), "WordBits 100 outside 32..512, a power of two")
	c = DefaultConfig()
	c.NFG = 1 << 33
	assert.ErrorContains(t, c.Validate(), "NFG 8589934592 outside 1..2^FGBits")
	c = DefaultConfig()
	c.LFSRWidth = 16
	assert.ErrorContains(t, c.Validate(), "LFSRWidth 16 outside 18..64")
	c = DefaultConfig()
	c.LFSRSeed = 0
	assert.ErrorContains(t, c.Validate(), "Seed 0x0")
	c = DefaultConfig()
	c.IPGTBase = 1 << 40
	assert.ErrorContains(t, c.Validate(), "exceeds the 40-bit address space")
}

// queued lists the DCQ's entries from head to tail by popping them.
func (y *system) drain() []uint64 {
	var out []uint64
	for y.p.DstValid.Get() {
		p, _ := y.pop()
		out = append(out, p)
	}
	return out
}

// TestStopMidRegion: with an 8-entry DCQ and a region of 32 free
// frame-groups, the AFM reserves 0..7, stops when the queue is full and
// leaves the region's bit set; after five pops it resumes in the same
// region with 8..12.
func TestStopMidRegion(t *testing.T) {
	y := newSystem(t, smallConfig(64, 8, 4, 32), fastMemory(10), nil, checked)
	y.waitFor("a full DCQ", func() bool { return y.da.DCQ.Len() == 8 }, 2000)
	y.quiet()
	for i := range 32 {
		want := ipgt.F
		if i < 8 {
			want = ipgt.Reserve(ipgt.F)
		}
		require.Equal(t, want, y.mem.Peek(i), "entry %d", i)
	}
	assert.True(t, y.da.FrAB.RegionSet(0), "region 0 keeps its bit")
	var got []uint64
	for range 5 {
		p, s := y.pop()
		require.False(t, s)
		got = append(got, p)
	}
	y.quiet()
	got = append(got, y.drain()...)
	assert.Empty(t, cmp.Diff([]uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, got))
	assert.Equal(t, ipgt.Reserve(ipgt.F), y.mem.Peek(12))
	assert.Equal(t, ipgt.F, y.mem.Peek(13))
}

// mapped is an IPgT word of a mapped, unprotected, idle frame-group.
func mapped(i int) uint64 { return ipgt.Mapped(uint16(i%4096), uint64(i)) }

// TestScanWrapAndBitClearing uses 40 regions in two 32-bit FrAB words,
// every frame-group mapped except 35*32. After the init sweep every bit is
// set, so the first pass visits each region in turn, clears the stale bits,
// reserves 35*32, then sweeps both words without a hit and falls back to a
// victim. A FREE in region 38 is found from the pointer (0) in word 1 and
// leaves the pointer at 39; a later FREE in region 5 makes the next scan
// wrap from region 39 to word 0.
func TestScanWrapAndBitClearing(t *testing.T) {
	const regions = 40
	table := make([]uint64, regions*32)
	for i := range table {
		table[i] = mapped(i)
	}
	table[35*32] = ipgt.F
	y := newSystem(t, smallConfig(regions*32, 2, 2, 32), fastMemory(20), table, checked)
	fp := y.da.FrAB.Ports
	var finds []uint64
	run := func(n int) {
		for range n {
			if fp.CmdFire() && frab.Op(fp.CmdOp.Get()) == frab.Find {
				finds = append(finds, fp.CmdRegion.Get())
			}
			y.step()
		}
	}
	run(8000)
	var want []uint64
	for r := range uint64(regions) {
		want = append(want, r)
	}
	want = append(want, 0, 32, 0)
	require.Equal(t, want, finds, "one FIND per region (stale bits), then a full sweep of words 0 and 1 from the pointer 0")
	for r := range regions {
		require.False(t, y.da.FrAB.RegionSet(r), "region %d", r)
	}
	require.Equal(t, 2, y.da.DCQ.Len())

	y.sw(afm.OpFree, 38*32+3)
	finds = finds[:0]
	p, s := y.pop()
	assert.Equal(t, []any{uint64(35 * 32), false}, []any{p, s})
	run(500)
	assert.Equal(t, []uint64{0, 32}, finds)

	y.sw(afm.OpFree, 5*32+7)
	finds = finds[:0]
	p, s = y.pop()
	assert.True(t, s, "the second destination is a victim")
	assert.Equal(t, ipgt.PickVictim(mapped(int(p))), y.mem.Peek(int(p)))
	run(500)
	assert.Equal(t, []uint64{39, 0}, finds, "the scan wraps from region 39 to word 0")
	assert.Equal(t, []uint64{38*32 + 3, 5*32 + 7}, y.drain())
	assert.Equal(t, ipgt.Reserve(ipgt.Freed), y.mem.Peek(5*32+7))
	assert.False(t, y.da.FrAB.RegionSet(5), "region 5 is exhausted again")
	assert.False(t, y.da.FrAB.RegionSet(38))
}

// TestVictimRetry: no frame-group is free and only entry 9 is a legal
// victim; the picker reads protected, busy and unmapped entries, rejects
// them without writing, and finally takes 9.
func TestVictimRetry(t *testing.T) {
	table := make([]uint64, 64)
	for i := range table {
		switch i % 3 {
		case 0:
			table[i] = mapped(i) | ipgt.P
		case 1:
			table[i] = mapped(i) | ipgt.B
		default:
			table[i] = 0
		}
	}
	table[9] = mapped(9)
	y := newSystem(t, smallConfig(64, 2, 1, 32), fastMemory(5), table, checked)
	reads, writes := 0, 0
	y.waitFor("a victim", func() bool {
		if y.p.Mem.ReqValid.Get() && y.p.Mem.ReqReady.Get() {
			if y.p.Mem.ReqWrite.Get() {
				writes++
				require.Equal(t, ipgt.Address(0, 9), y.p.Mem.ReqAddr.Get())
				require.Equal(t, ipgt.PickVictim(mapped(9)), y.p.Mem.ReqWData.Get())
			} else {
				reads++
			}
		}
		return y.p.DstValid.Get()
	}, 100000)
	p, s := y.pop()
	assert.Equal(t, []any{uint64(9), true}, []any{p, s})
	assert.Equal(t, 1, writes)
	assert.Greater(t, reads, 64+2, "two region reads plus several rejected draws")
	t.Logf("victim found after %d IPgT reads (64 in the FrAB pass)", reads)
}

// TestSoftwareOpsOnQueuedFrameGroup checks the defined behaviour of FREE on
// a frame-group that sits in the DCQ ({F=1, B=1}, no FrAB bit, handed out
// once), UNPROTECT and PROTECT, map writes, and dropped out-of-range ops.
func TestSoftwareOpsOnQueuedFrameGroup(t *testing.T) {
	table := make([]uint64, 32)
	for i := range table {
		table[i] = mapped(i) | ipgt.P
	}
	for i := range 4 {
		table[i] = ipgt.F
	}
	y := newSystem(t, smallConfig(32, 4, 4, 32), fastMemory(7), table, checked)
	y.waitFor("a full DCQ", func() bool { return y.da.DCQ.Len() == 4 }, 2000)
	y.quiet()
	require.False(t, y.da.FrAB.RegionSet(0))
	y.sw(afm.OpFree, 1)
	y.quiet()
	assert.Equal(t, ipgt.FreedBusy, y.mem.Peek(1), "FREE of a queued frame-group keeps it reserved")
	assert.False(t, y.da.FrAB.RegionSet(0), "and does not make its region available")
	assert.Equal(t, []uint64{0, 1, 2, 3}, y.drain(), "each handed out once")
	settle := func() {
		for range 3000 {
			y.step()
		}
	}
	settle()
	assert.False(t, y.p.DstValid.Get(), "1 is not reserved again; nothing is a victim")

	y.sw(afm.OpUnprotect, 10)
	p, s := y.pop()
	assert.Equal(t, []any{uint64(10), false}, []any{p, s}, "UNPROTECT frees 10 and sets its region's bit")
	assert.Equal(t, ipgt.Reserve(ipgt.Freed), y.mem.Peek(10))

	y.sw(afm.OpFree, 20)
	p, s = y.pop()
	assert.Equal(t, []any{uint64(20), false}, []any{p, s}, "FREE of an idle frame-group")

	y.mapTo(1, 0x5a5, 0xabcdef)
	p, s = y.pop()
	assert.Equal(t, []any{uint64(1), true}, []any{p, s}, "the mapped frame-group is the only victim")
	assert.Equal(t, ipgt.PickVictim(ipgt.Mapped(0x5a5, 0xabcdef)), y.mem.Peek(1))

	y.sw(afm.OpProtect, 2)
	y.sw(afm.OpFree, 1000) // beyond NFG: dropped
	y.sw(afm.OpFree, 1)
	settle()
	assert.Equal(t, ipgt.Protected, y.mem.Peek(2))
	assert.Equal(t, ipgt.FreedBusy, y.mem.Peek(1), "FREE of a picked victim keeps it busy")
	assert.False(t, y.p.DstValid.Get())
	require.NoError(t, y.mem.Err())
}

// TestOpsNotStarvedInVictimMode: with every frame-group protected the AFM
// draws victims forever, but each draw is one transaction and the arbiter
// is round-robin, so map writes and software ops are still accepted within
// two transactions and written in order.
func TestOpsNotStarvedInVictimMode(t *testing.T) {
	const lat = 30
	table := make([]uint64, 256)
	for i := range table {
		table[i] = ipgt.Protected
	}
	y := newSystem(t, smallConfig(256, 4, 4, 32), fastMemory(lat), table, checked)
	y.waitFor("init_done", y.p.InitDone.Get, 100)
	for range 5000 { // the first pass clears the stale FrAB bits
		y.step()
	}
	for i := range 20 {
		start := y.sim.Cycle()
		if i%2 == 0 {
			y.mapTo(uint64(i), 7, uint64(1000+i))
		} else {
			y.sw(afm.OpFree, uint64(i))
		}
		require.LessOrEqual(t, y.sim.Cycle()-start, uint64(2*(lat+10)), "op %d waited too long", i)
	}
	y.settleOps()
	for i := range 20 {
		w := y.mem.Peek(i)
		switch {
		case i%2 == 1:
			assert.Contains(t, []uint64{ipgt.Freed, ipgt.Reserve(ipgt.Freed)}, w, "entry %d freed (and perhaps reserved)", i)
		default:
			assert.Contains(t, []uint64{ipgt.Mapped(7, uint64(1000+i)), ipgt.PickVictim(ipgt.Mapped(7, uint64(1000+i)))}, w, "entry %d mapped (and perhaps picked)", i)
		}
	}
}

// settleOps runs long enough for every accepted op to be written.
func (y *system) settleOps() {
	for range 2000 {
		y.step()
	}
}
