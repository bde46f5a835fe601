package pacache

import "fmt"

// The one description of grit_pa_cache's ports and registers (SPEC 8.3).
// The Go block makes its wires (NewPorts) and registers (New) from it,
// under the same names; verilog/gen prints the module's port list, its
// register declarations and their reset assignments from it; the
// co-simulation adapter (tb) lists and indexes the ports by it. So the Go
// model's VCD and the simulator's VCD of the same stimulus name every port
// and register alike.

// PortDecl is one port of grit_pa_cache besides clk and rst: its name (the
// Verilog port's, and the Go wire's under the block's path), direction,
// width as a Verilog constant expression over SETS, WAYS, VPN_BITS,
// THRESHOLD ("" is one bit) and the same width for a Config.
type PortDecl struct {
	Name  string
	Out   bool
	Width string
	Bits  func(Config) int
}

// RegDecl is one register of grit_pa_cache's top scope: its name (the
// Verilog reg's and the Go register's), width as a Verilog constant
// expression over the parameters and the body's localparams ("" one bit),
// the width for a Config, the Verilog value reset loads, and what it holds.
type RegDecl struct {
	Name  string
	Width string
	Bits  func(Config) int
	Reset string
	Doc   string
}

// Verilog widths of SPEC 8.3 that follow THRESHOLD, as Config.CountBits and
// Config.RespBits compute them.
const (
	CountWidthExpr = "(THRESHOLD > 1 ? $clog2(THRESHOLD) : 1)"
	RespWidthExpr  = "$clog2(THRESHOLD + 1)"
)

func vpnBits(c Config) int   { return c.VPNBits }
func countBits(c Config) int { return c.CountBits() }
func respBits(c Config) int  { return c.RespBits() }
func opBits(Config) int      { return TableOpBits }
func one(Config) int         { return 1 }

// Port names, in declaration order.
const (
	PortReqValid     = "req_valid"
	PortReqReady     = "req_ready"
	PortReqVPN       = "req_vpn"
	PortReqWrite     = "req_write"
	PortRespValid    = "resp_valid"
	PortRespTrigger  = "resp_trigger"
	PortRespWrite    = "resp_write"
	PortRespCount    = "resp_count"
	PortTblReqValid  = "tbl_req_valid"
	PortTblReqReady  = "tbl_req_ready"
	PortTblReqOp     = "tbl_req_op"
	PortTblReqVPN    = "tbl_req_vpn"
	PortTblReqRW     = "tbl_req_rw"
	PortTblReqCount  = "tbl_req_count"
	PortTblRespValid = "tbl_resp_valid"
	PortTblRespFound = "tbl_resp_found"
	PortTblRespRW    = "tbl_resp_rw"
	PortTblRespCount = "tbl_resp_count"
)

// PortList is grit_pa_cache's ports after clk and rst, in SPEC 8.3's order.
var PortList = []PortDecl{
	{PortReqValid, false, "", one},
	{PortReqReady, true, "", one},
	{PortReqVPN, false, "VPN_BITS", vpnBits},
	{PortReqWrite, false, "", one},
	{PortRespValid, true, "", one},
	{PortRespTrigger, true, "", one},
	{PortRespWrite, true, "", one},
	{PortRespCount, true, RespWidthExpr, respBits},
	{PortTblReqValid, true, "", one},
	{PortTblReqReady, false, "", one},
	{PortTblReqOp, true, fmt.Sprint(TableOpBits), opBits},
	{PortTblReqVPN, true, "VPN_BITS", vpnBits},
	{PortTblReqRW, true, "", one},
	{PortTblReqCount, true, CountWidthExpr, countBits},
	{PortTblRespValid, false, "", one},
	{PortTblRespFound, false, "", one},
	{PortTblRespRW, false, "", one},
	{PortTblRespCount, false, CountWidthExpr, countBits},
}

// Port is the declaration of the named port.
func Port(name string) PortDecl {
	for _, p := range PortList {
		if p.Name == name {
			return p
		}
	}
	panic("pacache: no port " + name)
}

// Register names.
const (
	RegState        = "state_q"
	RegMissVPN      = "miss_vpn_q"
	RegMissWrite    = "miss_write_q"
	RegVictimWay    = "victim_way_q"
	RegVictimLine   = "victim_line_q"
	RegTblOp        = "tbl_op_q"
	RegTblVPN       = "tbl_vpn_q"
	RegTblRW        = "tbl_rw_q"
	RegTblCount     = "tbl_count_q"
	RegRespValid    = "resp_valid_q"
	RegRespTrigger  = "resp_trigger_q"
	RegRespWrite    = "resp_write_q"
	RegRespCount    = "resp_count_q"
	RegAges         = "ages_q"
	RegLines        = "line_q"
	RegLineValidity = "valid_q"
)

// RegList is the controller's registers, declared and reset in this order.
// Besides them the module keeps the tag store, per way w a register array
// g_way[w].line_q[SETS] (a line without its valid bit) and a vector
// g_way[w].valid_q[SETS] (the Go model: line_q[set*WAYS+w], whole lines),
// and the LRU ages of every set in ages_q (the Go model: ages_q[set]); the
// VCD comparison leaves those out, as Icarus dumps no array and ages_q is
// wider than a Go register.
var RegList = []RegDecl{
	{RegState, "2", func(Config) int { return StateBits }, "2'd0", "controller state: 0 idle, 1 PA-Table request, 2 PA-Table wait"},
	{RegMissVPN, "VPN_BITS", vpnBits, "{VPN_BITS{1'b0}}", "the miss being served"},
	{RegMissWrite, "", one, "1'b0", ""},
	{RegVictimWay, "AB", func(c Config) int { return c.AgeBits() }, "{AB{1'b0}}", "the way the miss fills, and its line when the miss was detected"},
	{RegVictimLine, "LINE_W", func(c Config) int { return c.LineBits() }, "{LINE_W{1'b0}}", ""},
	{RegTblOp, "2", opBits, "2'd0", "the PA-Table operation offered in the request state"},
	{RegTblVPN, "VPN_BITS", vpnBits, "{VPN_BITS{1'b0}}", ""},
	{RegTblRW, "", one, "1'b0", ""},
	{RegTblCount, "CNT_W", countBits, "{CNT_W{1'b0}}", ""},
	{RegRespValid, "", one, "1'b0", "the response"},
	{RegRespTrigger, "", one, "1'b0", ""},
	{RegRespWrite, "", one, "1'b0", ""},
	{RegRespCount, "RESP_W", respBits, "{RESP_W{1'b0}}", ""},
}

// Reg is the declaration of the named register.
func Reg(name string) RegDecl {
	for _, r := range RegList {
		if r.Name == name {
			return r
		}
	}
	panic("pacache: no register " + name)
}
