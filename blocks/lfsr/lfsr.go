package lfsr

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/rtl"
)

// Config is the LFSR's parameter set, mirroring the WIDTH and SEED
// parameters of uvmmu_lfsr.
type Config struct {
	Width int    // register width in bits, MinWidth..MaxWidth
	Seed  uint64 // reset state: non-zero and below 2^Width
}

// DefaultConfig is uvmmu_lfsr's default: WIDTH = 32, SEED = 1 (SPEC 5.3).
func DefaultConfig() Config { return Config{Width: 32, Seed: 1} }

// Validate reports a width outside the tap table or a seed that is zero
// (the all-zero state is the lock-up state of an XOR LFSR) or too wide.
func (c Config) Validate() error {
	if err := WidthRange.Check("lfsr: Width", int64(c.Width)); err != nil {
		return err
	}
	if c.Seed == 0 || bits.Len64(c.Seed) > c.Width {
		return fmt.Errorf("lfsr: Seed %#x outside 1..2^%d-1", c.Seed, c.Width)
	}
	return nil
}

// Module is uvmmu_lfsr's ports and register (SPEC 5.3), the one
// description that the Go block, verilog/gen and the testbenches share.
var Module = &rtl.Module{
	Name: "uvmmu_lfsr",
	Ports: []rtl.PortDecl{
		{Name: "clk", Dir: rtl.In}, {Name: "rst", Dir: rtl.In},
		{Name: "en", Dir: rtl.In}, {Name: "state", Dir: rtl.Out, Width: "WIDTH"},
	},
	Regs: []rtl.RegDecl{{Name: "state_q", Width: "WIDTH", Reset: "SEED"}},
}

// Params are uvmmu_lfsr's parameter values for the configuration.
func (c Config) Params() rtl.Params { return rtl.Params{"WIDTH": uint64(c.Width), "SEED": c.Seed} }

// Ports are the wires of uvmmu_lfsr: en is an input, state an output.
type Ports struct {
	En    *rtl.Wire[bool]
	State *rtl.Wire[uint64]
}

// NewPorts makes the wires under path (path.en, path.state) for a register
// of the given width.
func NewPorts(s *rtl.Sim, path string, width int) Ports {
	e := Module.At(rtl.Params{"WIDTH": uint64(width)})
	return Ports{En: rtl.PortBit(s, path, e, "en"), State: rtl.PortWire[uint64](s, path, e, "state")}
}

// LFSR is the register and its feedback network: state advances by one
// Galois step in every cycle where en is high.
type LFSR struct {
	rtl.Base
	Ports

	taps  uint64
	state *rtl.Reg[uint64]
}

// New adds an LFSR to s under path, driving p.State and listening to p.En.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*LFSR, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	taps, _ := Taps(cfg.Width)
	l := &LFSR{Ports: p, taps: taps}
	s.Add(l, path)
	l.state = rtl.DeclReg[uint64](&l.Base, Module.At(cfg.Params()), "state_q")
	l.Listen(p.En)
	return l, nil
}

// Drive shows the current state.
func (l *LFSR) Drive() { l.State.Set(l.state.Q()) }

// Eval steps the register when enabled.
func (l *LFSR) Eval() {
	if l.En.Get() {
		l.state.Set(Step(l.state.Q(), l.taps))
	}
}

// PickWidth is the width of the victim picker's draw for a frame-group
// number in [0, nfg): the smallest width whose range 0..2^k-1 covers nfg-1.
// Since 2^(k-1) < nfg, fewer than half of the equally likely k-bit values
// fall outside the range, so the rejection rate is below 50%.
func PickWidth(nfg uint64) int {
	if nfg <= 1 {
		return 1
	}
	return bits.Len64(nfg - 1)
}

// Pick is the victim picker's draw from a width-bit LFSR state: the XOR of
// the state's PickWidth(nfg)-bit slices (the last one zero-extended),
// accepted when it names a frame-group below nfg and rejected (ok false)
// otherwise; on a rejection the picker steps the LFSR and draws again.
//
// Folding every state bit into the draw, rather than taking the low bits,
// keeps every LFSR flop in the draw's cone of logic. The fold is a linear
// map of GF(2)^width onto GF(2)^k, so over one period every k-bit value is
// drawn 2^(width-k) times (zero once fewer): the draw stays uniform.
func Pick(state uint64, width int, nfg uint64) (pfgn uint64, ok bool) {
	k := PickWidth(nfg)
	mask := uint64(1)<<k - 1
	var v uint64
	for lo := 0; lo < width; lo += k {
		v ^= state >> lo & mask
	}
	return v, v < nfg
}
