package da

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
)

// TestExternalVictimRejectsLikeADraw: no frame-group is free; the victim
// port offers, in order, 0 (protected), 1 (busy), 2 (unmapped), NFG+3 (not
// a frame-group) and 9 (mapped, idle). The AFM reads the entries of 0, 1
// and 2 and rejects them without a write, exactly as it rejects LFSR
// draws; it takes NFG+3 without a read; it pushes {9, S=1} and writes back
// the entry of 9 with B=1 and nothing else. The LFSR never steps.
func TestExternalVictimRejectsLikeADraw(t *testing.T) {
	const nfg = 64
	table := make([]uint64, nfg)
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
	cfg := smallConfig(nfg, 2, 1, 32)
	cfg.Victims = afm.VictimExternal
	y := newSystem(t, cfg, fastMemory(5), table, checked)
	v := y.p.Victim
	require.NotNil(t, v)
	offers := []uint64{0, 1, 2, nfg + 3, 9}
	var taken, victimReads []uint64
	writes := 0
	lfsr0 := y.da.LFSR.State.Get()
	y.waitFor("a victim", func() bool {
		if y.p.DstValid.Get() {
			return true
		}
		v.Valid.Set(len(offers) > 0)
		if len(offers) > 0 {
			v.Bits.Set(offers[0])
		}
		if v.Fire() {
			taken = append(taken, offers[0])
			offers = offers[1:]
		}
		if y.p.Mem.ReqValid.Get() && y.p.Mem.ReqReady.Get() {
			a := y.p.Mem.ReqAddr.Get() / ipgt.EntryBytes
			if y.p.Mem.ReqWrite.Get() {
				writes++
				require.Equal(t, uint64(9), a)
				require.Equal(t, ipgt.PickVictim(mapped(9)), y.p.Mem.ReqWData.Get())
			} else if len(taken) > 0 {
				victimReads = append(victimReads, a)
			}
		}
		return false
	}, 100000)
	v.Valid.Set(false)
	p, s := y.pop()
	assert.Equal(t, []any{uint64(9), true}, []any{p, s})
	assert.Equal(t, []uint64{0, 1, 2, nfg + 3, 9}, taken)
	assert.Equal(t, []uint64{0, 1, 2, 9}, victimReads, "one entry read per candidate that names a frame-group")
	assert.Equal(t, 1, writes)
	assert.Equal(t, lfsr0, y.da.LFSR.State.Get(), "the LFSR is not used")
	for i, w := range table {
		if i != 9 {
			assert.Equal(t, w, y.mem.Peek(i), "entry %d", i)
		}
	}
}

// TestExternalVictimPortIdle: with no candidate offered the AFM keeps
// serving map writes and software ops in victim mode, and a candidate made
// a victim by a map write is then taken.
func TestExternalVictimPortIdle(t *testing.T) {
	table := make([]uint64, 32)
	for i := range table {
		table[i] = ipgt.Protected
	}
	cfg := smallConfig(32, 2, 1, 32)
	cfg.Victims = afm.VictimExternal
	y := newSystem(t, cfg, fastMemory(20), table, checked)
	for range 3000 {
		y.step()
	}
	y.mapTo(5, 3, 0x55)
	y.settleOps()
	require.Equal(t, ipgt.Mapped(3, 0x55), y.mem.Peek(5))
	require.False(t, y.p.DstValid.Get())
	y.p.Victim.Valid.Set(true)
	y.p.Victim.Bits.Set(5)
	y.waitFor("the victim", y.p.DstValid.Get, 1000)
	y.p.Victim.Valid.Set(false)
	p, s := y.pop()
	assert.Equal(t, []any{uint64(5), true}, []any{p, s})
	assert.Equal(t, ipgt.PickVictim(ipgt.Mapped(3, 0x55)), y.mem.Peek(5))
}
