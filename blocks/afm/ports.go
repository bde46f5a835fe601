package afm

import (
	"fmt"
	"slices"

	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

// SWOp is a software operation on the sw_* port of uvmmu_da (SPEC 5.3).
type SWOp uint8

// Software operation codes, in the encoding of sw_op.
const (
	OpFree      SWOp = 0 // cudaFree of managed memory: F=1, FrAB bit set
	OpProtect   SWOp = 1 // cudaMalloc after taking a destination: P=1
	OpUnprotect SWOp = 2 // cudaFree of a cudaMalloc'd frame: F=1, FrAB bit set
)

// SWOpBits is the width of sw_op.
const SWOpBits = 2

// CIDBits and VPgNBits are the widths of map_cid and map_vpgn (SPEC 5.3).
const (
	CIDBits  = 12
	VPgNBits = 48
)

// Module is uvmmu_da_afm's ports and registers, the one description that
// the Go AFM, verilog/gen (uvmmu_da_afm, and uvmmu_da, which passes the
// shared ports through) and the testbenches share. The ports are the DCQ's
// push side and count, the FrAB command port, the LFSR, then the DA's map,
// software, IPgT memory and victim ports (SharedPorts). The localparams
// are the FrAB geometry (frab.Geometry) and the FIND counter's width.
var Module = &rtl.Module{
	Name:   "uvmmu_da_afm",
	Locals: append(slices.Clone(frab.Geometry), rtl.Local{Name: "FB", Expr: "$clog2(NW + 2)", Doc: "FINDs counter bits: a sweep issues up to NW+1 FINDs"}),
	Ports: append([]rtl.PortDecl{
		{Name: "clk", Dir: rtl.In}, {Name: "rst", Dir: rtl.In},
		{Name: "push_valid", Dir: rtl.Out}, {Name: "push_ready", Dir: rtl.In}, {Name: "push_pfgn", Dir: rtl.Out, Width: "FG_BITS"}, {Name: "push_swap", Dir: rtl.Out},
		{Name: "count", Dir: rtl.In, Width: "$clog2(DCQ_DEPTH+1)"}, {Name: "refill", Dir: rtl.In},
		{Name: "cmd_valid", Dir: rtl.Out}, {Name: "cmd_ready", Dir: rtl.In}, {Name: "cmd_op", Dir: rtl.Out, Width: fmt.Sprint(frab.OpBits)}, {Name: "cmd_region", Dir: rtl.Out, Width: frab.RegionBitsExpr},
		{Name: "rsp_valid", Dir: rtl.In}, {Name: "rsp_found", Dir: rtl.In}, {Name: "rsp_region", Dir: rtl.In, Width: frab.RegionBitsExpr}, {Name: "init_done", Dir: rtl.In},
		{Name: "lfsr_en", Dir: rtl.Out}, {Name: "lfsr_state", Dir: rtl.In, Width: "LFSR_WIDTH"},
	}, SharedPorts...),
	Regs: []rtl.RegDecl{
		{Name: "state_q", Width: fmt.Sprint(StateBits), Reset: fmt.Sprint(StateInit)},
		{Name: "last_q", Width: "2", Reset: fmt.Sprint(ReqRefill), Doc: "requester served last: 0 map, 1 sw, 2 refill"},
		{Name: "map_full_q", Reset: "0"},
		{Name: "map_pfgn_q", Width: "FG_BITS", Reset: "0"},
		{Name: "map_vpgn_q", Width: fmt.Sprint(VPgNBits), Reset: "0"},
		{Name: "map_cid_q", Width: fmt.Sprint(CIDBits), Reset: "0"},
		{Name: "sw_full_q", Reset: "0"},
		{Name: "sw_op_q", Width: fmt.Sprint(SWOpBits), Reset: "0"},
		{Name: "sw_pfgn_q", Width: "FG_BITS", Reset: "0"},
		{Name: "req_valid_q", Reset: "0"},
		{Name: "req_write_q", Reset: "0"},
		{Name: "req_addr_q", Width: "ADDR_W", Reset: "0"},
		{Name: "req_wdata_q", Width: "64", Reset: "0"},
		{Name: "push_valid_q", Reset: "0"},
		{Name: "push_pfgn_q", Width: "FG_BITS", Reset: "0"},
		{Name: "push_swap_q", Reset: "0"},
		{Name: "cmd_valid_q", Reset: "0"},
		{Name: "cmd_op_q", Width: fmt.Sprint(frab.OpBits), Reset: "0"},
		{Name: "cmd_region_q", Width: "RB", Reset: "0"},
		{Name: "lfsr_en_q", Reset: "0"},
		{Name: "hint_q", Reset: "1", Doc: "the FrAB may hold a set bit"},
		{Name: "ptr_q", Width: "RB", Reset: "0", Doc: "rotating FrAB scan pointer"},
		{Name: "finds_q", Width: "FB", Reset: "0", Doc: "FINDs in the current sweep"},
		{Name: "region_q", Width: "RB", Reset: "0"},
		{Name: "issued_q", Width: "6", Reset: "0"},
		{Name: "arrived_q", Width: "6", Reset: "0"},
		{Name: "rsv_q", Width: fmt.Sprint(frab.FrameGroupsPerRegion), Reset: "0", Doc: "reservable entries of the region not yet reserved"},
		{Name: "entry_q", Width: "64", Depth: fmt.Sprint(frab.FrameGroupsPerRegion), Doc: "the region's IPgT entries"},
		{Name: "cur_q", Width: "FG_BITS", Reset: "0", Doc: "frame-group of the op or victim in flight"},
		{Name: "cur_word_q", Width: "64", Reset: "0"},
	},
}

// SharedPorts are the map, software, IPgT memory and victim ports of
// uvmmu_da_afm, which uvmmu_da has too and passes through unchanged. The
// victim port takes candidates with VICTIMS=1 (VictimExternal, fed by an
// eviction-metadata block such as blocks/evict); with VICTIMS=0
// victim_ready stays low and the inputs are ignored.
var SharedPorts = []rtl.PortDecl{
	{Name: "map_valid", Dir: rtl.In}, {Name: "map_ready", Dir: rtl.Out}, {Name: "map_pfgn", Dir: rtl.In, Width: "FG_BITS"},
	{Name: "map_vpgn", Dir: rtl.In, Width: fmt.Sprint(VPgNBits)}, {Name: "map_cid", Dir: rtl.In, Width: fmt.Sprint(CIDBits)},
	{Name: "sw_valid", Dir: rtl.In}, {Name: "sw_ready", Dir: rtl.Out}, {Name: "sw_op", Dir: rtl.In, Width: fmt.Sprint(SWOpBits)}, {Name: "sw_pfgn", Dir: rtl.In, Width: "FG_BITS"},
	{Name: "mem_req_valid", Dir: rtl.Out}, {Name: "mem_req_ready", Dir: rtl.In}, {Name: "mem_req_write", Dir: rtl.Out},
	{Name: "mem_req_addr", Dir: rtl.Out, Width: "ADDR_W"}, {Name: "mem_req_wdata", Dir: rtl.Out, Width: "64"},
	{Name: "mem_resp_valid", Dir: rtl.In}, {Name: "mem_resp_data", Dir: rtl.In, Width: "64"},
	{Name: "victim_valid", Dir: rtl.In}, {Name: "victim_ready", Dir: rtl.Out}, {Name: "victim_pfgn", Dir: rtl.In, Width: "FG_BITS"},
}

// Params are uvmmu_da_afm's parameter values for the configuration.
func (c Config) Params() rtl.Params {
	return rtl.Params{"NFG": c.NFG, "DCQ_DEPTH": uint64(c.DCQ.Depth), "FRAB_WORD": uint64(c.WordBits), "FG_BITS": uint64(c.DCQ.FGBits),
		"ADDR_W": uint64(c.AddrBits), "IPGT_BASE": c.IPGTBase, "LFSR_WIDTH": uint64(c.LFSRWidth), "VICTIMS": uint64(c.Victims)}
}

// MapPorts are the map_* wires of uvmmu_da: the UVMMU writes the mapping of
// a frame-group when a migration into it completes.
type MapPorts struct {
	Valid *rtl.Wire[bool]   // in
	Ready *rtl.Wire[bool]   // out
	PFgN  *rtl.Wire[uint64] // in
	VPgN  *rtl.Wire[uint64] // in
	CID   *rtl.Wire[uint16] // in
}

// NewMapPorts makes the wires under path (path.map_valid, ...).
func NewMapPorts(s *rtl.Sim, path string, cfg Config) MapPorts {
	e := Module.At(cfg.Params())
	return MapPorts{
		Valid: rtl.PortBit(s, path, e, "map_valid"),
		Ready: rtl.PortBit(s, path, e, "map_ready"),
		PFgN:  rtl.PortWire[uint64](s, path, e, "map_pfgn"),
		VPgN:  rtl.PortWire[uint64](s, path, e, "map_vpgn"),
		CID:   rtl.PortWire[uint16](s, path, e, "map_cid"),
	}
}

// Fire reports a map transfer in this cycle.
func (p MapPorts) Fire() bool { return p.Valid.Get() && p.Ready.Get() }

// SWPorts are the sw_* wires of uvmmu_da: the driver's MMIO path.
type SWPorts struct {
	Valid *rtl.Wire[bool]   // in
	Ready *rtl.Wire[bool]   // out
	Op    *rtl.Wire[uint8]  // in: SWOp
	PFgN  *rtl.Wire[uint64] // in
}

// NewSWPorts makes the wires under path (path.sw_valid, ...).
func NewSWPorts(s *rtl.Sim, path string, cfg Config) SWPorts {
	e := Module.At(cfg.Params())
	return SWPorts{
		Valid: rtl.PortBit(s, path, e, "sw_valid"),
		Ready: rtl.PortBit(s, path, e, "sw_ready"),
		Op:    rtl.PortWire[uint8](s, path, e, "sw_op"),
		PFgN:  rtl.PortWire[uint64](s, path, e, "sw_pfgn"),
	}
}

// Fire reports a software-op transfer in this cycle.
func (p SWPorts) Fire() bool { return p.Valid.Get() && p.Ready.Get() }

// NewMemPorts makes the IPgT memory port's wires under path
// (path.mem_req_valid, ...).
func NewMemPorts(s *rtl.Sim, path string, cfg Config) ipgt.MemPorts {
	e := Module.At(cfg.Params())
	return ipgt.MemPorts{
		ReqValid:  rtl.PortBit(s, path, e, "mem_req_valid"),
		ReqReady:  rtl.PortBit(s, path, e, "mem_req_ready"),
		ReqWrite:  rtl.PortBit(s, path, e, "mem_req_write"),
		ReqAddr:   rtl.PortWire[uint64](s, path, e, "mem_req_addr"),
		ReqWData:  rtl.PortWire[uint64](s, path, e, "mem_req_wdata"),
		RespValid: rtl.PortBit(s, path, e, "mem_resp_valid"),
		RespData:  rtl.PortWire[uint64](s, path, e, "mem_resp_data"),
	}
}

// NewVictimPort makes the victim candidate port's wires under path
// (path.victim_valid, path.victim_ready, path.victim_pfgn).
func NewVictimPort(s *rtl.Sim, path string, cfg Config) *rtl.Decoupled[uint64] {
	e := Module.At(cfg.Params())
	return &rtl.Decoupled[uint64]{
		Valid: rtl.PortBit(s, path, e, "victim_valid"),
		Ready: rtl.PortBit(s, path, e, "victim_ready"),
		Bits:  rtl.PortWire[uint64](s, path, e, "victim_pfgn"),
	}
}
