package gen

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
)

// The Destination Allocator is emitted as uvmmu_da (SPEC 5.3) over five
// modules of its own: uvmmu_da_prio (the FrAB priority-encoder tree, a
// generate loop per level), uvmmu_da_frab (the FrAB: its SRAM, init sweep
// and command FSM), uvmmu_da_frab_sram (the FrAB's SRAM macro),
// uvmmu_da_picker (the victim picker's draw) and uvmmu_da_afm (the AFM and
// IPgT sequencer); it instantiates uvmmu_dcq and uvmmu_lfsr. Every module
// follows blocks/da and docs/da.md, and every width follows from the
// parameters the way blocks/frab.Config and blocks/lfsr.PickWidth derive
// it.

// daParams are uvmmu_da's parameters (SPEC 5.3) with the defaults and
// ranges of blocks/da and the blocks it is built from.
func daParams() []Param {
	c := da.DefaultConfig()
	return []Param{
		{Name: "NFG", Default: c.NFG, Min: 1, Max: maxNFG, Doc: "frame-groups of GPU memory; at most 2^FG_BITS"},
		{Name: "DCQ_DEPTH", Default: uint64(c.DCQDepth), Min: dcq.MinDepth, Max: dcq.MaxDepth, Doc: "DCQ entries"},
		{Name: "DCQ_THRESHOLD", Default: uint64(c.DCQThreshold), Min: 1, Max: dcq.MaxDepth, Range: "1..DCQ_DEPTH", Doc: "refill while the DCQ holds fewer; at most DCQ_DEPTH"},
		{Name: "FRAB_WORD", Default: uint64(c.FrABWord), Min: frab.MinWordBits, Max: frab.MaxWordBits, Doc: "FrAB SRAM word width, a power of two"},
		{Name: "FG_BITS", Default: uint64(c.FGBits), Min: minFGBits, Max: dcq.MaxFGBits, Doc: "frame-group number width; holds a region number and a 5-bit offset"},
		{Name: "ADDR_W", Default: uint64(c.AddrBits), Min: ipgt.MinAddrBits, Max: ipgt.MaxAddrBits, Doc: "IPgT memory address width; at least FG_BITS+3"},
		{Name: "IPGT_BASE", Default: c.IPGTBase, Min: 0, Max: math.MaxUint64, Range: "0..2^ADDR_W-8*NFG", TypeWidth: "ADDR_W", Doc: "byte address of the IPgT"},
		{Name: "LFSR_WIDTH", Default: uint64(c.LFSRWidth), Min: lfsr.MinWidth, Max: lfsr.MaxWidth, Doc: "victim-picker LFSR width; at least the draw width"},
		{Name: "LFSR_SEED", Default: c.LFSRSeed, Min: 1, Max: math.MaxUint64, Range: "1..2^LFSR_WIDTH-1", TypeWidth: "LFSR_WIDTH", Doc: "LFSR reset state, non-zero"},
		{Name: "VICTIMS", Default: uint64(c.Victims), Min: uint64(afm.VictimLFSR), Max: uint64(afm.VictimExternal),
			Doc: "victim candidates: 0 the LFSR picker (SPEC 5.2), 1 the victim port (blocks/afm VictimExternal)"},
	}
}

// maxNFG is the most frame-groups the FrAB can describe:
// blocks/frab.MaxRegions regions of 32 frame-groups.
const maxNFG = frab.MaxRegions * frab.FrameGroupsPerRegion

// minFGBits keeps a region number plus its 5-bit frame-group offset within
// a frame-group number.
const minFGBits = 6

// subParams picks the named parameters of uvmmu_da for a sub-module.
func subParams(names ...string) []Param {
	var out []Param
	for _, n := range names {
		for _, p := range daParams() {
			if p.Name == n {
				out = append(out, p)
			}
		}
	}
	return out
}

// daPickBits is the width of a victim draw (blocks/lfsr.PickWidth), usable
// in port lists; blocks/frab.RegionBitsExpr is the region-number width.
const daPickBits = "(NFG > 1 ? $clog2(NFG) : 1)"

// daChecks are the relations of blocks/da.Config.Validate (through
// afm.Config.Validate) that uvmmu_da and uvmmu_da_afm reject at
// elaboration.
func daChecks(top string, withThreshold bool) []Check {
	cs := []Check{
		{Label: "rel_frab_word_pow2", Cond: "(FRAB_WORD & (FRAB_WORD - 1)) != 0",
			Msg: top + ": FRAB_WORD = %0d is not a power of two", Args: []string{"FRAB_WORD"}},
		{Label: "rel_nfg_fg_bits", Cond: "64'(NFG) > (64'd1 << FG_BITS)",
			Msg: top + ": NFG = %0d is outside 1..2^FG_BITS (FG_BITS = %0d)", Args: []string{"NFG", "FG_BITS"}},
		{Label: "rel_region_fg_bits", Cond: frab.RegionBitsExpr + " + 5 > FG_BITS",
			Msg: top + ": FG_BITS = %0d cannot hold a region number of %0d bits and a 5-bit offset", Args: []string{"FG_BITS", frab.RegionBitsExpr}},
		{Label: "rel_addr_w", Cond: "ADDR_W < FG_BITS + 3",
			Msg: top + ": ADDR_W = %0d is below FG_BITS+3 (%0d)", Args: []string{"ADDR_W", "FG_BITS + 3"}},
		{Label: "rel_ipgt_base", Cond: "ADDR_W < 64 && 64'(IPGT_BASE) + 64'd8 * 64'(NFG) > (64'd1 << ADDR_W)",
			Msg: top + ": IPGT_BASE = %0d + 8*NFG exceeds the ADDR_W = %0d bit address space", Args: []string{"IPGT_BASE", "ADDR_W"}},
		{Label: "rel_lfsr_width", Cond: "LFSR_WIDTH < " + daPickBits,
			Msg: top + ": LFSR_WIDTH = %0d is below the %0d bits of a victim draw for NFG", Args: []string{"LFSR_WIDTH", daPickBits}},
	}
	if withThreshold {
		cs = append([]Check{{Label: "rel_threshold_depth", Cond: "DCQ_THRESHOLD > DCQ_DEPTH",
			Msg: top + ": DCQ_THRESHOLD = %0d is outside 1..DCQ_DEPTH (%0d)", Args: []string{"DCQ_THRESHOLD", "DCQ_DEPTH"}}}, cs...)
	}
	return cs
}

// daConfig builds the allocator configuration from uvmmu_da values; a
// sub-module's values fill what they lack from the defaults.
func daConfig(v Values) da.Config {
	c := da.DefaultConfig()
	get := func(name string, dst *uint64) {
		if x, ok := v[name]; ok {
			*dst = x
		}
	}
	geti := func(name string, dst *int) {
		if x, ok := v[name]; ok {
			*dst = int(x)
		}
	}
	get("NFG", &c.NFG)
	geti("DCQ_DEPTH", &c.DCQDepth)
	geti("DCQ_THRESHOLD", &c.DCQThreshold)
	geti("FRAB_WORD", &c.FrABWord)
	geti("FG_BITS", &c.FGBits)
	geti("ADDR_W", &c.AddrBits)
	get("IPGT_BASE", &c.IPGTBase)
	geti("LFSR_WIDTH", &c.LFSRWidth)
	get("LFSR_SEED", &c.LFSRSeed)
	if x, ok := v["VICTIMS"]; ok {
		c.Victims = afm.VictimSource(x)
	}
	if _, ok := v["DCQ_THRESHOLD"]; !ok {
		c.DCQThreshold = min(c.DCQThreshold, c.DCQDepth)
	}
	if _, ok := v["LFSR_SEED"]; !ok && c.LFSRWidth < 64 {
		c.LFSRSeed = max(1, c.LFSRSeed&(1<<c.LFSRWidth-1))
	}
	return c
}

// validateDA is blocks/da.Config.Validate plus the two limits of the
// frame-group number's layout the Verilog relies on.
func validateDA(v Values) error {
	c := daConfig(v)
	if err := c.Validate(); err != nil {
		return err
	}
	fc := c.AFM().FrAB()
	switch {
	case c.FGBits+3 > c.AddrBits:
		return fmt.Errorf("ADDR_W %d below FG_BITS+3 (%d)", c.AddrBits, c.FGBits+3)
	case fc.RegionBits()+5 > c.FGBits:
		return fmt.Errorf("FG_BITS %d cannot hold a region number of %d bits and a 5-bit offset", c.FGBits, fc.RegionBits())
	}
	return nil
}

// daDescribe prints the geometry of a configuration in a header.
func daDescribe(lines ...string) func(Values) []string {
	return func(v Values) []string {
		fc := daConfig(v).AFM().FrAB()
		return append(lines, fmt.Sprintf("At the defaults: %d regions in %d FrAB words of %d bits.", fc.Regions, fc.Words(), fc.WordWidth()))
	}
}

func init() {
	if err := checkLayouts(); err != nil {
		panic(err)
	}
	p := func(name string, d Dir, width string) Port { return Port{Name: name, Dir: d, Width: width} }
	Register(Emitter{
		Name: "uvmmu_da", Doc: "Destination Allocator: DCQ, AFM, FrAB, victim picker (SPEC 5)",
		Params: daParams(), Module: da.Module, Checks: daChecks("uvmmu_da", true), Validate: validateDA,
		Describe: daDescribe("Destination Allocator of the UVMMU (UVMMU paper Section IV-C, Figure 3; SPEC 5; docs/da.md):",
			"the DCQ's head is the allocation port; the AFM refills it from the FrAB and the IPgT and sequences every IPgT update."),
		Body: daBody,
	})
	Register(Emitter{
		Name: "uvmmu_da_afm", Doc: "DA available-frame manager and IPgT sequencer (docs/da.md)",
		Params: subParams("NFG", "DCQ_DEPTH", "FRAB_WORD", "FG_BITS", "ADDR_W", "IPGT_BASE", "LFSR_WIDTH", "VICTIMS"),
		Module: afm.Module, Checks: daChecks("uvmmu_da_afm", false), Validate: validateDA,
		Describe: daDescribe("Available Frame Manager, victim picker and IPgT sequencer of the DA (SPEC 5.2; UVMMU paper Section IV-C, IV-D;",
			"docs/da.md): one FSM runs one transaction at a time on the IPgT memory port."),
		Body: afmBody(),
	})
	Register(Emitter{
		Name: "uvmmu_da_frab", Doc: "DA frame-region availability bitmap: SRAM, init sweep, FIND/SET/CLEAR",
		Params: subParams("NFG", "FRAB_WORD"),
		Module: frab.Module,
		Checks: daChecks("uvmmu_da_frab", false)[:1], Validate: validateDA,
		Describe: daDescribe("Frame-region availability bitmap of the DA (SPEC 5.1; UVMMU paper Section IV-B2; docs/da.md):",
			"one SRAM port, 1-cycle registered read; init sweep, then FIND/SET/CLEAR."),
		Body: frabBody(),
	})
	Register(Emitter{
		Name: "uvmmu_da_frab_sram", Doc: "DA FrAB single-port SRAM macro, registered read data",
		Params: []Param{
			{Name: "WORDS", Default: uint64(da.DefaultConfig().AFM().FrAB().Words()), Min: 1, Max: frab.MaxRegions / frab.MinWordBits, Doc: "words"},
			{Name: "WIDTH", Default: uint64(da.DefaultConfig().AFM().FrAB().WordWidth()), Min: 2, Max: frab.MaxWordBits, Doc: "bits per word"},
		},
		Ports: []Port{p("clk", In, ""), p("we", In, ""), p("re", In, ""),
			{Name: "addr", Dir: In, Width: "(WORDS > 2 ? $clog2(WORDS) : 1)", Bits: func(v Values) int { return max(1, bits.Len64(v["WORDS"]-1)) }},
			p("wdata", In, "WIDTH"), p("rdata", Out, "WIDTH")},
		Describe: func(v Values) []string {
			return []string{"Single-port SRAM of the DA's FrAB: WORDS words of WIDTH bits, registered read data (SPEC 5.1);",
				"a module of its own so that an area flow can replace it with a macro model."}
		},
		Body: frabSRAMBody,
	})
	Register(Emitter{
		Name: "uvmmu_da_picker", Doc: "DA victim picker: folded LFSR draw and range check",
		Params: subParams("NFG", "LFSR_WIDTH"),
		Ports: []Port{p("state", In, "LFSR_WIDTH"),
			{Name: "draw", Dir: Out, Width: daPickBits, Bits: func(v Values) int { return lfsr.PickWidth(v["NFG"]) }}, p("ok", Out, "")},
		Describe: func(Values) []string {
			return []string{"Victim picker of the DA (SPEC 5.2; docs/da.md): folds every LFSR bit into a PW-bit draw",
				"and accepts it when it names a frame-group below NFG (blocks/lfsr.Pick)."}
		},
		Body: pickerBody,
	})
	Register(Emitter{
		Name: "uvmmu_da_prio", Doc: "DA priority-encoder tree: first set bit at or after a position",
		Params: []Param{{Name: "WIDTH", Default: frab.DefaultWordBits, Min: 2, Max: frab.MaxWordBits, Doc: "word width, a power of two"}},
		Ports: []Port{p("word", In, "WIDTH"), {Name: "from", Dir: In, Width: "$clog2(WIDTH)", Bits: log2Bits("WIDTH")},
			p("found", Out, ""), {Name: "index", Dir: Out, Width: "$clog2(WIDTH)", Bits: log2Bits("WIDTH")}},
		Checks: []Check{{Label: "width_pow2", Cond: "(WIDTH & (WIDTH - 1)) != 0", Msg: "uvmmu_da_prio: WIDTH = %0d is not a power of two", Args: []string{"WIDTH"}}},
		Validate: func(v Values) error {
			if w := v["WIDTH"]; w&(w-1) != 0 {
				return fmt.Errorf("WIDTH %d is not a power of two", w)
			}
			return nil
		},
		Describe: func(Values) []string {
			return []string{"Priority encoder of the DA's FrAB (docs/da.md): index of the first set bit of word at or after from,",
				"as a tree of log2(WIDTH) levels of 2:1 nodes (blocks/frab.FirstSetFrom)."}
		},
		Body: prioBody,
	})
}

// log2Bits is $clog2 of a parameter.
func log2Bits(name string) func(Values) int {
	return func(v Values) int { return bits.Len64(v[name] - 1) }
}

// checkLayouts makes sure the IPgT, DCQ and AFM encodings are the ones the
// DA bodies are written for.
func checkLayouts() error {
	if ipgt.FreeBit != 0 || ipgt.ProtectedBit != 1 || ipgt.MappedBit != 2 || ipgt.BusyBit != 3 ||
		ipgt.CIDLSB != 4 || ipgt.CIDWidth != afm.CIDBits || ipgt.VPgNLSB != 16 || ipgt.VPgNWidth != afm.VPgNBits {
		return fmt.Errorf("blocks/ipgt entry layout changed; the DA modules pack {VPgN, CID, B, M, P, F}")
	}
	if dcq.SwapBit != 0 || dcq.PFgNLSB != 1 {
		return fmt.Errorf("blocks/dcq entry layout changed; the DA modules pack {PFgN, S}")
	}
	if afm.OpFree != 0 || afm.OpProtect != 1 || afm.OpUnprotect != 2 || afm.SWOpBits != 2 {
		return fmt.Errorf("blocks/afm software op encoding changed")
	}
	if afm.ReqMap != 0 || afm.ReqSW != 1 || afm.ReqRefill != 2 {
		return fmt.Errorf("blocks/afm requester encoding changed")
	}
	if frab.Find != 0 || frab.Set != 1 || frab.Clear != 2 || frab.OpBits != 2 || frab.StateInit != 0 || frab.StateIdle != 1 || frab.StateAccess != 2 {
		return fmt.Errorf("blocks/frab op or state encoding changed; uvmmu_da_frab decodes FIND=0 SET=1 CLEAR=2")
	}
	if afm.StateBits != 4 || afm.StateVWrite != 13 || frab.FrameGroupsPerRegion != 32 {
		return fmt.Errorf("blocks/afm state encoding or region size changed")
	}
	return nil
}
