// Package frab is the Frame-region Availability Bitmap of the Destination
// Allocator (SPEC 5.1; UVMMU paper Section IV-B2): one bit per 2 MB frame
// region in an on-chip SRAM of FRAB_WORD-bit words, with one read/write port
// and a one-cycle read. A set bit means the region may hold a free
// frame-group; a clear bit guarantees it holds none.
//
// The block serves one command port: FIND returns the first set bit at or
// after a region within that region's word (the priority encoder), SET and
// CLEAR change one bit with a read-modify-write. After reset it runs the
// initialisation sweep and raises init_done.
package frab

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/uvmmu/uvmmu/rtl"
)

// MaxWordBits is the widest word the model supports; Word holds it.
const MaxWordBits = 512

// MinWordBits is the narrowest FRAB_WORD; MaxRegions the most regions a
// bitmap holds, which keeps NFG (32 frame-groups a region) below 2^31, the
// range of a Verilog integer parameter.
const (
	MinWordBits = 32
	MaxRegions  = 1<<26 - 1
)

// WordBitsRange is FRAB_WORD's allowed widths: a word holds whole
// 32-bit region masks, up to MaxWordBits.
var WordBitsRange = rtl.Range{Min: MinWordBits, Max: MaxWordBits, Pow2: true}

// DefaultWordBits is the paper's word: "FrAB utilizes a wide SRAM (e.g.,
// 256-bit) to check multiple regions with single access" (UVMMU paper
// Section IV-C; SPEC 2 FRAB_WORD).
const DefaultWordBits = 256

// FrameGroupsPerRegion is 32: a 2 MB frame region of 64 KB frame-groups
// (SPEC 2; UVMMU paper Section IV-B2).
const FrameGroupsPerRegion = 32

// Word is one SRAM word; bits at and above the configured width are zero.
type Word [MaxWordBits / 64]uint64

// Bit reports bit i.
func (w *Word) Bit(i int) bool { return w[i/64]>>(i%64)&1 != 0 }

// With returns the word with bit i set to v.
func (w Word) With(i int, v bool) Word {
	if v {
		w[i/64] |= 1 << (i % 64)
	} else {
		w[i/64] &^= 1 << (i % 64)
	}
	return w
}

// Op is a command on the FrAB port.
type Op uint8

// Commands, in the encoding of the cmd_op port.
const (
	Find  Op = iota // first set bit at or after cmd_region within its word
	Set             // set the bit of cmd_region
	Clear           // clear the bit of cmd_region
)

// OpBits is the width of the cmd_op port.
const OpBits = 2

// Config sets the bitmap's geometry.
type Config struct {
	Regions  int // NR: frame regions, ceil(NFG/32); 1..1<<26
	WordBits int // FRAB_WORD: a power of two, 32..MaxWordBits
}

// Validate names the first field outside its range.
func (c Config) Validate() error {
	switch {
	case c.Regions < 1 || c.Regions > MaxRegions:
		return fmt.Errorf("frab: Regions %d outside 1..%d", c.Regions, MaxRegions)
	}
	return WordBitsRange.Check("frab: WordBits", int64(c.WordBits))
}

// WordWidth is the SRAM word width: WordBits, or, when every region fits
// in less than one word, the smallest power of two that covers them (at
// least 2), so that no bit of the macro or of the priority encoder can
// never be set.
func (c Config) WordWidth() int { return min(c.WordBits, 1<<c.RegionBits()) }

// Words is the SRAM depth: ceil(Regions/WordWidth).
func (c Config) Words() int { return (c.Regions + c.WordWidth() - 1) / c.WordWidth() }

// RegionBits is the width of a region number on the ports.
func (c Config) RegionBits() int { return max(1, bits.Len(uint(c.Regions-1))) }

// InitWord is what the initialisation sweep writes at word address a:
// every region that exists is available; bits of regions at or beyond
// Regions are never set.
func (c Config) InitWord(a int) Word {
	var w Word
	for i := range c.WordWidth() {
		if a*c.WordWidth()+i < c.Regions {
			w = w.With(i, true)
		}
	}
	return w
}

// Ports are the wires between the FrAB and its user (the AFM).
type Ports struct {
	CmdValid  *rtl.Wire[bool]   // in
	CmdReady  *rtl.Wire[bool]   // out: idle and initialised
	CmdOp     *rtl.Wire[uint8]  // in: Op
	CmdRegion *rtl.Wire[uint64] // in
	RspValid  *rtl.Wire[bool]   // out: one-cycle pulse, two cycles after a FIND is accepted
	RspFound  *rtl.Wire[bool]   // out
	RspRegion *rtl.Wire[uint64] // out: the region found
	InitDone  *rtl.Wire[bool]   // out
}

// Geometry is the bitmap geometry of Config as Verilog localparams over
// the DA's NFG and FRAB_WORD: NR regions (Regions), RB region-number bits
// (RegionBits), FW-bit words (WordWidth) of LW index bits, NW words
// (Words) and AW word-address bits (0 when the bitmap is one word).
var Geometry = []rtl.Local{
	{Name: "NR", Expr: "(NFG + 31) / 32", Doc: "FrAB geometry (blocks/frab.Config): regions of 32 frame-groups, one bit\n" +
		"each, in NW words of FW bits (FRAB_WORD, or fewer when the regions fit\na narrower word)."},
	{Name: "RB", Expr: "NR > 1 ? $clog2(NR) : 1"},
	{Name: "FW", Expr: "FRAB_WORD < (1 << RB) ? FRAB_WORD : (1 << RB)"},
	{Name: "LW", Expr: "$clog2(FW)"},
	{Name: "NW", Expr: "(NR + FW - 1) / FW"},
	{Name: "AW", Expr: "$clog2(NW)", Doc: "word-address bits; 0 when the bitmap is one word"},
}

// RegionBitsExpr is RB over the parameters alone, for port widths (a port
// list cannot use a module's localparams).
const RegionBitsExpr = "(((NFG + 31) / 32) > 1 ? $clog2(((NFG + 31) / 32)) : 1)"

// Module is uvmmu_da_frab's ports and registers, the one description that
// the Go block, verilog/gen and the testbenches share. The bitmap SRAM is
// the instance of uvmmu_da_frab_sram, not a register.
var Module = &rtl.Module{
	Name:   "uvmmu_da_frab",
	Locals: append(slices.Clone(Geometry), rtl.Local{Name: "SW", Expr: "$clog2(NW + 1)", Doc: "sweep counter bits"}),
	Ports: []rtl.PortDecl{
		{Name: "clk", Dir: rtl.In}, {Name: "rst", Dir: rtl.In},
		{Name: "cmd_valid", Dir: rtl.In}, {Name: "cmd_ready", Dir: rtl.Out},
		{Name: "cmd_op", Dir: rtl.In, Width: fmt.Sprint(OpBits)}, {Name: "cmd_region", Dir: rtl.In, Width: RegionBitsExpr},
		{Name: "rsp_valid", Dir: rtl.Out}, {Name: "rsp_found", Dir: rtl.Out}, {Name: "rsp_region", Dir: rtl.Out, Width: RegionBitsExpr},
		{Name: "init_done", Dir: rtl.Out},
	},
	Regs: []rtl.RegDecl{
		{Name: "state_q", Width: fmt.Sprint(StateBits), Reset: fmt.Sprint(StateInit), Doc: "0 init sweep, 1 idle, 2 access"},
		{Name: "sweep_q", Width: "SW", Reset: "0", Doc: "next word of the initialisation sweep"},
		{Name: "op_q", Width: fmt.Sprint(OpBits), Reset: "0", Doc: "command in flight and its region"},
		{Name: "addr_q", Width: "RB", Reset: "0"},
		{Name: "rsp_valid_q", Reset: "0"},
		{Name: "rsp_found_q", Reset: "0"},
		{Name: "rsp_region_q", Width: "RB", Reset: "0"},
	},
}

// Params are uvmmu_da_frab's parameter values for the configuration: NFG
// is the most frame-groups of Regions regions (any NFG with as many
// regions describes the same bitmap).
func (c Config) Params() rtl.Params {
	return rtl.Params{"NFG": uint64(c.Regions) * FrameGroupsPerRegion, "FRAB_WORD": uint64(c.WordBits)}
}

// NewPorts makes the wires under path.
func NewPorts(s *rtl.Sim, path string, cfg Config) Ports {
	return NewPortsInitDone(s, path, cfg, rtl.PortBit(s, path, Module.At(cfg.Params()), "init_done"))
}

// NewPortsInitDone makes the command and response wires under path, with
// initDone as the init_done output: for a bitmap whose init_done is
// another block's port (the DA's), as a Verilog instance's port map
// connects it.
func NewPortsInitDone(s *rtl.Sim, path string, cfg Config, initDone *rtl.Wire[bool]) Ports {
	e := Module.At(cfg.Params())
	return Ports{
		InitDone:  initDone,
		CmdValid:  rtl.PortBit(s, path, e, "cmd_valid"),
		CmdReady:  rtl.PortBit(s, path, e, "cmd_ready"),
		CmdOp:     rtl.PortWire[uint8](s, path, e, "cmd_op"),
		CmdRegion: rtl.PortWire[uint64](s, path, e, "cmd_region"),
		RspValid:  rtl.PortBit(s, path, e, "rsp_valid"),
		RspFound:  rtl.PortBit(s, path, e, "rsp_found"),
		RspRegion: rtl.PortWire[uint64](s, path, e, "rsp_region"),
	}
}

// CmdFire reports a command transfer in this cycle.
func (p Ports) CmdFire() bool { return p.CmdValid.Get() && p.CmdReady.Get() }

// FSM states, in the encoding of the state register (the Verilog uses the
// same values).
const (
	StateInit   uint8 = iota // sweep: one word written per cycle
	StateIdle                // cmd_ready high
	StateAccess              // the word read in the last cycle is on the SRAM output
	StateBits   = 2
)

// FrAB is the bitmap SRAM, its sweep counter and the command FSM. A command
// takes two cycles: the accept cycle reads the word, the next cycle encodes
// it (FIND) or writes it back with one bit changed (SET, CLEAR).
type FrAB struct {
	rtl.Base
	Ports

	cfg   Config
	sram  *rtl.SRAM[Word]
	state *rtl.Reg[uint8]
	sweep *rtl.Reg[uint32] // next word of the initialisation sweep
	op    *rtl.Reg[uint8]
	addr  *rtl.Reg[uint64] // region of the command in flight
	rsp   *rtl.Reg[bool]
	found *rtl.Reg[bool]
	where *rtl.Reg[uint64]
}

// New adds a FrAB to s under path.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*FrAB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := &FrAB{Ports: p, cfg: cfg}
	s.Add(f, path)
	f.sram = rtl.NewSRAM[Word](&f.Base, "bitmap", rtl.SRAMConfig{Depth: cfg.Words(), Width: cfg.WordWidth(), Ports: 1, ReadLatency: 1})
	e := Module.At(cfg.Params())
	f.state = rtl.DeclReg[uint8](&f.Base, e, "state_q")
	f.sweep = rtl.DeclReg[uint32](&f.Base, e, "sweep_q")
	f.op = rtl.DeclReg[uint8](&f.Base, e, "op_q")
	f.addr = rtl.DeclReg[uint64](&f.Base, e, "addr_q")
	f.rsp = rtl.DeclFlag(&f.Base, e, "rsp_valid_q")
	f.found = rtl.DeclFlag(&f.Base, e, "rsp_found_q")
	f.where = rtl.DeclReg[uint64](&f.Base, e, "rsp_region_q")
	f.Listen(p.CmdValid, p.CmdOp, p.CmdRegion)
	return f, nil
}

// Config returns the bitmap's geometry.
func (f *FrAB) Config() Config { return f.cfg }

// Drive shows readiness, the FIND response and init_done.
func (f *FrAB) Drive() {
	st := f.state.Q()
	f.CmdReady.Set(st == StateIdle)
	f.InitDone.Set(st != StateInit)
	f.RspValid.Set(f.rsp.Q())
	f.RspFound.Set(f.found.Q())
	f.RspRegion.Set(f.where.Q())
}

// Eval runs the sweep or one step of a command.
func (f *FrAB) Eval() {
	if f.rsp.Q() {
		f.rsp.Set(false)
	}
	w := uint64(f.cfg.WordWidth())
	switch f.state.Q() {
	case StateInit:
		a := f.sweep.Q()
		f.sram.Write(0, int(a), f.cfg.InitWord(int(a)))
		f.sweep.Set(a + 1)
		if int(a)+1 == f.cfg.Words() {
			f.state.Set(StateIdle)
		}
	case StateIdle:
		if f.CmdFire() {
			r := f.CmdRegion.Get()
			f.sram.Read(0, int(r/w))
			f.op.Set(f.CmdOp.Get())
			f.addr.Set(r)
			f.state.Set(StateAccess)
		}
	case StateAccess:
		r := f.addr.Q()
		word := f.sram.RData(0)
		switch Op(f.op.Q()) {
		case Find:
			i, ok := FirstSetFrom(&word, int(w), int(r%w))
			f.rsp.Set(true)
			f.found.Set(ok)
			if ok {
				f.where.Set(r - r%w + uint64(i))
			}
		case Set:
			f.sram.Write(0, int(r/w), word.With(int(r%w), true))
		case Clear:
			f.sram.Write(0, int(r/w), word.With(int(r%w), false))
		}
		f.state.Set(StateIdle)
	}
}

// Peek returns bitmap word a (testbench backdoor).
func (f *FrAB) Peek(a int) Word { return f.sram.Peek(a) }

// Load writes bitmap word a (testbench backdoor).
func (f *FrAB) Load(a int, w Word) { f.sram.Load(a, w) }

// RegionSet reports the bit of region r (testbench backdoor).
func (f *FrAB) RegionSet(r int) bool {
	w := f.sram.Peek(r / f.cfg.WordWidth())
	return w.Bit(r % f.cfg.WordWidth())
}

// EncoderDepth is the number of 2:1 levels of the priority-encoder tree
// over a word: log2(wordBits).
func EncoderDepth(wordBits int) int { return bits.Len(uint(wordBits)) - 1 }

// FirstSetFrom is the priority encoder: the index of the first set bit at
// or after from among the low width bits of w, and whether there is one.
// It is computed as the RTL computes it: the bits below from are masked,
// then a binary tree of EncoderDepth(width) levels merges neighbouring
// nodes, each node carrying (any bit set, index of its first set bit) and
// taking the left child's index when the left child has a set bit.
func FirstSetFrom(w *Word, width, from int) (int, bool) {
	var any [MaxWordBits]bool
	var idx [MaxWordBits]uint16
	for i := range width {
		any[i] = i >= from && w.Bit(i)
		idx[i] = uint16(i)
	}
	for n := width / 2; n >= 1; n /= 2 {
		for i := range n {
			l, r := 2*i, 2*i+1
			if any[l] {
				idx[i] = idx[l]
			} else {
				idx[i] = idx[r]
			}
			any[i] = any[l] || any[r]
		}
	}
	return int(idx[0]), any[0]
}
