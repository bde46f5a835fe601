package gen

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/verilog/vlog"
)

// checkLayouts makes sure the IPgT and DCQ layouts are the ones the DA
// emitters build their constants from.
func checkLayouts() error {
	if ipgt.FreeBit != 0 || ipgt.ProtectedBit != 1 || ipgt.MappedBit != 2 || ipgt.BusyBit != 3 ||
		ipgt.CIDLSB != 4 || ipgt.CIDWidth != afm.CIDBits || ipgt.VPgNLSB != 16 || ipgt.VPgNWidth != afm.VPgNBits {
		return fmt.Errorf("blocks/ipgt entry layout changed; the DA emitters pack {VPgN, CID, B, M, P, F}")
	}
	if dcq.SwapBit != 0 || dcq.PFgNLSB != 1 {
		return fmt.Errorf("blocks/dcq entry layout changed; the DA emitters pack {PFgN, S}")
	}
	if afm.OpFree != 0 || afm.OpProtect != 1 || afm.OpUnprotect != 2 || afm.SWOpBits != 2 {
		return fmt.Errorf("blocks/afm software op encoding changed")
	}
	if afm.ReqMap != 0 || afm.ReqSW != 1 || afm.ReqRefill != 2 {
		return fmt.Errorf("blocks/afm requester encoding changed")
	}
	return nil
}

// emitAFM builds uvmmu_da_afm: the AFM, victim picker and IPgT sequencer of
// blocks/afm, state for state (docs/da.md, "AFM and sequencer").
func emitAFM(v Values) (*vlog.Module, error) {
	if err := checkLayouts(); err != nil {
		return nil, err
	}
	c, err := daConfig(v)
	if err != nil {
		return nil, err
	}
	g := newGeometry(c)
	fg, rb, cw, aw := c.FGBits, g.rb, g.cw, c.AddrBits
	m := vlog.NewModule("uvmmu_da_afm", Generator)
	m.Doc("Available Frame Manager, victim picker and IPgT sequencer of the DA (SPEC 5.2; UVMMU paper Section IV-C, IV-D;",
		"docs/da.md): one FSM runs one transaction at a time on the IPgT memory port.")
	params := map[string]*vlog.Param{}
	for _, name := range []string{"NFG", "DCQ_DEPTH", "FRAB_WORD", "FG_BITS", "ADDR_W", "IPGT_BASE", "LFSR_WIDTH"} {
		params[name] = m.Param(name, values(c, name)[name])
	}
	m.Specialize(params["NFG"], params["DCQ_DEPTH"], params["FRAB_WORD"], params["FG_BITS"], params["ADDR_W"], params["IPGT_BASE"], params["LFSR_WIDTH"])

	clk := m.Input("clk", vlog.Bits(1))
	rst := m.Input("rst", vlog.Bits(1))
	pushValid := m.Output("push_valid", vlog.Bits(1))
	pushReady := m.Input("push_ready", vlog.Bits(1))
	pushPFgN := m.Output("push_pfgn", vlog.Bits(fg))
	pushSwap := m.Output("push_swap", vlog.Bits(1))
	count := m.Input("count", vlog.Bits(cw))
	refill := m.Input("refill", vlog.Bits(1))
	cmdValid := m.Output("cmd_valid", vlog.Bits(1))
	cmdReady := m.Input("cmd_ready", vlog.Bits(1))
	cmdOp := m.Output("cmd_op", vlog.Bits(frab.OpBits))
	cmdRegion := m.Output("cmd_region", vlog.Bits(rb))
	rspValid := m.Input("rsp_valid", vlog.Bits(1))
	rspFound := m.Input("rsp_found", vlog.Bits(1))
	rspRegion := m.Input("rsp_region", vlog.Bits(rb))
	initDone := m.Input("init_done", vlog.Bits(1))
	lfsrEn := m.Output("lfsr_en", vlog.Bits(1))
	lfsrState := m.Input("lfsr_state", vlog.Bits(c.LFSRWidth))
	mapValid := m.Input("map_valid", vlog.Bits(1))
	mapReady := m.Output("map_ready", vlog.Bits(1))
	mapPFgN := m.Input("map_pfgn", vlog.Bits(fg))
	mapVPgN := m.Input("map_vpgn", vlog.Bits(afm.VPgNBits))
	mapCID := m.Input("map_cid", vlog.Bits(afm.CIDBits))
	swValid := m.Input("sw_valid", vlog.Bits(1))
	swReady := m.Output("sw_ready", vlog.Bits(1))
	swOp := m.Input("sw_op", vlog.Bits(afm.SWOpBits))
	swPFgN := m.Input("sw_pfgn", vlog.Bits(fg))
	memReqValid := m.Output("mem_req_valid", vlog.Bits(1))
	memReqReady := m.Input("mem_req_ready", vlog.Bits(1))
	memReqWrite := m.Output("mem_req_write", vlog.Bits(1))
	memReqAddr := m.Output("mem_req_addr", vlog.Bits(aw))
	memReqWData := m.Output("mem_req_wdata", vlog.Bits(64))
	memRespValid := m.Input("mem_resp_valid", vlog.Bits(1))
	memRespData := m.Input("mem_resp_data", vlog.Bits(64))

	sb := afm.StateBits
	fb := len(fmt.Sprintf("%b", g.nw+1))
	state := m.Reg("state_q", sb)
	last := m.Reg("last_q", 2).Comment("requester served last: 0 map, 1 sw, 2 refill")
	mapFull := m.Reg("map_full_q", 1)
	mapPFgNQ := m.Reg("map_pfgn_q", fg)
	mapVPgNQ := m.Reg("map_vpgn_q", afm.VPgNBits)
	mapCIDQ := m.Reg("map_cid_q", afm.CIDBits)
	swFull := m.Reg("sw_full_q", 1)
	swOpQ := m.Reg("sw_op_q", afm.SWOpBits)
	swPFgNQ := m.Reg("sw_pfgn_q", fg)
	reqValid := m.Reg("req_valid_q", 1)
	reqWrite := m.Reg("req_write_q", 1)
	reqAddr := m.Reg("req_addr_q", aw)
	reqWData := m.Reg("req_wdata_q", 64)
	pushValidQ := m.Reg("push_valid_q", 1)
	pushPFgNQ := m.Reg("push_pfgn_q", fg)
	pushSwapQ := m.Reg("push_swap_q", 1)
	cmdValidQ := m.Reg("cmd_valid_q", 1)
	cmdOpQ := m.Reg("cmd_op_q", frab.OpBits)
	cmdRegionQ := m.Reg("cmd_region_q", rb)
	lfsrEnQ := m.Reg("lfsr_en_q", 1)
	hint := m.Reg("hint_q", 1).Comment("the FrAB may hold a set bit")
	ptr := m.Reg("ptr_q", rb).Comment("rotating FrAB scan pointer")
	finds := m.Reg("finds_q", fb).Comment("FINDs in the current sweep")
	region := m.Reg("region_q", rb)
	issued := m.Reg("issued_q", 6)
	arrived := m.Reg("arrived_q", 6)
	rsv := m.Reg("rsv_q", frab.FrameGroupsPerRegion).Comment("reservable entries of the region not yet reserved")
	entries := m.Memory("entry_q", 64, frab.FrameGroupsPerRegion).Comment("the region's IPgT entries")
	cur := m.Reg("cur_q", fg).Comment("frame-group of the op or victim in flight")
	curWord := m.Reg("cur_word_q", 64)

	m.Comment("Moore outputs")
	m.Assign(mapReady, vlog.Not(mapFull))
	m.Assign(swReady, vlog.Not(swFull))
	m.Assign(memReqValid, reqValid)
	m.Assign(memReqWrite, reqWrite)
	m.Assign(memReqAddr, reqAddr)
	m.Assign(memReqWData, reqWData)
	m.Assign(pushValid, pushValidQ)
	m.Assign(pushPFgN, pushPFgNQ)
	m.Assign(pushSwap, pushSwapQ)
	m.Assign(cmdValid, cmdValidQ)
	m.Assign(cmdOp, cmdOpQ)
	m.Assign(cmdRegion, cmdRegionQ)
	m.Assign(lfsrEn, lfsrEnQ)

	wire := func(name string, width int, e vlog.Expr) *vlog.Signal {
		w := m.Wire(name, width)
		m.Assign(w, e)
		return w
	}
	memFree := wire("mem_free", 1, vlog.LOr(vlog.LNot(reqValid), memReqReady))
	memFire := wire("mem_fire", 1, vlog.LAnd(reqValid, memReqReady))
	cmdFree := wire("cmd_free", 1, vlog.LOr(vlog.LNot(cmdValidQ), cmdReady))
	cmdFire := wire("cmd_fire", 1, vlog.LAnd(cmdValidQ, cmdReady))
	inQueue := wire("in_queue", cw+1, vlog.Add(vlog.ZeroExtend(count, cw+1), vlog.ZeroExtend(pushValidQ, cw+1)))
	space := wire("space", 1, vlog.LAnd(pushReady, vlog.Lt(inQueue, vlog.Lit(cw+1, uint64(c.DCQDepth)))))
	refillWanted := wire("refill_wanted", 1, vlog.LAnd(refill, vlog.LNot(pushValidQ)))

	m.Comment("round-robin among the map buffer, the sw buffer and a refill step, after the one served last")
	lastIs := func(k uint64) vlog.Expr { return vlog.Eq(last, vlog.Lit(2, k)) }
	afterMap := vlog.LOr(lastIs(0), lastIs(3))
	selMap := wire("sel_map", 1, vlog.LOr(
		vlog.LAnd(lastIs(2), mapFull),
		vlog.LAnd(lastIs(1), mapFull, vlog.LNot(refillWanted)),
		vlog.LAnd(afterMap, mapFull, vlog.LNot(swFull), vlog.LNot(refillWanted))))
	selSW := wire("sel_sw", 1, vlog.LOr(
		vlog.LAnd(afterMap, swFull),
		vlog.LAnd(lastIs(2), swFull, vlog.LNot(mapFull)),
		vlog.LAnd(lastIs(1), swFull, vlog.LNot(refillWanted), vlog.LNot(mapFull))))
	selRefill := wire("sel_refill", 1, vlog.LOr(
		vlog.LAnd(lastIs(1), refillWanted),
		vlog.LAnd(afterMap, refillWanted, vlog.LNot(swFull)),
		vlog.LAnd(lastIs(2), refillWanted, vlog.LNot(mapFull), vlog.LNot(swFull))))

	beyond := func(p *vlog.Signal) vlog.Expr {
		if c.NFG >= 1<<fg {
			return vlog.False
		}
		return vlog.Ge(p, vlog.Lit(fg, c.NFG))
	}
	mapDrop := wire("map_drop", 1, beyond(mapPFgNQ))
	swDrop := wire("sw_drop", 1, vlog.LOr(beyond(swPFgNQ), vlog.Gt(swOpQ, vlog.Lit(afm.SWOpBits, uint64(afm.OpUnprotect)))))
	address := func(name string, pfgn vlog.Expr) *vlog.Signal {
		return wire(name, aw, vlog.Add(vlog.Lit(aw, c.IPGTBase), vlog.ZeroExtend(vlog.Cat(pfgn, vlog.Lit(3, 0)), aw)))
	}
	lastRegion := vlog.Eq(region, vlog.Lit(rb, uint64(g.nr-1)))
	regionSize := wire("region_size", 6, vlog.Mux(lastRegion, vlog.Lit(6, uint64(g.last)), vlog.Lit(6, frab.FrameGroupsPerRegion)))
	fetchPFgN := wire("fetch_pfgn", fg, vlog.ZeroExtend(vlog.Cat(region, vlog.Slice(issued, 4, 0)), fg))
	fetchAddr := address("fetch_addr", fetchPFgN)
	curAddr := address("cur_addr", cur)
	mapAddr := address("map_addr", mapPFgNQ)
	rsvFound, rsvIndex := prioTree(m, "rsv", rsv, nil, frab.FrameGroupsPerRegion)
	rsvPFgN := wire("rsv_pfgn", fg, vlog.ZeroExtend(vlog.Cat(region, rsvIndex), fg))
	rsvAddr := address("rsv_addr", rsvPFgN)
	rsvEntry := wire("rsv_entry", 64, vlog.Word(entries, rsvIndex))
	flags := func(f uint64) vlog.Expr { return vlog.Hex(64, f) }
	reserved := wire("reserved_word", 64, vlog.Or(vlog.And(rsvEntry, flags(^ipgt.F)), flags(ipgt.B)))
	respReservable := wire("resp_reservable", 1, vlog.Eq(vlog.And(memRespData, flags(ipgt.F|ipgt.P|ipgt.B)), flags(ipgt.F)))
	respVictim := wire("resp_victim", 1, vlog.Eq(vlog.And(memRespData, flags(ipgt.M|ipgt.P|ipgt.B)), flags(ipgt.M)))
	respBusy := wire("resp_busy", 1, vlog.Ne(vlog.And(memRespData, flags(ipgt.B)), vlog.Zero(64)))
	mappedWord := wire("mapped_word", 64, vlog.Cat(mapVPgNQ, mapCIDQ, vlog.Lit(4, ipgt.M)))
	setBit := wire("set_bit", 1, vlog.Eq(curWord, flags(ipgt.Freed)))
	curRegion := wire("cur_region", rb, vlog.Slice(cur, rb+4, 5))

	var nextWord vlog.Expr = vlog.Zero(rb)
	if g.aw > 0 {
		w := vlog.Slice(ptr, rb-1, g.lw)
		nextWord = vlog.Mux(vlog.Eq(w, vlog.Lit(g.aw, uint64(g.nw-1))), vlog.Zero(rb),
			vlog.Cat(vlog.Add(w, vlog.Lit(g.aw, 1)), vlog.Zero(g.lw)))
	}
	nextWordW := wire("next_word", rb, nextWord)
	nextRegion := wire("next_region", rb, vlog.Mux(lastRegion, vlog.Zero(rb), vlog.Add(region, vlog.Lit(rb, 1))))

	draw := m.Wire("pick_draw", g.pw)
	drawOK := m.Wire("pick_ok", 1)
	picker, err := emitPicker(values(c, "NFG", "LFSR_WIDTH"))
	if err != nil {
		return nil, err
	}
	m.Instance(picker, "u_picker", vlog.Port("state", lfsrState), vlog.Port("draw", draw), vlog.Port("ok", drawOK))

	st := func(x uint8) vlog.Expr { return vlog.Lit(sb, uint64(x)) }
	goTo := func(x uint8) vlog.Stmt { return vlog.NB(state, st(x)) }
	issue := func(write bool, addr, wdata vlog.Expr) []vlog.Stmt {
		w := vlog.False
		if write {
			w = vlog.True
		}
		return vlog.Stmts(vlog.NB(reqValid, vlog.True), vlog.NB(reqWrite, w), vlog.NB(reqAddr, addr), vlog.NB(reqWData, wdata))
	}
	push := func(pfgn vlog.Expr, swap bool) []vlog.Stmt {
		s := vlog.False
		if swap {
			s = vlog.True
		}
		return vlog.Stmts(vlog.NB(pushValidQ, vlog.True), vlog.NB(pushPFgNQ, pfgn), vlog.NB(pushSwapQ, s))
	}
	command := func(op frab.Op, r vlog.Expr) []vlog.Stmt {
		return vlog.Stmts(vlog.NB(cmdValidQ, vlog.True), vlog.NB(cmdOpQ, vlog.Lit(frab.OpBits, uint64(op))), vlog.NB(cmdRegionQ, r))
	}
	cat := func(parts ...[]vlog.Stmt) []vlog.Stmt {
		var out []vlog.Stmt
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	when := func(x uint8, body ...vlog.Stmt) vlog.CaseItem { return vlog.When([]vlog.Expr{st(x)}, body...) }

	resetRegs := []vlog.Stmt{goTo(afm.StateInit), vlog.NB(last, vlog.Lit(2, uint64(afm.ReqRefill))), vlog.NB(hint, vlog.True)}
	for _, r := range []*vlog.Signal{mapFull, mapPFgNQ, mapVPgNQ, mapCIDQ, swFull, swOpQ, swPFgNQ, reqValid, reqWrite, reqAddr, reqWData,
		pushValidQ, pushPFgNQ, pushSwapQ, cmdValidQ, cmdOpQ, cmdRegionQ, lfsrEnQ, ptr, finds, region, issued, arrived, rsv, cur, curWord} {
		resetRegs = append(resetRegs, vlog.NB(r, vlog.Zero(r.Width())))
	}

	fsm := vlog.Case(state, []vlog.CaseItem{
		when(afm.StateInit, vlog.If(initDone, vlog.Stmts(goTo(afm.StateIdle)), nil)),
		when(afm.StateIdle,
			vlog.If(selMap, vlog.Stmts(
				vlog.NB(last, vlog.Lit(2, uint64(afm.ReqMap))),
				vlog.If(mapDrop, vlog.Stmts(vlog.NB(mapFull, vlog.False)), vlog.Stmts(goTo(afm.StateMapWrite))),
			), vlog.Stmts(vlog.If(selSW, vlog.Stmts(
				vlog.NB(last, vlog.Lit(2, uint64(afm.ReqSW))),
				vlog.If(swDrop, vlog.Stmts(vlog.NB(swFull, vlog.False)), vlog.Stmts(
					vlog.NB(cur, swPFgNQ),
					vlog.If(vlog.Eq(swOpQ, vlog.Lit(afm.SWOpBits, uint64(afm.OpProtect))), vlog.Stmts(
						vlog.NB(curWord, flags(ipgt.Protected)),
						goTo(afm.StateSWWrite),
					), vlog.Stmts(goTo(afm.StateSWRead))),
				)),
			), vlog.Stmts(vlog.If(selRefill, vlog.Stmts(
				vlog.NB(last, vlog.Lit(2, uint64(afm.ReqRefill))),
				vlog.If(hint, vlog.Stmts(
					vlog.NB(finds, vlog.Zero(fb)),
					goTo(afm.StateScanReq),
				), vlog.Stmts(
					vlog.NB(lfsrEnQ, vlog.True),
					goTo(afm.StateVDraw),
				)),
			), nil)))))),
		when(afm.StateMapWrite, vlog.If(memFree, cat(issue(true, mapAddr, mappedWord),
			vlog.Stmts(vlog.NB(mapFull, vlog.False), goTo(afm.StateIdle))), nil)),
		when(afm.StateSWRead, vlog.If(memFree, cat(issue(false, curAddr, vlog.Zero(64)), vlog.Stmts(goTo(afm.StateSWWait))), nil)),
		when(afm.StateSWWait, vlog.If(memRespValid, vlog.Stmts(
			vlog.NB(curWord, vlog.Mux(respBusy, flags(ipgt.FreedBusy), flags(ipgt.Freed))),
			goTo(afm.StateSWWrite),
		), nil)),
		when(afm.StateSWWrite, vlog.If(vlog.LAnd(memFree, vlog.LOr(vlog.LNot(setBit), cmdFree)), cat(
			issue(true, curAddr, curWord),
			vlog.Stmts(vlog.If(setBit, cat(command(frab.Set, curRegion), vlog.Stmts(vlog.NB(hint, vlog.True))), nil)),
			vlog.Stmts(vlog.NB(swFull, vlog.False), goTo(afm.StateIdle)),
		), nil)),
		when(afm.StateScanReq, vlog.If(cmdFree, cat(command(frab.Find, ptr),
			vlog.Stmts(vlog.NB(finds, vlog.Add(finds, vlog.Lit(fb, 1))), goTo(afm.StateScanWait))), nil)),
		when(afm.StateScanWait, vlog.If(rspValid, vlog.Stmts(
			vlog.If(rspFound, vlog.Stmts(
				vlog.NB(region, rspRegion),
				vlog.NB(issued, vlog.Zero(6)),
				vlog.NB(arrived, vlog.Zero(6)),
				vlog.NB(rsv, vlog.Zero(frab.FrameGroupsPerRegion)),
				goTo(afm.StateRegionFetch),
			), vlog.Stmts(vlog.If(vlog.Gt(finds, vlog.Lit(fb, uint64(g.nw))), vlog.Stmts(
				vlog.NB(hint, vlog.False),
				goTo(afm.StateIdle),
			), vlog.Stmts(
				vlog.NB(ptr, nextWordW),
				goTo(afm.StateScanReq),
			)))),
		), nil)),
		when(afm.StateRegionFetch,
			vlog.If(vlog.LAnd(memFree, vlog.Lt(issued, regionSize)), cat(
				issue(false, fetchAddr, vlog.Zero(64)),
				vlog.Stmts(vlog.NB(issued, vlog.Add(issued, vlog.Lit(6, 1)))),
			), nil),
			vlog.If(memRespValid, vlog.Stmts(
				vlog.NB(vlog.Word(entries, vlog.Slice(arrived, 4, 0)), memRespData),
				vlog.If(respReservable, vlog.Stmts(vlog.NB(vlog.BitAt(rsv, vlog.Slice(arrived, 4, 0)), vlog.True)), nil),
				vlog.NB(arrived, vlog.Add(arrived, vlog.Lit(6, 1))),
				vlog.If(vlog.Eq(vlog.Add(arrived, vlog.Lit(6, 1)), regionSize), vlog.Stmts(goTo(afm.StateRegionRsv)), nil),
			), nil)),
		when(afm.StateRegionRsv,
			vlog.If(vlog.LNot(rsvFound), vlog.Stmts(
				vlog.If(cmdFree, cat(command(frab.Clear, region), vlog.Stmts(vlog.NB(ptr, nextRegion), goTo(afm.StateIdle))), nil),
			), vlog.Stmts(vlog.If(vlog.LNot(space), vlog.Stmts(
				vlog.NB(ptr, region),
				goTo(afm.StateIdle),
			), vlog.Stmts(vlog.If(memFree, cat(
				push(rsvPFgN, false),
				issue(true, rsvAddr, reserved),
				vlog.Stmts(vlog.NB(vlog.BitAt(rsv, rsvIndex), vlog.False)),
			), nil)))))),
		when(afm.StateVDraw, vlog.If(drawOK, vlog.Stmts(
			vlog.NB(cur, vlog.ZeroExtend(draw, fg)),
			goTo(afm.StateVRead),
		), vlog.Stmts(vlog.NB(lfsrEnQ, vlog.True)))),
		when(afm.StateVRead, vlog.If(memFree, cat(issue(false, curAddr, vlog.Zero(64)), vlog.Stmts(goTo(afm.StateVWait))), nil)),
		when(afm.StateVWait, vlog.If(memRespValid, vlog.Stmts(
			vlog.If(respVictim, vlog.Stmts(vlog.NB(curWord, memRespData), goTo(afm.StateVWrite)), vlog.Stmts(goTo(afm.StateIdle))),
		), nil)),
		when(afm.StateVWrite, vlog.If(vlog.LAnd(memFree, space), cat(
			push(cur, true),
			issue(true, curAddr, vlog.Or(curWord, flags(ipgt.B))),
			vlog.Stmts(goTo(afm.StateIdle)),
		), nil)),
	}, nil)

	m.AlwaysFF(clk, vlog.If(rst, resetRegs, vlog.Stmts(
		vlog.If(memFire, vlog.Stmts(vlog.NB(reqValid, vlog.False)), nil),
		vlog.If(pushValidQ, vlog.Stmts(vlog.NB(pushValidQ, vlog.False)), nil),
		vlog.If(cmdFire, vlog.Stmts(vlog.NB(cmdValidQ, vlog.False)), nil),
		vlog.NB(lfsrEnQ, vlog.False),
		vlog.If(vlog.LAnd(mapValid, vlog.LNot(mapFull)), vlog.Stmts(
			vlog.NB(mapFull, vlog.True),
			vlog.NB(mapPFgNQ, mapPFgN),
			vlog.NB(mapVPgNQ, mapVPgN),
			vlog.NB(mapCIDQ, mapCID),
		), nil),
		vlog.If(vlog.LAnd(swValid, vlog.LNot(swFull)), vlog.Stmts(
			vlog.NB(swFull, vlog.True),
			vlog.NB(swOpQ, swOp),
			vlog.NB(swPFgNQ, swPFgN),
		), nil),
		fsm,
	)))
	return m, m.Err()
}

// emitDA builds uvmmu_da (SPEC 5.3): the DCQ, the LFSR, the FrAB and the
// AFM wired as in docs/da.md. The allocation port is the DCQ's pop side and
// init_done is the FrAB's.
func emitDA(v Values) (*vlog.Module, error) {
	c, err := daConfig(v)
	if err != nil {
		return nil, err
	}
	g := newGeometry(c)
	fg, rb, cw := c.FGBits, g.rb, g.cw
	m := vlog.NewModule("uvmmu_da", Generator)
	m.Doc("Destination Allocator of the UVMMU (UVMMU paper Section IV-C, Figure 3; SPEC 5; docs/da.md):",
		"the DCQ's head is the allocation port; the AFM refills it from the FrAB and the IPgT and sequences every IPgT update.")
	pNFG := m.Param("NFG", c.NFG)
	pDepth := m.Param("DCQ_DEPTH", uint64(c.DCQDepth))
	pThr := m.Param("DCQ_THRESHOLD", uint64(c.DCQThreshold))
	pWord := m.Param("FRAB_WORD", uint64(c.FrABWord))
	pFG := m.Param("FG_BITS", uint64(fg))
	pAW := m.Param("ADDR_W", uint64(c.AddrBits))
	pBase := m.TypedParam("IPGT_BASE", vlog.PBits(vlog.PRef(pAW)), c.IPGTBase)
	pLW := m.Param("LFSR_WIDTH", uint64(c.LFSRWidth))
	pSeed := m.TypedParam("LFSR_SEED", vlog.PBits(vlog.PRef(pLW)), c.LFSRSeed)
	m.Specialize(pNFG, pDepth, pThr, pWord, pFG, pAW, pBase, pLW, pSeed)

	fgR := vlog.PBits(vlog.PRef(pFG))
	clk := m.Input("clk", vlog.Bits(1))
	rst := m.Input("rst", vlog.Bits(1))
	initDone := m.Output("init_done", vlog.Bits(1))
	dstValid := m.Output("dst_valid", vlog.Bits(1))
	dstReady := m.Input("dst_ready", vlog.Bits(1))
	dstPFgN := m.Output("dst_pfgn", fgR)
	dstSwap := m.Output("dst_swap", vlog.Bits(1))
	mapValid := m.Input("map_valid", vlog.Bits(1))
	mapReady := m.Output("map_ready", vlog.Bits(1))
	mapPFgN := m.Input("map_pfgn", fgR)
	mapVPgN := m.Input("map_vpgn", vlog.Bits(afm.VPgNBits))
	mapCID := m.Input("map_cid", vlog.Bits(afm.CIDBits))
	swValid := m.Input("sw_valid", vlog.Bits(1))
	swReady := m.Output("sw_ready", vlog.Bits(1))
	swOp := m.Input("sw_op", vlog.Bits(afm.SWOpBits))
	swPFgN := m.Input("sw_pfgn", fgR)
	memReqValid := m.Output("mem_req_valid", vlog.Bits(1))
	memReqReady := m.Input("mem_req_ready", vlog.Bits(1))
	memReqWrite := m.Output("mem_req_write", vlog.Bits(1))
	memReqAddr := m.Output("mem_req_addr", vlog.PBits(vlog.PRef(pAW)))
	memReqWData := m.Output("mem_req_wdata", vlog.Bits(64))
	memRespValid := m.Input("mem_resp_valid", vlog.Bits(1))
	memRespData := m.Input("mem_resp_data", vlog.Bits(64))

	pushValid := m.Wire("push_valid", 1)
	pushReady := m.Wire("push_ready", 1)
	pushPFgN := m.Wire("push_pfgn", fg)
	pushSwap := m.Wire("push_swap", 1)
	count := m.Wire("dcq_count", cw)
	refill := m.Wire("dcq_refill", 1)
	cmdValid := m.Wire("frab_cmd_valid", 1)
	cmdReady := m.Wire("frab_cmd_ready", 1)
	cmdOp := m.Wire("frab_cmd_op", frab.OpBits)
	cmdRegion := m.Wire("frab_cmd_region", rb)
	rspValid := m.Wire("frab_rsp_valid", 1)
	rspFound := m.Wire("frab_rsp_found", 1)
	rspRegion := m.Wire("frab_rsp_region", rb)
	lfsrEn := m.Wire("lfsr_en", 1)
	lfsrState := m.Wire("lfsr_state", c.LFSRWidth)

	sub := func(name string, v Values) (*vlog.Module, error) {
		e, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		return e.Module(v)
	}
	dcqM, err := sub("uvmmu_dcq", Values{"DEPTH": uint64(c.DCQDepth), "THRESHOLD": uint64(c.DCQThreshold), "FG_BITS": uint64(fg)})
	if err != nil {
		return nil, err
	}
	lfsrM, err := sub("uvmmu_lfsr", Values{"WIDTH": uint64(c.LFSRWidth), "SEED": c.LFSRSeed})
	if err != nil {
		return nil, err
	}
	frabM, err := emitFrAB(values(c, "NFG", "FRAB_WORD"))
	if err != nil {
		return nil, err
	}
	afmM, err := emitAFM(values(c, "NFG", "DCQ_DEPTH", "FRAB_WORD", "FG_BITS", "ADDR_W", "IPGT_BASE", "LFSR_WIDTH"))
	if err != nil {
		return nil, err
	}
	p := vlog.Port
	m.Instance(dcqM, "u_dcq", p("clk", clk), p("rst", rst),
		p("push_valid", pushValid), p("push_ready", pushReady), p("push_pfgn", pushPFgN), p("push_swap", pushSwap),
		p("pop_valid", dstValid), p("pop_ready", dstReady), p("pop_pfgn", dstPFgN), p("pop_swap", dstSwap),
		p("count", count), p("refill", refill))
	m.Instance(lfsrM, "u_lfsr", p("clk", clk), p("rst", rst), p("en", lfsrEn), p("state", lfsrState))
	m.Instance(frabM, "u_frab", p("clk", clk), p("rst", rst),
		p("cmd_valid", cmdValid), p("cmd_ready", cmdReady), p("cmd_op", cmdOp), p("cmd_region", cmdRegion),
		p("rsp_valid", rspValid), p("rsp_found", rspFound), p("rsp_region", rspRegion), p("init_done", initDone))
	m.Instance(afmM, "u_afm", p("clk", clk), p("rst", rst),
		p("push_valid", pushValid), p("push_ready", pushReady), p("push_pfgn", pushPFgN), p("push_swap", pushSwap),
		p("count", count), p("refill", refill),
		p("cmd_valid", cmdValid), p("cmd_ready", cmdReady), p("cmd_op", cmdOp), p("cmd_region", cmdRegion),
		p("rsp_valid", rspValid), p("rsp_found", rspFound), p("rsp_region", rspRegion), p("init_done", initDone),
		p("lfsr_en", lfsrEn), p("lfsr_state", lfsrState),
		p("map_valid", mapValid), p("map_ready", mapReady), p("map_pfgn", mapPFgN), p("map_vpgn", mapVPgN), p("map_cid", mapCID),
		p("sw_valid", swValid), p("sw_ready", swReady), p("sw_op", swOp), p("sw_pfgn", swPFgN),
		p("mem_req_valid", memReqValid), p("mem_req_ready", memReqReady), p("mem_req_write", memReqWrite),
		p("mem_req_addr", memReqAddr), p("mem_req_wdata", memReqWData),
		p("mem_resp_valid", memRespValid), p("mem_resp_data", memRespData))
	return m, m.Err()
}
