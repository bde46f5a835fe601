package cache

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// bench owns a tag array and offers it a script of accesses in order, one
// per cycle, each no earlier than its cycle and again after a refusal;
// a miss's sectors arrive fetchLatency cycles after the miss is resolved.
type bench struct {
	rtl.Base
	tags    *Tags
	script  []timed
	next    *rtl.Reg[uint32]
	results []resolved
}

type timed struct {
	at uint64
	a  Access
}

type resolved struct {
	cycle uint64
	r     Result
}

const fetchLatency = 100

func newBench(t *testing.T, cfg Config, script []timed) (*rtl.Sim, *bench) {
	t.Helper()
	s := rtl.New(rtl.Options{Checked: true})
	b := &bench{script: script}
	s.Add(b, "bench")
	var err error
	b.tags, err = New(&b.Base, "l2", cfg)
	require.NoError(t, err)
	b.tags.Clear()
	b.next = rtl.NewReg[uint32](&b.Base, "next", 32, 0)
	s.Reset()
	return s, b
}

func (b *bench) Drive() {}

func (b *bench) Eval() {
	now := b.Now()
	var in *Access
	i := int(b.next.Q())
	if i < len(b.script) && b.script[i].at <= now {
		in = &b.script[i].a
	}
	r, done, accepted := b.tags.Step(now, in, func(uint8) uint64 { return now + fetchLatency })
	if done {
		b.results = append(b.results, resolved{now, r})
	}
	if accepted {
		b.next.Set(uint32(i + 1))
	}
}

func (b *bench) run(t *testing.T, s *rtl.Sim, cycles uint64) {
	t.Helper()
	require.NoError(t, s.Run(cycles))
}

var l2 = Config{Sets: 64, Ways: 16, LineBytes: 128, SectorBytes: 32, WriteBack: true, HitLatency: 120}

// TestCycleTable: the pipeline's timing, by hand.
//
//	cycle 0    read A (line 0, sector 0) reads set 0
//	cycle 1    A resolves: a miss, fetched at 1 + 100 = 101; B (line 0,
//	           sector 0) is refused: stage 2 writes set 0 this cycle
//	cycle 2    B reads set 0 (now holding A's line)
//	cycle 3    B resolves: a hit on A's pending fill, due max(2 + 120,
//	           101) = 122; C (line 64, set 0 again: 64 sets) is refused
//	cycle 4    C reads set 0; 5: C misses (a second way), due 105
//	cycle 300  D reads line 0 sectors 0-1; 301: sector 1 is missing,
//	           due 401; E (line 1, set 1) reads in 301 with no conflict
//	cycle 302  E resolves: a miss, due 402
//	cycle 400  F writes line 0 sector 3; 401: a write hit, dirty
//	cycle 500  G invalidates line 0; 501: one dirty sector written back
func TestCycleTable(t *testing.T) {
	script := []timed{
		{0, Access{Line: 0, Sectors: 0b0001, Kind: Read, ID: 1}},
		{1, Access{Line: 0, Sectors: 0b0001, Kind: Read, ID: 2}},
		{1, Access{Line: 64, Sectors: 0b0001, Kind: Read, ID: 3}},
		{300, Access{Line: 0, Sectors: 0b0011, Kind: Read, ID: 4}},
		{300, Access{Line: 1, Sectors: 0b0001, Kind: Read, ID: 5}},
		{400, Access{Line: 0, Sectors: 0b1000, Kind: Write, ID: 6}},
		{500, Access{Line: 0, Kind: Invalidate, ID: 7}},
	}
	s, b := newBench(t, l2, script)
	b.run(t, s, 600)
	type row struct {
		cycle     uint64
		id        uint32
		hit       bool
		missing   uint8
		due       uint64
		writeBack int
	}
	var got []row
	for _, r := range b.results {
		got = append(got, row{r.cycle, r.r.ID, r.r.Hit, r.r.Missing, r.r.Due, r.r.WriteBack})
	}
	assert.Equal(t, []row{
		{1, 1, false, 0b0001, 101, 0},
		{3, 2, true, 0, 122, 0},
		{5, 3, false, 0b0001, 105, 0},
		{301, 4, false, 0b0010, 401, 0},
		{302, 5, false, 0b0001, 402, 0},
		{401, 6, true, 0, 0, 0},
		{501, 7, true, 0, 0, 1},
	}, got)
	st := b.tags.Stats()
	assert.Equal(t, Stats{Hits: 1, Misses: 4, Invalidated: 1, WriteBacks: 1, TagReads: 7, TagWrites: 7}, st)
}

// refModel is the reference: per set, a recency-ordered list of lines with
// their valid and dirty sectors.
type refModel struct {
	cfg  Config
	sets map[int][]refLine // most recent first
}

type refLine struct {
	line         uint64
	valid, dirty uint8
}

func (m *refModel) access(a Access) (hit bool, missing uint8, writeBack int) {
	set := int(a.Line % uint64(m.cfg.Sets))
	lines := m.sets[set]
	idx := -1
	for i, l := range lines {
		if l.line == a.Line {
			idx = i
		}
	}
	dirtyCount := func(d uint8) int {
		n := 0
		for ; d != 0; d &= d - 1 {
			n++
		}
		return n
	}
	if a.Kind == Invalidate {
		if idx < 0 {
			return false, 0, 0
		}
		wb := dirtyCount(lines[idx].dirty)
		m.sets[set] = append(lines[:idx:idx], lines[idx+1:]...)
		return true, 0, wb
	}
	if idx < 0 && a.Kind == Write && !m.cfg.WriteBack {
		return false, 0, 0
	}
	var l refLine
	if idx >= 0 {
		l = lines[idx]
		lines = append(lines[:idx:idx], lines[idx+1:]...)
		missing = a.Sectors &^ l.valid
	} else {
		if len(lines) == m.cfg.Ways {
			writeBack = dirtyCount(lines[len(lines)-1].dirty)
			lines = lines[:len(lines)-1]
		}
		l = refLine{line: a.Line}
		missing = a.Sectors
	}
	l.valid |= a.Sectors
	if a.Kind == Write {
		if m.cfg.WriteBack {
			l.dirty |= a.Sectors
		}
		missing = 0
		hit = idx >= 0
	} else {
		hit = missing == 0
	}
	m.sets[set] = append([]refLine{l}, lines...)
	return hit, missing, writeBack
}

// TestRandomAgainstReference: seeded random reads, writes and
// invalidations over a few sets' worth of lines, for a write-back L2 and a
// write-through L1, give the reference model's hits, missing sectors and
// write-backs, access for access.
func TestRandomAgainstReference(t *testing.T) {
	l1 := Config{Sets: 4, Ways: 6, LineBytes: 128, SectorBytes: 32, HitLatency: 1}
	for _, cfg := range []Config{{Sets: 4, Ways: 16, LineBytes: 128, SectorBytes: 32, WriteBack: true, HitLatency: 120}, l1} {
		rng := rand.New(rand.NewPCG(7, uint64(cfg.Ways)))
		var script []timed
		for i := 0; i < 5000; i++ {
			a := Access{Line: uint64(rng.IntN(cfg.Sets * cfg.Ways * 2)), Sectors: uint8(1 + rng.IntN(15)), ID: uint32(i)}
			switch p := rng.IntN(10); {
			case p < 2:
				a.Kind = Write
			case p < 3:
				a.Kind, a.Sectors = Invalidate, 0
			}
			script = append(script, timed{uint64(rng.IntN(3)) * uint64(i), a})
		}
		s, b := newBench(t, cfg, script)
		b.run(t, s, 3*5000+10)
		require.Len(t, b.results, len(script))
		ref := &refModel{cfg: cfg, sets: map[int][]refLine{}}
		for i, r := range b.results {
			hit, missing, wb := ref.access(script[i].a)
			require.Equal(t, uint32(i), r.r.ID)
			require.Equal(t, []any{hit, missing, wb}, []any{r.r.Hit, r.r.Missing, r.r.WriteBack}, "access %d %+v", i, script[i].a)
		}
	}
}

// TestFlushEmptiesTheSet: three lines of set 5 (lines 5, 69 and 133 with
// 64 sets), two of them written (one and two dirty sectors), and a line
// of set 6; a Flush of set 5 removes the three and writes back 1 + 2 = 3
// sectors, leaves set 6 alone, and a later read of line 5 misses. Offered
// back to back, an access to the set stage 2 holds waits a cycle:
//
//	line 5   read at 0, resolved at 1
//	line 69  refused at 1 (set 5 in stage 2), read at 2, resolved at 3
//	line 133 refused at 3, read at 4, resolved at 5
//	line 6   read at 5, resolved at 6
//	Flush 5  read at 6, resolved at 7
//	line 5   refused at 7, read at 8, resolved at 9: a miss
//	line 6   read at 9, resolved at 10: a hit
func TestFlushEmptiesTheSet(t *testing.T) {
	s, b := newBench(t, l2, []timed{
		{0, Access{Line: 5, Sectors: 1, Kind: Read}},
		{0, Access{Line: 69, Sectors: 1, Kind: Write}},
		{0, Access{Line: 133, Sectors: 3, Kind: Write}},
		{0, Access{Line: 6, Sectors: 1, Kind: Read}},
		{0, Access{Line: 5, Kind: Flush}},
		{0, Access{Line: 5, Sectors: 1, Kind: Read, ID: 1}},
		{0, Access{Line: 6, Sectors: 1, Kind: Read, ID: 2}},
	})
	b.run(t, s, 20)
	require.Len(t, b.results, 7)
	var cycles []uint64
	for _, r := range b.results {
		cycles = append(cycles, r.cycle)
	}
	assert.Equal(t, []uint64{1, 3, 5, 6, 7, 9, 10}, cycles)
	f := b.results[4].r
	assert.Equal(t, Flush, f.Kind)
	assert.True(t, f.Hit, "the set held lines")
	assert.Equal(t, 3, f.WriteBack, "1 + 2 dirty sectors")
	assert.False(t, b.results[5].r.Hit, "line 5 was flushed")
	assert.True(t, b.results[6].r.Hit, "set 6 untouched")
	assert.Equal(t, uint64(3), b.tags.Stats().Invalidated)
	assert.Equal(t, uint64(3), b.tags.Stats().WriteBacks)
}
