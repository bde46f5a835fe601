package gpu

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// MemoryConfig is the GPU DRAM data path's timing.
type MemoryConfig struct {
	SMs       int
	Warps     int    // per SM: at most one load per warp is in flight
	LineBytes int    // bytes per requested line
	Latency   uint64 // cycles from the end of the transfer to the response
	// ByteTime is the time one byte occupies the DRAM channels, in
	// 2^-FixedPointBits cycles (config.TransferTime).
	ByteTime uint64
}

// FixedPointBits is the fraction width of ByteTime.
const FixedPointBits = 16

// Memory is the GPU DRAM as the SMs' loads see it (SPEC 6.3): a fixed access
// latency after a shared bandwidth budget. Requests from all SMs are
// accepted every cycle and served in SM order within a cycle; each SM's
// responses come back in request order from its own in-flight FIFO, one per
// cycle. The DRAM holds no data values: the model times accesses, and the
// invariant checker follows where every page-group lives.
type Memory struct {
	rtl.Base

	Req  []*rtl.Decoupled[DataReq] // from the SMs
	Resp []*rtl.Decoupled[DataReq] // to the SMs

	cfg MemoryConfig

	busy  *rtl.Reg[uint64] // fixed-point cycle at which the channels are next free
	due   []*rtl.Vec[uint64]
	tag   []*rtl.Vec[uint64] // DataReq.Pack()
	head  []*rtl.Reg[uint8]
	fill  []*rtl.Reg[uint8]
	bytes *rtl.Reg[uint64] // bytes served, for reports
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
	if cfg.Warps < 1 || cfg.Warps > MaxWarps || cfg.ByteTime == 0 || len(reqs) != cfg.SMs || len(resps) != cfg.SMs {
		return nil, fmt.Errorf("gpu: memory config %+v does not match %d SMs of up to %d warps with a non-zero byte time", cfg, len(reqs), MaxWarps)
	}
	m := &Memory{cfg: cfg, Req: reqs, Resp: resps}
	s.Add(m, path)
	b := &m.Base
	m.busy = rtl.NewReg[uint64](b, "busy", 64, 0)
	m.bytes = rtl.NewReg[uint64](b, "bytes", 64, 0)
	for i := range reqs {
		m.due = append(m.due, rtl.NewVec[uint64](b, fmt.Sprintf("sm%d.due", i), cfg.Warps, 64, 0))
		m.tag = append(m.tag, rtl.NewVec[uint64](b, fmt.Sprintf("sm%d.tag", i), cfg.Warps, DataReqWidth, 0))
		m.head = append(m.head, rtl.NewReg[uint8](b, fmt.Sprintf("sm%d.head", i), WarpBits, 0))
		m.fill = append(m.fill, rtl.NewReg[uint8](b, fmt.Sprintf("sm%d.fill", i), WarpBits+1, 0))
		m.Req[i].Consumer(b)
		m.Resp[i].Producer(b)
	}
	return m, nil
}

// Drive presents each SM's oldest response once it is due.
func (m *Memory) Drive() {
	now := m.Now()
	for i, r := range m.Resp {
		m.Req[i].Ready.Set(true)
		h := int(m.head[i].Q())
		ok := m.fill[i].Q() > 0 && m.due[i].At(h).Q() <= now
		r.Valid.Set(ok)
		if ok {
			t := m.tag[i].At(h).Q()
			r.Bits.Set(DataReq{Warp: uint8(t & (MaxWarps - 1)), Lines: uint8(t >> WarpBits)})
		}
	}
}

// Eval retires delivered responses and schedules new requests.
func (m *Memory) Eval() {
	now := m.Now()
	busy := m.busy.Q()
	served := uint64(0)
	wake := rtl.Never
	active := false
	for i, r := range m.Req {
		h, fill := int(m.head[i].Q()), int(m.fill[i].Q())
		if m.Resp[i].Fire() {
			h = (h + 1) % m.cfg.Warps
			fill--
			m.head[i].Set(uint8(h))
			active = true
		}
		if r.Fire() {
			req := r.Bits.Get()
			n := uint64(req.Lines) * uint64(m.cfg.LineBytes)
			busy = max(busy, now<<FixedPointBits) + n*m.cfg.ByteTime
			due := (busy+1<<FixedPointBits-1)>>FixedPointBits + m.cfg.Latency
			t := (h + fill) % m.cfg.Warps
			m.due[i].At(t).Set(due)
			m.tag[i].At(t).Set(req.Pack())
			fill++
			served += n
			active = true
		}
		if fill != int(m.fill[i].Q()) {
			m.fill[i].Set(uint8(fill))
		}
		if fill > 0 && !active {
			wake = min(wake, m.due[i].At(h).Q())
		}
	}
	if served > 0 {
		m.busy.Set(busy)
		m.bytes.Set(m.bytes.Q() + served)
	}
	if !active && wake > now+1 {
		m.SleepUntil(wake)
	}
}

// Bytes is the number of bytes served so far.
func (m *Memory) Bytes() uint64 { return m.bytes.Q() }
