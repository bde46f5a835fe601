package gen

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/verilog/vlog"
)

func init() {
	cfg := dcq.DefaultConfig()
	Register(Emitter{
		Name: "uvmmu_dcq",
		Doc:  "destination candidate queue, first-word fall-through FIFO (SPEC 5.3)",
		Params: []Param{
			{Name: "DEPTH", Default: uint64(cfg.Depth), Min: dcq.MinDepth, Max: dcq.MaxDepth, Doc: "entries"},
			{Name: "THRESHOLD", Default: uint64(cfg.Threshold), Min: 1, Max: dcq.MaxDepth, Doc: "refill while count < THRESHOLD; at most DEPTH"},
			{Name: "FG_BITS", Default: uint64(cfg.FGBits), Min: 1, Max: dcq.MaxFGBits, Doc: "frame-group number width"},
		},
		Emit: emitDCQ,
	})
}

// emitDCQ builds uvmmu_dcq (SPEC 5.3): the destination candidate queue, a
// first-word fall-through FIFO of {PFgN, S} entries. Every output is Moore:
// pop_* show the head entry whenever pop_valid, push_ready is count < DEPTH
// and refill is count < THRESHOLD, all from registers. A push and a pop may
// fire in the same cycle; a push into a full queue waits for push_ready even
// if a pop fires in that cycle, because push_ready does not look at
// pop_ready. Entries are not reset (the queue is an array, like an SRAM);
// only the pointers and the count are.
func emitDCQ(v Values) (*vlog.Module, error) {
	cfg := dcq.Config{Depth: int(v["DEPTH"]), Threshold: int(v["THRESHOLD"]), FGBits: int(v["FG_BITS"])}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("parameters DEPTH = %d, THRESHOLD = %d, FG_BITS = %d: %w", cfg.Depth, cfg.Threshold, cfg.FGBits, err)
	}
	depth, threshold, fgBits := cfg.Depth, cfg.Threshold, cfg.FGBits
	if dcq.SwapBit != 0 || dcq.PFgNLSB != 1 {
		return nil, fmt.Errorf("blocks/dcq stores entries with S at bit %d and PFgN from bit %d; this emitter packs {PFgN, S}", dcq.SwapBit, dcq.PFgNLSB)
	}
	m := vlog.NewModule("uvmmu_dcq", Generator)
	m.Doc("Destination candidate queue of the UVMMU Destination Allocator (UVMMU paper Section IV-C; SPEC 5.1, 5.3).",
		"First-word fall-through FIFO of {PFgN, S} entries; Moore outputs; refill = count < THRESHOLD.")
	pDepth := m.Param("DEPTH", uint64(depth))
	pThreshold := m.Param("THRESHOLD", uint64(threshold))
	pFG := m.Param("FG_BITS", uint64(fgBits))
	m.Specialize(pDepth, pThreshold, pFG)

	countW := dcq.CountWidth(depth)
	ptrW := dcq.PointerWidth(depth)
	entryW := dcq.EntryWidth(fgBits)
	clk := m.Input("clk", vlog.Bits(1))
	rst := m.Input("rst", vlog.Bits(1))
	pushValid := m.Input("push_valid", vlog.Bits(1))
	pushReady := m.Output("push_ready", vlog.Bits(1))
	pushPFgN := m.Input("push_pfgn", vlog.PBits(vlog.PRef(pFG)))
	pushSwap := m.Input("push_swap", vlog.Bits(1))
	popValid := m.Output("pop_valid", vlog.Bits(1))
	popReady := m.Input("pop_ready", vlog.Bits(1))
	popPFgN := m.Output("pop_pfgn", vlog.PBits(vlog.PRef(pFG)))
	popSwap := m.Output("pop_swap", vlog.Bits(1))
	count := m.Output("count", vlog.PBits(vlog.PClog2(vlog.PAdd(vlog.PRef(pDepth), vlog.PInt(1)))))
	refill := m.Output("refill", vlog.Bits(1))

	entries := m.Memory("entries_q", entryW, depth).Comment("entry = {PFgN, S}, layout of blocks/dcq.Entry.Pack")
	head := m.Reg("head_q", ptrW).Comment("index of the oldest entry")
	tail := m.Reg("tail_q", ptrW).Comment("index the next push writes")
	countQ := m.Reg("count_q", countW)
	headEntry := m.Wire("head_entry", entryW)
	notFull := m.Wire("not_full", 1)
	notEmpty := m.Wire("not_empty", 1)
	pushFire := m.Wire("push_fire", 1)
	popFire := m.Wire("pop_fire", 1)

	m.Assign(notFull, vlog.Lt(countQ, vlog.Lit(countW, uint64(depth))))
	m.Assign(notEmpty, vlog.Ne(countQ, vlog.Zero(countW)))
	m.Assign(pushFire, vlog.LAnd(pushValid, notFull))
	m.Assign(popFire, vlog.LAnd(popReady, notEmpty))
	m.Assign(headEntry, vlog.Word(entries, head))

	m.Comment("Moore outputs: functions of the registers only")
	m.Assign(pushReady, notFull)
	m.Assign(popValid, notEmpty)
	m.Assign(popPFgN, vlog.Slice(headEntry, dcq.PFgNLSB+fgBits-1, dcq.PFgNLSB))
	m.Assign(popSwap, vlog.Bit(headEntry, dcq.SwapBit))
	m.Assign(count, countQ)
	m.Assign(refill, vlog.Lt(countQ, vlog.Lit(countW, uint64(threshold))))

	next := func(p *vlog.Signal) vlog.Expr {
		return vlog.Mux(vlog.Eq(p, vlog.Lit(ptrW, uint64(depth-1))), vlog.Zero(ptrW), vlog.Add(p, vlog.Lit(ptrW, 1)))
	}
	m.AlwaysFF(clk,
		vlog.If(rst, vlog.Stmts(
			vlog.NB(head, vlog.Zero(ptrW)),
			vlog.NB(tail, vlog.Zero(ptrW)),
			vlog.NB(countQ, vlog.Zero(countW)),
		), vlog.Stmts(
			vlog.If(pushFire, vlog.Stmts(
				vlog.NB(vlog.Word(entries, tail), vlog.Cat(pushPFgN, pushSwap)),
				vlog.NB(tail, next(tail)),
			), nil),
			vlog.If(popFire, vlog.Stmts(vlog.NB(head, next(head))), nil),
			vlog.If(vlog.LAnd(pushFire, vlog.LNot(popFire)), vlog.Stmts(
				vlog.NB(countQ, vlog.Add(countQ, vlog.Lit(countW, 1))),
			), vlog.Stmts(vlog.If(vlog.LAnd(popFire, vlog.LNot(pushFire)), vlog.Stmts(
				vlog.NB(countQ, vlog.Sub(countQ, vlog.Lit(countW, 1))),
			), nil))),
		)),
	)
	return m, nil
}
