package gpu

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// MemoryConfig is the data path's timing.
type MemoryConfig struct {
	SMs       int
	Warps     int    // per SM: at most one load per warp is in flight
	LineBytes int    // bytes per requested line
	Latency   uint64 // GPU DRAM: cycles from the end of the transfer to the response
	// ByteTime is the time one byte occupies the DRAM channels, in
	// 2^-FixedPointBits cycles (config.TransferTime).
	ByteTime uint64
	// RemoteLatency and RemoteByteTime time a zero-copy load (DataReq.Remote)
	// the same way over the host link: the remote access latency (UVMSmart
	// Table I, 200 cycles) after the lines have crossed PCIe at its
	// bandwidth. The policy that maps pages zero-copy sets them
	// (SetRemoteTiming); zero RemoteByteTime means none does, and such a
	// request is then an error of the system's composition.
	RemoteLatency  uint64
	RemoteByteTime uint64
}

// FixedPointBits is the fraction width of ByteTime.
const FixedPointBits = 16

// Memory is the data path as the SMs' loads see it (SPEC 6.3): GPU DRAM, a
// fixed access latency after a shared bandwidth budget, and, for loads of
// zero-copy pages, host memory over PCIe, timed the same way with the
// link's bandwidth and the remote access latency. Requests from all SMs are
// accepted every cycle and served in SM order within a cycle. Each SM has a
// response FIFO per source, so a remote load does not hold back the local
// loads behind it; a due local response goes first, one per cycle. The
// memories hold no data values: the model times accesses, and the
// invariant checker follows where every page-group lives.
//
// The zero-copy lines have their own bandwidth budget: they do not queue
// behind page migrations in the PCIe link block. The UVMSmart simulator
// charges a zero-copy access its 200 cycles alone (gpu-sim.cc,
// get_ready_cycle_dma); the model adds the lines' wire time.
type Memory struct {
	rtl.Base

	Req  []*rtl.Decoupled[DataReq] // from the SMs
	Resp []*rtl.Decoupled[DataReq] // to the SMs

	cfg MemoryConfig

	busy        *rtl.Reg[uint64] // fixed-point cycle at which the DRAM channels are next free
	remoteBusy  *rtl.Reg[uint64] // the same for the zero-copy lines on the link
	local       []respFIFO
	remote      []respFIFO
	bytes       *rtl.Reg[uint64] // bytes served from GPU DRAM, for reports
	remoteLoads *rtl.Reg[uint64] // zero-copy loads served, for reports
	remoteBytes *rtl.Reg[uint64] // their bytes over the link
	// Bit i of pending is set while SM i has loads in flight; shown is
	// pending before its last change, so that Drive updates only the SMs
	// whose outputs may differ from what the wires hold.
	pending *rtl.Reg[uint64]
	shown   *rtl.Reg[uint64]
}

// respFIFO holds one SM's responses of one source in request order, each
// with the cycle it is due: a timed ring of DataReq.Pack() tags.
type respFIFO struct{ tags *rtl.Ring[uint64] }

func newRespFIFO(b *rtl.Base, name string, depth int) respFIFO {
	return respFIFO{rtl.NewRing[uint64](b, name+".tag", depth, DataReqWidth, true)}
}

// ready reports whether the head is due at now.
func (f *respFIFO) ready(now uint64) bool {
	return f.tags.Len() > 0 && f.tags.HeadDue() <= now
}

// headDue is the head's due cycle, rtl.Never when empty.
func (f *respFIFO) headDue() uint64 {
	if f.tags.Len() == 0 {
		return rtl.Never
	}
	return f.tags.HeadDue()
}

// step pops the head if popped and appends tag due at due if push, and
// returns the number of responses held.
func (f *respFIFO) step(popped, push bool, due, tag uint64) int {
	held := int(f.tags.Len())
	f.tags.Update(push, tag, due, popped)
	if popped {
		held--
	}
	if push {
		held++
	}
	return held
}

// NewMemory connects to every SM's data ports.
func NewMemory(s *rtl.Sim, path string, cfg MemoryConfig, sms []*SM) (*Memory, error) {
	var reqs, resps []*rtl.Decoupled[DataReq]
	for _, sm := range sms {
		reqs = append(reqs, sm.DataReq)
		resps = append(resps, sm.DataResp)
	}
	return NewMemoryOn(s, path, cfg, reqs, resps)
}

// NewMemoryOn connects to per-SM request and response ports.
func NewMemoryOn(s *rtl.Sim, path string, cfg MemoryConfig, reqs, resps []*rtl.Decoupled[DataReq]) (*Memory, error) {
	if cfg.Warps < 1 || cfg.Warps > MaxWarps || cfg.ByteTime == 0 || cfg.SMs < 1 || cfg.SMs > 64 || len(reqs) != cfg.SMs || len(resps) != cfg.SMs {
		return nil, fmt.Errorf("gpu: memory config %+v does not match 1..64 SMs (%d ports) of up to %d warps with a non-zero byte time", cfg, len(reqs), MaxWarps)
	}
	m := &Memory{cfg: cfg, Req: reqs, Resp: resps}
	s.Add(m, path)
	b := &m.Base
	m.busy = rtl.NewReg[uint64](b, "busy", 64, 0)
	m.remoteBusy = rtl.NewReg[uint64](b, "remote_busy", 64, 0)
	m.bytes = rtl.NewReg[uint64](b, "bytes", 64, 0)
	m.remoteLoads = rtl.NewReg[uint64](b, "remote_loads", 64, 0)
	m.remoteBytes = rtl.NewReg[uint64](b, "remote_bytes", 64, 0)
	m.pending = rtl.NewReg[uint64](b, "pending", cfg.SMs, 0)
	m.shown = rtl.NewReg(b, "shown", cfg.SMs, ^uint64(0)>>(64-cfg.SMs))
	for i := range reqs {
		m.local = append(m.local, newRespFIFO(b, fmt.Sprintf("sm%d.local", i), cfg.Warps))
		m.remote = append(m.remote, newRespFIFO(b, fmt.Sprintf("sm%d.remote", i), cfg.Warps))
		m.Req[i].Consumer(b)
		m.Resp[i].Producer(b)
	}
	return m, nil
}

// SetRemoteTiming sets the zero-copy load timing (MemoryConfig's
// RemoteLatency and RemoteByteTime); it is part of building the system,
// before the simulation is reset.
func (m *Memory) SetRemoteTiming(latency, byteTime uint64) {
	m.cfg.RemoteLatency, m.cfg.RemoteByteTime = latency, byteTime
}

// Drive presents each SM's oldest due response, a local one first. The
// request ports are always ready. An SM outside pending and shown has no
// load in flight and had none when its outputs were last driven, so its
// wires already hold what Drive would set.
func (m *Memory) Drive() {
	now := m.Now()
	for set := m.pending.Q() | m.shown.Q(); set != 0; set &= set - 1 {
		i := bits.TrailingZeros64(set)
		r := m.Resp[i]
		m.Req[i].Ready.Set(true)
		f := m.pick(i, now)
		r.Valid.Set(f != nil)
		if f != nil {
			r.Bits.Set(UnpackDataReq(f.tags.Head()))
		}
	}
}

// pick is the FIFO whose head SM i is offered at now, or nil.
func (m *Memory) pick(i int, now uint64) *respFIFO {
	switch {
	case m.local[i].ready(now):
		return &m.local[i]
	case m.remote[i].ready(now):
		return &m.remote[i]
	}
	return nil
}

// Eval retires delivered responses and schedules new requests.
func (m *Memory) Eval() {
	now := m.Now()
	busy, remoteBusy := m.busy.Q(), m.remoteBusy.Q()
	served, remoteLoads, remoteBytes := uint64(0), uint64(0), uint64(0)
	wake := rtl.Never
	active := false
	pending := m.pending.Q()
	for i, r := range m.Req {
		if pending&(1<<i) == 0 && !r.Valid.Get() {
			continue
		}
		var popped *respFIFO
		if m.Resp[i].Fire() {
			popped = m.pick(i, now)
			active = true
		}
		var req DataReq
		if r.Fire() {
			req = r.Bits.Get()
			active = true
		}
		n := uint64(req.Lines) * uint64(m.cfg.LineBytes)
		var due uint64
		switch {
		case !r.Fire():
		case req.Remote:
			if m.cfg.RemoteByteTime == 0 {
				panic(fmt.Sprintf("%s: SM %d sent a zero-copy load, but no policy set the remote timing", m.Path(), i))
			}
			remoteBusy = max(remoteBusy, now<<FixedPointBits) + n*m.cfg.RemoteByteTime
			due = (remoteBusy+1<<FixedPointBits-1)>>FixedPointBits + m.cfg.RemoteLatency
			remoteLoads++
			remoteBytes += n
		default:
			busy = max(busy, now<<FixedPointBits) + n*m.cfg.ByteTime
			due = (busy+1<<FixedPointBits-1)>>FixedPointBits + m.cfg.Latency
			served += n
		}
		held := m.local[i].step(popped == &m.local[i], r.Fire() && !req.Remote, due, req.Pack())
		held += m.remote[i].step(popped == &m.remote[i], r.Fire() && req.Remote, due, req.Pack())
		pending = pending&^(1<<i) | uint64(min(held, 1))<<i
		if !active {
			wake = min(wake, m.local[i].headDue(), m.remote[i].headDue())
		}
	}
	if p := m.pending.Q(); pending != p {
		m.pending.Set(pending)
		m.shown.Set(p)
	}
	if served > 0 {
		m.busy.Set(busy)
		m.bytes.Set(m.bytes.Q() + served)
	}
	if remoteLoads > 0 {
		m.remoteBusy.Set(remoteBusy)
		m.remoteLoads.Set(m.remoteLoads.Q() + remoteLoads)
		m.remoteBytes.Set(m.remoteBytes.Q() + remoteBytes)
	}
	if !active && wake > now+1 {
		m.SleepUntil(wake)
	}
}

// Bytes is the number of bytes served from GPU DRAM so far.
func (m *Memory) Bytes() uint64 { return m.bytes.Q() }

// RemoteLoads is the number of zero-copy loads served so far.
func (m *Memory) RemoteLoads() uint64 { return m.remoteLoads.Q() }

// RemoteBytes is the bytes the zero-copy loads (and stores through
// writable remote mappings) moved over the host link so far.
func (m *Memory) RemoteBytes() uint64 { return m.remoteBytes.Q() }
