// Package vlog is a small Verilog-2005 syntax tree and writer. Generators
// build a Module out of typed nodes — parameters, ports, wires, registers,
// memories, continuous assigns, always blocks, instances — and Write prints
// it as one file: `default_nettype none at the top, `default_nettype wire at
// the end, two-space indentation, and a header comment naming the generator
// and the parameter values.
//
// Every expression carries its width, known when the expression is built.
// Operators that need equal widths (arithmetic, bitwise, comparison,
// assignment, ternary arms) check them, and conditions must be one bit wide,
// so the printed text never relies on Verilog's implicit extension or
// truncation: Verilator's -Wall WIDTH warnings cannot arise. Constants are
// printed as sized literals (W'dN, W'hN, 1'b0). A mistake while building —
// a width mismatch, a signal driven from two processes, a blocking assignment
// in a clocked block, a combinational reg not assigned on every path (a
// latch), an undriven output, a signal bit nothing reads — is recorded, not
// panicked on, and returned by Module.Err and Write, naming the module and
// the signal.
//
// Widths are concrete: the generator specializes the body of a module to the
// parameter values it was given. A port's range may still be printed in
// terms of parameters (PRef, PClog2 ...), so the module keeps the interface
// SPEC.md fixes; Module.Specialize adds an elaboration-time guard that stops
// simulation with a message when an instantiation overrides a parameter the
// body was specialized for.
//
// A minimal module:
//
//	m := vlog.NewModule("counter", "verilog/cmd/vgen")
//	width := m.Param("WIDTH", 8)
//	m.Specialize(width)
//	clk := m.Input("clk", vlog.Bits(1))
//	rst := m.Input("rst", vlog.Bits(1))
//	en := m.Input("en", vlog.Bits(1))
//	q := m.Output("q", vlog.PBits(vlog.PRef(width)))
//	cnt := m.Reg("count_q", 8)
//	m.Assign(q, cnt)
//	m.AlwaysFF(clk,
//		vlog.If(rst, vlog.Stmts(vlog.NB(cnt, vlog.Lit(8, 0))),
//			vlog.Stmts(vlog.If(en, vlog.Stmts(vlog.NB(cnt, vlog.Add(cnt, vlog.Lit(8, 1)))), nil))))
//	var buf bytes.Buffer
//	err := m.Write(&buf)
package vlog
