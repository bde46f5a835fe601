package gpu

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/cache"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/rtl"
)

// CachesConfig sizes the cached data path.
type CachesConfig struct {
	SMs, Warps int
	// Slices is the number of memory sub-partitions, each with an L2 slice
	// (geometry L2) and its share of the DRAM bandwidth.
	Slices int
	L2     cache.Config
	// L1 is each SM's L1 data cache; global loads bypass it unless
	// L1Enabled.
	L1        cache.Config
	L1Enabled bool
	// DRAMLatency is the DRAM access latency after an L2 miss's sectors
	// have their slice's bandwidth; SliceByteTime is one byte's time on a
	// slice's channels, in 2^-FixedPointBits cycles.
	DRAMLatency   uint64
	SliceByteTime uint64
	// InputDepth is each SM's request FIFO in front of the caches;
	// InvalidateDepth the pages waiting to leave the caches.
	InputDepth      int
	InvalidateDepth int
	// Flushable gives the caches the Flush and Flushed ports: a
	// whole-cache flush on request (Caches, "Flush").
	Flushable bool
}

// Caches is the data path with the data caches of UVMMU Table I (SPEC 2),
// as the UVMSmart simulator's GTX 1080 Ti configuration builds it
// (configs/GeForceGTX1080Ti/gpgpusim.config:56-61, 99, 15-16): the SMs'
// local lines go, one per cycle per SM, through an input FIFO to the L1
// data cache (bypassed by global loads, -gmem_skip_L1D 1, unless enabled)
// and then to the L2 slice of their memory sub-partition (line address
// modulo Slices: 11 channels x 2 sub-partitions, 64 sets x 16 ways x 128 B
// each, write-back). Each slice takes one line per cycle, an invalidation
// first, else the SMs' lines by rotating priority. A hit is answered at the
// slice's hit latency (the sub-partition's ROP queue, -rop_latency 120,
// l2cache.cc:554); a miss fetches the missing 32 B sectors over its slice's
// channels and answers the DRAM latency (-dram_latency 100, l2cache.cc:235)
// after them, on top of the ROP latency. A victim's dirty sectors go back
// to DRAM over the same channels. A load's warp is answered when its last
// line's data is due; an SM takes one answer per cycle. The caches are
// tagged with virtual line addresses: a page's lines are invalidated
// whenever its mapping leaves GPU memory (the Unmap port, which observes
// the GMMU's page-table writes of remote or invalid PTEs), so a tag always
// names data in GPU memory. Zero-copy loads do not pass the caches.
//
// An L1 miss allocates the line with its fill due one L2 hit latency later:
// an L1 hit on a line whose fill is behind an L2 miss is answered early (the
// L1 is off in the reference configuration).
//
// # Flush
//
// With CachesConfig.Flushable, a request on Flush empties both levels, as
// MGPUSim's command processor flushes and invalidates every line of a
// GPU's L1 and L2 caches in a TLB shootdown (sarchlab/mgpusim
// amd/timing/cp/ctrlMiddleware.go:192-240). The flush is a state machine
// in four steps: drain (the caches keep taking the SMs' lines until every
// input FIFO, L1 miss queue, tag pipeline and the unmapped-page queue is
// empty), walk (the SMs' lines are refused; every L1 and L2 slice takes
// one cache.Flush access per cycle, set 0 first, through its ordinary
// two-stage tag pipeline, so the walk is max(L1 sets, L2 sets) cycles plus
// one to resolve the last set), write-back (each set's dirty sectors go to
// DRAM over their slice's channels as a victim's do, fetch; the flush
// waits until every slice's channels have sent them) and done (Flushed
// offered until taken).
type Caches struct {
	rtl.Base

	Req   []*rtl.Decoupled[LineReq] // from the SMs
	Resp  []*rtl.Decoupled[uint8]   // a load's warp, to the SMs
	Unmap ptw.PTEPort[uint64]       // observed: page-table writes
	// Flush requests a whole-cache flush; Flushed answers when it is
	// over. Nil unless CachesConfig.Flushable.
	Flush, Flushed *rtl.Decoupled[uint8]

	reqValid  *rtl.BitBus // the Req channels' Valid wires
	respValid *rtl.BitBus // the Resp channels' Valid wires: the SMs offered a warp

	cfg          CachesConfig
	linesPerPage int

	in       []*rtl.Ring[LineReq] // per SM: lines from the SM
	missQ    []*rtl.Ring[LineReq] // per SM: L1 misses on their way to the L2
	l1       []*cache.Tags
	l2       []*cache.Tags
	busy     *rtl.Vec[uint64] // per slice: fixed-point cycle its channels are next free
	left     *rtl.Vec[uint8]  // per SM x warp: a load's lines not yet resolved
	due      *rtl.Vec[uint64] // per SM x warp: its data's latest due cycle
	done     *rtl.Vec[uint64] // per SM: warps whose lines are all resolved
	rr       *rtl.Reg[uint32] // the SM with the first claim on the slices
	pages    *rtl.Ring[uint64]
	l2Pos    *rtl.Reg[uint8] // next line of the head page for the slices
	l1Pos    *rtl.Reg[uint8] // and for the L1s
	bytes    *rtl.Reg[uint64]
	unmapped *rtl.Reg[uint64] // pages that left GPU memory
	errFull  *rtl.Reg[bool]
	flushing *rtl.Reg[uint8]  // the flush's step (flushIdle..flushDone)
	flushPos *rtl.Reg[uint32] // the next set the walk flushes
	// Per-SM bit vectors that let Drive and Eval visit only the SMs with
	// something to do: bit i of queued is set while SM i's input FIFO or
	// L1 miss queue holds a line, of answered while done[i] is not zero;
	// redrive holds the SMs whose input FIFO or answered warps (done)
	// changed in the last evaluated cycle: the SMs whose Ready, or whose
	// offer when none of their warps is due, Drive must update.
	queued   *rtl.Reg[uint64]
	answered *rtl.Reg[uint64]
	redrive  *rtl.Reg[uint64]
	// Per SM, the earliest due cycle of its done warps (Never for none):
	// Drive looks for a warp to offer only once one can be due.
	firstDue *rtl.Vec[uint64]

	// Eval's scratch, allocated once: next values gathered over the
	// cycle and written to the registers at its end.
	// doneNew and busyNew hold the SMs' and slices' next values once
	// loaded (doneLoaded, busyLoaded), on first use in the cycle.
	active bool
	claim  []int     // by slice, for the slices in claims: the SM
	head   []LineReq // and its line
	// pipeBusy is a superset of the slices whose second stage holds an
	// access (cache.Tags.Busy, the source of truth, is checked for each):
	// the slices that accepted one in the last Eval. The caches stay awake
	// while a stage is busy, so an access never waits unseen. l2Busy is the
	// slices found busy in this cycle.
	pipeBusy, l2Busy         uint64
	invalLine                [64]uint64 // by slice, for the slices given an invalidation
	popIn, popMiss, pushMiss uint64     // by SM
	missReq                  []LineReq
	doneNew, busyNew, dueNew []uint64
	firstDueNew              []uint64 // by SM, for the SMs in doneLoaded
	rescan                   uint64   // SMs whose firstDueNew needs a search
	doneLoaded, busyLoaded   uint64
	leftNew                  []int
	touched                  []int
	bytesNew                 uint64
	flushState               uint8 // the flush step's next value
}

// NewCaches connects to the SMs' line ports and observes unmap.
func NewCaches(s *rtl.Sim, path string, cfg CachesConfig, sms []*SM, unmap ptw.PTEPort[uint64]) (*Caches, error) {
	if cfg.SMs != len(sms) || cfg.SMs < 1 || cfg.SMs > 64 || cfg.Slices < 1 || cfg.Slices > 64 || cfg.InputDepth < 1 || cfg.InvalidateDepth < 1 || cfg.SliceByteTime == 0 {
		return nil, fmt.Errorf("gpu: caches config %+v does not fit %d SMs", cfg, len(sms))
	}
	if cfg.L2.LineBytes != cfg.L1.LineBytes || cfg.L2.LineBytes > 1<<PageShift {
		return nil, fmt.Errorf("gpu: L1 and L2 lines (%d, %d B) must be one size up to a page", cfg.L1.LineBytes, cfg.L2.LineBytes)
	}
	n := cfg.SMs * cfg.Warps
	c := &Caches{cfg: cfg, Unmap: unmap, linesPerPage: 1 << PageShift / cfg.L2.LineBytes,
		claim: make([]int, cfg.Slices), head: make([]LineReq, cfg.Slices),
		missReq: make([]LineReq, cfg.SMs), doneNew: make([]uint64, cfg.SMs), firstDueNew: make([]uint64, cfg.SMs), busyNew: make([]uint64, cfg.Slices),
		dueNew: make([]uint64, n), leftNew: make([]int, n)}
	for k := range c.leftNew {
		c.leftNew[k] = -1
	}
	for _, m := range sms {
		c.Req = append(c.Req, m.LineReq)
		c.Resp = append(c.Resp, m.LineResp)
	}
	c.reqValid = rtl.ValidBus(s, path+".req_valid", c.Req)
	c.respValid = rtl.ValidBus(s, path+".resp_valid", c.Resp)
	s.Add(c, path)
	b := &c.Base
	if cfg.Flushable {
		c.Flush = rtl.NewDecoupled[uint8](s, path+".flush", 1)
		c.Flushed = rtl.NewDecoupled[uint8](s, path+".flushed", 1)
		c.Flush.Consumer(b)
		c.Flushed.Producer(b)
	}
	c.flushing = rtl.NewReg[uint8](b, "flush_state", 3, flushIdle)
	c.flushPos = rtl.NewReg[uint32](b, "flush_set", 32, 0)
	for i := range sms {
		c.in = append(c.in, rtl.NewRingOf[LineReq](b, fmt.Sprintf("sm%d.in", i), cfg.InputDepth, LineReqWidth, false))
		if cfg.L1Enabled {
			t, err := cache.New(b, fmt.Sprintf("sm%d.l1d", i), cfg.L1)
			if err != nil {
				return nil, fmt.Errorf("gpu: L1: %w", err)
			}
			t.Clear()
			c.l1 = append(c.l1, t)
			c.missQ = append(c.missQ, rtl.NewRingOf[LineReq](b, fmt.Sprintf("sm%d.l1_miss", i), 4, LineReqWidth, false))
		}
		c.Req[i].Consumer(b)
		c.Resp[i].Producer(b)
	}
	for i := 0; i < cfg.Slices; i++ {
		t, err := cache.New(b, fmt.Sprintf("l2.slice%d", i), cfg.L2)
		if err != nil {
			return nil, fmt.Errorf("gpu: L2: %w", err)
		}
		t.Clear()
		c.l2 = append(c.l2, t)
	}
	c.busy = rtl.NewVec[uint64](b, "dram_busy", cfg.Slices, 64, 0)
	c.left = rtl.NewVec[uint8](b, "left", cfg.SMs*cfg.Warps, countBits, 0)
	c.due = rtl.NewVec[uint64](b, "due", cfg.SMs*cfg.Warps, 64, 0)
	c.done = rtl.NewVec[uint64](b, "done", cfg.SMs, cfg.Warps, 0)
	c.firstDue = rtl.NewVec(b, "first_due", cfg.SMs, 64, rtl.Never)
	c.rr = rtl.NewReg[uint32](b, "rr", 6, 0)
	c.pages = rtl.NewRing[uint64](b, "unmapped", cfg.InvalidateDepth, pte.VPNBits, false)
	c.l2Pos = rtl.NewReg[uint8](b, "l2_pos", 8, 0)
	c.l1Pos = rtl.NewReg[uint8](b, "l1_pos", 8, 0)
	c.bytes = rtl.NewReg[uint64](b, "dram_bytes", 64, 0)
	c.errFull = rtl.NewFlag(b, "unmap_overflow", false)
	c.unmapped = rtl.NewReg[uint64](b, "unmapped", 64, 0)
	c.queued = rtl.NewReg[uint64](b, "queued", cfg.SMs, 0)
	c.answered = rtl.NewReg[uint64](b, "answered", cfg.SMs, 0)
	c.redrive = rtl.NewReg(b, "redrive", cfg.SMs, ^uint64(0)>>(64-cfg.SMs))
	b.Listen(unmap.Valid, unmap.Ready, unmap.Bits, unmap.PTE)
	return c, nil
}

// Drive offers each SM its lowest answered warp whose data is due, and
// takes lines while the SM's FIFO has room. An SM outside answered and
// redrive has no answered warp and neither had one nor changed its FIFO
// when its outputs were last driven, so its wires already hold what Drive
// would set; an SM outside redrive has the Ready it had. An SM outside
// redrive with no warp due yet had the same answered warps and first due
// cycle when its outputs were last driven, a cycle at which none was due
// either (time only advances), so it offers nothing already.
func (c *Caches) Drive() {
	now := c.Now()
	answered, redrive := c.answered.Q(), c.redrive.Q()
	if redrive != 0 {
		taking := c.flushing.Q() != flushWalk
		for set := redrive; set != 0; set &= set - 1 {
			i := bits.TrailingZeros64(set)
			c.Req[i].Ready.Set(taking && !c.in[i].Full())
		}
	}
	for set := answered | redrive; set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		if c.firstDue.At(i).Q() <= now {
			w := c.answer(i, now)
			c.Resp[i].Valid.Set(w >= 0)
			if w >= 0 {
				c.Resp[i].Bits.Set(uint8(w))
			}
		} else if redrive&(1<<i) != 0 {
			c.Resp[i].Valid.Set(false)
		}
	}
	if c.Flush != nil {
		c.Flush.Ready.Set(c.flushing.Q() == flushIdle)
		c.Flushed.Valid.Set(c.flushing.Q() == flushDone)
	}
}

// The flush's steps (Caches, "Flush").
const (
	flushIdle uint8 = iota
	flushDrain
	flushWalk
	flushWriteBack
	flushDone
)

// answer is the warp SM i is offered at now, or -1.
func (c *Caches) answer(i int, now uint64) int {
	due, base := c.due, i*c.cfg.Warps
	for d := c.done.At(i).Q(); d != 0; d &= d - 1 {
		w := bits.TrailingZeros64(d)
		if due.At(base+w).Q() <= now {
			return w
		}
	}
	return -1
}

// Eval moves lines through the FIFOs and the tag pipelines, resolves
// loads, and takes unmapped pages.
func (c *Caches) Eval() {
	now := c.Now()
	c.active = false
	c.doneLoaded, c.busyLoaded = 0, 0
	c.popIn, c.popMiss, c.pushMiss, c.rescan = 0, 0, 0, 0
	// Only an SM offered a warp can take it.
	for set := c.respValid.Get(); set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		if c.Resp[i].Fire() {
			c.loadDone(i)
			w := c.Resp[i].Bits.Get()
			c.doneNew[i] &^= 1 << w
			if c.due.At(i*c.cfg.Warps+int(w)).Q() == c.firstDueNew[i] {
				c.rescan |= 1 << i // it may have been the only warp due first
			}
			c.active = true
		}
	}
	c.bytesNew = c.bytes.Q()
	c.touched = c.touched[:0]
	walking, redriveAll := c.Flush != nil && c.evalFlush(now), uint64(0)
	if c.Flush != nil && c.flushing.Q() != c.flushState {
		if c.flushing.Q() == flushWalk || c.flushState == flushWalk {
			redriveAll = ^uint64(0) >> (64 - c.cfg.SMs) // Req's Ready changes
		}
		c.flushing.Set(c.flushState)
	}

	// Invalidations: the head page's lines in order, one per slice per
	// cycle, and one per cycle into every L1.
	invalidating := c.pages.Len() > 0 && !walking
	var page uint64
	l2Pos, l1Pos := int(c.l2Pos.Q()), int(c.l1Pos.Q())
	var inval uint64 // slices given an invalidation this cycle
	invalLine := &c.invalLine
	// Consecutive lines go to consecutive slices: from firstSlice, the
	// slice of line l2Pos, on.
	issuedTo, firstSlice := l2Pos, 0
	if invalidating {
		c.active = true
		page = c.pages.Head()
		line := page*uint64(c.linesPerPage) + uint64(l2Pos)
		s, sliceLine := int(line%uint64(c.cfg.Slices)), line/uint64(c.cfg.Slices)
		firstSlice = s
		for ; issuedTo < c.linesPerPage && inval&(1<<s) == 0; issuedTo++ {
			inval |= 1 << s
			invalLine[s] = sliceLine
			if s++; s == c.cfg.Slices {
				s, sliceLine = 0, sliceLine+1
			}
		}
	}

	if !walking {
		c.evalL1(now, invalidating, page, &l1Pos)
	}

	// Each slice: an invalidation first, else the first claim from the
	// rotating priority: an SM's forwarded L1 miss, else its FIFO head
	// (its writes only, when the L1s take the reads).
	claims := uint64(0) // the slices with an entry in claim
	// The SMs with a line queued, in rotating order from start: rotated
	// right by start, SM start is bit 0 and SM start-1 bit 63.
	start := int(c.rr.Q())
	queued := c.queued.Q()
	claimable := queued
	if walking {
		claimable = 0 // the SMs' lines wait for the walk
	}
	for set := bits.RotateLeft64(claimable, -start); set != 0; set &= set - 1 {
		i := (bits.TrailingZeros64(set) + start) & 63
		h, ok := c.candidate(i)
		if !ok {
			continue
		}
		if s := int(h.Line % uint64(c.cfg.Slices)); (inval|claims)&(1<<s) == 0 {
			c.claim[s], c.head[s] = i, h
			claims |= 1 << s
		}
	}
	// Only a slice given an access or holding one in its second stage
	// (pipeBusy) steps; in slice order.
	c.l2Busy = 0
	accepts := uint64(0)
	for set := inval | claims | c.pipeBusy; set != 0; set &= set - 1 {
		s := bits.TrailingZeros64(set)
		t := c.l2[s]
		busy := t.Busy()
		if busy {
			c.l2Busy |= 1 << s
		}
		if (inval|claims)&(1<<s) == 0 && !busy {
			continue // Step would neither resolve nor accept an access
		}
		var a cache.Access
		var in *cache.Access
		i := -1
		if claims&(1<<s) != 0 {
			i = c.claim[s]
		}
		var h LineReq
		switch {
		case inval&(1<<s) != 0:
			a = cache.Access{Line: invalLine[s], Kind: cache.Invalidate}
			in = &a
		case i >= 0:
			h = c.head[s]
			a = cache.Access{Line: h.Line / uint64(c.cfg.Slices), Sectors: h.Sectors, Kind: cache.Read, ID: uint32(i)<<WarpBits | uint32(h.Warp)}
			if h.Write {
				a.Kind = cache.Write
			}
			in = &a
		}
		r, resolved, accepted := t.Step(now, in, func(missing uint8) uint64 { return c.fetch(s, now, bits.OnesCount8(missing)) })
		if accepted {
			c.active = true
			accepts |= 1 << s
			switch {
			case inval&(1<<s) != 0:
				inval &^= 1 << s
			case c.l1 != nil && c.missQ[i].Len() > 0:
				c.popMiss |= 1 << i
			default:
				c.popIn |= 1 << i
				if !h.Write {
					c.startLoad(i, h)
				}
			}
		}
		if resolved {
			c.active = true
			if r.WriteBack > 0 {
				c.fetch(s, now, r.WriteBack)
			}
			if r.Kind == cache.Read {
				c.resolve(r.ID, r.Due)
			}
		}
	}
	c.pipeBusy = accepts
	if claims != 0 {
		c.rr.Set(uint32((start + 1) % len(c.in)))
	}
	if invalidating {
		// The slices took the head page's lines up to the first refused one.
		for p, s := l2Pos, firstSlice; p < issuedTo; p++ {
			if inval&(1<<s) != 0 {
				issuedTo = p
				break
			}
			if s++; s == c.cfg.Slices {
				s = 0
			}
		}
		l2Pos = issuedTo
	}

	// FIFOs: take the SMs' lines, pop the heads that went on. Only an SM
	// offering a line or with a head or miss that moved has work here.
	var fifoChanged uint64
	for set := c.reqValid.Get() | c.popIn | c.pushMiss | c.popMiss; set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		r := c.in[i]
		push := c.Req[i].Fire()
		popIn := c.popIn&(1<<i) != 0
		pushMiss, popMiss := c.pushMiss&(1<<i) != 0, c.popMiss&(1<<i) != 0
		if !push && !popIn && !pushMiss && !popMiss {
			continue
		}
		held := r.Len()
		if push || popIn {
			c.active = true
			fifoChanged |= 1 << i
			r.Update(push, c.Req[i].Bits.Get(), 0, popIn)
			held = held + b2u(push) - b2u(popIn)
		}
		if c.l1 != nil {
			held += c.missQ[i].Len() + b2u(pushMiss) - b2u(popMiss)
			if pushMiss || popMiss {
				c.missQ[i].Update(pushMiss, c.missReq[i], 0, popMiss)
			}
		}
		queued = queued&^(1<<i) | uint64(min(held, 1))<<i
	}
	update(c.queued, queued)

	// Unmapped pages.
	pagePop := invalidating && l2Pos >= c.linesPerPage && (c.l1 == nil || l1Pos >= c.linesPerPage)
	if pagePop {
		l2Pos, l1Pos = 0, 0
	}
	u := c.Unmap
	push := u.Fire() && (!u.PTE.Get().Valid() || u.PTE.Get().IsRemote())
	if push && c.pages.Full() && !pagePop {
		c.errFull.Set(true)
		push = false
	}
	if push || pagePop {
		c.active = true
		c.pages.Update(push, u.Bits.Get(), 0, pagePop)
	}
	if push {
		c.unmapped.Set(c.unmapped.Q() + 1)
	}
	update(c.l2Pos, uint8(l2Pos))
	update(c.l1Pos, uint8(l1Pos))
	answered, doneChanged := c.commitScratch()
	update(c.redrive, fifoChanged|doneChanged|redriveAll)
	if c.active || c.busyPipelines() {
		return
	}
	c.SleepUntil(c.nextDue(now, answered))
}

// evalFlush runs the flush's state machine for the cycle, leaving its
// next step in flushState, and reports whether the walk owns the tag
// pipelines this cycle.
func (c *Caches) evalFlush(now uint64) bool {
	state := c.flushing.Q()
	c.flushState = state
	if state != flushIdle {
		c.active = true
	}
	switch state {
	case flushIdle:
		if c.Flush.Fire() {
			c.flushState = flushDrain
			c.active = true
		}
	case flushDrain:
		// queued covers the L1 miss queues.
		if c.queued.Q() != 0 || c.pages.Len() > 0 {
			return false
		}
		for _, t := range c.l2 {
			if t.Busy() {
				return false
			}
		}
		for _, t := range c.l1 {
			if t.Busy() {
				return false
			}
		}
		c.flushState = flushWalk
		c.flushPos.Set(0)
	case flushWalk:
		pos := c.flushPos.Q()
		offered := false
		for s, t := range c.l2 {
			offered = c.flushSet(t, now, pos, s) || offered
		}
		for _, t := range c.l1 {
			offered = c.flushSet(t, now, pos, -1) || offered
		}
		if offered {
			c.flushPos.Set(pos + 1)
		} else {
			c.flushState = flushWriteBack
		}
		return true
	case flushWriteBack:
		for s := range c.l2 {
			if c.busy.At(s).Q() > now<<FixedPointBits {
				return false
			}
		}
		c.flushState = flushDone
	case flushDone:
		if c.Flushed.Fire() {
			c.flushState = flushIdle
		}
	}
	return false
}

// flushSet steps tag array t with the walk's set pos, if t has it, and
// sends the dirty sectors of the set it resolves over slice s's channels
// (s < 0: an L1, write-through). It reports whether pos was offered.
func (c *Caches) flushSet(t *cache.Tags, now uint64, pos uint32, s int) bool {
	var a cache.Access
	var in *cache.Access
	if int(pos) < t.Config().Sets {
		a = cache.Access{Line: uint64(pos), Kind: cache.Flush}
		in = &a
	}
	r, resolved, _ := t.Step(now, in, nil)
	if resolved && r.WriteBack > 0 && s >= 0 {
		c.fetch(s, now, r.WriteBack)
	}
	return in != nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// candidate is SM i's line that may go to its L2 slice this cycle.
func (c *Caches) candidate(i int) (LineReq, bool) {
	if c.l1 != nil && c.missQ[i].Len() > 0 {
		return c.missQ[i].Head(), true
	}
	if c.popIn&(1<<i) != 0 || c.in[i].Len() == 0 {
		return LineReq{}, false
	}
	h := c.in[i].Head()
	if c.l1 != nil && !h.Write {
		return LineReq{}, false // reads go through the L1
	}
	return h, true
}

// evalL1 steps every L1: the head page's next line to invalidate, else its
// SM's next read while its miss queue has room for it.
func (c *Caches) evalL1(now uint64, invalidating bool, page uint64, l1Pos *int) {
	took := false
	for i, t := range c.l1 {
		var a cache.Access
		var in *cache.Access
		var h LineReq
		switch {
		case invalidating && *l1Pos < c.linesPerPage:
			a = cache.Access{Line: page*uint64(c.linesPerPage) + uint64(*l1Pos), Kind: cache.Invalidate}
			in = &a
		case c.in[i].Len() > 0 && !c.in[i].Head().Write && c.missQ[i].Len()+2 <= c.missQ[i].Depth():
			h = c.in[i].Head()
			a = cache.Access{Line: h.Line, Sectors: h.Sectors, Kind: cache.Read, ID: uint32(i)<<WarpBits | uint32(h.Warp)}
			in = &a
		}
		r, resolved, accepted := t.Step(now, in, func(uint8) uint64 { return now + uint64(c.cfg.L2.HitLatency) })
		if accepted {
			c.active = true
			if a.Kind == cache.Invalidate {
				took = true
			} else {
				c.popIn |= 1 << i
				c.startLoad(i, h)
			}
		}
		if resolved && r.Kind == cache.Read {
			c.active = true
			if r.Hit {
				c.resolve(r.ID, r.Due)
			} else {
				// The miss goes on to the L2; its load is already counted.
				c.pushMiss |= 1 << i
				c.missReq[i] = LineReq{Warp: uint8(r.ID & (MaxWarps - 1)), Line: r.Line, Sectors: r.Missing}
			}
		}
	}
	if took {
		*l1Pos++
	}
}

func (c *Caches) busyPipelines() bool {
	if c.l2Busy != 0 {
		return true
	}
	for i, t := range c.l1 {
		if t.Busy() || c.missQ[i].Len() > 0 {
			return true
		}
	}
	return false
}

// nextDue is the earliest due cycle of a warp of the SMs in answered, at
// least the next cycle (commitScratch has set the first due cycles of the
// SMs in doneLoaded).
func (c *Caches) nextDue(now, answered uint64) uint64 {
	t := rtl.Never
	for set := answered; set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		first := c.firstDueNew[i]
		if c.doneLoaded&(1<<i) == 0 {
			first = c.firstDue.At(i).Q()
		}
		t = min(t, max(first, now+1))
	}
	return t
}

// startLoad opens a load's line count on its first line.
func (c *Caches) startLoad(i int, h LineReq) {
	if h.First {
		k := i*c.cfg.Warps + int(h.Warp)
		c.touch(k)
		c.leftNew[k], c.dueNew[k] = int(h.Count), 0
	}
}

// resolve counts one of a load's lines as due at due; the load is
// answered once its last line is.
func (c *Caches) resolve(id uint32, due uint64) {
	i, w := int(id>>WarpBits), int(id&(MaxWarps-1))
	k := i*c.cfg.Warps + w
	c.touch(k)
	c.leftNew[k]--
	c.dueNew[k] = max(c.dueNew[k], due)
	if c.leftNew[k] == 0 {
		c.loadDone(i)
		c.doneNew[i] |= 1 << w
		c.firstDueNew[i] = min(c.firstDueNew[i], c.dueNew[k])
	}
}

// loadDone loads SM i's answered warps into the cycle's scratch.
func (c *Caches) loadDone(i int) {
	if c.doneLoaded&(1<<i) == 0 {
		c.doneLoaded |= 1 << i
		c.doneNew[i] = c.done.At(i).Q()
		c.firstDueNew[i] = c.firstDue.At(i).Q()
	}
}

// touch loads warp slot k's counters into the cycle's scratch.
func (c *Caches) touch(k int) {
	if c.leftNew[k] >= 0 {
		return
	}
	c.leftNew[k], c.dueNew[k] = int(c.left.At(k).Q()), c.due.At(k).Q()
	c.touched = append(c.touched, k)
}

// commitScratch writes the cycle's counters to the registers and returns
// the SMs that have answered warps afterwards (answered's next value) and
// those whose answered warps changed.
func (c *Caches) commitScratch() (answered, changed uint64) {
	answered = c.answered.Q()
	for set := c.doneLoaded; set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		d := c.doneNew[i]
		if r := c.done.At(i); r.Q() != d {
			r.Set(d)
			changed |= 1 << i
			if c.rescan&(1<<i) != 0 {
				c.firstDueNew[i] = c.firstDueOf(i, d)
			}
			update(c.firstDue.At(i), c.firstDueNew[i])
		}
		answered = answered&^(1<<i) | uint64(min(d, 1))<<i
	}
	for _, k := range c.touched {
		update(c.left.At(k), uint8(c.leftNew[k]))
		update(c.due.At(k), c.dueNew[k])
		c.leftNew[k] = -1
	}
	for set := c.busyLoaded; set != 0; set &= set - 1 {
		s := bits.TrailingZeros64(set)
		update(c.busy.At(s), c.busyNew[s])
	}
	update(c.bytes, c.bytesNew)
	update(c.answered, answered)
	return answered, changed
}

// firstDueOf is the earliest due cycle of SM i's warps in done, with
// this cycle's scratch (before commitScratch clears it), or Never.
func (c *Caches) firstDueOf(i int, done uint64) uint64 {
	t := rtl.Never
	for d := done; d != 0; d &= d - 1 {
		k := i*c.cfg.Warps + bits.TrailingZeros64(d)
		due := c.dueNew[k]
		if c.leftNew[k] < 0 {
			due = c.due.At(k).Q()
		}
		t = min(t, due)
	}
	return t
}

// fetch books n sectors on slice s's channels from now and returns the
// cycle their data is back: after the transfer, the DRAM latency and the
// ROP latency of the slice's hit path.
func (c *Caches) fetch(s int, now uint64, n int) uint64 {
	bytes := uint64(n * c.cfg.L2.SectorBytes)
	if c.busyLoaded&(1<<s) == 0 {
		c.busyLoaded |= 1 << s
		c.busyNew[s] = c.busy.At(s).Q()
	}
	b := max(c.busyNew[s], now<<FixedPointBits) + bytes*c.cfg.SliceByteTime
	c.busyNew[s] = b
	c.bytesNew += bytes
	return (b+1<<FixedPointBits-1)>>FixedPointBits + c.cfg.DRAMLatency + uint64(c.cfg.L2.HitLatency) - 1
}

// Err reports an invalidation queue overflow.
func (c *Caches) Err() error {
	if c.errFull.Q() {
		return fmt.Errorf("%s: more than %d unmapped pages waiting to leave the caches", c.Path(), c.cfg.InvalidateDepth)
	}
	return nil
}

// CacheStats are the caches' counters.
type CacheStats struct {
	L1Hits, L1Misses     uint64
	L2Hits, L2Misses     uint64
	Invalidated          uint64 // lines removed because their page left GPU memory
	WriteBackSectors     uint64
	DRAMBytes            uint64 // sectors fetched and written back
	TagReads, TagWrites  uint64 // tag SRAM activity
	L1Invalidated        uint64
	UnmappedPages        uint64 // pages seen leaving GPU memory
	UnmappedPagesPending uint64 // of which lines are still to invalidate
}

// Stats sums the counters (between cycles).
func (c *Caches) Stats() CacheStats {
	var st CacheStats
	for _, t := range c.l2 {
		x := t.Stats()
		st.L2Hits += x.Hits
		st.L2Misses += x.Misses
		st.Invalidated += x.Invalidated
		st.WriteBackSectors += x.WriteBacks
		st.TagReads += x.TagReads
		st.TagWrites += x.TagWrites
	}
	for _, t := range c.l1 {
		x := t.Stats()
		st.L1Hits += x.Hits
		st.L1Misses += x.Misses
		st.L1Invalidated += x.Invalidated
		st.TagReads += x.TagReads
		st.TagWrites += x.TagWrites
	}
	st.DRAMBytes = c.bytes.Q()
	st.UnmappedPages = c.unmapped.Q()
	st.UnmappedPagesPending = uint64(c.pages.Len())
	return st
}
