package gen

import (
	"fmt"
	"math"

	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/verilog/vlog"
)

func init() {
	cfg := lfsr.DefaultConfig()
	Register(Emitter{
		Name: "uvmmu_lfsr",
		Doc:  "Galois LFSR of the victim picker (SPEC 5.2, 5.3)",
		Params: []Param{
			{Name: "WIDTH", Default: uint64(cfg.Width), Min: lfsr.MinWidth, Max: lfsr.MaxWidth, Doc: "register width; taps from blocks/lfsr"},
			{Name: "SEED", Default: cfg.Seed, Min: 1, Max: math.MaxUint64, Doc: "reset state, non-zero, below 2^WIDTH"},
		},
		Emit: emitLFSR,
	})
}

// emitLFSR builds uvmmu_lfsr (SPEC 5.3): a Galois LFSR that shifts right
// and XORs the toggle mask of blocks/lfsr.Taps in when the bit shifted out
// is 1, in every cycle where en is high; reset loads SEED. WIDTH selects the
// tap row and is specialized; SEED stays a free parameter.
func emitLFSR(v Values) (*vlog.Module, error) {
	cfg := lfsr.Config{Width: int(v["WIDTH"]), Seed: v["SEED"]}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("parameters WIDTH = %d, SEED = %#x: %w", cfg.Width, cfg.Seed, err)
	}
	taps, err := lfsr.Taps(cfg.Width)
	if err != nil {
		return nil, err
	}
	w := cfg.Width
	m := vlog.NewModule("uvmmu_lfsr", Generator)
	m.Doc("Galois LFSR of the UVMMU victim picker (UVMMU paper Section IV-D; SPEC 5.2, 5.3).",
		"Maximal-length taps from Xilinx XAPP052 Table 3, converted to a Galois toggle mask by blocks/lfsr.Taps;",
		fmt.Sprintf("period 2^%d-1, never zero for a non-zero SEED.", w))
	pWidth := m.Param("WIDTH", uint64(w))
	pSeed := m.TypedParam("SEED", vlog.PBits(vlog.PRef(pWidth)), cfg.Seed)
	m.Specialize(pWidth)

	clk := m.Input("clk", vlog.Bits(1))
	rst := m.Input("rst", vlog.Bits(1))
	en := m.Input("en", vlog.Bits(1))
	state := m.Output("state", vlog.PBits(vlog.PRef(pWidth)))
	stateQ := m.Reg("state_q", w)
	m.Assign(state, stateQ)

	shifted := vlog.Cat(vlog.Lit(1, 0), vlog.Slice(stateQ, w-1, 1))
	feedback := vlog.Mux(vlog.Bit(stateQ, 0), vlog.Hex(w, taps), vlog.Zero(w))
	m.AlwaysFF(clk,
		vlog.If(rst, vlog.Stmts(vlog.NB(stateQ, vlog.PVal(pSeed))),
			vlog.Stmts(vlog.If(en, vlog.Stmts(vlog.NB(stateQ, vlog.Xor(shifted, feedback))), nil))),
	)
	return m, nil
}
