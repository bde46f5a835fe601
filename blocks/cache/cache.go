// Package cache is a sectored, set-associative data-cache tag array: the
// L2 slice of a GPU memory sub-partition and the per-SM L1 data cache of the
// UVMMU paper's Table I (SPEC 2), as the UVMSmart simulator configures them
// for the GTX 1080 Ti (configs/GeForceGTX1080Ti/gpgpusim.config:56-61):
// 128 B lines of four 32 B sectors, true LRU, allocate on a read miss, and
// for the L2 write-back with write-allocate of the written sectors (the
// "L:B:m:W" of -gpgpu_cache:dl2).
//
// The model holds no data values. Each set is one word of the tag SRAM
// (one 64-bit way entry per way, Layout below) and one word of the ready
// SRAM (the cycle each way's data is, or will be, in the array: a miss
// records when its fill lands, so a later hit on that line waits for the
// fill as an MSHR merge does).
//
// # Pipeline
//
// Tags is a two-stage pipeline that its owning block steps from Eval, one
// access per cycle: in cycle c an accepted access reads its set from the
// tag SRAM and, if it is a read or write, from the ready SRAM (an
// invalidation or flush has no use for the ready word); in c+1 it compares
// the tags, updates the set (LRU ranks, sectors, dirty bits, the victim's
// replacement) and writes it back, and Step returns its Result. The SRAMs
// are read-first, so an access to the set that stage 2 writes in the same
// cycle would read a stale word: Step refuses it (a one-cycle set-conflict
// bubble) and the owner offers it again.
package cache

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// Kind is what an access does.
type Kind uint8

const (
	// Read looks the line up; missing sectors are fetched and the line is
	// allocated if absent.
	Read Kind = iota
	// Write writes the sectors: write-back caches allocate the line and
	// mark the sectors valid and dirty without a fetch; write-through ones
	// (WriteBack false) pass the write on and keep only a present line.
	Write
	// Invalidate removes the line; its dirty sectors are written back.
	Invalidate
	// Flush empties the set Line names (Line is the set index, below
	// Sets): every valid way is removed and its dirty sectors written
	// back, one set per access, so a whole-cache flush is Sets accesses
	// through the same two-stage pipeline as any other.
	Flush
)

// Access is one request to the tag array.
type Access struct {
	Line    uint64 // line address (byte address / LineBytes)
	Sectors uint8  // sectors touched, bit i = sector i
	Kind    Kind
	ID      uint32 // the owner's tag, returned in the Result
}

// Result is a resolved access.
type Result struct {
	Access
	// Hit: every requested sector was present (a Write or Invalidate
	// reports whether the line was present).
	Hit bool
	// Missing are the requested sectors the array did not hold: the owner
	// fetches them from the next level.
	Missing uint8
	// Due is the cycle the data is available: for a hit, the hit latency
	// or the line's pending fill, whichever is later; for a miss, what the
	// owner's fetch returned.
	Due uint64
	// WriteBack is the number of dirty sectors leaving the array (the
	// victim's on a replacement, the line's on an invalidation).
	WriteBack int
	// Set and Way locate the line in the array.
	Set, Way int
}

// Config sizes one tag array.
type Config struct {
	Sets        int  // power of two
	Ways        int  // 1..MaxWays
	LineBytes   int  // power of two
	SectorBytes int  // power of two, LineBytes/SectorBytes <= MaxSectors
	WriteBack   bool // write-back with write-allocate; else write-through, no write-allocate
	HitLatency  int  // cycles from the access to its data on a hit
}

// Limits of the way-entry layout.
const (
	MaxWays    = 16
	MaxSectors = 4
	maxSets    = 1 << 20
)

// Validate reports the first parameter outside its range.
func (c Config) Validate() error {
	pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
	switch {
	case !pow2(c.Sets) || c.Sets > maxSets:
		return fmt.Errorf("cache: sets %d must be a power of two up to %d", c.Sets, maxSets)
	case c.Ways < 1 || c.Ways > MaxWays:
		return fmt.Errorf("cache: ways %d outside 1..%d", c.Ways, MaxWays)
	case !pow2(c.LineBytes) || c.LineBytes > 4096:
		return fmt.Errorf("cache: line bytes %d must be a power of two up to 4096", c.LineBytes)
	case !pow2(c.SectorBytes) || c.SectorBytes > c.LineBytes || c.LineBytes/c.SectorBytes > MaxSectors:
		return fmt.Errorf("cache: sector bytes %d must be a power of two dividing the %d B line into at most %d sectors", c.SectorBytes, c.LineBytes, MaxSectors)
	case c.HitLatency < 1 || c.HitLatency > 100000:
		return fmt.Errorf("cache: hit latency %d outside 1..100000", c.HitLatency)
	}
	return nil
}

// Bytes is the capacity.
func (c Config) Bytes() int { return c.Sets * c.Ways * c.LineBytes }

// Sectors is the number of sectors per line.
func (c Config) Sectors() int { return c.LineBytes / c.SectorBytes }

// Layout of a way entry (64 bits): the valid sectors, the dirty sectors,
// the LRU rank (0 most recently used) and the tag (line / Sets).
const (
	validLSB = 0
	dirtyLSB = MaxSectors
	rankLSB  = 2 * MaxSectors
	rankBits = 4
	tagLSB   = rankLSB + rankBits
)

type way uint64

func (w way) valid() uint8 { return uint8(w>>validLSB) & (1<<MaxSectors - 1) }
func (w way) dirty() uint8 { return uint8(w>>dirtyLSB) & (1<<MaxSectors - 1) }
func (w way) rank() int    { return int(w>>rankLSB) & (1<<rankBits - 1) }
func (w way) tag() uint64  { return uint64(w) >> tagLSB }

func makeWay(tag uint64, valid, dirty uint8, rank int) way {
	return way(tag<<tagLSB | uint64(rank)<<rankLSB | uint64(dirty)<<dirtyLSB | uint64(valid)<<validLSB)
}

// Set is one SRAM word: a way entry per way.
type Set [MaxWays]uint64

// Tags is one tag array with its two-stage lookup pipeline. It is part of
// the block that creates it: that block's Eval calls Step at most once per
// cycle.
type Tags struct {
	cfg     Config
	setBits int

	tags  *rtl.SRAM[Set] // port 0 reads, port 1 writes
	ready *rtl.SRAM[Set] // the cycle each way's data is in the array

	s2Valid *rtl.Reg[bool]   // stage 2 holds an access
	s2Line  *rtl.Reg[uint64] // its line
	s2Meta  *rtl.Reg[uint64] // {ID, Kind, Sectors}

	hits, misses, invalidated, writeBacks *rtl.Reg[uint64]
}

// New builds a tag array owned by block b, its names under prefix.
func New(b *rtl.Base, prefix string, cfg Config) (*Tags, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sram := rtl.SRAMConfig{Depth: cfg.Sets, Width: cfg.Ways * 64, Ports: 2, ReadLatency: 1}
	t := &Tags{
		cfg:         cfg,
		setBits:     bits.TrailingZeros(uint(cfg.Sets)),
		tags:        rtl.NewSRAM[Set](b, prefix+".tags", sram),
		ready:       rtl.NewSRAM[Set](b, prefix+".ready", sram),
		s2Valid:     rtl.NewFlag(b, prefix+".s2_valid", false),
		s2Line:      rtl.NewReg[uint64](b, prefix+".s2_line", 64, 0),
		s2Meta:      rtl.NewReg[uint64](b, prefix+".s2_meta", 64, 0),
		hits:        rtl.NewReg[uint64](b, prefix+".hits", 64, 0),
		misses:      rtl.NewReg[uint64](b, prefix+".misses", 64, 0),
		invalidated: rtl.NewReg[uint64](b, prefix+".invalidated", 64, 0),
		writeBacks:  rtl.NewReg[uint64](b, prefix+".writebacks", 64, 0),
	}
	return t, nil
}

// Config returns the array's geometry.
func (t *Tags) Config() Config { return t.cfg }

// SetOf is the set a line maps to.
func (t *Tags) SetOf(line uint64) int { return int(line & uint64(t.cfg.Sets-1)) }

// Busy reports whether stage 2 holds an access (the owner keeps stepping).
func (t *Tags) Busy() bool { return t.s2Valid.Q() }

// Clear empties the array, with the ways of every set at distinct LRU
// ranks: a backdoor the owner calls when it is built (SRAM contents
// survive reset).
func (t *Tags) Clear() {
	for s := 0; s < t.cfg.Sets; s++ {
		var word Set
		for i := 0; i < t.cfg.Ways; i++ {
			word[i] = uint64(makeWay(0, 0, 0, i))
		}
		t.tags.Load(s, word)
		t.ready.Load(s, Set{})
	}
}

// Step advances the pipeline one cycle at now: it resolves the access in
// stage 2, if any (done), and accepts in, if offered and not in conflict
// with stage 2's set (accepted). fetch(missing) is called for a Read miss
// and returns the cycle the missing sectors arrive from the next level.
func (t *Tags) Step(now uint64, in *Access, fetch func(missing uint8) uint64) (r Result, done, accepted bool) {
	s2set := -1
	if t.s2Valid.Q() {
		r = t.resolve(now, fetch)
		done = true
		s2set = r.Set
	}
	if in != nil && t.SetOf(in.Line) != s2set {
		set := t.SetOf(in.Line)
		t.tags.Read(0, set)
		if in.Kind == Read || in.Kind == Write {
			t.ready.Read(0, set)
		}
		t.s2Line.Set(in.Line)
		t.s2Meta.Set(uint64(in.ID)<<16 | uint64(in.Kind)<<8 | uint64(in.Sectors))
		accepted = true
	}
	if accepted != t.s2Valid.Q() {
		t.s2Valid.Set(accepted)
	}
	return r, done, accepted
}

// resolve compares and updates the set read in the previous cycle.
func (t *Tags) resolve(now uint64, fetch func(uint8) uint64) Result {
	meta := t.s2Meta.Q()
	a := Access{Line: t.s2Line.Q(), Sectors: uint8(meta), Kind: Kind(meta >> 8 & 0xff), ID: uint32(meta >> 16)}
	set := t.SetOf(a.Line)
	tag := a.Line >> t.setBits
	word := t.tags.RData(0)
	r := Result{Access: a, Set: set, Way: -1}
	n := t.cfg.Ways
	hitWay := -1
	for i, w := range word[:n] {
		if way(w).tag() == tag && way(w).valid() != 0 { // the tag first: it rarely matches
			hitWay = i
			break
		}
	}
	switch a.Kind {
	case Flush:
		lines := 0
		for i := 0; i < n; i++ {
			if w := way(word[i]); w.valid() != 0 {
				r.WriteBack += bits.OnesCount8(w.dirty())
				word[i] = uint64(makeWay(0, 0, 0, w.rank()))
				lines++
			}
		}
		if r.Hit = lines > 0; r.Hit {
			t.count(t.invalidated, lines)
			t.count(t.writeBacks, r.WriteBack)
			t.tags.Write(1, set, word)
		}
		return r
	case Invalidate:
		if hitWay >= 0 {
			w := way(word[hitWay])
			r.Hit, r.Way, r.WriteBack = true, hitWay, bits.OnesCount8(w.dirty())
			word[hitWay] = uint64(makeWay(0, 0, 0, w.rank()))
			t.invalidated.Set(t.invalidated.Q() + 1)
			t.count(t.writeBacks, r.WriteBack)
			t.tags.Write(1, set, word)
		}
		return r
	case Write:
		if hitWay < 0 && !t.cfg.WriteBack {
			return r // write-through, no write-allocate: the write goes on
		}
	}
	rdy := t.ready.RData(0)
	w := way(0)
	if hitWay >= 0 {
		w = way(word[hitWay])
		r.Way = hitWay
		r.Missing = a.Sectors &^ w.valid()
	} else {
		r.Way = t.victim(&word)
		w = way(word[r.Way])
		if w.valid() != 0 {
			r.WriteBack = bits.OnesCount8(w.dirty())
			t.count(t.writeBacks, r.WriteBack)
		}
		r.Missing = a.Sectors
		w = makeWay(tag, 0, 0, w.rank())
		rdy[r.Way] = 0
	}
	newReady := hitWay < 0
	valid, dirty := w.valid()|a.Sectors, w.dirty()
	switch a.Kind {
	case Write:
		r.Hit = hitWay >= 0
		if t.cfg.WriteBack {
			dirty |= a.Sectors
		}
		r.Missing = 0
	default:
		r.Hit = r.Missing == 0
		if r.Hit {
			r.Due = max(now+uint64(t.cfg.HitLatency)-1, rdy[r.Way])
			t.hits.Set(t.hits.Q() + 1)
		} else {
			r.Due = max(fetch(r.Missing), rdy[r.Way])
			rdy[r.Way] = r.Due
			t.misses.Set(t.misses.Q() + 1)
			newReady = true
		}
	}
	if newReady {
		t.ready.Write(1, set, rdy)
	}
	word[r.Way] = uint64(makeWay(tag, valid, dirty, w.rank()))
	touch(&word, n, r.Way)
	t.tags.Write(1, set, word)
	return r
}

// victim is the way to replace: an empty way if any, else the least
// recently used.
func (t *Tags) victim(word *Set) int {
	best := 0
	for i := 0; i < t.cfg.Ways; i++ {
		w := way(word[i])
		if w.valid() == 0 {
			return i
		}
		if w.rank() > way(word[best]).rank() {
			best = i
		}
	}
	return best
}

// touch makes way u the most recently used: ways more recent than it age
// by one. A way already the most recently used (rank 0, a run of hits on
// one line) leaves the ranks as they are.
func touch(word *Set, n, u int) {
	r := way(word[u]).rank()
	if r == 0 {
		return
	}
	for i := 0; i < n; i++ {
		w := way(word[i])
		switch {
		case i == u:
			word[i] = uint64(w) &^ (uint64(1<<rankBits-1) << rankLSB)
		case w.rank() < r:
			word[i] = uint64(w) + 1<<rankLSB
		}
	}
}

func (t *Tags) count(r *rtl.Reg[uint64], n int) {
	if n > 0 {
		r.Set(r.Q() + uint64(n))
	}
}

// Stats are the array's activity counters.
type Stats struct {
	Hits, Misses uint64 // reads
	Invalidated  uint64 // lines removed by Invalidate and Flush
	WriteBacks   uint64 // dirty sectors written back
	TagReads     uint64 // tag SRAM reads (one per access)
	TagWrites    uint64 // tag SRAM writes
}

// Stats reads the counters (between cycles).
func (t *Tags) Stats() Stats {
	return Stats{Hits: t.hits.Q(), Misses: t.misses.Q(), Invalidated: t.invalidated.Q(), WriteBacks: t.writeBacks.Q(),
		TagReads: t.tags.Reads, TagWrites: t.tags.Writes}
}
