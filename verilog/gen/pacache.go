package gen

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/verilog/vlog"
)

func init() {
	cfg := pacache.DefaultConfig()
	Register(Emitter{
		Name: "grit_pa_cache",
		Doc:  "GRIT page attribute cache: fault counting in front of the PA-Table (SPEC 8.3)",
		Params: []Param{
			{Name: "SETS", Default: uint64(cfg.Sets), Min: pacache.MinSets, Max: pacache.MaxSets, Doc: "sets, a power of two; index = low log2(SETS) VPN bits"},
			{Name: "WAYS", Default: uint64(cfg.Ways), Min: pacache.MinWays, Max: pacache.MaxWays, Doc: "ways per set, true LRU"},
			{Name: "VPN_BITS", Default: uint64(cfg.VPNBits), Min: 2, Max: pacache.MaxVPNBits, Doc: "virtual page number width; above log2(SETS)"},
			{Name: "THRESHOLD", Default: uint64(cfg.Threshold), Min: pacache.MinThreshold, Max: pacache.MaxThreshold, Doc: "fault threshold that triggers a scheme change"},
		},
		Emit: emitPACache,
	})
}

// emitPACache builds grit_pa_cache, the Verilog of blocks/pacache: the same
// controller, line layout, LRU ages and timing (docs/pacache.md), checked
// against the Go model cycle for cycle by tb/. The tag store is one
// register array per way indexed by set, read asynchronously, and reset
// line by line; every output is a register or a function of the state
// register.
func emitPACache(v Values) (*vlog.Module, error) {
	cfg := pacache.Config{Sets: int(v["SETS"]), Ways: int(v["WAYS"]), VPNBits: int(v["VPN_BITS"]), Threshold: int(v["THRESHOLD"])}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("parameters SETS = %d, WAYS = %d, VPN_BITS = %d, THRESHOLD = %d: %w",
			cfg.Sets, cfg.Ways, cfg.VPNBits, cfg.Threshold, err)
	}
	if pacache.ValidBit != 0 || pacache.DirtyBit != 1 || pacache.WriteBit != 2 || pacache.FaultsLo != 3 || pacache.TagLo != pacache.FaultsLo+pacache.FaultCounterBits {
		return nil, fmt.Errorf("blocks/pacache lays a line out as valid@%d dirty@%d write@%d faults@%d tag@%d; this emitter packs {tag, faults, write, dirty, valid}",
			pacache.ValidBit, pacache.DirtyBit, pacache.WriteBit, pacache.FaultsLo, pacache.TagLo)
	}
	g := &paCacheGen{cfg: cfg, ib: cfg.IndexBits(), tb: cfg.TagBits(), ab: cfg.AgeBits(), eb: cfg.EntryBits()}
	return g.build(), nil
}

// paCacheGen holds the module under construction and its geometry.
type paCacheGen struct {
	cfg            pacache.Config
	ib, tb, ab, eb int // index, tag, age and line widths
	m              *vlog.Module
}

const (
	cntW   = pacache.RespCountBits
	faultW = pacache.FaultCounterBits
	opW    = pacache.TableOpBits
	stW    = pacache.StateBits
)

func (g *paCacheGen) build() *vlog.Module {
	cfg := g.cfg
	m := vlog.NewModule("grit_pa_cache", Generator)
	g.m = m
	m.Doc("Page attribute cache of GRIT (GRIT Section V-C, Fig. 12; SPEC 8.3), generated from blocks/pacache.",
		"Set-associative, true LRU, write-allocate, write-back to the PA-Table; hit latency 1 cycle,",
		"miss latency PA-Table latency + 2 cycles (docs/pacache.md).")
	pSets := m.Param("SETS", uint64(cfg.Sets))
	pWays := m.Param("WAYS", uint64(cfg.Ways))
	pVPN := m.Param("VPN_BITS", uint64(cfg.VPNBits))
	pThr := m.Param("THRESHOLD", uint64(cfg.Threshold))
	m.Specialize(pSets, pWays, pVPN, pThr)

	bit := vlog.Bits(1)
	vpnR := vlog.PBits(vlog.PRef(pVPN))
	clk := m.Input("clk", bit)
	rst := m.Input("rst", bit)
	reqValid := m.Input("req_valid", bit)
	reqReady := m.Output("req_ready", bit)
	reqVPN := m.Input("req_vpn", vpnR)
	reqWrite := m.Input("req_write", bit)
	respValid := m.Output("resp_valid", bit)
	respTrigger := m.Output("resp_trigger", bit)
	respWrite := m.Output("resp_write", bit)
	respCount := m.Output("resp_count", vlog.Bits(cntW))
	tblReqValid := m.Output("tbl_req_valid", bit)
	tblReqReady := m.Input("tbl_req_ready", bit)
	tblReqOp := m.Output("tbl_req_op", vlog.Bits(opW))
	tblReqVPN := m.Output("tbl_req_vpn", vpnR)
	tblReqRW := m.Output("tbl_req_rw", bit)
	tblReqCount := m.Output("tbl_req_count", vlog.Bits(faultW))
	tblRespValid := m.Input("tbl_resp_valid", bit)
	tblRespFound := m.Input("tbl_resp_found", bit)
	tblRespRW := m.Input("tbl_resp_rw", bit)
	tblRespCount := m.Input("tbl_resp_count", vlog.Bits(faultW))

	vpnW := cfg.VPNBits
	state := m.Reg("state_q", stW).Comment("controller state: 0 idle, 1 PA-Table request, 2 PA-Table wait")
	lines := make([]*vlog.Signal, cfg.Ways)
	for w := range lines {
		lines[w] = m.Memory(fmt.Sprintf("line_w%d_q", w), g.eb, cfg.Sets)
	}
	lines[0].Comment("tag store, one array per way indexed by set; line = {tag, faults, write, dirty, valid} (blocks/pacache.Entry)")
	ages := m.Memory("age_q", cfg.AgesBits(), cfg.Sets).Comment("per set, one LRU age per way, way 0 lowest: ways used more recently")
	missVPN := m.Reg("miss_vpn_q", vpnW).Comment("the miss being served")
	missWrite := m.Reg("miss_write_q", 1)
	victimWay := m.Reg("victim_way_q", g.ab).Comment("the way the miss fills, and its line when the miss was detected")
	victimLine := m.Reg("victim_line_q", g.eb)
	tblOp := m.Reg("tbl_op_q", opW).Comment("the PA-Table operation offered in the request state")
	tblVPN := m.Reg("tbl_vpn_q", vpnW)
	tblRW := m.Reg("tbl_rw_q", 1)
	tblCount := m.Reg("tbl_count_q", faultW)
	respValidQ := m.Reg("resp_valid_q", 1)
	respTriggerQ := m.Reg("resp_trigger_q", 1)
	respWriteQ := m.Reg("resp_write_q", 1)
	respCountQ := m.Reg("resp_count_q", cntW)

	stLit := func(s pacache.State) vlog.Expr { return vlog.Lit(stW, uint64(s)) }
	opLit := func(o pacache.TableOp) vlog.Expr { return vlog.Lit(opW, uint64(o)) }
	thr := vlog.Lit(cntW, uint64(cfg.Threshold))

	m.Comment("Moore outputs: functions of the registers only")
	m.Assign(reqReady, vlog.Eq(state, stLit(pacache.StateIdle)))
	m.Assign(respValid, respValidQ)
	m.Assign(respTrigger, respTriggerQ)
	m.Assign(respWrite, respWriteQ)
	m.Assign(respCount, respCountQ)
	m.Assign(tblReqValid, vlog.Eq(state, stLit(pacache.StateTblReq)))
	m.Assign(tblReqOp, tblOp)
	m.Assign(tblReqVPN, tblVPN)
	m.Assign(tblReqRW, tblRW)
	m.Assign(tblReqCount, tblCount)

	m.Comment("lookup of the offered request in its set")
	reqFire := g.wire("req_fire", vlog.LAnd(reqValid, vlog.Eq(state, stLit(pacache.StateIdle))))
	reqSet := g.wire("req_set", vlog.Slice(reqVPN, g.ib-1, 0))
	reqTag := g.wire("req_tag", vlog.Slice(reqVPN, vpnW-1, g.ib))
	setLines := make([]*vlog.Signal, cfg.Ways)
	hits := make([]*vlog.Signal, cfg.Ways)
	invalid := make([]vlog.Expr, cfg.Ways)
	for w := range cfg.Ways {
		setLines[w] = g.wire(fmt.Sprintf("set_line_w%d", w), vlog.Word(lines[w], reqSet))
		hits[w] = g.wire(fmt.Sprintf("hit_w%d", w), vlog.LAnd(vlog.Bit(setLines[w], pacache.ValidBit),
			vlog.Eq(vlog.Slice(setLines[w], g.eb-1, pacache.TagLo), reqTag)))
		invalid[w] = vlog.LNot(vlog.Bit(setLines[w], pacache.ValidBit))
	}
	hitAny := vlog.Expr(hits[0])
	for _, h := range hits[1:] {
		hitAny = vlog.LOr(hitAny, h)
	}
	hit := g.wire("hit", hitAny)
	hitConds := make([]vlog.Expr, cfg.Ways)
	faultsOf := make([]vlog.Expr, cfg.Ways)
	writeOf := make([]vlog.Expr, cfg.Ways)
	wayLits := make([]vlog.Expr, cfg.Ways)
	for w := range cfg.Ways {
		hitConds[w] = hits[w]
		faultsOf[w] = vlog.Slice(setLines[w], pacache.FaultsLo+faultW-1, pacache.FaultsLo)
		writeOf[w] = vlog.Bit(setLines[w], pacache.WriteBit)
		wayLits[w] = vlog.Lit(g.ab, uint64(w))
	}
	hitWay := g.wire("hit_way", priority(hitConds, wayLits, vlog.Zero(g.ab)))
	hitFaults := g.wire("hit_faults", priority(hitConds, faultsOf, vlog.Zero(faultW)))
	hitWrite := g.wire("hit_write", vlog.LOr(priority(hitConds, writeOf, vlog.False), reqWrite))
	hitCount := g.wire("hit_count", vlog.Add(vlog.ZeroExtend(hitFaults, cntW), vlog.Lit(cntW, 2)))
	hitTrigger := g.wire("hit_trigger", vlog.Ge(hitCount, thr))
	hitLine := g.wire("hit_line", vlog.Cat(reqTag, vlog.Add(hitFaults, vlog.Lit(faultW, 1)), hitWrite, vlog.True, vlog.True))
	setAges := g.wire("set_ages", vlog.Word(ages, reqSet))
	hitAges := g.touch("hit_ages", setAges, hitWay)

	m.Comment("victim: the lowest invalid way, else the way of age WAYS-1")
	lruConds := make([]vlog.Expr, cfg.Ways)
	for w := range cfg.Ways {
		lruConds[w] = vlog.Eq(g.age(setAges, w), vlog.Lit(g.ab, uint64(cfg.Ways-1)))
	}
	lruWay := g.wire("lru_way", priority(lruConds, wayLits, vlog.Zero(g.ab)))
	victim := g.wire("victim_way", priority(invalid, wayLits, lruWay))
	wayIs := make([]vlog.Expr, cfg.Ways)
	lineVals := make([]vlog.Expr, cfg.Ways)
	for w := range cfg.Ways {
		wayIs[w] = vlog.Eq(victim, wayLits[w])
		lineVals[w] = setLines[w]
	}
	victimSel := g.wire("victim_line", priority(wayIs, lineVals, vlog.Zero(g.eb)))

	m.Comment("fill of a miss with the PA-Table's answer")
	fillSet := g.wire("fill_set", vlog.Slice(missVPN, g.ib-1, 0))
	fillCount := g.wire("fill_count", vlog.Mux(tblRespFound,
		vlog.Add(vlog.ZeroExtend(tblRespCount, cntW), vlog.Lit(cntW, 2)), vlog.Lit(cntW, 1)))
	fillWrite := g.wire("fill_write", vlog.LOr(missWrite, vlog.LAnd(tblRespFound, tblRespRW)))
	fillTrigger := g.wire("fill_trigger", vlog.Ge(fillCount, thr))
	fillFaults := g.wire("fill_faults", vlog.Mux(tblRespFound, vlog.Add(tblRespCount, vlog.Lit(faultW, 1)), vlog.Zero(faultW)))
	fillLine := g.wire("fill_line", vlog.Cat(vlog.Slice(missVPN, vpnW-1, g.ib), fillFaults, fillWrite, vlog.True, vlog.True))
	fillAges := g.touch("fill_ages", g.wire("fill_old_ages", vlog.Word(ages, fillSet)), victimWay)
	victimDirty := g.wire("victim_dirty", vlog.LAnd(vlog.Bit(victimLine, pacache.ValidBit), vlog.Bit(victimLine, pacache.DirtyBit)))
	fillFire := g.wire("fill_fire", vlog.LAnd(vlog.Eq(state, stLit(pacache.StateTblWait)), tblRespValid))

	offer := func(op pacache.TableOp, vpn, rw, count vlog.Expr) []vlog.Stmt {
		return vlog.Stmts(
			vlog.NB(tblOp, opLit(op)),
			vlog.NB(tblVPN, vpn),
			vlog.NB(tblRW, rw),
			vlog.NB(tblCount, count),
			vlog.NB(state, stLit(pacache.StateTblReq)),
		)
	}
	respond := func(trigger, write, count vlog.Expr) []vlog.Stmt {
		return vlog.Stmts(vlog.NB(respTriggerQ, trigger), vlog.NB(respWriteQ, write), vlog.NB(respCountQ, count))
	}
	writeHitWay := func(val vlog.Expr) []vlog.Stmt {
		var ss []vlog.Stmt
		for w := range cfg.Ways {
			ss = append(ss, vlog.If(hits[w], vlog.Stmts(vlog.NB(vlog.Word(lines[w], reqSet), val)), nil))
		}
		return ss
	}
	var fillWays []vlog.Stmt
	for w := range cfg.Ways {
		fillWays = append(fillWays, vlog.If(vlog.Eq(victimWay, wayLits[w]),
			vlog.Stmts(vlog.NB(vlog.Word(lines[w], fillSet), fillLine)), nil))
	}

	idle := vlog.Stmts(vlog.If(reqFire, vlog.Stmts(
		vlog.If(hit,
			append(respond(hitTrigger, hitWrite, hitCount),
				vlog.If(hitTrigger,
					append(writeHitWay(vlog.Zero(g.eb)), offer(pacache.OpDelete, reqVPN, vlog.False, vlog.Zero(faultW))...),
					append(writeHitWay(hitLine), vlog.NB(vlog.Word(ages, reqSet), hitAges)))),
			append(vlog.Stmts(
				vlog.NB(missVPN, reqVPN),
				vlog.NB(missWrite, reqWrite),
				vlog.NB(victimWay, victim),
				vlog.NB(victimLine, victimSel),
			), offer(pacache.OpLookup, reqVPN, vlog.False, vlog.Zero(faultW))...)),
	), nil))
	request := vlog.Stmts(vlog.If(tblReqReady, vlog.Stmts(
		vlog.NB(state, vlog.Mux(vlog.Eq(tblOp, opLit(pacache.OpLookup)), stLit(pacache.StateTblWait), stLit(pacache.StateIdle))),
	), nil))
	victimVPN := vlog.Cat(vlog.Slice(victimLine, g.eb-1, pacache.TagLo), fillSet)
	wait := vlog.Stmts(vlog.If(tblRespValid, append(respond(fillTrigger, fillWrite, fillCount),
		vlog.If(fillTrigger,
			vlog.Stmts(vlog.If(tblRespFound,
				offer(pacache.OpDelete, missVPN, vlog.False, vlog.Zero(faultW)),
				vlog.Stmts(vlog.NB(state, stLit(pacache.StateIdle))))),
			append(append(fillWays, vlog.NB(vlog.Word(ages, fillSet), fillAges)),
				vlog.If(victimDirty,
					offer(pacache.OpWriteBack, victimVPN, vlog.Bit(victimLine, pacache.WriteBit),
						vlog.Slice(victimLine, pacache.FaultsLo+faultW-1, pacache.FaultsLo)),
					vlog.Stmts(vlog.NB(state, stLit(pacache.StateIdle)))))),
	), nil))

	var reset []vlog.Stmt
	for s := range cfg.Sets {
		idx := vlog.Lit(g.ib, uint64(s))
		for w := range cfg.Ways {
			reset = append(reset, vlog.NB(vlog.Word(lines[w], idx), vlog.Zero(g.eb)))
		}
		reset = append(reset, vlog.NB(vlog.Word(ages, idx), vlog.Hex(cfg.AgesBits(), cfg.ResetAges())))
	}
	reset = append(reset,
		vlog.NB(state, stLit(pacache.StateIdle)),
		vlog.NB(missVPN, vlog.Zero(vpnW)),
		vlog.NB(missWrite, vlog.False),
		vlog.NB(victimWay, vlog.Zero(g.ab)),
		vlog.NB(victimLine, vlog.Zero(g.eb)),
		vlog.NB(tblOp, vlog.Zero(opW)),
		vlog.NB(tblVPN, vlog.Zero(vpnW)),
		vlog.NB(tblRW, vlog.False),
		vlog.NB(tblCount, vlog.Zero(faultW)),
		vlog.NB(respValidQ, vlog.False),
		vlog.NB(respTriggerQ, vlog.False),
		vlog.NB(respWriteQ, vlog.False),
		vlog.NB(respCountQ, vlog.Zero(cntW)),
	)
	m.Comment("controller")
	m.AlwaysFF(clk, vlog.If(rst, reset, vlog.Stmts(
		vlog.NB(respValidQ, vlog.LOr(vlog.LAnd(reqFire, hit), fillFire)),
		vlog.Case(state, []vlog.CaseItem{
			vlog.When([]vlog.Expr{stLit(pacache.StateIdle)}, idle...),
			vlog.When([]vlog.Expr{stLit(pacache.StateTblReq)}, request...),
			vlog.When([]vlog.Expr{stLit(pacache.StateTblWait)}, wait...),
		}, nil),
	)))
	return m
}

// wire declares a wire driven by e.
func (g *paCacheGen) wire(name string, e vlog.Expr) *vlog.Signal {
	s := g.m.Wire(name, e.Width())
	g.m.Assign(s, e)
	return s
}

// age is way w's age in a set's packed ages.
func (g *paCacheGen) age(ages *vlog.Signal, w int) vlog.Expr {
	return vlog.Slice(ages, (w+1)*g.ab-1, w*g.ab)
}

// touch declares the ages of a set after way becomes the most recently
// used: its age becomes 0 and every younger way ages by one
// (blocks/pacache PACache.touch).
func (g *paCacheGen) touch(name string, ages *vlog.Signal, way *vlog.Signal) *vlog.Signal {
	ways := g.cfg.Ways
	conds := make([]vlog.Expr, ways)
	vals := make([]vlog.Expr, ways)
	for w := range ways {
		conds[w] = vlog.Eq(way, vlog.Lit(g.ab, uint64(w)))
		vals[w] = g.age(ages, w)
	}
	old := g.wire(name+"_way_age", priority(conds, vals, vlog.Zero(g.ab)))
	parts := make([]vlog.Expr, ways)
	for w := range ways {
		a := g.age(ages, w)
		parts[ways-1-w] = vlog.Mux(conds[w], vlog.Zero(g.ab),
			vlog.Mux(vlog.Lt(a, old), vlog.Add(a, vlog.Lit(g.ab, 1)), a))
	}
	return g.wire(name, vlog.Cat(parts...))
}

// priority is conds[0] ? vals[0] : conds[1] ? vals[1] : ... : def.
func priority(conds, vals []vlog.Expr, def vlog.Expr) vlog.Expr {
	e := def
	for i := len(conds) - 1; i >= 0; i-- {
		e = vlog.Mux(conds[i], vals[i], e)
	}
	return e
}
