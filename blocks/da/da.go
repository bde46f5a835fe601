// Package da is the Destination Allocator (SPEC 5; UVMMU paper Section
// IV-C, Figure 3): the DCQ whose head is the allocation port, the AFM that
// refills it from the FrAB and the IPgT and that sequences every IPgT
// update, the FrAB, and the LFSR of the victim picker. Its ports are
// exactly those of the Verilog module uvmmu_da (SPEC 5.3); docs/da.md
// describes the micro-architecture.
package da

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/rtl"
)

// Config mirrors the parameters of uvmmu_da.
type Config struct {
	NFG          uint64 // frame-groups of GPU memory
	DCQDepth     int    // DCQ_DEPTH
	DCQThreshold int    // DCQ_THRESHOLD
	FrABWord     int    // FRAB_WORD
	FGBits       int    // FG_BITS
	AddrBits     int    // ADDR_W
	IPGTBase     uint64 // IPGT_BASE
	LFSRWidth    int    // LFSR_WIDTH
	LFSRSeed     uint64 // LFSR_SEED

	// Victims (VICTIMS) is where victim candidates come from: the LFSR
	// picker (the paper's design, the default) or the victim port, fed by
	// an eviction-metadata block.
	Victims afm.VictimSource
}

// DefaultConfig is the paper's allocator: 11 GB of GPU memory (UVMMU paper
// Table I) in 64 KB frame-groups is 180,224 frame-groups; a 64-entry DCQ
// refilled below 32 (Section IV-C); 256-bit FrAB words (Section IV-C);
// 32-bit frame-group numbers, 40-bit addresses, the IPgT at address 0 and
// a 32-bit LFSR seeded with 1 (SPEC 5.3 defaults).
func DefaultConfig() Config {
	d := dcq.DefaultConfig()
	l := lfsr.DefaultConfig()
	return Config{
		NFG: 11 << 30 >> 16, DCQDepth: d.Depth, DCQThreshold: d.Threshold, FrABWord: frab.DefaultWordBits,
		FGBits: d.FGBits, AddrBits: ipgt.DefaultAddrBits, LFSRWidth: l.Width, LFSRSeed: l.Seed,
	}
}

func (c Config) dcq() dcq.Config {
	return dcq.Config{Depth: c.DCQDepth, Threshold: c.DCQThreshold, FGBits: c.FGBits}
}

func (c Config) lfsr() lfsr.Config { return lfsr.Config{Width: c.LFSRWidth, Seed: c.LFSRSeed} }

// AFM is the configuration of the allocator's AFM.
func (c Config) AFM() afm.Config {
	return afm.Config{NFG: c.NFG, DCQ: c.dcq(), WordBits: c.FrABWord, AddrBits: c.AddrBits, IPGTBase: c.IPGTBase, LFSRWidth: c.LFSRWidth, Victims: c.Victims}
}

// Validate names the first parameter outside its range.
func (c Config) Validate() error {
	if err := c.AFM().Validate(); err != nil {
		return fmt.Errorf("da: %w", err)
	}
	if err := c.lfsr().Validate(); err != nil {
		return fmt.Errorf("da: %w", err)
	}
	return nil
}

// Module is uvmmu_da's ports (SPEC 5.3): the allocation port and
// init_done, then the map, software, IPgT memory and victim ports it passes
// through to the AFM (afm.SharedPorts). The DA has no register of its own.
var Module = &rtl.Module{
	Name: "uvmmu_da",
	Ports: append([]rtl.PortDecl{
		{Name: "clk", Dir: rtl.In}, {Name: "rst", Dir: rtl.In}, {Name: "init_done", Dir: rtl.Out},
		{Name: "dst_valid", Dir: rtl.Out}, {Name: "dst_ready", Dir: rtl.In}, {Name: "dst_pfgn", Dir: rtl.Out, Width: "FG_BITS"}, {Name: "dst_swap", Dir: rtl.Out},
	}, afm.SharedPorts...),
}

// Params are uvmmu_da's parameter values for the configuration.
func (c Config) Params() rtl.Params {
	p := c.AFM().Params()
	p["DCQ_THRESHOLD"], p["LFSR_SEED"] = uint64(c.DCQThreshold), c.LFSRSeed
	return p
}

// Ports are the wires of uvmmu_da, named as in the Verilog.
type Ports struct {
	InitDone *rtl.Wire[bool] // out

	// Allocation port: the DCQ head.
	DstValid *rtl.Wire[bool]   // out
	DstReady *rtl.Wire[bool]   // in
	DstPFgN  *rtl.Wire[uint64] // out
	DstSwap  *rtl.Wire[bool]   // out

	Map afm.MapPorts
	SW  afm.SWPorts
	Mem ipgt.MemPorts

	// Victim candidates (a PFgN) with afm.VictimExternal (VICTIMS=1), else
	// nil: with the LFSR picker victim_ready stays low.
	Victim *rtl.Decoupled[uint64] // in
}

// NewPorts makes the wires under path (path.dst_valid, ...), and
// path.victim_* when the configuration takes external victims.
func NewPorts(s *rtl.Sim, path string, cfg Config) Ports {
	e := Module.At(cfg.Params())
	p := Ports{
		InitDone: rtl.PortBit(s, path, e, "init_done"),
		DstValid: rtl.PortBit(s, path, e, "dst_valid"),
		DstReady: rtl.PortBit(s, path, e, "dst_ready"),
		DstPFgN:  rtl.PortWire[uint64](s, path, e, "dst_pfgn"),
		DstSwap:  rtl.PortBit(s, path, e, "dst_swap"),
		Map:      afm.NewMapPorts(s, path, cfg.AFM()),
		SW:       afm.NewSWPorts(s, path, cfg.AFM()),
		Mem:      afm.NewMemPorts(s, path, cfg.AFM()),
	}
	if cfg.Victims == afm.VictimExternal {
		p.Victim = afm.NewVictimPort(s, path, cfg.AFM())
	}
	return p
}

// DstFire reports an allocation in this cycle.
func (p Ports) DstFire() bool { return p.DstValid.Get() && p.DstReady.Get() }

// DA is the composition of its four blocks; it has no state of its own.
type DA struct {
	Ports
	cfg Config

	DCQ  *dcq.DCQ
	FrAB *frab.FrAB
	LFSR *lfsr.LFSR
	AFM  *afm.AFM
}

// New builds a DA under path with its sub-blocks at path.dcq, path.frab,
// path.lfsr and path.afm.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*DA, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	child := func(name string) string { return path + "." + name }
	// The DCQ's head is the allocation port and the FrAB's init_done the
	// DA's (uvmmu_da's port map).
	qp := dcq.NewPortsPoppedBy(s, child("dcq"), cfg.dcq(), dcq.Pop{Valid: p.DstValid, Ready: p.DstReady, PFgN: p.DstPFgN, Swap: p.DstSwap})
	fc := cfg.AFM().FrAB()
	fp := frab.NewPortsInitDone(s, child("frab"), fc, p.InitDone)
	lp := lfsr.NewPorts(s, child("lfsr"), cfg.LFSRWidth)
	d := &DA{Ports: p, cfg: cfg}
	var err error
	if d.DCQ, err = dcq.New(s, child("dcq"), cfg.dcq(), qp); err != nil {
		return nil, err
	}
	if d.FrAB, err = frab.New(s, child("frab"), fc, fp); err != nil {
		return nil, err
	}
	if d.LFSR, err = lfsr.New(s, child("lfsr"), cfg.lfsr(), lp); err != nil {
		return nil, err
	}
	d.AFM, err = afm.New(s, child("afm"), cfg.AFM(), afm.Ports{DCQ: qp, FrAB: fp, LFSR: lp, Mem: p.Mem, Map: p.Map, SW: p.SW, Victim: p.Victim})
	return d, err
}

// Config returns the allocator's parameters.
func (d *DA) Config() Config { return d.cfg }
