package da

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/evict"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// randomConfig draws a DA and memory configuration.
func randomConfig(rng *rand.Rand) (Config, dram.Config) {
	c := DefaultConfig()
	c.NFG = 40 + rng.Uint64N(1500)
	c.DCQDepth = 2 + rng.IntN(63)
	c.DCQThreshold = 1 + rng.IntN(c.DCQDepth)
	c.FrABWord = 32 << rng.IntN(4)
	c.IPGTBase = 8 * rng.Uint64N(1<<20)
	c.LFSRWidth = 12 + rng.IntN(21)
	c.LFSRSeed = 1 + rng.Uint64N(1<<c.LFSRWidth-1)
	m := dram.DefaultConfig(1)
	m.Latency = 1 + rng.IntN(300)
	m.BytesPerCycle = []float64{2, 5, 8, 64, 326.8}[rng.IntN(5)]
	return c, m
}

// randomTable draws an initial IPgT with free, protected, mapped, busy and
// odd entries.
func randomTable(rng *rand.Rand, nfg uint64) []uint64 {
	t := make([]uint64, nfg)
	pFree := rng.Float64() * 0.4
	for i := range t {
		x := rng.Float64()
		switch {
		case x < pFree:
			t[i] = ipgt.F
		case x < pFree+0.1:
			t[i] = ipgt.Protected
		case x < 0.95:
			t[i] = ipgt.Mapped(uint16(rng.IntN(4096)), rng.Uint64N(1<<48))
		case x < 0.97:
			t[i] = ipgt.Mapped(1, uint64(i)) | ipgt.B
		default:
			t[i] = rng.Uint64() // anything: the DA must treat every bit pattern safely
		}
	}
	return t
}

// completion is a consumer's follow-up on a destination it took: a map
// write when the migration finishes, or the driver's PROTECT.
type completion struct {
	due     uint64
	pfgn    uint64
	protect bool
	cid     uint16
	vpgn    uint64
}

type swReq struct {
	op   afm.SWOp
	pfgn uint64
}

type mapReq struct {
	pfgn uint64
	word uint64
}

// checker holds the reference model of the IPgT and the DCQ and the
// testbench's consumers, and checks the DA in every cycle.
type checker struct {
	t   *testing.T
	rng *rand.Rand
	y   *system
	cfg Config

	ref        []uint64
	freeIn     []int    // reservable entries per region
	grace      []uint64 // cycle until which a region's FrAB SET may be in flight
	free, vict int      // reservable and victim entries in ref
	queue      []dcq.Entry
	inQueue    []bool
	held       []bool // taken from the allocation port, completion not yet written
	// A pushed frame-group counts as reserved (or picked) from the push on;
	// its write-back, issued with the push, must carry exactly this value.
	pendingWB   []bool
	pendingWord []uint64

	todo     []completion
	mapOut   []mapReq // waiting to be offered on the map port
	swOut    []swReq  // waiting to be offered on the sw port
	mapAcc   []mapReq // accepted, not yet written
	swAcc    []swReq
	popRate  float64
	swRate   float64
	traffic  bool
	stuckFor uint64
	pushed   bool

	handed, victims, ops uint64

	meta evict.Metadata // the victim source, or nil
	walk evict.Ports    // its walk wires, driven here
}

func newChecker(t *testing.T, seed uint64, opts rtl.Options) *checker {
	return newCheckerWith(t, seed, opts, afm.VictimLFSR, "")
}

// newCheckerWith builds the checker with the given victim source. With
// afm.VictimExternal and no metadata the testbench offers random
// candidates, frame-groups of every kind and numbers beyond NFG, on the
// victim port. With metadata (an evict variant) that block offers them,
// learning from the DA's IPgT writes and from random walk touches the
// testbench shows it; the initial table then has no victim (the block
// learns of mapped frame-groups from their map writes, as in the system,
// whose IPgT starts all free).
func newCheckerWith(t *testing.T, seed uint64, opts rtl.Options, victims afm.VictimSource, metadata string) *checker {
	rng := rand.New(rand.NewPCG(seed, 0xda))
	cfg, mc := randomConfig(rng)
	cfg.Victims = victims
	table := randomTable(rng, cfg.NFG)
	if metadata != "" {
		for i, w := range table {
			if ipgt.Victim(w) {
				table[i] = ipgt.F
			}
		}
	}
	c := &checker{t: t, rng: rng, cfg: cfg, ref: table, traffic: true,
		popRate: 0.02 + 0.98*rng.Float64(), swRate: rng.Float64() * 0.01}
	regions := cfg.AFM().FrAB().Regions
	c.freeIn, c.grace = make([]int, regions), make([]uint64, regions)
	c.inQueue, c.held = make([]bool, cfg.NFG), make([]bool, cfg.NFG)
	c.pendingWB, c.pendingWord = make([]bool, cfg.NFG), make([]uint64, cfg.NFG)
	c.ref = make([]uint64, cfg.NFG)
	for i, w := range table {
		c.set(uint64(i), w)
	}
	var attach func(*rtl.Sim, Ports)
	if metadata != "" {
		attach = func(s *rtl.Sim, p Ports) {
			c.walk = evict.Ports{WalkValid: rtl.NewBit(s, "walk.valid"), WalkReady: rtl.NewBit(s, "walk.ready"),
				WalkPTE: rtl.NewWire[pte.PTE](s, "walk.pte", 64), IPgT: p.Mem, Victim: p.Victim}
			var err error
			c.meta, err = evict.New(s, "evict", evict.Config{Name: metadata, NFG: cfg.NFG, IPGTBase: cfg.IPGTBase, NRUClearCycles: 5000}, c.walk)
			require.NoError(t, err)
		}
	}
	c.y = newSystemWith(t, cfg, mc, table, opts, attach)
	return c
}

// set updates the reference entry and the derived counts.
func (c *checker) set(p, w uint64) {
	r := p / frab.FrameGroupsPerRegion
	old := c.ref[p]
	if ipgt.Reservable(old) {
		c.freeIn[r]--
		c.free--
	}
	if ipgt.Victim(old) {
		c.vict--
	}
	c.ref[p] = w
	if ipgt.Reservable(w) {
		c.freeIn[r]++
		c.free++
	}
	if ipgt.Victim(w) {
		c.vict++
	}
}

// drive sets this cycle's inputs: a consumer's ready, and the head of the
// map and software queues (held stable until accepted).
func (c *checker) drive(now uint64) {
	p := c.y.p
	p.DstReady.Set(c.traffic && c.rng.Float64() < c.popRate)
	for i := 0; i < len(c.todo); i++ {
		if d := c.todo[i]; d.due <= now {
			if d.protect {
				c.swOut = append(c.swOut, swReq{afm.OpProtect, d.pfgn})
			} else {
				c.mapOut = append(c.mapOut, mapReq{d.pfgn, ipgt.Mapped(d.cid, d.vpgn)})
			}
			c.todo = append(c.todo[:i], c.todo[i+1:]...)
			i--
		}
	}
	if c.traffic && c.rng.Float64() < c.swRate {
		op := afm.OpFree
		switch x := c.rng.IntN(20); {
		case x < 6:
			op = afm.OpUnprotect
		case x == 6:
			op = 3
		}
		c.swOut = append(c.swOut, swReq{op, c.rng.Uint64N(c.cfg.NFG + 4)})
	}
	if !p.Map.Valid.Get() && len(c.mapOut) > 0 {
		m := c.mapOut[0]
		e := ipgt.Unpack(m.word)
		p.Map.Valid.Set(true)
		p.Map.PFgN.Set(m.pfgn)
		p.Map.CID.Set(e.CID)
		p.Map.VPgN.Set(e.VPgN)
	}
	if c.meta != nil {
		// A walk result every few cycles, local or remote, in or beyond
		// the table.
		c.walk.WalkValid.Set(c.rng.IntN(3) == 0)
		c.walk.WalkReady.Set(c.rng.IntN(4) != 0)
		e := pte.Local(c.rng.Uint64N((c.cfg.NFG + 2) * 16))
		if c.rng.IntN(8) == 0 {
			e = pte.Remote(e.Frame())
		}
		c.walk.WalkPTE.Set(e)
	} else if v := p.Victim; v != nil && !v.Valid.Get() && c.rng.IntN(4) != 0 {
		v.Valid.Set(true)
		v.Bits.Set(c.candidate())
	}
	if !p.SW.Valid.Get() && len(c.swOut) > 0 {
		p.SW.Valid.Set(true)
		p.SW.Op.Set(uint8(c.swOut[0].op))
		p.SW.PFgN.Set(c.swOut[0].pfgn)
	}
}

// candidate is the testbench's victim-port offer: half the time the next
// legal victim of the reference table after a random frame-group, as an
// eviction-metadata block would offer, otherwise any number up to NFG/8
// beyond the table.
func (c *checker) candidate() uint64 {
	start := c.rng.Uint64N(c.cfg.NFG)
	if c.vict > 0 && c.rng.IntN(2) == 0 {
		for i := range c.cfg.NFG {
			if p := (start + i) % c.cfg.NFG; ipgt.Victim(c.ref[p]) {
				return p
			}
		}
	}
	return c.rng.Uint64N(c.cfg.NFG + c.cfg.NFG/8 + 1)
}

// observe checks every handshake of this cycle against the reference
// model, before the clock edge. It reports which input ports fired.
func (c *checker) observe(now uint64) (mapFired, swFired bool) {
	t, p, q := c.t, c.y.p, c.y.da.DCQ.Ports
	if q.PushFire() {
		e := dcq.Entry{PFgN: q.PushPFgN.Get(), Swap: q.PushSwap.Get()}
		w := c.ref[e.PFgN]
		require.False(t, c.held[e.PFgN] || c.inQueue[e.PFgN], "cycle %d: %d pushed while queued or held", now, e.PFgN)
		if e.Swap {
			require.True(t, ipgt.Victim(w), "cycle %d: victim %d is %#x: not mapped, unprotected and idle", now, e.PFgN, w)
			c.pendingWord[e.PFgN] = ipgt.PickVictim(w)
			c.victims++
		} else {
			require.True(t, ipgt.Reservable(w), "cycle %d: %d reserved from %#x", now, e.PFgN, w)
			c.pendingWord[e.PFgN] = ipgt.Reserve(w)
		}
		c.pendingWB[e.PFgN] = true
		c.set(e.PFgN, c.pendingWord[e.PFgN])
		c.queue = append(c.queue, e)
		c.inQueue[e.PFgN] = true
		c.pushed = true
	}
	if p.DstFire() {
		require.NotEmpty(t, c.queue, "cycle %d: destination from an empty queue", now)
		e := dcq.Entry{PFgN: p.DstPFgN.Get(), Swap: p.DstSwap.Get()}
		require.Equal(t, c.queue[0], e, "cycle %d: allocation port order", now)
		require.Zero(t, c.ref[e.PFgN]&ipgt.P, "cycle %d: protected %d handed out", now, e.PFgN)
		c.queue = c.queue[1:]
		c.inQueue[e.PFgN], c.held[e.PFgN] = false, true
		c.handed++
		c.todo = append(c.todo, completion{due: now + 1 + c.rng.Uint64N(400), pfgn: e.PFgN,
			protect: c.rng.IntN(10) == 0, cid: uint16(c.rng.IntN(4096)), vpgn: c.rng.Uint64N(1 << 48)})
	}
	if mapFired = p.Map.Fire(); mapFired {
		c.mapAcc = append(c.mapAcc, c.mapOut[0])
		c.mapOut = c.mapOut[1:]
	}
	if swFired = p.SW.Fire(); swFired {
		r := c.swOut[0]
		c.swOut = c.swOut[1:]
		if r.pfgn < c.cfg.NFG && r.op <= afm.OpUnprotect {
			c.swAcc = append(c.swAcc, r)
		}
		c.ops++
	}
	if p.Mem.ReqFire() && p.Mem.ReqWrite.Get() {
		c.write(now, (p.Mem.ReqAddr.Get()-c.cfg.IPGTBase)/ipgt.EntryBytes, p.Mem.ReqWData.Get())
	}
	return mapFired, swFired
}

// write classifies an IPgT write and checks its exact value.
func (c *checker) write(now, p, d uint64) {
	t := c.t
	require.Less(t, p, c.cfg.NFG, "cycle %d: write outside the IPgT", now)
	w := c.ref[p]
	switch {
	case c.pendingWB[p]:
		// Issued with the push, before any later transaction's write.
		require.Equal(t, c.pendingWord[p], d, "cycle %d: write-back of pushed %d", now, p)
		c.pendingWB[p] = false
	case len(c.mapAcc) > 0 && c.mapAcc[0].pfgn == p && c.mapAcc[0].word == d:
		c.mapAcc = c.mapAcc[1:]
		c.held[p] = false
	case len(c.swAcc) > 0 && c.swAcc[0].pfgn == p:
		want := ipgt.Freed
		switch {
		case c.swAcc[0].op == afm.OpProtect:
			want = ipgt.Protected
			c.held[p] = false
		case w&ipgt.B != 0:
			want = ipgt.FreedBusy
		default:
			c.grace[p/frab.FrameGroupsPerRegion] = now + 8
		}
		require.Equal(t, want, d, "cycle %d: op %d on %d (was %#x)", now, c.swAcc[0].op, p, w)
		c.swAcc = c.swAcc[1:]
	default:
		require.Failf(t, "unexpected IPgT write", "cycle %d: %#x to %d (was %#x); pending maps %v ops %v", now, d, p, w, c.mapAcc, c.swAcc)
	}
	c.set(p, d)
}

// invariants checks, after the clock edge, the FrAB invariant and
// liveness.
func (c *checker) invariants(now uint64, memLatency int) {
	t := c.t
	if !c.y.p.InitDone.Get() {
		return
	}
	for r, n := range c.freeIn {
		if n > 0 && c.grace[r] < now && !c.y.da.FrAB.RegionSet(r) {
			t.Fatalf("cycle %d: region %d has %d free frame-groups and a clear FrAB bit", now, r, n)
		}
	}
	if len(c.queue) < c.cfg.DCQThreshold && c.free+c.vict > 0 && !c.pushed {
		c.stuckFor++
	} else {
		c.stuckFor = 0
	}
	c.pushed = false
	// A sweep reads every region once; a victim draw succeeds with
	// probability (free+victims)/NFG; every IPgT access costs at most the
	// latency plus four cycles of bandwidth.
	if limit := 20000 + (c.cfg.NFG+40*c.cfg.NFG/uint64(1+c.vict+c.free))*uint64(memLatency+8); c.stuckFor >= limit {
		t.Fatalf("cycle %d: DCQ below threshold with %d free and %d victims but no destination for %d cycles", now, c.free, c.vict, c.stuckFor)
	}
}

func (c *checker) run(cycles uint64, memLatency int) {
	y := c.y
	for range cycles {
		now := y.sim.Cycle()
		c.drive(now)
		mapFired, swFired := c.observe(now)
		victimFired := c.meta == nil && y.p.Victim != nil && y.p.Victim.Fire()
		y.step()
		if mapFired {
			y.p.Map.Valid.Set(false)
		}
		if swFired {
			y.p.SW.Valid.Set(false)
		}
		if victimFired {
			y.p.Victim.Valid.Set(false)
		}
		c.invariants(now+1, memLatency)
	}
}

// TestRandomTraffic drives the DA with random initial tables, consumers that
// take destinations and map or protect them later, random FREE, UNPROTECT
// and invalid ops, and random memory latency and bandwidth; it checks
// every handshake and every IPgT write against the reference model, the
// FrAB invariant in every cycle, liveness, and finally that all traffic
// drains and the memory equals the reference table.
func TestRandomTraffic(t *testing.T) { randomTraffic(t, afm.VictimLFSR, "") }

// TestRandomTrafficExternalVictims is TestRandomTraffic with victim
// candidates from the victim port: the same checks hold for any candidate
// stream.
func TestRandomTrafficExternalVictims(t *testing.T) { randomTraffic(t, afm.VictimExternal, "") }

// TestRandomTrafficEvictionMetadata is TestRandomTraffic with each
// eviction-metadata block of blocks/evict as the victim source; it also
// requires that no map write was lost to the block.
func TestRandomTrafficEvictionMetadata(t *testing.T) {
	for _, name := range []string{evict.SeqLocal, evict.NRU, evict.Tree} {
		t.Run(name, func(t *testing.T) { randomTraffic(t, afm.VictimExternal, name) })
	}
}

func randomTraffic(t *testing.T, source afm.VictimSource, metadata string) {
	seeds, cycles := uint64(12), uint64(90_000)
	if metadata != "" {
		seeds = 6
	}
	if testing.Short() {
		seeds, cycles = 4, 10_000
	}
	var total, handed, victims, ops uint64
	for seed := range seeds {
		c := newCheckerWith(t, seed, checked, source, metadata)
		lat := c.y.mem.Config().Latency
		c.run(cycles, lat)
		c.traffic = false
		c.y.p.DstReady.Set(false)
		for n := 0; len(c.todo)+len(c.mapOut)+len(c.swOut)+len(c.mapAcc)+len(c.swAcc) > 0; n++ {
			require.Less(t, n, 200, "seed %d: traffic does not drain", seed)
			c.run(1000, lat)
		}
		c.run(uint64(64*(lat+10)), lat)
		require.NoError(t, c.y.mem.Err())
		if c.meta != nil {
			require.Zero(t, c.meta.LostMaps(), "seed %d: map writes lost to the metadata", seed)
		}
		for i, w := range c.ref {
			require.Equal(t, w, c.y.mem.Peek(i), "seed %d: IPgT entry %d", seed, i)
		}
		total += c.y.sim.Cycle()
		handed += c.handed
		victims += c.victims
		ops += c.ops
		t.Logf("seed %d: NFG %d DCQ %d/%d word %d latency %d: %d destinations (%d victims), %d software ops in %d cycles",
			seed, c.cfg.NFG, c.cfg.DCQDepth, c.cfg.DCQThreshold, c.cfg.FrABWord, lat, c.handed, c.victims, c.ops, c.y.sim.Cycle())
	}
	t.Logf("%d cycles, %d destinations, %d victims, %d software ops", total, handed, victims, ops)
	require.Positive(t, victims)
}

// TestIdleSkipAndOrderInvariance runs the same random traffic with idle
// skipping off, on, and with the block order shuffled, and requires
// identical VCD traces of every DA and memory signal.
func TestIdleSkipAndOrderInvariance(t *testing.T) {
	trace := func(opts rtl.Options, shuffle uint64) []byte {
		c := newChecker(t, 3, opts)
		if shuffle != 0 {
			c.y.sim.Shuffle(rand.New(rand.NewPCG(shuffle, 1)))
		}
		var buf bytes.Buffer
		require.NoError(t, c.y.sim.TraceVCD(&buf, "*"))
		c.run(30000, c.y.mem.Config().Latency)
		require.NoError(t, c.y.sim.CloseTrace())
		require.Positive(t, c.handed)
		return buf.Bytes()
	}
	want := trace(rtl.Options{Checked: true}, 0)
	require.True(t, bytes.Equal(want, trace(rtl.Options{Checked: true, SkipIdle: true}, 0)), "idle skipping changes the trace")
	for s := range uint64(3) {
		require.True(t, bytes.Equal(want, trace(rtl.Options{Checked: true, SkipIdle: true}, s+1)), "block order %d changes the trace", s+1)
	}
}
