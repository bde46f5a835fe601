package vlog

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// exampleModule uses every construct of the package once: typed and
// specialized parameters, parameter-expression port ranges, wires, regs, a
// memory, assigns, combinational and clocked always blocks with if/else-if
// and case, concatenation, replication, selects, ternary, reductions and
// comparisons.
func exampleModule() *Module {
	m := NewModule("vlog_example", "verilog/vlog tests")
	m.Doc("A four-entry register file with a running parity, for the writer's golden test.")
	width := m.Param("WIDTH", 8)
	depth := m.Param("DEPTH", 4)
	seed := m.TypedParam("SEED", PBits(PRef(width)), 0xa5)
	m.Specialize(width, depth)
	clk := m.Input("clk", Bits(1))
	rst := m.Input("rst", Bits(1))
	we := m.Input("we", Bits(1))
	addr := m.Input("addr", PBits(PClog2(PRef(depth))))
	wdata := m.Input("wdata", PBits(PRef(width)))
	op := m.Input("op", Bits(2))
	rdata := m.Output("rdata", PBits(PRef(width)))
	flags := m.OutputReg("flags", Bits(3)).Comment("{parity, all ones, top bit}")

	mem := m.Memory("mem_q", 8, 4).Comment("register file")
	acc := m.Reg("acc_q", 8)
	word := m.Wire("word", 8)
	next := m.Reg("acc_d", 8)

	m.Assign(word, Word(mem, addr))
	m.Assign(rdata, Mux(RedOr(acc), acc, Cat(Slice(word, 3, 0), Rep(4, Bit(word, 7)))))
	m.Comment("next accumulator value by operation")
	m.AlwaysComb(
		Case(op, []CaseItem{
			When([]Expr{Lit(2, 0)}, BA(next, Add(acc, word))),
			When([]Expr{Lit(2, 1), Lit(2, 2)}, BA(next, Xor(acc, Hex(8, 0x3c)))),
		}, Stmts(BA(next, Not(acc)))),
		BA(flags, Cat(RedXor(acc), RedAnd(acc), LAnd(Bit(acc, 7), LNot(Eq(acc, Ones(8)))))),
	)
	m.AlwaysFF(clk,
		If(rst, Stmts(NB(acc, PVal(seed))),
			Stmts(If(LAnd(we, Lt(addr, Lit(2, 3))), Stmts(NB(Word(mem, addr), wdata), NB(acc, next)),
				Stmts(If(Ge(acc, wdata), Stmts(NB(acc, Sub(acc, wdata))), nil))))),
	)
	return m
}

func TestWriteGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, exampleModule().Write(&buf))
	golden := filepath.Join("testdata", "vlog_example.v")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	if d := cmp.Diff(string(want), buf.String()); d != "" {
		t.Fatalf("emitted text differs from %s (-want +got):\n%s", golden, d)
	}
}

// TestGoldenLints runs the golden file through Verilator's -Wall lint when
// Verilator is installed; the tb package lints every emitted module.
func TestGoldenLints(t *testing.T) {
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Skip("verilator not installed (Debian package verilator)")
	}
	out, err := exec.Command("verilator", "--lint-only", "-Wall", filepath.Join("testdata", "vlog_example.v")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Empty(t, strings.TrimSpace(string(out)))
}

func TestLiterals(t *testing.T) {
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{Lit(1, 1), "1'b1"},
		{Lit(7, 64), "7'd64"},
		{Hex(32, 0x80200003), "32'h80200003"},
		{Hex(12, 5), "12'h005"},
		{Ones(5), "5'h1f"},
		{Zero(70), "{70{1'b0}}"},
		{Lit(64, ^uint64(0)), "64'd18446744073709551615"},
	} {
		require.NoError(t, tc.e.Err())
		require.Equal(t, tc.want, String(tc.e))
	}
}

func TestParamExpr(t *testing.T) {
	m := NewModule("p", "test")
	depth := m.Param("DEPTH", 64)
	r := PBits(PClog2(PAdd(PRef(depth), PInt(1))))
	require.Equal(t, 7, r.Width())
	require.Equal(t, "[$clog2(DEPTH+1)-1:0]", r.String())
	require.Equal(t, "", Bits(1).String())
	require.Equal(t, "[4:0]", Bits(5).String())
	for n, want := range map[int]int{0: 0, 1: 0, 2: 1, 3: 2, 64: 6, 65: 7, 129: 8} {
		require.Equal(t, want, Clog2(n), "Clog2(%d)", n)
	}
}

// TestBuildErrors checks that every class of building mistake is reported
// with the names involved instead of producing text.
func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(m *Module)
		want  string
	}{
		{"width mismatch in add", func(m *Module) {
			a, b, y := m.Input("a", Bits(4)), m.Input("b", Bits(5)), m.Output("y", Bits(4))
			m.Assign(y, Add(a, b))
		}, `operands of "+" differ in width: a is 4 bits, b is 5 bits`},
		{"assign width", func(m *Module) {
			a, y := m.Input("a", Bits(4)), m.Output("y", Bits(3))
			m.Assign(y, a)
		}, "assign y (3 bits) = a (4 bits): widths differ"},
		{"wide condition", func(m *Module) {
			a, y := m.Input("a", Bits(4)), m.Output("y", Bits(4))
			m.Assign(y, Mux(a, a, a))
		}, "a condition must be 1 bit"},
		{"constant too wide", func(m *Module) {
			y := m.Output("y", Bits(3))
			m.Assign(y, Lit(3, 8))
		}, "constant 8 does not fit in 3 bits"},
		{"select out of range", func(m *Module) {
			a, y := m.Input("a", Bits(4)), m.Output("y", Bits(2))
			m.Assign(y, Slice(a, 4, 3))
		}, "part select a[4:3] outside its range [3:0]"},
		{"two drivers", func(m *Module) {
			clk, y := m.Input("clk", Bits(1)), m.OutputReg("y", Bits(1))
			m.AlwaysFF(clk, NB(y, True))
			m.AlwaysFF(clk, NB(y, False))
		}, "y is driven by both always_ff #1 and always_ff #2"},
		{"blocking in clocked block", func(m *Module) {
			clk, y := m.Input("clk", Bits(1)), m.OutputReg("y", Bits(1))
			m.AlwaysFF(clk, BA(y, True))
		}, "blocking assignment to y in clocked block"},
		{"assign to reg", func(m *Module) {
			y := m.OutputReg("y", Bits(1))
			m.Assign(y, True)
		}, "a continuous assign drives a wire or output, not a reg"},
		{"undriven output", func(m *Module) {
			m.Output("y", Bits(1))
		}, "y is never driven"},
		{"unread bits", func(m *Module) {
			a, y := m.Input("a", Bits(8)), m.Output("y", Bits(2))
			m.Assign(y, Cat(Bit(a, 7), Bit(a, 0)))
		}, "a bits 6:1 is never read"},
		{"index width", func(m *Module) {
			a, i, y := m.Input("a", Bits(8)), m.Input("i", Bits(4)), m.Output("y", Bits(1))
			m.Assign(y, BitAt(a, i))
		}, "index i of a is 4 bits wide; 8 entries need an index of 3 bits"},
		{"case label width", func(m *Module) {
			s, y := m.Input("s", Bits(2)), m.OutputReg("y", Bits(1))
			m.AlwaysComb(Case(s, []CaseItem{When([]Expr{Lit(3, 1)}, BA(y, True))}, Stmts(BA(y, False))))
		}, "case label 3'd1 is 3 bits; selector s is 2 bits"},
		{"latch in combinational block", func(m *Module) {
			s, y := m.Input("s", Bits(1)), m.OutputReg("y", Bits(2))
			m.AlwaysComb(If(s, Stmts(BA(y, Lit(2, 1))), nil))
		}, "y is not assigned as a whole on every path of always_comb #1; it would be a latch"},
		{"partial assign in combinational block", func(m *Module) {
			y := m.OutputReg("y", Bits(2))
			m.AlwaysComb(BA(Bit(y, 0), True), BA(Bit(y, 1), False))
		}, "y is not assigned as a whole on every path"},
		{"case without default assignment", func(m *Module) {
			s, y := m.Input("s", Bits(1)), m.OutputReg("y", Bits(1))
			m.AlwaysComb(Case(s, []CaseItem{When([]Expr{Lit(1, 0)}, BA(y, True))}, nil))
		}, "y is not assigned as a whole on every path"},
		{"memory as value", func(m *Module) {
			mem, y := m.Memory("mem", 2, 4), m.Output("y", Bits(2))
			m.Assign(y, mem)
		}, "memory mem is read through Word"},
		{"duplicate name", func(m *Module) {
			m.Input("a", Bits(1))
			m.Input("a", Bits(1))
		}, `name "a" is empty or declared twice`},
		{"instance port width", func(m *Module) {
			sub := NewModule("leaf", "test")
			sub.Input("d", Bits(4))
			a := m.Input("a", Bits(3))
			m.Instance(sub, "u_leaf", Port("d", a))
		}, "instance u_leaf: port d is 4 bits, connected to a (3 bits)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewModule("bad", "test")
			tc.build(m)
			err := m.Write(&bytes.Buffer{})
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), "module bad")
		})
	}
}

// TestCombDefaultThenOverride is the accepted pattern: a default
// assignment first, then overrides on some paths.
func TestCombDefaultThenOverride(t *testing.T) {
	m := NewModule("comb", "test")
	s, sel := m.Input("s", Bits(1)), m.Input("sel", Bits(2))
	y, z := m.OutputReg("y", Bits(2)), m.OutputReg("z", Bits(1))
	m.AlwaysComb(
		BA(y, Lit(2, 0)),
		If(s, Stmts(BA(y, Lit(2, 1))), nil),
		Case(sel, []CaseItem{When([]Expr{Lit(2, 0)}, BA(z, True))}, Stmts(BA(z, RedOr(sel)))),
	)
	require.NoError(t, m.Write(&bytes.Buffer{}))
}

func TestInstance(t *testing.T) {
	leaf := NewModule("leaf", "test")
	n := leaf.Param("N", 3)
	leaf.Specialize(n)
	d := leaf.Input("d", PBits(PRef(n)))
	q := leaf.Output("q", PBits(PRef(n)))
	leaf.Assign(q, Not(d))

	top := NewModule("top", "test")
	a := top.Input("a", Bits(3))
	y := top.Output("y", Bits(3))
	top.Instance(leaf, "u_leaf", Port("q", y), Port("d", a))
	var buf bytes.Buffer
	require.NoError(t, top.Write(&buf))
	require.Contains(t, buf.String(), "  leaf #(.N(3)) u_leaf (\n    .d(a),\n    .q(y)\n  );\n")
}
