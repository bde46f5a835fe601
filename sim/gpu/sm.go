package gpu

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// Scheduler is the warp-issue policy of an SM.
type Scheduler uint8

const (
	// GTO (greedy-then-oldest) keeps issuing from the last warp while it is
	// ready, and otherwise picks the oldest ready warp.
	GTO Scheduler = iota
	// LRR (loose round robin) picks the next ready warp after the last one.
	LRR
)

// ParseScheduler maps the configuration name to a Scheduler.
func ParseScheduler(name string) (Scheduler, error) {
	switch name {
	case "gto":
		return GTO, nil
	case "lrr":
		return LRR, nil
	}
	return 0, fmt.Errorf("gpu: scheduler %q unknown; allowed: gto, lrr", name)
}

// SMConfig sizes one SM.
type SMConfig struct {
	Warps          int // occupancy limit, 1..MaxWarps
	Scheduler      Scheduler
	LineBytes      int // coalescing granularity, a power of two
	TranslateQueue int // page translations buffered between issue and the L1 TLB
	// StreamLines sends a translated instruction's local lines to the
	// data caches one per cycle on LineReq (loads answered on LineResp,
	// stores released once their lines are out) instead of one DataReq;
	// zero-copy loads keep DataReq.
	StreamLines bool
	// RemoteLines sends the lines of a memory instruction that lie on a
	// remote page to the page's owner: when the page's translation hits,
	// one RemoteReq for them, the owner read from the PTE's frame
	// (RemoteOwnerShift). A load's remote lines come back on RemoteResp,
	// and its warp waits for them and for its local lines, which go to the
	// caches (StreamLines) or DRAM (DataReq) as usual; a store's remote
	// lines are posted. Without it a load that touches a remote page goes
	// to DataReq whole, marked Remote (the single-GPU system's zero-copy
	// loads over PCIe).
	RemoteLines bool
	// TranslateShift is log2 of the granule one lookup translates: 0 for
	// the 4 KB page (PageShift); the 2 MB page system looks up each
	// accessed migration unit, whose range its TLB entries record.
	TranslateShift int
}

// maxPagesPerOp bounds the distinct pages one warp instruction can touch:
// 32 lanes, each access inside one page (accesses are naturally aligned).
const maxPagesPerOp = workload.WarpSize

// TranslateQueueRange is the SMConfig.TranslateQueue NewSM accepts: room
// for two instructions' pages at least, and a 16-bit occupancy count.
var TranslateQueueRange = rtl.Range{Min: 2 * maxPagesPerOp, Max: 1 << 16}

// SM is one streaming multiprocessor at warp-instruction granularity
// (SPEC 6.1), with the request side of its L1 TLB:
//
//	launch ──► warp slots ──► issue (GTO/LRR) ──┬─ compute: busy k cycles
//	                                            └─ memory: coalesce into lines,
//	                                               one lookup per 4 KB page
//	tlb_req ◄── translation queue ◄── replay (at the front) ◄── GMMU
//	tlb_resp ──► hit:  page translated; the last page of a load sends data_req
//	          ├► miss: walk_req ──► GMMU
//	          └► refused (TLB frozen): parked until the freeze lifts
//	data_resp ──► warp ready again           (stores: ready once translated)
//
// A miss is resolved by the GMMU, which fills the L1 TLB and sends the
// lookup back on replay; the replayed lookup then hits. The warp slots'
// state is a set of 64-bit masks (free, eligible, computing, loading) plus
// per-slot registers, so the issue decision is a priority encode. The
// warps' instruction streams are the SM's instruction source: the workload
// generator stands for the instruction memory and each warp's program
// counter.
type SM struct {
	rtl.Base
	SMPorts

	id         uint16
	cfg        SMConfig
	granule    uint // log2 of the translation granule
	kernels    []*workload.Kernel
	blockWarps int // warps of the largest thread block among the kernels

	// Warp slots.
	free      *rtl.Reg[uint64] // slot holds no warp
	eligible  *rtl.Reg[uint64] // ready to issue now
	computing *rtl.Reg[uint64] // busy with a compute instruction until readyAt
	loading   *rtl.Reg[uint64] // the memory instruction in flight is a load
	remote    *rtl.Reg[uint64] // the load in flight touches a zero-copy page
	readyAt   *rtl.Vec[uint64] // cycle a computing warp becomes eligible
	nextReady *rtl.Reg[uint64] // earliest readyAt over computing warps
	age       *rtl.Vec[uint64] // launch order, for greedy-then-oldest
	pending   *rtl.Vec[uint8]  // pages of the memory instruction not yet translated
	lines     *rtl.Vec[uint8]  // distinct lines of the memory instruction
	last      *rtl.Reg[uint8]  // last issued slot
	launched  *rtl.Reg[uint64] // warps launched so far: the next warp's age

	// Remote lines (RemoteLines): per slot, the lines (bit i: line i of
	// lineBuf) on remote pages, and the remote lines of its load not yet
	// back; the slots with remote lines outstanding, and those whose local
	// lines are done and wait for them; the requests waiting for the port.
	remoteMask *rtl.Vec[uint64]
	remoteLeft *rtl.Vec[uint8]
	remoteBusy *rtl.Reg[uint64]
	waiting    *rtl.Reg[uint64]
	rq         *rtl.Ring[uint64] // RemoteReq.Pack() entries

	// Translation queue between issue and the L1 TLB: lookups waiting to
	// be sent. inflight counts lookups sent and not yet hit (waiting for a
	// response, a walk, a migration, or parked by a freeze); issue keeps
	// fill + inflight + 32 within the queue, so replays always fit. It
	// takes a replay at its head and up to 33 lookups at its tail in one
	// cycle (an instruction's pages and an unparked lookup), so it keeps
	// its own pointers where rtl.Ring pushes one entry a cycle.
	tq       *rtl.Vec[uint64] // tlb.Lookup.Pack() entries
	tqHead   *rtl.Reg[uint32]
	tqTail   *rtl.Reg[uint32]
	tqFill   *rtl.Reg[uint32]
	inflight *rtl.Reg[uint32]
	// Lookups refused while the TLB was frozen, replayed once it thaws.
	parked    *rtl.Ring[uint64] // tlb.Lookup.Pack() entries
	missValid *rtl.Reg[bool]    // walk request register (Moore output)
	miss      *rtl.Reg[uint64]
	dreqValid *rtl.Reg[bool] // load data request register (Moore output)
	dreq      *rtl.Reg[uint64]
	// Line streaming (StreamLines): each slot's lines with their sectors
	// ({line, sectors} at slot*64+i), the slots whose lines go out in
	// order, and the next line of the head slot.
	lineBuf *rtl.Vec[uint64]
	stream  *rtl.Ring[uint8]
	cursor  *rtl.Reg[uint8]

	// Activity counters.
	issued    *rtl.Reg[uint64] // warp instructions issued
	memIssued *rtl.Reg[uint64] // memory instructions issued
	lookups   *rtl.Reg[uint64] // page lookups sent to the L1 TLB, replays included
	misses    *rtl.Reg[uint64] // misses sent to the GMMU

	streams []workload.WarpStream // per slot: the warp's instruction source
	op      workload.Op           // the instruction being issued (combinational)
	pages   [maxPagesPerOp]uint64 // coalescer scratch: distinct pages
	lineIDs [2 * workload.WarpSize]uint64
	sectors [2 * workload.WarpSize]uint8
	// The coalescer's counts of pages and lines so far, and the index of
	// its current line.
	pageCount, lineCount, lineCur int
}

// maxLinesPerOp bounds the distinct lines of one warp instruction.
const maxLinesPerOp = 2 * workload.WarpSize

// SMPorts are an SM's wires.
type SMPorts struct {
	Launch   *rtl.Decoupled[Launch]     // from the dispatcher
	TLBReq   *rtl.Decoupled[tlb.Lookup] // to the L1 TLB; Requester = warp slot, Write = store
	TLBResp  tlb.ResponsePort           // from the L1 TLB
	Frozen   *rtl.Wire[bool]            // the L1 TLB's freeze input, observed
	WalkReq  *rtl.Decoupled[ptw.Walk]   // misses to the GMMU; Requester = ID<<WarpBits | warp
	Replay   *rtl.Decoupled[ptw.Walk]   // resolved misses back from the GMMU
	DataReq  *rtl.Decoupled[DataReq]    // to the memory data path
	DataResp *rtl.Decoupled[DataReq]    // from the memory data path
	Resident *rtl.Wire[uint8]           // warps in the SM, for the dispatcher
	LineReq  *rtl.Decoupled[LineReq]    // to the data caches (SMConfig.StreamLines)
	LineResp *rtl.Decoupled[uint8]      // a load's lines are all back: its warp
	// Lines on remote pages to their owners and a load's lines back
	// (SMConfig.RemoteLines).
	RemoteReq  *rtl.Decoupled[RemoteReq]
	RemoteResp *rtl.Decoupled[RemoteResp]
	// Hold, observed, stops issue while high (a pipeline drain: the
	// instructions in flight complete); nil for an SM never held.
	Hold *rtl.Wire[bool]
}

// NewSMPorts makes an SM's wires under path; its TLB ports are the L1
// TLB's request, response and freeze wires.
func NewSMPorts(s *rtl.Sim, path string, l1 tlb.Ports) SMPorts {
	return SMPorts{
		Launch:   rtl.NewDecoupledOf[Launch](s, path+".launch", LaunchWidth),
		TLBReq:   l1.Req,
		TLBResp:  l1.Resp,
		Frozen:   l1.Frozen,
		WalkReq:  rtl.NewDecoupledOf[ptw.Walk](s, path+".walk_req", ptw.WalkBits),
		Replay:   rtl.NewDecoupledOf[ptw.Walk](s, path+".replay", ptw.WalkBits),
		DataReq:  rtl.NewDecoupledOf[DataReq](s, path+".data_req", DataReqWidth),
		DataResp: rtl.NewDecoupledOf[DataReq](s, path+".data_resp", DataReqWidth),
		Resident: rtl.NewWire[uint8](s, path+".resident", WarpBits+1),
		LineReq:  rtl.NewDecoupledOf[LineReq](s, path+".line_req", LineReqWidth),
		LineResp: rtl.NewDecoupled[uint8](s, path+".line_resp", WarpBits),
		// Made with the rest; an SM without RemoteLines leaves them idle.
		RemoteReq:  rtl.NewDecoupledOf[RemoteReq](s, path+".remote_req", RemoteReqWidth),
		RemoteResp: rtl.NewDecoupledOf[RemoteResp](s, path+".remote_resp", RemoteRespWidth),
	}
}

// NewSM builds SM number id under path on ports p (NewSMPorts).
func NewSM(s *rtl.Sim, path string, id int, cfg SMConfig, kernels []*workload.Kernel, p SMPorts) (*SM, error) {
	switch {
	case !WarpsRange.Has(int64(cfg.Warps)):
		return nil, WarpsRange.Check("gpu: SM warps", int64(cfg.Warps))
	case cfg.LineBytes < 1 || cfg.LineBytes&(cfg.LineBytes-1) != 0 || cfg.LineBytes > 1<<PageShift:
		return nil, fmt.Errorf("gpu: line bytes %d must be a power of two up to 4096", cfg.LineBytes)
	case !TranslateQueueRange.Has(int64(cfg.TranslateQueue)):
		return nil, TranslateQueueRange.Check("gpu: translation queue", int64(cfg.TranslateQueue))
	case cfg.TranslateShift != 0 && (cfg.TranslateShift < 8 || cfg.TranslateShift > 21):
		return nil, fmt.Errorf("gpu: translation granule 2^%d outside 2^8..2^21 bytes", cfg.TranslateShift)
	case id < 0 || id >= 1<<(pte.RequesterBits-WarpBits):
		return nil, fmt.Errorf("gpu: SM id %d outside 0..%d", id, 1<<(pte.RequesterBits-WarpBits)-1)
	case len(kernels) > 1<<16:
		return nil, fmt.Errorf("gpu: %d kernels exceed the launch port's 16-bit kernel index", len(kernels))
	}
	blockWarps := 1
	for _, k := range kernels {
		blockWarps = max(blockWarps, k.WarpsPerBlock())
	}
	if blockWarps > cfg.Warps {
		return nil, fmt.Errorf("gpu: a thread block of %d warps does not fit an SM of %d warps (gpu.warps_per_sm)", blockWarps, cfg.Warps)
	}
	m := &SM{
		SMPorts:    p,
		id:         uint16(id),
		cfg:        cfg,
		kernels:    kernels,
		blockWarps: blockWarps,
		granule:    PageShift,
		streams:    make([]workload.WarpStream, cfg.Warps),
	}
	if cfg.TranslateShift != 0 {
		m.granule = uint(cfg.TranslateShift)
	}
	s.Add(m, path)
	b := &m.Base
	all := uint64(1)<<cfg.Warps - 1
	if cfg.Warps == 64 {
		all = ^uint64(0)
	}
	m.free = rtl.NewReg(b, "free", cfg.Warps, all)
	m.eligible = rtl.NewReg[uint64](b, "eligible", cfg.Warps, 0)
	m.computing = rtl.NewReg[uint64](b, "computing", cfg.Warps, 0)
	m.loading = rtl.NewReg[uint64](b, "loading", cfg.Warps, 0)
	m.remote = rtl.NewReg[uint64](b, "remote", cfg.Warps, 0)
	m.readyAt = rtl.NewVec[uint64](b, "ready_at", cfg.Warps, 64, 0)
	m.nextReady = rtl.NewReg(b, "next_ready", 64, rtl.Never)
	m.age = rtl.NewVec[uint64](b, "age", cfg.Warps, 64, 0)
	m.pending = rtl.NewVec[uint8](b, "pending", cfg.Warps, 6, 0)
	m.lines = rtl.NewVec[uint8](b, "lines", cfg.Warps, 7, 0)
	m.last = rtl.NewReg[uint8](b, "last", WarpBits, 0)
	m.launched = rtl.NewReg[uint64](b, "launched", 64, 0)
	m.tq = rtl.NewVec[uint64](b, "tq", cfg.TranslateQueue, tlb.LookupBits, 0)
	m.tqHead = rtl.NewReg[uint32](b, "tq_head", 17, 0)
	m.tqTail = rtl.NewReg[uint32](b, "tq_tail", 17, 0)
	m.tqFill = rtl.NewReg[uint32](b, "tq_fill", 17, 0)
	m.inflight = rtl.NewReg[uint32](b, "inflight", 17, 0)
	m.parked = rtl.NewRing[uint64](b, "parked", cfg.TranslateQueue, tlb.LookupBits, false)
	m.missValid = rtl.NewFlag(b, "miss_valid", false)
	m.miss = rtl.NewReg[uint64](b, "miss", tlb.LookupBits, 0)
	m.dreqValid = rtl.NewFlag(b, "dreq_valid", false)
	m.dreq = rtl.NewReg[uint64](b, "dreq", DataReqWidth, 0)
	m.issued = rtl.NewReg[uint64](b, "issued", 64, 0)
	m.memIssued = rtl.NewReg[uint64](b, "mem_issued", 64, 0)
	m.lookups = rtl.NewReg[uint64](b, "lookups", 64, 0)
	m.misses = rtl.NewReg[uint64](b, "misses", 64, 0)
	if cfg.StreamLines || cfg.RemoteLines {
		m.lineBuf = rtl.NewVec[uint64](b, "line_buf", cfg.Warps*maxLinesPerOp, lineAddrBits+sectorBits, 0)
	}
	if cfg.RemoteLines {
		m.remoteMask = rtl.NewVec[uint64](b, "remote_mask", cfg.Warps, maxLinesPerOp, 0)
		m.remoteLeft = rtl.NewVec[uint8](b, "remote_left", cfg.Warps, countBits, 0)
		m.remoteBusy = rtl.NewReg[uint64](b, "remote_busy", cfg.Warps, 0)
		m.waiting = rtl.NewReg[uint64](b, "waiting", cfg.Warps, 0)
		m.rq = rtl.NewRing[uint64](b, "rq", remoteQueueDepth, RemoteReqWidth, false)
		m.RemoteReq.Producer(b)
		m.RemoteResp.Consumer(b)
	}
	if cfg.StreamLines {
		m.stream = rtl.NewRing[uint8](b, "stream", cfg.Warps, WarpBits, false)
		m.cursor = rtl.NewReg[uint8](b, "cursor", countBits, 0)
		m.LineReq.Producer(b)
		m.LineResp.Consumer(b)
	}
	m.Launch.Consumer(b)
	m.TLBReq.Producer(b)
	m.TLBResp.Consumer(b)
	b.Listen(m.Frozen)
	if m.Hold != nil {
		b.Listen(m.Hold)
	}
	m.WalkReq.Producer(b)
	m.Replay.Consumer(b)
	m.DataReq.Producer(b)
	m.DataResp.Consumer(b)
	return m, nil
}

// Drive presents the translation queue's head, the walk and data requests
// and the occupancy.
func (m *SM) Drive() {
	fill := m.tqFill.Q()
	m.TLBReq.Valid.Set(fill > 0)
	if fill > 0 {
		m.TLBReq.Bits.Set(tlb.UnpackLookup(m.tq.At(int(m.tqHead.Q())).Q()))
	}
	// A request register is written only with its valid flag set, so its
	// bits wires change only while valid: they are driven only then.
	missValid := m.missValid.Q()
	m.WalkReq.Valid.Set(missValid)
	if missValid {
		l := tlb.UnpackLookup(m.miss.Q())
		m.WalkReq.Bits.Set(ptw.Walk{VPN: l.VPN, Requester: l.Requester, Write: l.Write})
	}
	dreqValid := m.dreqValid.Q()
	m.DataReq.Valid.Set(dreqValid)
	if dreqValid {
		m.DataReq.Bits.Set(UnpackDataReq(m.dreq.Q()))
	}
	if m.cfg.StreamLines {
		m.driveLine()
	}
	if m.cfg.RemoteLines {
		ok := m.rq.Len() > 0
		m.RemoteReq.Valid.Set(ok)
		if ok {
			m.RemoteReq.Bits.Set(UnpackRemoteReq(m.rq.Head()))
		}
		m.RemoteResp.Ready.Set(true)
	}
	// A hit on a remote page queues a request: it waits for room.
	m.TLBResp.Ready.Set(!missValid && (!m.cfg.RemoteLines || !m.rq.Full()))
	m.Replay.Ready.Set(true)
	m.DataResp.Ready.Set(true)
	// A launch needs room for the largest thread block of any kernel.
	free := bits.OnesCount64(m.free.Q())
	m.Launch.Ready.Set(free >= m.blockWarps)
	m.Resident.Set(uint8(m.cfg.Warps - free))
}

// Eval retires responses, accepts a launch, sends a lookup and issues at
// most one warp instruction.
func (m *SM) Eval() {
	now := m.Now()
	free, eligible, computing, loading, remote := m.free.Q(), m.eligible.Q(), m.computing.Q(), m.loading.Q(), m.remote.Q()
	nextReady := m.nextReady.Q()
	fill, inflight := m.tqFill.Q(), m.inflight.Q()
	head, tail := m.tqHead.Q(), m.tqTail.Q()
	park, unpark := false, false // push onto and pop off the parked ring
	var parking uint64

	// Warps released by a response or a launch become eligible from the
	// next cycle; only a finished compute instruction issues in the cycle
	// it ends (its readyAt is that cycle).
	released := uint64(0)
	pushLines, pushWarp := false, uint8(0)
	pushRemote, part := false, RemoteReq{}
	dreqValid := m.dreqValid.Q() && !m.DataReq.Fire()
	missValid := m.missValid.Q() && !m.WalkReq.Fire()

	if m.TLBReq.Fire() {
		head = m.wrap(head + 1)
		fill--
		inflight++
		m.lookups.Set(m.lookups.Q() + 1)
	}
	if m.TLBResp.Fire() {
		r := m.TLBResp.Bits.Get()
		l := tlb.Lookup{VPN: r.VPN, Requester: r.Requester, Write: r.Write}
		switch r.Status {
		case tlb.Hit:
			inflight--
			w := uint8(r.Requester)
			e := m.TLBResp.PTE.Get()
			local := m.lines.At(int(w)).Q()
			switch {
			case m.cfg.RemoteLines:
				// The page's lines go to its owner; the rest stay local.
				mask := m.remoteMask.At(int(w)).Q()
				if e.IsRemote() {
					on := m.linesOnPage(w, r.VPN)
					mask |= on
					m.remoteMask.At(int(w)).Set(mask)
					pushRemote = true
					part = RemoteReq{Warp: w, Owner: uint8(e.Frame() >> RemoteOwnerShift), Lines: uint8(bits.OnesCount64(on)), Write: loading&(1<<w) == 0}
				}
				local -= uint8(bits.OnesCount64(mask))
			case e.IsRemote():
				// A hit on a remote PTE is a zero-copy mapping: the
				// load's lines come from host memory.
				remote |= 1 << w
			}
			left := m.pending.At(int(w)).Q() - 1
			m.pending.At(int(w)).Set(left)
			if left == 0 {
				switch {
				case m.cfg.RemoteLines && local == 0:
					// Every line is remote: the warp waits for them alone
					// (a store for none).
					released |= 1 << w
					loading &^= 1 << w
				case m.cfg.StreamLines && remote&(1<<w) == 0:
					pushLines, pushWarp = true, w
				case loading&(1<<w) != 0 || remote&(1<<w) != 0:
					// A store through a zero-copy mapping (only host-pinned
					// and access-counter pages are mapped writable) sends
					// its lines over the link like a load.
					dreqValid = true
					m.dreq.Set(DataReq{Warp: w, Lines: local, Remote: remote&(1<<w) != 0}.Pack())
				default:
					released |= 1 << w
				}
			}
		case tlb.Miss:
			missValid = true
			l.Requester |= m.id << WarpBits
			m.miss.Set(l.Pack())
			m.misses.Set(m.misses.Q() + 1)
		case tlb.Refused:
			park, parking = true, l.Pack()
		}
	}
	if m.Replay.Fire() {
		// A resolved miss goes to the front of the queue: it is looked up
		// the next cycle, right after its fill, so it hits however many
		// other pages the TLB takes in meanwhile.
		w := m.Replay.Bits.Get()
		if head == 0 {
			head = uint32(m.cfg.TranslateQueue)
		}
		head--
		m.tq.At(int(head)).Set(tlb.Lookup{VPN: w.VPN, Requester: w.Requester & (MaxWarps - 1), Write: w.Write}.Pack())
		fill++
		inflight--
	}
	if m.parked.Len() > 0 && !m.Frozen.Get() {
		unpark = true
		tail, fill = m.push(tail, fill, m.parked.Head())
		inflight--
	}
	parkFill := m.parked.Len() // after this cycle's push and pop
	if park || unpark {
		m.parked.Update(park, parking, 0, unpark)
		parkFill = parkFill + b2u(park) - b2u(unpark)
	}
	if dreqValid != m.dreqValid.Q() {
		m.dreqValid.Set(dreqValid)
	}
	if missValid != m.missValid.Q() {
		m.missValid.Set(missValid)
	}
	if m.DataResp.Fire() {
		w := m.DataResp.Bits.Get().Warp
		released |= 1 << w
		loading &^= 1 << w
	}
	// Lines move when one is queued, offered or answered.
	if m.cfg.StreamLines && (pushLines || m.LineReq.Valid.Get() || m.LineResp.Valid.Get()) {
		released, loading = m.evalLines(pushLines, pushWarp, released, loading)
	}
	if m.cfg.RemoteLines {
		m.rq.Update(pushRemote, part.Pack(), 0, m.RemoteReq.Fire())
	}

	// Compute instructions that finished.
	if now >= nextReady {
		nextReady = rtl.Never
		for c := computing; c != 0; c &= c - 1 {
			w := bits.TrailingZeros64(c)
			at := m.readyAt.At(w).Q()
			if at <= now {
				computing &^= 1 << w
				eligible |= 1 << w
			} else if at < nextReady {
				nextReady = at
			}
		}
	}

	if m.Launch.Fire() {
		free, released = m.launch(m.Launch.Bits.Get(), free, released)
	}

	// Issue. A memory instruction needs room for its worst case in the
	// translation queue; without it the issue stage stalls.
	stalled := int(fill+inflight)+maxPagesPerOp > m.cfg.TranslateQueue || (m.Hold != nil && m.Hold.Get())
	if eligible != 0 && !stalled {
		w := m.pick(eligible)
		m.last.Set(uint8(w))
		bit := uint64(1) << w
		eligible &^= bit
		op := &m.op
		switch {
		case !m.streams[w].Next(op):
			free |= bit
			m.streams[w] = nil
		case op.Kind == workload.OpCompute || op.Lanes == 0:
			m.issued.Set(m.issued.Q() + 1)
			at := now + uint64(max(op.Cycles, 1))
			m.readyAt.At(w).Set(at)
			computing |= bit
			nextReady = min(nextReady, at)
		default:
			m.issued.Set(m.issued.Q() + 1)
			m.memIssued.Set(m.memIssued.Q() + 1)
			pages, lines := m.coalesce(op)
			if m.lineBuf != nil {
				for i := 0; i < lines; i++ {
					m.lineBuf.At(w*maxLinesPerOp + i).Set(m.lineIDs[i]<<sectorBits | uint64(m.sectors[i]))
				}
			}
			// A store's lookups carry the write bit through the TLB and
			// the walk to the policy and the access counters.
			store := op.Kind == workload.OpStore
			for _, p := range m.pages[:pages] {
				tail, fill = m.push(tail, fill, tlb.Lookup{VPN: p, Requester: uint16(w), Write: store}.Pack())
			}
			m.pending.At(w).Set(uint8(pages))
			m.lines.At(w).Set(uint8(lines))
			if m.cfg.RemoteLines && m.remoteMask.At(w).Q() != 0 {
				m.remoteMask.At(w).Set(0)
			}
			remote &^= bit
			if store {
				loading &^= bit
			} else {
				loading |= bit
			}
		}
	}

	if m.cfg.RemoteLines {
		released = m.evalRemote(pushRemote && !part.Write, part, released)
	}
	eligible |= released
	// Only the registers that change are written (update, spelled out so
	// that it inlines): an idle SM dirties none.
	if head != m.tqHead.Q() {
		m.tqHead.Set(head)
	}
	if tail != m.tqTail.Q() {
		m.tqTail.Set(tail)
	}
	if fill != m.tqFill.Q() {
		m.tqFill.Set(fill)
	}
	if inflight != m.inflight.Q() {
		m.inflight.Set(inflight)
	}
	if free != m.free.Q() {
		m.free.Set(free)
	}
	if eligible != m.eligible.Q() {
		m.eligible.Set(eligible)
	}
	if computing != m.computing.Q() {
		m.computing.Set(computing)
	}
	if loading != m.loading.Q() {
		m.loading.Set(loading)
	}
	if remote != m.remote.Q() {
		m.remote.Set(remote)
	}
	if nextReady != m.nextReady.Q() {
		m.nextReady.Set(nextReady)
	}

	// Sleep while every warp waits (or the issue stage waits for room in
	// the translation queue), on memory or translation (an input wakes the
	// SM) or on a compute instruction (wake at the earliest finish). A
	// handshake that would complete next cycle keeps the SM awake to see
	// it: an output offered to a consumer whose Ready is already high, an
	// input offered while this SM will be ready. A Ready that is low now
	// wakes the SM when it rises.
	if (eligible != 0 && !stalled) || (parkFill > 0 && !m.Frozen.Get()) {
		return
	}
	if (fill > 0 && m.TLBReq.Ready.Get()) || (dreqValid && m.DataReq.Ready.Get()) || (missValid && m.WalkReq.Ready.Get()) {
		return
	}
	if m.cfg.StreamLines && (pushLines || m.stream.Len() > 0) {
		return
	}
	if m.cfg.RemoteLines && (pushRemote || (m.rq.Len() > 0 && m.RemoteReq.Ready.Get()) || m.RemoteResp.Valid.Get()) {
		return
	}
	if (m.TLBResp.Valid.Get() && !missValid) || (m.Launch.Valid.Get() && bits.OnesCount64(free) >= m.blockWarps) {
		return
	}
	m.SleepUntil(nextReady)
}

// launch places the warps of one thread block into free slots.
func (m *SM) launch(l Launch, free, released uint64) (uint64, uint64) {
	k := m.kernels[l.Kernel]
	age := m.launched.Q()
	for w := 0; w < k.WarpsPerBlock(); w++ {
		slot := bits.TrailingZeros64(free)
		free &^= 1 << slot
		released |= 1 << slot
		m.streams[slot] = k.NewWarp(int(l.Block), w)
		m.age.At(slot).Set(age)
		age++
	}
	m.launched.Set(age)
	return free, released
}

// pick chooses the slot to issue from among the eligible ones.
func (m *SM) pick(eligible uint64) int {
	last := int(m.last.Q())
	if m.cfg.Scheduler == LRR {
		rot := bits.RotateLeft64(eligible, -(last + 1))
		return (last + 1 + bits.TrailingZeros64(rot)) % 64
	}
	if eligible&(1<<last) != 0 {
		return last
	}
	best, bestAge := -1, uint64(0)
	for e := eligible; e != 0; e &= e - 1 {
		w := bits.TrailingZeros64(e)
		if a := m.age.At(w).Q(); best < 0 || a < bestAge {
			best, bestAge = w, a
		}
	}
	return best
}

// coalesce reduces a memory instruction's lane addresses to its distinct
// 4 KB pages (translation granules; into m.pages, in first-touch lane
// order) and its distinct lines with their sectors (m.lineIDs, m.sectors);
// a lane access that straddles a line boundary touches two.
//
// Neighbouring lanes mostly share a line and a page, as a hardware
// coalescer's lanes mostly match the line it is gathering: the current
// line (the last lane's) and its sectors, and the last lane's page, are
// held in locals and a lane is compared with them by its address bits
// above the line or page offset; the lists are searched only when a lane
// leaves them.
func (m *SM) coalesce(op *workload.Op) (pages, lines int) {
	// The shift amounts, masked to below 64 (which they are) so that each
	// shift compiles to one instruction.
	shift := uint(bits.TrailingZeros(uint(m.cfg.LineBytes))) & 63
	ss := sectorShift(shift) & 63
	granule := m.granule & 63
	in := uint64(1)<<shift - 1       // byte offset within a line
	inPage := uint64(1)<<granule - 1 // byte offset within a page
	// A byte offset o within a line lies in sector o>>ss, which is
	// o*toTop>>62: the product moves the sector index to the top two bits
	// (o < 2^(ss+2) because ss >= shift-2).
	toTop := uint64(1) << (62 - ss)
	size := uint64(max(op.Size, 1))
	addrs := op.Addr[:op.Lanes]
	if len(addrs) == 0 {
		return 0, 0
	}
	// The current line (its first byte's address, index m.lineCur in
	// m.lineIDs, sectors sec so far) and page (its first byte's address).
	curLine, sec := addrs[0]&^in, uint8(0)
	m.lineIDs[0], m.sectors[0], m.lineCur, m.lineCount = addrs[0]>>shift, 0, 0, 1
	curPage := addrs[0] &^ inPage
	m.pages[0], m.pageCount = addrs[0]>>granule, 1
	for i := 0; i < len(addrs); i++ {
		// The lanes within the current line and page (none when a lane
		// is wider than a line).
		if size-1 <= in {
			var run int
			run, sec = sameLine(addrs[i:], in-(size-1), size-1, toTop, curLine, curPage, inPage, sec)
			i += run
		}
		if i == len(addrs) {
			break
		}
		a := addrs[i]
		end := a + size - 1
		if a&^in != curLine || end&^in != curLine {
			curLine, sec = m.enterLines(a, end, curLine, sec)
		} else {
			sec |= sectorSpan[(a&in)*toTop>>62<<2|(end&in)*toTop>>62]
		}
		if a&^inPage != curPage {
			curPage = a &^ inPage
			m.enterPage(a >> granule)
		}
	}
	m.sectors[m.lineCur] |= sec
	return m.pageCount, m.lineCount
}

// sameLine counts the lanes at the head of addrs whose bytes (size-1
// past the address: sizeM1) lie within the current line curLine and page
// curPage, and adds their sectors to sec. A lane's offset o from the line
// (wrapping below it) keeps its bytes in the line when o <= lim, the
// line's last offset less sizeM1, and the offsets of its first and last
// bytes pick its sectors. It is a leaf kept out of line so that its loop,
// which sees most lanes, holds its values in registers: inlined into
// coalesce (and that into Eval) it shares them with the calls around it
// and spills them for each lane.
//
//go:noinline
func sameLine(addrs []uint64, lim, sizeM1, toTop, curLine, curPage, inPage uint64, sec uint8) (int, uint8) {
	for i, a := range addrs {
		o := a - curLine
		if o > lim || a-curPage > inPage {
			return i, sec
		}
		sec |= sectorSpan[o*toTop>>62<<2|(o+sizeM1)*toTop>>62]
	}
	return len(addrs), sec
}

// enterLines adds the sectors of a lane's bytes a..end that leave the
// current line (curLine, with sectors sec) to the lines they touch, and
// returns the new current line, the lane's last, and its sectors. It stays
// out of line so that coalesce's loop keeps its values in registers.
//
//go:noinline
func (m *SM) enterLines(a, end, curLine uint64, sec uint8) (uint64, uint8) {
	shift := uint(bits.TrailingZeros(uint(m.cfg.LineBytes))) & 63
	in := uint64(1)<<shift - 1
	toTop := uint64(1) << (62 - sectorShift(shift)&63)
	for l := a &^ in; ; l += in + 1 {
		lo, hi := uint64(0), in
		if l == a&^in {
			lo = a & in
		}
		if l == end&^in {
			hi = end & in
		}
		if l != curLine {
			m.sectors[m.lineCur] |= sec
			curLine, sec = l, 0
			m.lineCur = index(m.lineIDs[:m.lineCount], l>>shift)
			if m.lineCur < 0 {
				m.lineCur = m.lineCount
				m.lineIDs[m.lineCount], m.sectors[m.lineCount] = l>>shift, 0
				m.lineCount++
			}
		}
		sec |= sectorSpan[lo*toTop>>62<<2|hi*toTop>>62]
		if l == end&^in {
			return curLine, sec
		}
	}
}

// enterPage adds page p to the instruction's pages unless it is there.
func (m *SM) enterPage(p uint64) {
	if !contains(m.pages[:m.pageCount], p) {
		m.pages[m.pageCount] = p
		m.pageCount++
	}
}

// sectorSpan[lo<<2|hi] is the mask of a line's sectors lo..hi.
var sectorSpan = func() (t [16]uint8) {
	for lo := range 4 {
		for hi := lo; hi < 4; hi++ {
			t[lo<<2|hi] = 2<<hi - 1<<lo
		}
	}
	return t
}()

// update writes a register only when its value changes, so that an idle
// block does not dirty registers every cycle.
func update[T comparable](r *rtl.Reg[T], v T) {
	if r.Q() != v {
		r.Set(v)
	}
}

// sectorShift is log2 of the sector the caches track for lines of
// 2^lineShift bytes: 32 B (UVMMU Table I: 128 B lines of four 32 B
// sectors), or a quarter of a longer line.
func sectorShift(lineShift uint) uint { return max(lineShift, 7) - 2 }

// SectorBytes is the sector size the caches track for lineBytes lines.
func SectorBytes(lineBytes int) int {
	return 1 << sectorShift(uint(bits.TrailingZeros(uint(lineBytes))))
}

func index(s []uint64, v uint64) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// push writes lookup e at the translation queue's tail and returns the
// tail and fill after it.
func (m *SM) push(tail, fill uint32, e uint64) (uint32, uint32) {
	m.tq.At(int(tail)).Set(e)
	return m.wrap(tail + 1), fill + 1
}

func (m *SM) wrap(i uint32) uint32 {
	if int(i) == m.cfg.TranslateQueue {
		return 0
	}
	return i
}

// Stats is what the SM's activity counters hold.
type Stats struct {
	Issued    uint64 // warp instructions
	MemIssued uint64 // memory warp instructions
	Lookups   uint64 // L1 TLB lookups, replays included
	Misses    uint64 // L1 TLB misses sent to the GMMU
}

// Stats reads the activity counters (between cycles).
func (m *SM) Stats() Stats {
	return Stats{Issued: m.issued.Q(), MemIssued: m.memIssued.Q(), Lookups: m.lookups.Q(), Misses: m.misses.Q()}
}

// Describe summarizes what the SM's warps wait on, for the watchdog's
// report (read between cycles).
func (m *SM) Describe() string {
	remote := ""
	if m.cfg.RemoteLines {
		remote = fmt.Sprintf("; %d warps wait for remote lines, %d remote requests queued", bits.OnesCount64(m.remoteBusy.Q()), m.rq.Len())
	}
	return fmt.Sprintf("%d warps resident: %d eligible, %d computing, %d loading; %d lookups queued, %d in flight, %d parked (TLB frozen %v), walk request pending %v",
		m.cfg.Warps-bits.OnesCount64(m.free.Q()), bits.OnesCount64(m.eligible.Q()), bits.OnesCount64(m.computing.Q()), bits.OnesCount64(m.loading.Q()),
		m.tqFill.Q(), m.inflight.Q(), m.parked.Len(), m.Frozen.Get(), m.missValid.Q()) + remote
}

// driveLine presents the head slot's next line.
func (m *SM) driveLine() {
	ok := m.stream.Len() > 0
	m.LineReq.Valid.Set(ok)
	m.LineResp.Ready.Set(true)
	if !ok {
		return
	}
	w := m.stream.Head()
	c := m.cursor.Q()
	e := m.lineBuf.At(int(w)*maxLinesPerOp + int(m.localLine(w, c))).Q()
	m.LineReq.Bits.Set(LineReq{Warp: w, Line: e >> sectorBits, Sectors: uint8(e & (1<<sectorBits - 1)),
		Write: m.loading.Q()&(1<<w) == 0, First: c == 0, Count: m.localLines(w)})
}

// evalLines queues slot w's lines when push, advances the line stream, and
// releases a store's warp once its last line is out and a load's once the
// caches answer.
func (m *SM) evalLines(push bool, w uint8, released, loading uint64) (uint64, uint64) {
	pop := false
	if m.LineReq.Fire() {
		h := m.stream.Head()
		c := m.localLine(h, m.localLine(h, m.cursor.Q())+1)
		if c == m.lines.At(int(h)).Q() {
			pop, c = true, 0
			if m.loading.Q()&(1<<h) == 0 {
				released |= 1 << h
			}
		}
		m.cursor.Set(c)
	}
	if push || pop {
		m.stream.Update(push, w, 0, pop)
	}
	if m.LineResp.Fire() {
		r := m.LineResp.Bits.Get()
		released |= 1 << r
		loading &^= 1 << r
	}
	return released, loading
}

// remoteQueueDepth is the SM's queue of remote requests: an instruction's
// pages twice over; a hit on a remote page waits for room.
const remoteQueueDepth = 2 * maxPagesPerOp

// linesOnPage is the set of slot w's lines (bit i: line i of lineBuf) on
// translation granule vpn: a compare of every line's address, as the
// load/store unit matches a translation against its pending lines.
func (m *SM) linesOnPage(w uint8, vpn uint64) uint64 {
	shift := m.granule - uint(bits.TrailingZeros(uint(m.cfg.LineBytes)))
	on := uint64(0)
	for i := range int(m.lines.At(int(w)).Q()) {
		if m.lineBuf.At(int(w)*maxLinesPerOp+i).Q()>>sectorBits>>shift == vpn {
			on |= 1 << i
		}
	}
	return on
}

// localLine is the index of slot w's first line at or after c that is
// not remote, or the slot's line count when none is left (a priority
// encode of the remote mask; c itself without RemoteLines).
func (m *SM) localLine(w, c uint8) uint8 {
	if !m.cfg.RemoteLines {
		return c
	}
	return m.nextLocalLine(w, c)
}

// nextLocalLine is localLine with RemoteLines.
func (m *SM) nextLocalLine(w, c uint8) uint8 {
	n := m.lines.At(int(w)).Q()
	if c >= n {
		return n
	}
	return min(c+uint8(bits.TrailingZeros64(^m.remoteMask.At(int(w)).Q()>>c)), n)
}

// localLines is the number of slot w's lines that are not remote.
func (m *SM) localLines(w uint8) uint8 {
	n := m.lines.At(int(w)).Q()
	if m.cfg.RemoteLines {
		n -= uint8(bits.OnesCount64(m.remoteMask.At(int(w)).Q()))
	}
	return n
}

// evalRemote counts a load's remote lines out (add: part's lines were
// just queued) and back (RemoteResp), and holds back the released warps
// that still wait for remote lines; a warp whose last remote line comes
// back after its local ones is released.
func (m *SM) evalRemote(add bool, part RemoteReq, released uint64) uint64 {
	busy := m.remoteBusy.Q()
	count := func(w uint8, delta int) {
		left := int(m.remoteLeft.At(int(w)).Q()) + delta
		m.remoteLeft.At(int(w)).Set(uint8(left))
		busy = busy&^(1<<w) | uint64(min(left, 1))<<w
	}
	back := m.RemoteResp.Fire()
	r := m.RemoteResp.Bits.Get()
	switch {
	case add && back && r.Warp == part.Warp:
		count(part.Warp, int(part.Lines)-int(r.Lines))
	default:
		if add {
			count(part.Warp, int(part.Lines))
		}
		if back {
			count(r.Warp, -int(r.Lines))
		}
	}
	hold := released & busy
	waiting := m.waiting.Q() | hold
	done := waiting &^ busy
	update(m.remoteBusy, busy)
	update(m.waiting, waiting&^done)
	return released&^hold | done
}
