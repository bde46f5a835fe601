// Package afm is the Available Frame Manager of the Destination Allocator
// (SPEC 5.2; UVMMU paper Section IV-C, IV-D) together with the victim
// picker and the DA's IPgT sequencer.
//
// The AFM is the only block that touches the IPgT memory port. One FSM runs
// one transaction at a time: a refill step (a FrAB scan and the region
// read-modify-write it leads to, or one victim draw with its read and
// write-back), a map write, or a software op. A transaction finishes issuing
// all its memory requests before the next one starts, and the memory port
// serves requests in order, so every transaction is atomic with respect to
// the others: the AFM never reserves or picks from an entry value that an
// accepted op has since changed, and no update is lost. Map and software ops
// wait in one-entry buffers while a refill transaction runs; the FSM
// chooses between the map buffer, the software buffer and a refill step
// round-robin, so none of them starves.
package afm

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/rtl"
)

// Config is what the AFM needs of the DA's parameters.
type Config struct {
	NFG       uint64     // frame-groups managed
	DCQ       dcq.Config // queue geometry: DEPTH, THRESHOLD, FG_BITS
	WordBits  int        // FRAB_WORD
	AddrBits  int        // ADDR_W
	IPGTBase  uint64     // IPGT_BASE
	LFSRWidth int        // LFSR_WIDTH
	Victims   VictimSource
}

// VictimSource is where the victim mode takes its candidates from. Either
// way the AFM reads the candidate's IPgT entry and pushes it only when it
// is mapped, unprotected and idle (M=1, P=0, B=0), writing back B=1, so
// the DA's invariants hold for any candidate stream.
type VictimSource uint8

const (
	// VictimLFSR is the paper's linear-random picker (SPEC 5.2 step 3;
	// UVMMU paper Section IV-D): VICTIMS=0 of uvmmu_da.
	VictimLFSR VictimSource = iota
	// VictimExternal takes candidates from the Victim port, fed by an
	// eviction-metadata block (blocks/evict), for the eviction sensitivity
	// study (UVMMU paper Section V-C1, Figure 5): VICTIMS=1 of uvmmu_da.
	VictimExternal
)

// String names the source as the configuration does.
func (v VictimSource) String() string {
	switch v {
	case VictimLFSR:
		return "lfsr"
	case VictimExternal:
		return "external"
	}
	return fmt.Sprintf("VictimSource(%d)", uint8(v))
}

// FrAB is the bitmap geometry that follows from NFG and WordBits.
func (c Config) FrAB() frab.Config {
	return frab.Config{Regions: int((c.NFG + frab.FrameGroupsPerRegion - 1) / frab.FrameGroupsPerRegion), WordBits: c.WordBits}
}

// Validate names the first parameter outside its range or in conflict with
// another.
func (c Config) Validate() error {
	if err := c.DCQ.Validate(); err != nil {
		return err
	}
	if c.NFG < 1 || bits.Len64(c.NFG-1) > c.DCQ.FGBits {
		return fmt.Errorf("afm: NFG %d outside 1..2^FGBits (FGBits %d)", c.NFG, c.DCQ.FGBits)
	}
	if err := c.FrAB().Validate(); err != nil {
		return err
	}
	if err := ipgt.CheckAddrBits(c.AddrBits); err != nil {
		return err
	}
	if end := ipgt.Address(c.IPGTBase, c.NFG); c.AddrBits < 64 && (end > 1<<c.AddrBits || end < c.IPGTBase) {
		return fmt.Errorf("afm: IPGTBase %#x + 8*NFG (%d) exceeds the %d-bit address space", c.IPGTBase, c.NFG, c.AddrBits)
	}
	if c.Victims > VictimExternal {
		return fmt.Errorf("afm: Victims %v is not lfsr or external", c.Victims)
	}
	if c.LFSRWidth < lfsr.MinWidth || c.LFSRWidth > lfsr.MaxWidth || c.LFSRWidth < lfsr.PickWidth(c.NFG) {
		return fmt.Errorf("afm: LFSRWidth %d outside %d..%d (the picker needs %d bits for NFG %d)",
			c.LFSRWidth, max(lfsr.MinWidth, lfsr.PickWidth(c.NFG)), lfsr.MaxWidth, lfsr.PickWidth(c.NFG), c.NFG)
	}
	return nil
}

// Ports are the AFM's connections: the DCQ's push side and count, the FrAB
// command port, the LFSR, the IPgT memory port, the DA's map and software
// ports, and, with VictimExternal, the victim candidate port (a PFgN).
type Ports struct {
	DCQ    dcq.Ports
	FrAB   frab.Ports
	LFSR   lfsr.Ports
	Mem    ipgt.MemPorts
	Map    MapPorts
	SW     SWPorts
	Victim *rtl.Decoupled[uint64] // in; nil with VictimLFSR
}

// FSM states, in the encoding of the state register (the Verilog uses the
// same values).
const (
	StateInit        uint8 = iota // waiting for the FrAB sweep
	StateIdle                     // choosing the next transaction
	StateMapWrite                 // issue the map write
	StateSWRead                   // FREE/UNPROTECT: issue the entry read
	StateSWWait                   // FREE/UNPROTECT: wait for the entry
	StateSWWrite                  // issue the op's write (and the FrAB SET)
	StateScanReq                  // issue FIND at the rotating pointer
	StateScanWait                 // wait for the FIND response
	StateRegionFetch              // issue the region's reads and collect the entries
	StateRegionRsv                // reserve entries one per cycle; clear the bit when exhausted
	StateVDraw                    // draw a frame-group from the LFSR or take one from the victim port
	StateVRead                    // issue the victim's entry read
	StateVWait                    // wait for the entry
	StateVWrite                   // push {PFgN, S=1} and write back B=1
	StateBits        = 4
)

// Round-robin order of the three requesters in StateIdle.
const (
	ReqMap uint8 = iota
	ReqSW
	ReqRefill
	NumReq
)

// AFM is the refill FSM, the victim picker and the IPgT sequencer.
type AFM struct {
	rtl.Base
	Ports

	cfg     Config
	regions uint64 // NR
	words   uint64 // FrAB words

	state *rtl.Reg[uint8]
	last  *rtl.Reg[uint8] // requester served last (round-robin)

	// One-entry buffers behind map_ready and sw_ready.
	mapFull *rtl.Reg[bool]
	mapPFgN *rtl.Reg[uint64]
	mapVPgN *rtl.Reg[uint64]
	mapCID  *rtl.Reg[uint16]
	swFull  *rtl.Reg[bool]
	swOp    *rtl.Reg[uint8]
	swPFgN  *rtl.Reg[uint64]

	// Output registers of the memory port, the DCQ push, the FrAB command
	// and the LFSR enable.
	reqValid  *rtl.Reg[bool]
	reqWrite  *rtl.Reg[bool]
	reqAddr   *rtl.Reg[uint64]
	reqWData  *rtl.Reg[uint64]
	pushValid *rtl.Reg[bool]
	pushPFgN  *rtl.Reg[uint64]
	pushSwap  *rtl.Reg[bool]
	cmdValid  *rtl.Reg[bool]
	cmdOp     *rtl.Reg[uint8]
	cmdRegion *rtl.Reg[uint64]
	lfsrEn    *rtl.Reg[bool]

	// Refill state.
	hint    *rtl.Reg[bool]   // the FrAB may hold a set bit
	ptr     *rtl.Reg[uint64] // rotating FrAB scan pointer (a region)
	finds   *rtl.Reg[uint64] // FINDs in the current sweep
	region  *rtl.Reg[uint64] // region being fetched
	issued  *rtl.Reg[uint8]  // region reads issued
	arrived *rtl.Reg[uint8]  // region entries received
	rsv     *rtl.Reg[uint32] // reservable entries of the region not yet reserved
	entries *rtl.Vec[uint64] // the region's entries

	// Op and victim state.
	cur     *rtl.Reg[uint64] // frame-group of the op or victim in flight
	curWord *rtl.Reg[uint64] // its entry as read
}

// New adds an AFM to s under path.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*AFM, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if (cfg.Victims == VictimExternal) != (p.Victim != nil) {
		return nil, fmt.Errorf("afm: victim source %v needs the victim port exactly when external", cfg.Victims)
	}
	fc := cfg.FrAB()
	a := &AFM{Ports: p, cfg: cfg, regions: uint64(fc.Regions), words: uint64(fc.Words())}
	s.Add(a, path)
	b := &a.Base
	e := Module.At(cfg.Params())
	a.state = rtl.DeclReg[uint8](b, e, "state_q")
	a.last = rtl.DeclReg[uint8](b, e, "last_q")
	a.mapFull = rtl.DeclFlag(b, e, "map_full_q")
	a.mapPFgN = rtl.DeclReg[uint64](b, e, "map_pfgn_q")
	a.mapVPgN = rtl.DeclReg[uint64](b, e, "map_vpgn_q")
	a.mapCID = rtl.DeclReg[uint16](b, e, "map_cid_q")
	a.swFull = rtl.DeclFlag(b, e, "sw_full_q")
	a.swOp = rtl.DeclReg[uint8](b, e, "sw_op_q")
	a.swPFgN = rtl.DeclReg[uint64](b, e, "sw_pfgn_q")
	a.reqValid = rtl.DeclFlag(b, e, "req_valid_q")
	a.reqWrite = rtl.DeclFlag(b, e, "req_write_q")
	a.reqAddr = rtl.DeclReg[uint64](b, e, "req_addr_q")
	a.reqWData = rtl.DeclReg[uint64](b, e, "req_wdata_q")
	a.pushValid = rtl.DeclFlag(b, e, "push_valid_q")
	a.pushPFgN = rtl.DeclReg[uint64](b, e, "push_pfgn_q")
	a.pushSwap = rtl.DeclFlag(b, e, "push_swap_q")
	a.cmdValid = rtl.DeclFlag(b, e, "cmd_valid_q")
	a.cmdOp = rtl.DeclReg[uint8](b, e, "cmd_op_q")
	a.cmdRegion = rtl.DeclReg[uint64](b, e, "cmd_region_q")
	a.lfsrEn = rtl.DeclFlag(b, e, "lfsr_en_q")
	a.hint = rtl.DeclFlag(b, e, "hint_q")
	a.ptr = rtl.DeclReg[uint64](b, e, "ptr_q")
	a.finds = rtl.DeclReg[uint64](b, e, "finds_q")
	a.region = rtl.DeclReg[uint64](b, e, "region_q")
	a.issued = rtl.DeclReg[uint8](b, e, "issued_q")
	a.arrived = rtl.DeclReg[uint8](b, e, "arrived_q")
	a.rsv = rtl.DeclReg[uint32](b, e, "rsv_q")
	a.entries = rtl.DeclVec[uint64](b, e, "entry_q")
	a.cur = rtl.DeclReg[uint64](b, e, "cur_q")
	a.curWord = rtl.DeclReg[uint64](b, e, "cur_word_q")
	a.Listen(p.DCQ.Count, p.DCQ.PushReady, p.DCQ.Refill, p.FrAB.CmdReady, p.FrAB.RspValid, p.FrAB.RspFound, p.FrAB.RspRegion, p.FrAB.InitDone,
		p.LFSR.State, p.Mem.ReqReady, p.Mem.RespValid, p.Mem.RespData,
		p.Map.Valid, p.Map.PFgN, p.Map.VPgN, p.Map.CID, p.SW.Valid, p.SW.Op, p.SW.PFgN)
	if p.Victim != nil {
		p.Victim.Consumer(b)
	}
	return a, nil
}

// Drive shows the output registers.
func (a *AFM) Drive() {
	a.Map.Ready.Set(!a.mapFull.Q())
	a.SW.Ready.Set(!a.swFull.Q())
	a.Mem.ReqValid.Set(a.reqValid.Q())
	a.Mem.ReqWrite.Set(a.reqWrite.Q())
	a.Mem.ReqAddr.Set(a.reqAddr.Q())
	a.Mem.ReqWData.Set(a.reqWData.Q())
	a.DCQ.PushValid.Set(a.pushValid.Q())
	a.DCQ.PushPFgN.Set(a.pushPFgN.Q())
	a.DCQ.PushSwap.Set(a.pushSwap.Q())
	a.FrAB.CmdValid.Set(a.cmdValid.Q())
	a.FrAB.CmdOp.Set(a.cmdOp.Q())
	a.FrAB.CmdRegion.Set(a.cmdRegion.Q())
	a.LFSR.En.Set(a.lfsrEn.Q())
	if a.Victim != nil {
		a.Victim.Ready.Set(a.state.Q() == StateVDraw)
	}
}

// memReq, push and cmd are the requests the FSM issues in one cycle; the
// end of Eval loads them into the output registers.
type memReq struct {
	valid, write bool
	addr, wdata  uint64
}

type pushReq struct {
	valid bool
	pfgn  uint64
	swap  bool
}

type cmdReq struct {
	valid  bool
	op     frab.Op
	region uint64
}

// Eval advances the FSM by one cycle.
func (a *AFM) Eval() {
	memFree := !a.reqValid.Q() || a.Mem.ReqFire()
	cmdFree := !a.cmdValid.Q() || a.FrAB.CmdFire()
	// The AFM is the DCQ's only producer and pushes only when the queue has
	// room for the push it may already be showing, so push_ready is always
	// high when it pushes and a push lasts one cycle. space: room for a push
	// shown next cycle.
	inQueue := uint64(a.DCQ.Count.Get())
	if a.pushValid.Q() {
		inQueue++
	}
	space := a.DCQ.PushReady.Get() && inQueue < uint64(a.cfg.DCQ.Depth)
	var mem memReq
	var push pushReq
	var cmd cmdReq
	lfsrEn := false

	mapFull, swFull := a.mapFull.Q(), a.swFull.Q()
	if a.Map.Fire() {
		a.mapFull.Set(true)
		a.mapPFgN.Set(a.Map.PFgN.Get())
		a.mapVPgN.Set(a.Map.VPgN.Get())
		a.mapCID.Set(a.Map.CID.Get())
	}
	if a.SW.Fire() {
		a.swFull.Set(true)
		a.swOp.Set(a.SW.Op.Get())
		a.swPFgN.Set(a.SW.PFgN.Get())
	}

	switch a.state.Q() {
	case StateInit:
		if a.FrAB.InitDone.Get() {
			a.state.Set(StateIdle)
		}

	case StateIdle:
		// Refill below the threshold, decided on an occupancy that no push
		// of this block is still changing.
		refill := a.DCQ.Refill.Get() && !a.pushValid.Q()
		switch a.pick(mapFull, swFull, refill) {
		case ReqMap:
			a.last.Set(ReqMap)
			if a.mapPFgN.Q() < a.cfg.NFG {
				a.state.Set(StateMapWrite)
			} else {
				a.mapFull.Set(false)
			}
		case ReqSW:
			a.last.Set(ReqSW)
			p := a.swPFgN.Q()
			switch op := SWOp(a.swOp.Q()); {
			case p >= a.cfg.NFG || op > OpUnprotect:
				// Not a frame-group or not an op: dropped.
				a.swFull.Set(false)
			case op == OpProtect:
				a.cur.Set(p)
				a.curWord.Set(ipgt.Protected)
				a.state.Set(StateSWWrite)
			default:
				a.cur.Set(p)
				a.state.Set(StateSWRead)
			}
		case ReqRefill:
			a.last.Set(ReqRefill)
			if a.hint.Q() {
				a.finds.Set(0)
				a.state.Set(StateScanReq)
			} else {
				lfsrEn = a.cfg.Victims == VictimLFSR
				a.state.Set(StateVDraw)
			}
		}

	case StateMapWrite:
		if memFree {
			mem = memReq{valid: true, write: true, addr: a.addr(a.mapPFgN.Q()), wdata: ipgt.Mapped(a.mapCID.Q(), a.mapVPgN.Q())}
			a.mapFull.Set(false)
			a.state.Set(StateIdle)
		}

	case StateSWRead:
		if memFree {
			mem = memReq{valid: true, addr: a.addr(a.cur.Q())}
			a.state.Set(StateSWWait)
		}

	case StateSWWait:
		if a.Mem.RespValid.Get() {
			// FREE and UNPROTECT of a busy entry keep B: see ipgt.FreedBusy.
			if a.Mem.RespData.Get()&ipgt.B != 0 {
				a.curWord.Set(ipgt.FreedBusy)
			} else {
				a.curWord.Set(ipgt.Freed)
			}
			a.state.Set(StateSWWrite)
		}

	case StateSWWrite:
		w := a.curWord.Q()
		setBit := w == ipgt.Freed
		if memFree && (!setBit || cmdFree) {
			mem = memReq{valid: true, write: true, addr: a.addr(a.cur.Q()), wdata: w}
			if setBit {
				cmd = cmdReq{valid: true, op: frab.Set, region: a.cur.Q() / frab.FrameGroupsPerRegion}
				a.hint.Set(true)
			}
			a.swFull.Set(false)
			a.state.Set(StateIdle)
		}

	case StateScanReq:
		if cmdFree {
			cmd = cmdReq{valid: true, op: frab.Find, region: a.ptr.Q()}
			a.finds.Set(a.finds.Q() + 1)
			a.state.Set(StateScanWait)
		}

	case StateScanWait:
		if a.FrAB.RspValid.Get() {
			switch {
			case a.FrAB.RspFound.Get():
				a.region.Set(a.FrAB.RspRegion.Get())
				a.issued.Set(0)
				a.arrived.Set(0)
				a.rsv.Set(0)
				a.state.Set(StateRegionFetch)
			case a.finds.Q() > a.words:
				// A full sweep, the pointer's own word included twice,
				// found no set bit: the memory is oversubscribed.
				a.hint.Set(false)
				a.state.Set(StateIdle)
			default:
				a.ptr.Set(a.nextWord(a.ptr.Q()))
				a.state.Set(StateScanReq)
			}
		}

	case StateRegionFetch:
		n := a.regionSize(a.region.Q())
		i := a.issued.Q()
		if memFree && i < n {
			mem = memReq{valid: true, addr: a.addr(a.region.Q()*frab.FrameGroupsPerRegion + uint64(i))}
			a.issued.Set(i + 1)
		}
		if a.Mem.RespValid.Get() {
			k := a.arrived.Q()
			w := a.Mem.RespData.Get()
			a.entries.At(int(k)).Set(w)
			if ipgt.Reservable(w) {
				a.rsv.Set(a.rsv.Q() | 1<<k)
			}
			a.arrived.Set(k + 1)
			if k+1 == n {
				a.state.Set(StateRegionRsv)
			}
		}

	case StateRegionRsv:
		r := a.region.Q()
		left := a.rsv.Q()
		switch {
		case left == 0:
			// Every free frame-group of the region is reserved.
			if cmdFree {
				cmd = cmdReq{valid: true, op: frab.Clear, region: r}
				a.ptr.Set(a.nextRegion(r))
				a.state.Set(StateIdle)
			}
		case !space:
			// The DCQ is full: stop here, the region keeps its bit and the
			// next scan starts at it.
			a.ptr.Set(r)
			a.state.Set(StateIdle)
		case memFree:
			k := bits.TrailingZeros32(left)
			p := r*frab.FrameGroupsPerRegion + uint64(k)
			push = pushReq{valid: true, pfgn: p}
			mem = memReq{valid: true, write: true, addr: a.addr(p), wdata: ipgt.Reserve(a.entries.At(k).Q())}
			a.rsv.Set(left &^ (1 << k))
		}

	case StateVDraw:
		if a.cfg.Victims == VictimExternal {
			// One cycle with victim_ready high: a candidate that is a
			// frame-group goes on to the same read and check as a draw;
			// none, or a number beyond NFG, ends the transaction, so the
			// arbiter serves maps and ops before the next refill step asks
			// again.
			if a.Victim.Fire() && a.Victim.Bits.Get() < a.cfg.NFG {
				a.cur.Set(a.Victim.Bits.Get())
				a.state.Set(StateVRead)
			} else {
				a.state.Set(StateIdle)
			}
		} else if p, ok := lfsr.Pick(a.LFSR.State.Get(), a.cfg.LFSRWidth, a.cfg.NFG); ok {
			a.cur.Set(p)
			a.state.Set(StateVRead)
		} else {
			lfsrEn = true
		}

	case StateVRead:
		if memFree {
			mem = memReq{valid: true, addr: a.addr(a.cur.Q())}
			a.state.Set(StateVWait)
		}

	case StateVWait:
		if a.Mem.RespValid.Get() {
			w := a.Mem.RespData.Get()
			if ipgt.Victim(w) {
				a.curWord.Set(w)
				a.state.Set(StateVWrite)
			} else {
				a.state.Set(StateIdle)
			}
		}

	case StateVWrite:
		if memFree && space {
			push = pushReq{valid: true, pfgn: a.cur.Q(), swap: true}
			mem = memReq{valid: true, write: true, addr: a.addr(a.cur.Q()), wdata: ipgt.PickVictim(a.curWord.Q())}
			a.state.Set(StateIdle)
		}
	}

	a.load(mem, push, cmd, lfsrEn)
}

// PendingMap is the map the AFM has accepted into its one-entry buffer and
// not yet written to the IPgT: a backdoor for system checkers, which see
// the entry change only when the FSM serves the map (an op takes effect
// when it is served, not at its handshake; docs/da.md).
func (a *AFM) PendingMap() (pfgn, vpgn uint64, ok bool) {
	return a.mapPFgN.Q(), a.mapVPgN.Q(), a.mapFull.Q()
}

// pick is the round-robin arbiter of StateIdle: the first requester after the
// one served last. It returns NumReq when nobody requests.
func (a *AFM) pick(mapFull, swFull, refill bool) uint8 {
	want := [NumReq]bool{mapFull, swFull, refill}
	for k := uint8(1); k <= NumReq; k++ {
		r := (a.last.Q() + k) % NumReq
		if want[r] {
			return r
		}
	}
	return NumReq
}

// load moves this cycle's requests into the output registers; a request
// shown and accepted in this cycle is withdrawn, one not yet accepted stays.
func (a *AFM) load(mem memReq, push pushReq, cmd cmdReq, lfsrEn bool) {
	switch {
	case mem.valid:
		a.reqValid.Set(true)
		a.reqWrite.Set(mem.write)
		a.reqAddr.Set(mem.addr)
		a.reqWData.Set(mem.wdata)
	case a.Mem.ReqFire():
		a.reqValid.Set(false)
	}
	switch {
	case push.valid:
		a.pushValid.Set(true)
		a.pushPFgN.Set(push.pfgn)
		a.pushSwap.Set(push.swap)
	case a.pushValid.Q():
		a.pushValid.Set(false)
	}
	switch {
	case cmd.valid:
		a.cmdValid.Set(true)
		a.cmdOp.Set(uint8(cmd.op))
		a.cmdRegion.Set(cmd.region)
	case a.FrAB.CmdFire():
		a.cmdValid.Set(false)
	}
	if lfsrEn != a.lfsrEn.Q() {
		a.lfsrEn.Set(lfsrEn)
	}
}

func (a *AFM) addr(pfgn uint64) uint64 { return ipgt.Address(a.cfg.IPGTBase, pfgn) }

// regionSize is the number of frame-groups in region r: 32, or fewer in
// the last region when NFG is not a multiple of 32.
func (a *AFM) regionSize(r uint64) uint8 {
	return uint8(min(frab.FrameGroupsPerRegion, a.cfg.NFG-r*frab.FrameGroupsPerRegion))
}

func (a *AFM) nextRegion(r uint64) uint64 {
	if r+1 >= a.regions {
		return 0
	}
	return r + 1
}

// nextWord is the first region of the FrAB word after region r's, wrapping.
func (a *AFM) nextWord(r uint64) uint64 {
	w := uint64(a.cfg.FrAB().WordWidth())
	next := (r/w + 1) * w
	if next >= a.regions {
		return 0
	}
	return next
}
