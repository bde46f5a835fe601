// Package dcq is the Destination Candidate Queue of the Destination
// Allocator (SPEC 5.1 and 5.3; UVMMU paper Section IV-C, Figure 3): a FIFO
// of {PFgN, S} destination candidates that the AFM fills and the allocation
// port drains. Its ports are exactly those of the Verilog module uvmmu_dcq.
package dcq

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// Entry is one destination candidate. In the Verilog a stored entry is the
// concatenation {PFgN, S}: S in bit SwapBit, PFgN from bit PFgNLSB up.
type Entry struct {
	PFgN uint64 // frame-group number of the destination
	Swap bool   // S: the frame-group holds a victim that must be swapped out
}

// Bit positions of the stored entry {PFgN, S}.
const (
	SwapBit = 0
	PFgNLSB = 1
)

// Pack returns the stored form {PFgN, S}.
func (e Entry) Pack() uint64 {
	v := e.PFgN << PFgNLSB
	if e.Swap {
		v |= 1 << SwapBit
	}
	return v
}

// Unpack is the inverse of Pack.
func Unpack(v uint64) Entry {
	return Entry{PFgN: v >> PFgNLSB, Swap: v>>SwapBit&1 != 0}
}

// Config mirrors the parameters of uvmmu_dcq.
type Config struct {
	Depth     int // DEPTH: entries, 2..65536
	Threshold int // THRESHOLD: refill is high while count < Threshold, 1..Depth
	FGBits    int // FG_BITS: width of a frame-group number, 1..63
}

// DefaultConfig is the paper's queue: 64 entries, refill threshold 32
// (UVMMU paper Section IV-C "DCQ has 64 entries, and the threshold value is
// 32 entries"; SPEC 2), with 32-bit frame-group numbers (SPEC 5.3).
func DefaultConfig() Config { return Config{Depth: 64, Threshold: 32, FGBits: 32} }

// Limits on the parameters; the Verilog generator uses the same bounds.
const (
	MinDepth  = 2
	MaxDepth  = 1 << 16
	MaxFGBits = 63
)

// DepthRange is the Depth Validate allows.
var DepthRange = rtl.Range{Min: MinDepth, Max: MaxDepth}

// Validate names the first parameter outside its range.
func (c Config) Validate() error {
	switch {
	case !DepthRange.Has(int64(c.Depth)):
		return DepthRange.Check("dcq: Depth", int64(c.Depth))
	case c.Threshold < 1 || c.Threshold > c.Depth:
		return fmt.Errorf("dcq: Threshold %d outside 1..Depth (%d)", c.Threshold, c.Depth)
	case c.FGBits < 1 || c.FGBits > MaxFGBits:
		return fmt.Errorf("dcq: FGBits %d outside 1..%d", c.FGBits, MaxFGBits)
	}
	return nil
}

// Ports are the wires of uvmmu_dcq, named as in the Verilog.
type Ports struct {
	PushValid *rtl.Wire[bool]   // in
	PushReady *rtl.Wire[bool]   // out: count < DEPTH
	PushPFgN  *rtl.Wire[uint64] // in
	PushSwap  *rtl.Wire[bool]   // in
	PopValid  *rtl.Wire[bool]   // out: count > 0
	PopReady  *rtl.Wire[bool]   // in
	PopPFgN   *rtl.Wire[uint64] // out: head entry (first-word fall-through)
	PopSwap   *rtl.Wire[bool]   // out
	Count     *rtl.Wire[uint32] // out: occupancy
	Refill    *rtl.Wire[bool]   // out: count < THRESHOLD
}

// Pop is the queue's head: the wires its consumer pops it with.
type Pop struct {
	Valid *rtl.Wire[bool]   // out
	Ready *rtl.Wire[bool]   // in
	PFgN  *rtl.Wire[uint64] // out
	Swap  *rtl.Wire[bool]   // out
}

// Module is uvmmu_dcq's ports and registers (SPEC 5.3), the one
// description that the Go block, verilog/gen and the testbenches share.
// The registers are those of the Go block's rtl.Ring named "mem": the
// entries (not reset, like an SRAM), the head and tail pointers and the
// fill count.
var Module = &rtl.Module{
	Name: "uvmmu_dcq",
	Locals: []rtl.Local{
		{Name: "COUNT_W", Expr: "$clog2(DEPTH + 1)"},
		{Name: "PTR_W", Expr: "$clog2(DEPTH)"},
	},
	Ports: []rtl.PortDecl{
		{Name: "clk", Dir: rtl.In}, {Name: "rst", Dir: rtl.In},
		{Name: "push_valid", Dir: rtl.In}, {Name: "push_ready", Dir: rtl.Out},
		{Name: "push_pfgn", Dir: rtl.In, Width: "FG_BITS"}, {Name: "push_swap", Dir: rtl.In},
		{Name: "pop_valid", Dir: rtl.Out}, {Name: "pop_ready", Dir: rtl.In},
		{Name: "pop_pfgn", Dir: rtl.Out, Width: "FG_BITS"}, {Name: "pop_swap", Dir: rtl.Out},
		{Name: "count", Dir: rtl.Out, Width: "$clog2(DEPTH+1)"}, {Name: "refill", Dir: rtl.Out},
	},
	Regs: []rtl.RegDecl{
		{Name: "mem", Width: "FG_BITS + 1", Depth: "DEPTH", Doc: "entry = {PFgN, S}, layout of blocks/dcq.Entry.Pack (PFgNLSB = 1)"},
		{Name: "mem_head", Width: "PTR_W", Reset: "0", Doc: "index of the oldest entry"},
		{Name: "mem_tail", Width: "PTR_W", Reset: "0", Doc: "index the next push writes"},
		{Name: "mem_fill", Width: "COUNT_W", Reset: "0", Doc: "occupancy"},
	},
}

// Params are uvmmu_dcq's parameter values for the configuration.
func (c Config) Params() rtl.Params {
	return rtl.Params{"DEPTH": uint64(c.Depth), "THRESHOLD": uint64(c.Threshold), "FG_BITS": uint64(c.FGBits)}
}

// NewPorts makes the wires under path (path.push_valid, ..., path.pop_valid, ...).
func NewPorts(s *rtl.Sim, path string, cfg Config) Ports {
	e := Module.At(cfg.Params())
	return NewPortsPoppedBy(s, path, cfg, Pop{
		Valid: rtl.PortBit(s, path, e, "pop_valid"),
		Ready: rtl.PortBit(s, path, e, "pop_ready"),
		PFgN:  rtl.PortWire[uint64](s, path, e, "pop_pfgn"),
		Swap:  rtl.PortBit(s, path, e, "pop_swap"),
	})
}

// NewPortsPoppedBy makes the push, count and refill wires under path, with
// pop as the pop wires: for a queue whose head is another block's port
// (the DA's allocation port), as a Verilog instance's port map connects it.
func NewPortsPoppedBy(s *rtl.Sim, path string, cfg Config, pop Pop) Ports {
	e := Module.At(cfg.Params())
	return Ports{
		PushValid: rtl.PortBit(s, path, e, "push_valid"),
		PushReady: rtl.PortBit(s, path, e, "push_ready"),
		PushPFgN:  rtl.PortWire[uint64](s, path, e, "push_pfgn"),
		PushSwap:  rtl.PortBit(s, path, e, "push_swap"),
		PopValid:  pop.Valid,
		PopReady:  pop.Ready,
		PopPFgN:   pop.PFgN,
		PopSwap:   pop.Swap,
		Count:     rtl.PortWire[uint32](s, path, e, "count"),
		Refill:    rtl.PortBit(s, path, e, "refill"),
	}
}

// PushFire reports a push transfer in this cycle.
func (p Ports) PushFire() bool { return p.PushValid.Get() && p.PushReady.Get() }

// PopFire reports a pop transfer in this cycle.
func (p Ports) PopFire() bool { return p.PopValid.Get() && p.PopReady.Get() }

// DCQ is a circular buffer of registers with head and tail pointers and an
// occupancy counter (an rtl.Ring). Every output is a function of those
// registers (Moore): a full queue does not accept a push even in a cycle
// where it pops.
type DCQ struct {
	rtl.Base
	Ports

	cfg     Config
	entries *rtl.Ring[Entry] // mem[i], mem_head, mem_tail, mem_fill
}

// New adds a DCQ to s under path.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*DCQ, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	q := &DCQ{Ports: p, cfg: cfg}
	s.Add(q, path)
	e := Module.At(cfg.Params())
	q.entries = rtl.NewRingOf[Entry](&q.Base, "mem", e.RegDepth("mem"), e.RegWidth("mem"), false)
	q.Listen(p.PushValid, p.PushPFgN, p.PushSwap, p.PopReady)
	return q, nil
}

// Config returns the queue's parameters.
func (q *DCQ) Config() Config { return q.cfg }

// Drive presents the head entry, the occupancy and the two flow flags.
func (q *DCQ) Drive() {
	n := q.entries.Len()
	head := q.entries.Head()
	q.PushReady.Set(n < uint32(q.cfg.Depth))
	q.PopValid.Set(n > 0)
	q.PopPFgN.Set(head.PFgN)
	q.PopSwap.Set(head.Swap)
	q.Count.Set(n)
	q.Refill.Set(n < uint32(q.cfg.Threshold))
}

// Eval stores a pushed entry at the tail and retires the head on a pop.
func (q *DCQ) Eval() {
	q.entries.Update(q.PushFire(), Entry{PFgN: q.PushPFgN.Get(), Swap: q.PushSwap.Get()}, 0, q.PopFire())
}

// Len is the current occupancy, for testbenches and reports.
func (q *DCQ) Len() int { return int(q.entries.Len()) }
