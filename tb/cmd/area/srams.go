package main

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/tb/area"
)

// paperFrABBytes is the GPU memory the UVMMU paper sizes its FrAB for: "40Kb
// (corresponding to 80GB physical memory)" (Section V).
const paperFrABBytes = 80 << 30

// frameGroupBytes is the 64 KB frame-group (SPEC 2).
const frameGroupBytes = 64 << 10

// frabSRAMModule is the module verilog/gen emits for the FrAB's SRAM array
// inside uvmmu_da; the command checks that it is registered.
const frabSRAMModule = "uvmmu_da_frab_sram"

func init() {
	area.RegisterSRAM(func() (area.SRAM, error) {
		s, err := frabMacro("FrAB (default DA)", da.DefaultConfig())
		s.Module = frabSRAMModule
		return s, err
	})
	area.RegisterSRAM(func() (area.SRAM, error) {
		cfg := da.DefaultConfig()
		cfg.NFG = paperFrABBytes / frameGroupBytes
		return frabMacro("FrAB (80 GB, paper)", cfg)
	})
}

// frabMacro is the FrAB SRAM of a DA configuration: one bit per frame
// region in FRAB_WORD-bit words.
func frabMacro(name string, cfg da.Config) (area.SRAM, error) {
	fc := frab.Config{Regions: int((cfg.NFG + frab.FrameGroupsPerRegion - 1) / frab.FrameGroupsPerRegion), WordBits: cfg.FrABWord}
	if err := fc.Validate(); err != nil {
		return area.SRAM{}, err
	}
	return area.SRAM{
		Name: name, Words: fc.Words(), Bits: fc.WordWidth(),
		Source: fmt.Sprintf("NFG=%d frame-groups, %d regions, FRAB_WORD=%d (blocks/da, blocks/frab)", cfg.NFG, fc.Regions, cfg.FrABWord),
	}, nil
}
