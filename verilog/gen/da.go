package gen

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/verilog/vlog"
)

// The Destination Allocator is emitted as uvmmu_da (SPEC 5.3) over four
// modules of its own: uvmmu_da_prio (the FrAB priority-encoder tree),
// uvmmu_da_frab (the FrAB SRAM, its init sweep and command FSM),
// uvmmu_da_picker (the victim picker's draw) and uvmmu_da_afm (the AFM and
// IPgT sequencer), with uvmmu_da_frab_sram (the FrAB's SRAM macro) inside
// uvmmu_da_frab; it instantiates uvmmu_dcq and uvmmu_lfsr. Every module is
// generated from blocks/da's configuration and follows docs/da.md.

// daParams are uvmmu_da's parameters (SPEC 5.3) with the defaults of
// blocks/da.
func daParams() []Param {
	c := da.DefaultConfig()
	return []Param{
		{Name: "NFG", Default: c.NFG, Min: 1, Max: 1 << 32, Doc: "frame-groups of GPU memory"},
		{Name: "DCQ_DEPTH", Default: uint64(c.DCQDepth), Min: dcq.MinDepth, Max: dcq.MaxDepth, Doc: "DCQ entries"},
		{Name: "DCQ_THRESHOLD", Default: uint64(c.DCQThreshold), Min: 1, Max: dcq.MaxDepth, Doc: "refill while the DCQ holds fewer; at most DCQ_DEPTH"},
		{Name: "FRAB_WORD", Default: uint64(c.FrABWord), Min: 32, Max: frab.MaxWordBits, Doc: "FrAB SRAM word width, a power of two"},
		{Name: "FG_BITS", Default: uint64(c.FGBits), Min: minFGBits, Max: dcq.MaxFGBits, Doc: "frame-group number width"},
		{Name: "ADDR_W", Default: uint64(c.AddrBits), Min: 4, Max: 64, Doc: "IPgT memory address width; at least FG_BITS+3"},
		{Name: "IPGT_BASE", Default: c.IPGTBase, Min: 0, Max: math.MaxUint64, Doc: "byte address of the IPgT"},
		{Name: "LFSR_WIDTH", Default: uint64(c.LFSRWidth), Min: lfsr.MinWidth, Max: lfsr.MaxWidth, Doc: "victim-picker LFSR width"},
		{Name: "LFSR_SEED", Default: c.LFSRSeed, Min: 1, Max: math.MaxUint64, Doc: "LFSR reset state, non-zero, below 2^LFSR_WIDTH"},
	}
}

// minFGBits keeps a region number plus its 5-bit frame-group offset within
// a frame-group number.
const minFGBits = 6

// subParams picks the named parameters of uvmmu_da for a sub-module.
func subParams(names ...string) []Param {
	var out []Param
	for _, p := range daParams() {
		for _, n := range names {
			if p.Name == n {
				out = append(out, p)
			}
		}
	}
	return out
}

func init() {
	Register(Emitter{Name: "uvmmu_da", Doc: "Destination Allocator: DCQ, AFM, FrAB, victim picker (SPEC 5)", Params: daParams(), Emit: emitDA})
	Register(Emitter{Name: "uvmmu_da_afm", Doc: "DA available-frame manager and IPgT sequencer (docs/da.md)",
		Params: subParams("NFG", "DCQ_DEPTH", "FRAB_WORD", "FG_BITS", "ADDR_W", "IPGT_BASE", "LFSR_WIDTH"), Emit: emitAFM})
	Register(Emitter{Name: "uvmmu_da_frab", Doc: "DA frame-region availability bitmap: SRAM, init sweep, FIND/SET/CLEAR",
		Params: subParams("NFG", "FRAB_WORD"), Emit: emitFrAB})
	Register(Emitter{Name: "uvmmu_da_frab_sram", Doc: "DA FrAB single-port SRAM macro, registered read data",
		Params: subParams("NFG", "FRAB_WORD"), Emit: emitFrABSRAM})
	Register(Emitter{Name: "uvmmu_da_picker", Doc: "DA victim picker: folded LFSR draw and range check",
		Params: subParams("NFG", "LFSR_WIDTH"), Emit: emitPicker})
	Register(Emitter{Name: "uvmmu_da_prio", Doc: "DA priority-encoder tree: first set bit at or after a position",
		Params: []Param{{Name: "WIDTH", Default: frab.DefaultWordBits, Min: 2, Max: frab.MaxWordBits, Doc: "word width, a power of two"}},
		Emit:   emitPrio})
}

// daConfig builds and validates the allocator configuration from a full
// set of uvmmu_da values; sub-modules fill the parameters they lack from
// the defaults.
func daConfig(v Values) (da.Config, error) {
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
	if _, ok := v["DCQ_THRESHOLD"]; !ok {
		c.DCQThreshold = min(c.DCQThreshold, c.DCQDepth)
	}
	if _, ok := v["LFSR_SEED"]; !ok && c.LFSRWidth < 64 {
		c.LFSRSeed = max(1, c.LFSRSeed&(1<<c.LFSRWidth-1))
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	switch fc := c.AFM().FrAB(); {
	case c.FGBits < minFGBits:
		return c, fmt.Errorf("FG_BITS %d below %d", c.FGBits, minFGBits)
	case c.FGBits+3 > c.AddrBits:
		return c, fmt.Errorf("ADDR_W %d below FG_BITS+3 (%d)", c.AddrBits, c.FGBits+3)
	case fc.RegionBits()+5 > c.FGBits:
		return c, fmt.Errorf("FG_BITS %d cannot hold a region number of %d bits and a 5-bit offset", c.FGBits, fc.RegionBits())
	}
	return c, nil
}

// geometry is what the modules derive from the configuration (docs/da.md).
type geometry struct {
	cfg  da.Config
	nr   int // frame regions
	rb   int // region-number bits
	fw   int // FrAB word bits
	lw   int // log2(fw): bits of a position in a word
	nw   int // FrAB words
	aw   int // FrAB word-address bits (rb-lw; 0 when one word)
	pw   int // picker draw bits
	last int // frame-groups in the last region
	fg   int
	cw   int // DCQ count bits
}

func newGeometry(c da.Config) geometry {
	fc := c.AFM().FrAB()
	g := geometry{cfg: c, nr: fc.Regions, rb: fc.RegionBits(), fw: fc.WordWidth(), nw: fc.Words(),
		pw: lfsr.PickWidth(c.NFG), fg: c.FGBits, cw: dcq.CountWidth(c.DCQDepth)}
	g.lw = bits.Len(uint(g.fw)) - 1
	g.aw = g.rb - g.lw
	g.last = int(c.NFG - uint64(g.nr-1)*frab.FrameGroupsPerRegion)
	return g
}

func values(c da.Config, names ...string) Values {
	all := Values{
		"NFG": c.NFG, "DCQ_DEPTH": uint64(c.DCQDepth), "DCQ_THRESHOLD": uint64(c.DCQThreshold),
		"FRAB_WORD": uint64(c.FrABWord), "FG_BITS": uint64(c.FGBits), "ADDR_W": uint64(c.AddrBits),
		"IPGT_BASE": c.IPGTBase, "LFSR_WIDTH": uint64(c.LFSRWidth), "LFSR_SEED": c.LFSRSeed,
	}
	out := Values{}
	for _, n := range names {
		out[n] = all[n]
	}
	return out
}

// DAModules emits uvmmu_da and every module it instantiates for the
// parameter values v (missing ones at their defaults), top first: the set of
// sources a simulator needs for that parameter set.
func DAModules(v Values) ([]*vlog.Module, error) {
	e, err := Lookup("uvmmu_da")
	if err != nil {
		return nil, err
	}
	full, err := e.Resolve(v)
	if err != nil {
		return nil, err
	}
	c, err := daConfig(full)
	if err != nil {
		return nil, fmt.Errorf("uvmmu_da: %w", err)
	}
	g := newGeometry(c)
	top, err := emitDA(full)
	if err != nil {
		return nil, err
	}
	mods := []*vlog.Module{top}
	for _, sub := range []struct {
		name string
		v    Values
	}{
		{"uvmmu_da_afm", values(c, "NFG", "DCQ_DEPTH", "FRAB_WORD", "FG_BITS", "ADDR_W", "IPGT_BASE", "LFSR_WIDTH")},
		{"uvmmu_da_frab", values(c, "NFG", "FRAB_WORD")},
		{"uvmmu_da_frab_sram", values(c, "NFG", "FRAB_WORD")},
		{"uvmmu_da_picker", values(c, "NFG", "LFSR_WIDTH")},
		{"uvmmu_da_prio", Values{"WIDTH": uint64(g.fw)}},
		{"uvmmu_dcq", Values{"DEPTH": uint64(c.DCQDepth), "THRESHOLD": uint64(c.DCQThreshold), "FG_BITS": uint64(c.FGBits)}},
		{"uvmmu_lfsr", Values{"WIDTH": uint64(c.LFSRWidth), "SEED": c.LFSRSeed}},
	} {
		se, err := Lookup(sub.name)
		if err != nil {
			return nil, err
		}
		m, err := se.Module(sub.v)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// prioTree builds, inside m, the priority encoder of frab.FirstSetFrom:
// the bits of word below from are masked (no masking when from is nil),
// then log2(width) levels of 2:1 nodes each carry (any bit set, index of
// the first set bit), taking the lower half's index when the lower half
// has a set bit. It returns found and the index (log2(width) bits).
func prioTree(m *vlog.Module, prefix string, word *vlog.Signal, from vlog.Expr, width int) (found, index *vlog.Signal) {
	lw := bits.Len(uint(width)) - 1
	anyPrev := word
	if from != nil {
		anyPrev = m.Wire(prefix+"_any0", width).Comment("word bits at or after the start position")
		parts := make([]vlog.Expr, width)
		for i := range width - 1 {
			parts[width-1-i] = vlog.And(vlog.Bit(word, i), vlog.Le(from, vlog.Lit(lw, uint64(i))))
		}
		parts[0] = vlog.Bit(word, width-1) // every start position is at or below the top bit
		m.Assign(anyPrev, vlog.Cat(parts...))
	}
	var idxPrev *vlog.Signal
	for l := 1; l <= lw; l++ {
		n := width >> l
		anyL := m.Wire(fmt.Sprintf("%s_any%d", prefix, l), n)
		idxL := m.Wire(fmt.Sprintf("%s_idx%d", prefix, l), n*l)
		anyParts := make([]vlog.Expr, n)
		idxParts := make([]vlog.Expr, n)
		for i := range n {
			lo, hi := vlog.Bit(anyPrev, 2*i), vlog.Bit(anyPrev, 2*i+1)
			anyParts[n-1-i] = vlog.Or(lo, hi)
			if l == 1 {
				idxParts[n-1-i] = vlog.Not(lo)
				continue
			}
			li := vlog.Slice(idxPrev, (2*i+1)*(l-1)-1, 2*i*(l-1))
			ri := vlog.Slice(idxPrev, (2*i+2)*(l-1)-1, (2*i+1)*(l-1))
			idxParts[n-1-i] = vlog.Mux(lo, vlog.Cat(vlog.False, li), vlog.Cat(vlog.True, ri))
		}
		m.Assign(anyL, vlog.Cat(anyParts...))
		m.Assign(idxL, vlog.Cat(idxParts...))
		anyPrev, idxPrev = anyL, idxL
	}
	return anyPrev, idxPrev
}

// emitPrio builds uvmmu_da_prio: the FrAB's priority encoder over one word.
func emitPrio(v Values) (*vlog.Module, error) {
	w := int(v["WIDTH"])
	if w < 2 || w&(w-1) != 0 {
		return nil, fmt.Errorf("parameter WIDTH = %d is not a power of two of at least 2", w)
	}
	m := vlog.NewModule("uvmmu_da_prio", Generator)
	m.Doc("Priority encoder of the DA's FrAB (docs/da.md): index of the first set bit of word at or after from,",
		fmt.Sprintf("as a tree of %d levels of 2:1 nodes (blocks/frab.FirstSetFrom).", frab.EncoderDepth(w)))
	pw := m.Param("WIDTH", uint64(w))
	m.Specialize(pw)
	word := m.Input("word", vlog.PBits(vlog.PRef(pw)))
	from := m.Input("from", vlog.PBits(vlog.PClog2(vlog.PRef(pw))))
	found := m.Output("found", vlog.Bits(1))
	index := m.Output("index", vlog.PBits(vlog.PClog2(vlog.PRef(pw))))
	f, i := prioTree(m, "lvl", word, from, w)
	m.Assign(found, f)
	m.Assign(index, i)
	return m, m.Err()
}

// emitPicker builds uvmmu_da_picker: the victim picker's draw (lfsr.Pick),
// the XOR of the LFSR state's PW-bit slices, and whether it is below NFG.
func emitPicker(v Values) (*vlog.Module, error) {
	c, err := daConfig(v)
	if err != nil {
		return nil, err
	}
	g := newGeometry(c)
	lw := c.LFSRWidth
	m := vlog.NewModule("uvmmu_da_picker", Generator)
	m.Doc("Victim picker of the DA (SPEC 5.2; docs/da.md): folds every LFSR bit into a PW-bit draw",
		"and accepts it when it names a frame-group below NFG (blocks/lfsr.Pick).")
	pn := m.Param("NFG", c.NFG)
	pl := m.Param("LFSR_WIDTH", uint64(lw))
	m.Specialize(pn, pl)
	state := m.Input("state", vlog.PBits(vlog.PRef(pl)))
	draw := m.Output("draw", vlog.Bits(g.pw))
	ok := m.Output("ok", vlog.Bits(1))
	var fold vlog.Expr
	for lo := 0; lo < lw; lo += g.pw {
		part := vlog.ZeroExtend(vlog.Slice(state, min(lo+g.pw, lw)-1, lo), g.pw)
		if fold == nil {
			fold = part
		} else {
			fold = vlog.Xor(fold, part)
		}
	}
	m.Assign(draw, fold)
	if c.NFG >= 1<<g.pw {
		m.Comment("NFG is a power of two: every draw is a frame-group")
		m.Assign(ok, vlog.True)
	} else {
		m.Assign(ok, vlog.Lt(draw, vlog.Lit(g.pw, c.NFG)))
	}
	return m, m.Err()
}

// emitFrABSRAM builds uvmmu_da_frab_sram: the FrAB's single-port SRAM
// macro (SPEC 5.1: one read/write port, 1-cycle read latency, registered
// read data), a separate module so that an area flow can replace it with
// a macro model.
func emitFrABSRAM(v Values) (*vlog.Module, error) {
	c, err := daConfig(v)
	if err != nil {
		return nil, err
	}
	g := newGeometry(c)
	aw := max(1, g.aw)
	m := vlog.NewModule("uvmmu_da_frab_sram", Generator)
	m.Doc(fmt.Sprintf("Single-port SRAM of the DA's FrAB: %d words of %d bits, registered read data (SPEC 5.1).", g.nw, g.fw))
	pn := m.Param("NFG", c.NFG)
	pf := m.Param("FRAB_WORD", uint64(c.FrABWord))
	m.Specialize(pn, pf)
	clk := m.Input("clk", vlog.Bits(1))
	we := m.Input("we", vlog.Bits(1))
	re := m.Input("re", vlog.Bits(1))
	addr := m.Input("addr", vlog.Bits(aw))
	wdata := m.Input("wdata", vlog.Bits(g.fw))
	rdata := m.Output("rdata", vlog.Bits(g.fw))
	mem := m.Memory("mem_q", g.fw, max(2, g.nw))
	if g.nw < 2 {
		mem.Comment("one word is used; a memory has at least two")
	}
	rq := m.Reg("rdata_q", g.fw)
	m.Assign(rdata, rq)
	m.AlwaysFF(clk,
		vlog.If(we, vlog.Stmts(vlog.NB(vlog.Word(mem, addr), wdata)), nil),
		vlog.If(re, vlog.Stmts(vlog.NB(rq, vlog.Word(mem, addr))), nil),
	)
	return m, m.Err()
}

// emitFrAB builds uvmmu_da_frab: the bitmap SRAM (one port, registered read
// data), the initialisation sweep and the FIND/SET/CLEAR FSM of
// blocks/frab.
func emitFrAB(v Values) (*vlog.Module, error) {
	c, err := daConfig(v)
	if err != nil {
		return nil, err
	}
	g := newGeometry(c)
	if frab.Find != 0 || frab.Set != 1 || frab.Clear != 2 || frab.OpBits != 2 {
		return nil, fmt.Errorf("blocks/frab op encoding changed; this emitter decodes FIND=0 SET=1 CLEAR=2")
	}
	m := vlog.NewModule("uvmmu_da_frab", Generator)
	m.Doc("Frame-region availability bitmap of the DA (SPEC 5.1; UVMMU paper Section IV-B2; docs/da.md):",
		fmt.Sprintf("%d regions in %d words of %d bits, one port, 1-cycle registered read; init sweep, then FIND/SET/CLEAR.", g.nr, g.nw, g.fw))
	pn := m.Param("NFG", c.NFG)
	pf := m.Param("FRAB_WORD", uint64(c.FrABWord))
	m.Specialize(pn, pf)
	clk := m.Input("clk", vlog.Bits(1))
	rst := m.Input("rst", vlog.Bits(1))
	cmdValid := m.Input("cmd_valid", vlog.Bits(1))
	cmdReady := m.Output("cmd_ready", vlog.Bits(1))
	cmdOp := m.Input("cmd_op", vlog.Bits(frab.OpBits))
	cmdRegion := m.Input("cmd_region", vlog.Bits(g.rb))
	rspValid := m.Output("rsp_valid", vlog.Bits(1))
	rspFound := m.Output("rsp_found", vlog.Bits(1))
	rspRegion := m.Output("rsp_region", vlog.Bits(g.rb))
	initDone := m.Output("init_done", vlog.Bits(1))

	sb := frab.StateBits
	sw := max(1, bits.Len(uint(g.nw)))
	sramAW := max(1, g.aw)
	sramWE := m.Wire("sram_we", 1)
	sramRE := m.Wire("sram_re", 1)
	sramAddr := m.Wire("sram_addr", sramAW)
	sramWData := m.Wire("sram_wdata", g.fw)
	rdata := m.Wire("sram_rdata", g.fw).Comment("the macro's registered read data")
	state := m.Reg("state_q", sb)
	sweep := m.Reg("sweep_q", sw).Comment("next word of the initialisation sweep")
	op := m.Reg("op_q", frab.OpBits)
	addr := m.Reg("addr_q", g.rb).Comment("region of the command in flight")
	rsp := m.Reg("rsp_valid_q", 1)
	found := m.Reg("rsp_found_q", 1)
	where := m.Reg("rsp_region_q", g.rb)

	st := func(x uint8) vlog.Expr { return vlog.Lit(sb, uint64(x)) }
	wordOf := func(r *vlog.Signal) vlog.Expr {
		if g.aw == 0 {
			return vlog.Lit(1, 0)
		}
		return vlog.Slice(r, g.rb-1, g.lw)
	}
	sweepAddr := vlog.Expr(vlog.Lit(1, 0))
	if g.aw > 0 {
		sweepAddr = vlog.Slice(sweep, g.aw-1, 0)
	}
	m.Assign(cmdReady, vlog.Eq(state, st(frab.StateIdle)))
	m.Assign(initDone, vlog.Ne(state, st(frab.StateInit)))
	m.Assign(rspValid, rsp)
	m.Assign(rspFound, found)
	m.Assign(rspRegion, where)

	pos := m.Wire("pos", g.lw).Comment("bit of the command's region within its word")
	m.Assign(pos, vlog.Slice(addr, g.lw-1, 0))
	encFound := m.Wire("enc_found", 1)
	encIndex := m.Wire("enc_index", g.lw)
	prio, err := emitPrio(Values{"WIDTH": uint64(g.fw)})
	if err != nil {
		return nil, err
	}
	m.Instance(prio, "u_prio", vlog.Port("word", rdata), vlog.Port("from", pos), vlog.Port("found", encFound), vlog.Port("index", encIndex))
	onehot := m.Wire("onehot", g.fw)
	bitsAt := make([]vlog.Expr, g.fw)
	for i := range g.fw {
		bitsAt[g.fw-1-i] = vlog.Eq(pos, vlog.Lit(g.lw, uint64(i)))
	}
	m.Assign(onehot, vlog.Cat(bitsAt...))
	foundRegion := vlog.Expr(encIndex)
	if g.aw > 0 {
		foundRegion = vlog.Cat(vlog.Slice(addr, g.rb-1, g.lw), encIndex)
	}
	lastBits := g.nr - (g.nw-1)*g.fw
	lastWord := vlog.Ones(g.fw)
	if lastBits < g.fw {
		lastWord = vlog.Cat(vlog.Zero(g.fw-lastBits), vlog.Ones(lastBits))
	}
	initWord := vlog.Mux(vlog.Eq(sweep, vlog.Lit(sw, uint64(g.nw-1))), lastWord, vlog.Ones(g.fw))

	m.Comment("the macro's one port: the sweep and SET/CLEAR write, an accepted command reads")
	inInit := vlog.Eq(state, st(frab.StateInit))
	isSet := vlog.Eq(op, vlog.Lit(frab.OpBits, uint64(frab.Set)))
	m.Assign(sramWE, vlog.LOr(inInit, vlog.LAnd(vlog.Eq(state, st(frab.StateAccess)),
		vlog.LOr(isSet, vlog.Eq(op, vlog.Lit(frab.OpBits, uint64(frab.Clear)))))))
	m.Assign(sramRE, vlog.LAnd(vlog.Eq(state, st(frab.StateIdle)), cmdValid))
	m.Assign(sramAddr, vlog.Mux(inInit, sweepAddr, vlog.Mux(vlog.Eq(state, st(frab.StateIdle)), wordOf(cmdRegion), wordOf(addr))))
	m.Assign(sramWData, vlog.Mux(inInit, initWord, vlog.Mux(isSet, vlog.Or(rdata, onehot), vlog.And(rdata, vlog.Not(onehot)))))
	sram, err := emitFrABSRAM(values(c, "NFG", "FRAB_WORD"))
	if err != nil {
		return nil, err
	}
	m.Instance(sram, "u_sram", vlog.Port("clk", clk), vlog.Port("we", sramWE), vlog.Port("re", sramRE),
		vlog.Port("addr", sramAddr), vlog.Port("wdata", sramWData), vlog.Port("rdata", rdata))

	m.AlwaysFF(clk, vlog.If(rst, vlog.Stmts(
		vlog.NB(state, st(frab.StateInit)),
		vlog.NB(sweep, vlog.Zero(sw)),
		vlog.NB(op, vlog.Zero(frab.OpBits)),
		vlog.NB(addr, vlog.Zero(g.rb)),
		vlog.NB(rsp, vlog.False),
		vlog.NB(found, vlog.False),
		vlog.NB(where, vlog.Zero(g.rb)),
	), vlog.Stmts(
		vlog.If(rsp, vlog.Stmts(vlog.NB(rsp, vlog.False)), nil),
		vlog.Case(state, []vlog.CaseItem{
			vlog.When([]vlog.Expr{st(frab.StateInit)},
				vlog.NB(sweep, vlog.Add(sweep, vlog.Lit(sw, 1))),
				vlog.If(vlog.Eq(sweep, vlog.Lit(sw, uint64(g.nw-1))), vlog.Stmts(vlog.NB(state, st(frab.StateIdle))), nil)),
			vlog.When([]vlog.Expr{st(frab.StateIdle)},
				vlog.If(cmdValid, vlog.Stmts(
					vlog.NB(op, cmdOp),
					vlog.NB(addr, cmdRegion),
					vlog.NB(state, st(frab.StateAccess)),
				), nil)),
			vlog.When([]vlog.Expr{st(frab.StateAccess)},
				vlog.Case(op, []vlog.CaseItem{
					vlog.When([]vlog.Expr{vlog.Lit(frab.OpBits, uint64(frab.Find))},
						vlog.NB(rsp, vlog.True),
						vlog.NB(found, encFound),
						vlog.If(encFound, vlog.Stmts(vlog.NB(where, foundRegion)), nil)),
				}, nil),
				vlog.NB(state, st(frab.StateIdle))),
		}, nil),
	)))
	return m, m.Err()
}
