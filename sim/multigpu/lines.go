package multigpu

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
)

// LinePort is the port of every NVLink direction that carries remote
// lines; port 0 carries the driver's page copies (ChannelIndex), and the
// direction's arbiter grants the two round robin.
const LinePort = 1

// LineRequestBytes is a remote line read request on the wire: one 16 B
// NVLink flit, the header flit that carries a request's command and
// address (Foley and Danskin, "Ultra-Performance Pascal GPU and NVLink
// Interconnect", IEEE Micro 37(2), 2017: a packet is one to 18 flits of
// 128 bits, the first a header). A line of data and a written line carry
// their bytes alone, as a page copy carries its 4 KB alone: the link
// block models no header on a copy (blocks/pcie Packet.Bytes is the
// payload; System.newLinks), and the line packets are timed alike.
const LineRequestBytes = 16

// LineCredits is the number of read requests a GPU may have outstanding
// at one peer (sent, their line not yet back), and the depth of the
// peer's queue of reads to answer: credit flow control, so that the queue
// never refuses a request. A request and its answer shared one blocking
// delay line per direction otherwise, and two GPUs reading from each
// other could each wait for the other's answers forever. Enough credits
// cover the round trip of a lone read at one packet a cycle (the link
// block grants at most one packet a cycle): a read holds its credit from
// the cycle its request is taken to the cycle its line arrives, 2*latency
// + 4 cycles and the line's wire time (TestRemoteLineAlone: 408 cycles
// at 200 cycles each way and 4 cycles of wire; GRIT's 300 GB/s moves a
// 128 B line in one). The credits cover up to 4 cycles of wire, capped
// at MaxLineCredits.
func LineCredits(latency int) int { return min(2*latency+8, MaxLineCredits) }

// MaxLineCredits bounds LineCredits and with it each peer's answer queue.
const MaxLineCredits = 1 << 12

// Kinds of line packet, in the top bits of the tag.
const (
	lineRead  = 0 // requester to owner: read one line, LineRequestBytes
	lineWrite = 1 // requester to owner: one written line
	lineData  = 2 // owner to requester: the line a read asked for
)

// Tag layout of a line packet: {kind, SM, warp} from the top bit down.
const (
	lineSMBits   = 10
	lineKindLSB  = gpu.WarpBits + lineSMBits
	lineSlotMask = 1<<lineKindLSB - 1
)

func lineTag(kind, sm int, warp uint8) uint64 {
	return uint64(kind)<<lineKindLSB | uint64(sm)<<gpu.WarpBits | uint64(warp)
}

// LinePorts are a GPU's remote line unit's wires: per SM, the requests
// from its load/store unit and the arrivals back to it; per peer GPU o,
// LinePort of the NVLink direction to o (Out[o]) and of the direction
// from o (In[o]); the entries at the GPU's own index are nil.
type LinePorts struct {
	Req  []*rtl.Decoupled[gpu.RemoteReq]
	Resp []*rtl.Decoupled[gpu.RemoteResp]
	Out  []*rtl.Decoupled[pcie.Packet]
	In   []*rtl.Decoupled[pcie.Packet]
}

// RemoteLines is one GPU's remote line unit, both sides of GRIT II-B2's
// remote access ("fetches the data at a cache line granularity from the
// remote GPU") on the links the page copies use:
//
//	SM[i].remote_req ─► held[i] ─► cur[o] ── a packet per line ─► Out[o] (NVLink to o)
//	SM[i].remote_resp ◄─ arrived[i][warp] ◄── data ───────────── In[o]  (NVLink from o)
//	                     answers[o] ◄── read requests ─────────── In[o]
//	                     answers[o] ── data, a line each ───────► Out[o]
//
// Requester side: each SM's request (the lines of one warp instruction
// on one page, RemoteReq) waits in the SM's input register until the
// peer's sender is free, which takes the waiting SMs round robin; the
// sender then offers one packet per line: a read request of
// LineRequestBytes, or a written line of the line's bytes (stores through
// a remote mapping are posted: nothing comes back). A line of data that
// comes back adds to its warp's count, and the unit hands each SM one
// warp's count per cycle. Owner side: a read request from peer o queues
// an answer, a packet of the line's bytes to o; the owner's DRAM is not
// timed (the line leaves as soon as the link takes it), as the remote
// path before the links had it. Out[o] alternates between the answers
// and the requests when it has both.
type RemoteLines struct {
	rtl.Base
	LinePorts

	gpu       int
	warps     int
	lineBytes uint16

	held     []*rtl.Reg[uint64] // per SM: RemoteReq.Pack(), Lines 0 when empty
	reqValid *rtl.BitBus        // the SMs' request valids
	full     *rtl.Reg[uint64]   // SMs whose held register is occupied
	fullSeen *rtl.Reg[uint64]   // full before its last change (Drive's set)
	cur      []*rtl.Reg[uint64] // per peer: SM<<RemoteReqWidth | RemoteReq.Pack(), Lines left
	next     []*rtl.Reg[uint16] // per peer: the SM favoured next
	answers  []*rtl.Ring[uint64]
	answerUp []*rtl.Reg[bool] // per peer: an answer goes before a request next
	credits  int
	pendingR []*rtl.Reg[uint16] // per peer: reads sent whose line is not back

	arrived  *rtl.Vec[uint8]  // [sm*warps+warp]: lines arrived, not yet handed over
	ready    *rtl.Vec[uint64] // per SM: warps with arrived lines
	due      *rtl.Reg[uint64] // SMs with arrived lines
	dueShown *rtl.Reg[uint64] // due before its last change

	received, reads, writes *rtl.Reg[uint64]

	// Eval's scratch: this cycle's arrivals, merged per warp.
	addKey   [MaxGPUs]int
	addN     [MaxGPUs]uint8
	readyNew [64]uint64 // per SM touched this cycle: its ready set
}

// NewRemoteLines builds GPU g's unit for sms SMs of warps warps and
// lines of lineBytes on ports p (one entry per GPU in Out and In), with
// credits reads outstanding per peer (LineCredits).
func NewRemoteLines(s *rtl.Sim, path string, g, warps, lineBytes, credits int, p LinePorts) (*RemoteLines, error) {
	n, sms := len(p.Out), len(p.Req)
	switch {
	case n < 1 || n > MaxGPUs || len(p.In) != n || g < 0 || g >= n:
		return nil, fmt.Errorf("multigpu: remote line unit of GPU %d with %d and %d link ports (1..%d GPUs)", g, len(p.Out), len(p.In), MaxGPUs)
	case sms < 1 || sms > 64 || len(p.Resp) != sms || sms > 1<<lineSMBits:
		return nil, fmt.Errorf("multigpu: remote line unit of GPU %d with %d request and %d response ports (1..64 SMs)", g, sms, len(p.Resp))
	case warps < 1 || warps > gpu.MaxWarps:
		return nil, fmt.Errorf("multigpu: remote line unit of GPU %d with %d warps per SM (1..%d)", g, warps, gpu.MaxWarps)
	case lineBytes < 1 || lineBytes > 1<<gpu.PageShift:
		return nil, fmt.Errorf("multigpu: remote line unit of GPU %d with %d B lines (1..4096)", g, lineBytes)
	case credits < 1 || credits > MaxLineCredits:
		return nil, fmt.Errorf("multigpu: remote line unit of GPU %d with %d credits (1..%d)", g, credits, MaxLineCredits)
	}
	u := &RemoteLines{LinePorts: p, gpu: g, warps: warps, lineBytes: uint16(lineBytes), credits: credits}
	s.Add(u, path)
	b := &u.Base
	all := ^uint64(0) >> (64 - sms)
	u.reqValid = rtl.ValidBus(s, path+".req_valid", p.Req)
	u.full = rtl.NewReg[uint64](b, "full", sms, 0)
	u.fullSeen = rtl.NewReg(b, "full_seen", sms, all)
	for i := range sms {
		u.held = append(u.held, rtl.NewReg[uint64](b, fmt.Sprintf("held%d", i), gpu.RemoteReqWidth, 0))
		p.Req[i].Consumer(b)
		p.Resp[i].Producer(b)
	}
	for o := range n {
		u.cur = append(u.cur, rtl.NewReg[uint64](b, fmt.Sprintf("cur%d", o), lineSMBits+gpu.RemoteReqWidth, 0))
		u.next = append(u.next, rtl.NewReg[uint16](b, fmt.Sprintf("next%d", o), lineSMBits, 0))
		u.answerUp = append(u.answerUp, rtl.NewFlag(b, fmt.Sprintf("answer_up%d", o), false))
		u.pendingR = append(u.pendingR, rtl.NewReg[uint16](b, fmt.Sprintf("pending_reads%d", o), 13, 0))
		var ring *rtl.Ring[uint64]
		if o != g {
			ring = rtl.NewRing[uint64](b, fmt.Sprintf("answers%d", o), credits, lineKindLSB, false)
			p.Out[o].Producer(b)
			p.In[o].Consumer(b)
		}
		u.answers = append(u.answers, ring)
	}
	u.arrived = rtl.NewVec[uint8](b, "arrived", sms*warps, 7, 0)
	u.ready = rtl.NewVec[uint64](b, "ready", sms, warps, 0)
	u.due = rtl.NewReg[uint64](b, "due", sms, 0)
	u.dueShown = rtl.NewReg(b, "due_shown", sms, all)
	u.received = rtl.NewReg[uint64](b, "received", 64, 0)
	u.reads = rtl.NewReg[uint64](b, "reads", 64, 0)
	u.writes = rtl.NewReg[uint64](b, "writes", 64, 0)
	return u, nil
}

// offer is the packet Out[o] presents, if any, and whether it is an
// answer (else the sender's next line).
func (u *RemoteLines) offer(o int) (p pcie.Packet, answer, ok bool) {
	a := u.answers[o].Len() > 0
	c := gpu.UnpackRemoteReq(u.cur[o].Q())
	switch {
	case a && (c.Lines == 0 || u.answerUp[o].Q()):
		return pcie.Packet{Tag: lineTag(lineData, 0, 0) | u.answers[o].Head(), Bytes: u.lineBytes}, true, true
	case c.Lines == 0:
		return pcie.Packet{}, false, false
	case c.Write:
		return pcie.Packet{Tag: lineTag(lineWrite, int(u.cur[o].Q()>>gpu.RemoteReqWidth), c.Warp), Bytes: u.lineBytes}, false, true
	case int(u.pendingR[o].Q()) == u.credits:
		// Out of credits: a read waits for a line to come back.
		if a {
			return pcie.Packet{Tag: lineTag(lineData, 0, 0) | u.answers[o].Head(), Bytes: u.lineBytes}, true, true
		}
		return pcie.Packet{}, false, false
	}
	return pcie.Packet{Tag: lineTag(lineRead, int(u.cur[o].Q()>>gpu.RemoteReqWidth), c.Warp), Bytes: LineRequestBytes}, false, true
}

// Drive offers each free input register to its SM, each peer's next
// packet, room for the peer's packets while its answer queue has room,
// and each SM the first warp with arrived lines.
func (u *RemoteLines) Drive() {
	for set := u.full.Q() | u.fullSeen.Q(); set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		u.Req[i].Ready.Set(u.full.Q()>>i&1 == 0)
	}
	for o := range u.Out {
		if o == u.gpu {
			continue
		}
		p, _, ok := u.offer(o)
		u.Out[o].Valid.Set(ok)
		if ok {
			u.Out[o].Bits.Set(p)
		}
		u.In[o].Ready.Set(!u.answers[o].Full())
	}
	for set := u.due.Q() | u.dueShown.Q(); set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		r := u.ready.At(i).Q()
		u.Resp[i].Valid.Set(r != 0)
		if r != 0 {
			w := bits.TrailingZeros64(r)
			u.Resp[i].Bits.Set(gpu.RemoteResp{Warp: uint8(w), Lines: u.arrived.At(i*u.warps + w).Q()})
		}
	}
}

// Eval moves the requests to the senders, the lines onto the links, the
// read requests to the answer queues and the arrived lines to the SMs.
func (u *RemoteLines) Eval() {
	full := u.full.Q()
	adds := 0
	received, reads, writes := uint64(0), uint64(0), uint64(0)
	for o := range u.Out {
		if o == u.gpu {
			continue
		}
		pop := false
		c := u.cur[o].Q()
		pending := u.pendingR[o].Q()
		if u.Out[o].Fire() {
			_, answer, _ := u.offer(o)
			if answer {
				pop = true
			} else {
				r := gpu.UnpackRemoteReq(c)
				r.Lines--
				c = c>>gpu.RemoteReqWidth<<gpu.RemoteReqWidth | r.Pack()
				if !r.Write {
					pending++
				}
			}
			update(u.answerUp[o], !answer)
		}
		push, tag := false, uint64(0)
		if u.In[o].Fire() {
			p := u.In[o].Bits.Get()
			received += uint64(p.Bytes)
			switch p.Tag >> lineKindLSB {
			case lineRead:
				push, tag = true, p.Tag&lineSlotMask
			case lineWrite:
				writes++
			default:
				reads++
				pending--
				key := int(p.Tag>>gpu.WarpBits&(1<<lineSMBits-1))*u.warps + int(p.Tag&(gpu.MaxWarps-1))
				adds = u.arrive(adds, key)
			}
		}
		if push || pop {
			u.answers[o].Update(push, tag, 0, pop)
		}
		// A free sender takes the next SM's request for its peer.
		if gpu.UnpackRemoteReq(c).Lines == 0 {
			if i := u.nextFor(o, full); i >= 0 {
				c = uint64(i)<<gpu.RemoteReqWidth | u.held[i].Q()
				u.held[i].Set(0)
				full &^= 1 << i
				u.next[o].Set(uint16((i + 1) % len(u.Req)))
			}
		}
		update(u.cur[o], c)
		update(u.pendingR[o], pending)
	}
	// An SM's request is taken when its input register was empty.
	for set := u.reqValid.Get() &^ u.full.Q(); set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		r := u.Req[i].Bits.Get()
		if int(r.Owner) == u.gpu || int(r.Owner) >= len(u.Out) {
			panic(fmt.Sprintf("%s: SM %d sent warp %d's lines to GPU %d, not a peer of GPU %d in %d: a remote PTE names a wrong owner", u.Path(), i, r.Warp, r.Owner, u.gpu, len(u.Out)))
		}
		u.held[i].Set(r.Pack())
		full |= 1 << i
	}
	if f := u.full.Q(); full != f {
		u.full.Set(full)
		u.fullSeen.Set(f)
	}
	u.hand(adds)
	if received != 0 {
		u.received.Set(u.received.Q() + received)
	}
	if reads != 0 {
		u.reads.Set(u.reads.Q() + reads)
	}
	if writes != 0 {
		u.writes.Set(u.writes.Q() + writes)
	}
}

// nextFor is the first SM at or after next[o] (round robin) whose input
// register holds a request for peer o, or -1.
func (u *RemoteLines) nextFor(o int, full uint64) int {
	if full == 0 {
		return -1
	}
	start := int(u.next[o].Q())
	rot := bits.RotateLeft64(full, -start)
	for r := rot; r != 0; r &= r - 1 {
		i := (start + bits.TrailingZeros64(r)) % 64
		if int(gpu.UnpackRemoteReq(u.held[i].Q()).Owner) == o {
			return i
		}
	}
	return -1
}

// arrive adds a line for warp key (sm*warps+warp) to this cycle's
// arrivals, adds of them so far, and returns their new number.
func (u *RemoteLines) arrive(adds, key int) int {
	for k := range adds {
		if u.addKey[k] == key {
			u.addN[k]++
			return adds
		}
	}
	u.addKey[adds], u.addN[adds] = key, 1
	return adds + 1
}

// hand takes the handed-over counts off and this cycle's arrivals
// (addKey, addN: adds warps) on.
func (u *RemoteLines) hand(adds int) {
	due, touched := u.due.Q(), uint64(0)
	ready := func(i int) *uint64 {
		if touched>>i&1 == 0 {
			touched |= 1 << i
			u.readyNew[i] = u.ready.At(i).Q()
		}
		return &u.readyNew[i]
	}
	for set := due; set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		if !u.Resp[i].Fire() {
			continue
		}
		r := ready(i)
		w := bits.TrailingZeros64(*r)
		key, left := i*u.warps+w, uint8(0)
		for k := range adds {
			if u.addKey[k] == key {
				left = u.addN[k]
				adds--
				u.addKey[k], u.addN[k] = u.addKey[adds], u.addN[adds]
				break
			}
		}
		u.arrived.At(key).Set(left)
		if left == 0 {
			*r &^= 1 << w
		}
	}
	for k := range adds {
		key := u.addKey[k]
		i, w := key/u.warps, key%u.warps
		u.arrived.At(key).Set(u.arrived.At(key).Q() + u.addN[k])
		*ready(i) |= 1 << w
	}
	for set := touched; set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		r := u.readyNew[i]
		update(u.ready.At(i), r)
		due = due&^(1<<i) | uint64(min(r, 1))<<i
	}
	if d := u.due.Q(); due != d {
		u.due.Set(due)
		u.dueShown.Set(d)
	}
}

// Busy describes the unit's unfinished work for the watchdog: the reads
// outstanding at each peer and the answers it owes.
func (u *RemoteLines) Busy() []string {
	var lines []string
	for o := range u.Out {
		if o == u.gpu {
			continue
		}
		if r, a := u.pendingR[o].Q(), u.answers[o].Len(); r != 0 || a != 0 {
			lines = append(lines, fmt.Sprintf("%s: %d reads outstanding at gpu%d, %d of its reads to answer", u.Path(), r, o, a))
		}
	}
	return lines
}

// ReceivedBytes is the bytes of line packets the GPU has received over
// NVLink: read requests to it, lines written to it, and lines it read.
func (u *RemoteLines) ReceivedBytes() uint64 { return u.received.Q() }

// Lines is the number of remote lines the GPU has read and the lines
// peers have written to it.
func (u *RemoteLines) Lines() (read, written uint64) { return u.reads.Q(), u.writes.Q() }

// update writes a register only when its value changes, so that an idle
// unit does not dirty registers.
func update[T comparable](r *rtl.Reg[T], v T) {
	if r.Q() != v {
		r.Set(v)
	}
}
