package gen

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/rtl"
)

// Dir is a port's direction.
type Dir int

// Port directions.
const (
	In Dir = iota
	Out
)

// Port is one port of an emitted module: its name, direction and width as
// a Verilog constant expression over the module's parameters ("" is one
// bit, "FG_BITS", "$clog2(DEPTH+1)").
type Port struct {
	Name  string
	Dir   Dir
	Width string
	// Bits is the width for parameter values, computed the way the Go
	// block computes it; nil for a port of one bit or of a constant width.
	Bits func(Values) int
}

// BitsAt is the port's width for complete values v.
func (p Port) BitsAt(v Values) int {
	if p.Bits != nil {
		return p.Bits(v)
	}
	if p.Width == "" {
		return 1
	}
	n, err := rtl.Eval(p.Width, rtl.Params(v))
	if err != nil {
		panic(fmt.Sprintf("port %s: %v", p.Name, err))
	}
	return int(n)
}

// modulePorts is the port list of a block's description.
func modulePorts(m *rtl.Module) []Port {
	ports := make([]Port, len(m.Ports))
	for i, p := range m.Ports {
		ports[i] = Port{Name: p.Name, Dir: Dir(p.Dir), Width: p.Width}
	}
	return ports
}

// declarations prints a description's localparams and register
// declarations, each after its comment.
func declarations(m *rtl.Module) string {
	var b strings.Builder
	comment := func(doc string) {
		for _, d := range strings.Split(doc, "\n") {
			if d != "" {
				fmt.Fprintf(&b, "  // %s\n", d)
			}
		}
	}
	for _, l := range m.Locals {
		comment(l.Doc)
		fmt.Fprintf(&b, "  localparam integer %s = %s;\n", l.Name, l.Expr)
	}
	if len(m.Locals) > 0 {
		b.WriteByte('\n')
	}
	for _, r := range m.Regs {
		comment(r.Doc)
		depth := ""
		if r.Depth != "" {
			depth = " [0:" + minusOne(r.Depth) + "]"
		}
		fmt.Fprintf(&b, "  reg %s%s%s;\n", vlogRange(r.Width), r.Name, depth)
	}
	if len(m.Regs) > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}

// resets prints the reset assignments of a description's registers (its
// arrays are not reset), one a line at the given indentation.
func resets(m *rtl.Module, indent string) string {
	var b strings.Builder
	for _, r := range m.Regs {
		if r.Depth != "" || r.Reset == "" {
			continue
		}
		fmt.Fprintf(&b, "%s%s <= %s;\n", indent, r.Name, resetValue(r))
	}
	return b.String()
}

// resetValue is a register's reset value as a literal of its width: a
// sized literal for a number, the expression itself (a parameter of the
// register's width, such as a typed SEED) otherwise.
func resetValue(r rtl.RegDecl) string {
	x, err := strconv.ParseUint(r.Reset, 10, 64)
	switch {
	case err != nil:
		return r.Reset
	case r.Width == "":
		return fmt.Sprintf("1'b%d", x)
	}
	if n, err := strconv.Atoi(r.Width); err == nil {
		return fmt.Sprintf("%d'd%d", n, x)
	}
	if x == 0 {
		return fmt.Sprintf("{%s{1'b0}}", r.Width)
	}
	return fmt.Sprintf("%s'(%d)", r.Width, x)
}

// vlogRange is the "[W-1:0] " range of a width expression; "" for one bit.
func vlogRange(width string) string {
	if n, err := strconv.Atoi(width); err == nil {
		if n > 1 {
			return fmt.Sprintf("[%d:0] ", n-1)
		}
		return ""
	}
	if width == "" {
		return ""
	}
	return "[" + minusOne(width) + ":0] "
}

// minusOne is expr-1, folding a trailing "+ 1".
func minusOne(expr string) string {
	if n, err := strconv.Atoi(expr); err == nil {
		return fmt.Sprint(n - 1)
	}
	if e, ok := strings.CutSuffix(expr, " + 1"); ok {
		return e
	}
	return expr + "-1"
}

// Check is a relation between parameters that the module rejects at
// elaboration: Cond is a Verilog condition that holds for illegal values,
// Msg the message, a $fatal format whose arguments are Args.
type Check struct {
	Label string // generate block name: g_check_<Label>
	Cond  string
	Msg   string
	Args  []string
}

// rangeChecks are the checks of each parameter's own range.
func (e Emitter) rangeChecks() []Check {
	var cs []Check
	for _, p := range e.Params {
		var conds []string
		if p.Min > 0 {
			conds = append(conds, fmt.Sprintf("%s < %s", p.Name, vlogInt(p.Min)))
		}
		switch {
		case p.Max == math.MaxUint64 || p.TypeWidth != "":
		case p.Max <= math.MaxInt32:
			conds = append(conds, fmt.Sprintf("%s > %d", p.Name, p.Max))
		default:
			conds = append(conds, fmt.Sprintf("64'(%s) > 64'd%d", p.Name, p.Max))
		}
		if len(conds) == 0 {
			continue
		}
		cs = append(cs, Check{
			Label: strings.ToLower(p.Name),
			Cond:  strings.Join(conds, " || "),
			Msg:   fmt.Sprintf("%s: %s = %%0d is outside %s", e.Name, p.Name, p.RangeText()),
			Args:  []string{p.Name},
		})
	}
	return cs
}

// vlogInt prints n as an unsized decimal when it fits a 32-bit signed
// integer, else as a 64-bit literal.
func vlogInt(n uint64) string {
	if n <= math.MaxInt32 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("64'd%d", n)
}

// render prints the module: header comment, parameter list with values as
// the defaults, port list, elaboration checks, then the body.
func (e Emitter) render(v Values, doc []string) ([]byte, error) {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	line("// %s: generated by %s; do not edit.", e.Name, Generator)
	line("// Parameters (defaults): %s.", e.summary(v))
	for _, d := range doc {
		line("%s", strings.TrimRight("// "+d, " "))
	}
	line("")
	line("`default_nettype none")
	line("")
	line("module %s #(", e.Name)
	for i, p := range e.Params {
		sep := ","
		if i == len(e.Params)-1 {
			sep = ""
		}
		if p.TypeWidth == "" {
			line("  parameter %s = %d%s", p.Name, v[p.Name], sep)
			continue
		}
		if _, ok := v[p.TypeWidth]; !ok {
			return nil, fmt.Errorf("%s: parameter %s is typed by %s, which is not a parameter", e.Name, p.Name, p.TypeWidth)
		}
		// The default is cast to the width, so that overriding the width
		// alone keeps it legal.
		line("  parameter [%s-1:0] %s = %s'(%s)%s", p.TypeWidth, p.Name, p.TypeWidth, vlogInt(v[p.Name]), sep)
	}
	line(") (")
	for i, p := range e.Ports {
		sep := ","
		if i == len(e.Ports)-1 {
			sep = ""
		}
		dir := "input "
		if p.Dir == Out {
			dir = "output"
		}
		line("  %s wire %s%s%s", dir, vlogRange(p.Width), p.Name, sep)
	}
	line(");")
	checks := append(e.rangeChecks(), e.Checks...)
	if len(checks) > 0 {
		line("  // Parameter ranges and relations (the Go blocks' Config.Validate): an")
		line("  // illegal value stops elaboration (Icarus: at time 0) naming the parameter.")
		line("  generate")
		for _, c := range checks {
			args := ""
			for _, a := range c.Args {
				args += ", " + a
			}
			line("    if (%s) begin : g_check_%s", c.Cond, c.Label)
			line("`ifdef __ICARUS__")
			line("      initial $fatal(1, %q%s);", c.Msg, args)
			line("`else")
			line("      $fatal(1, %q%s);", c.Msg, args)
			line("`endif")
			line("    end")
		}
		line("  endgenerate")
		line("")
	}
	if e.Module != nil {
		b.WriteString(declarations(e.Module))
	}
	b.WriteString(strings.TrimLeft(e.Body, "\n"))
	line("endmodule")
	line("")
	line("`default_nettype wire")
	return []byte(b.String()), nil
}

// summary is the "NAME=value ..." list of the header.
func (e Emitter) summary(v Values) string {
	parts := make([]string, len(e.Params))
	for i, p := range e.Params {
		parts[i] = fmt.Sprintf("%s=%d", p.Name, v[p.Name])
	}
	return strings.Join(parts, " ")
}

// Summary is the "NAME=value ..." list of values for e's parameters.
func (e Emitter) Summary(v Values) string { return e.summary(v) }

// Wrapper is a design's instantiation of the module with the given
// parameter values: a module user_<Name> whose ports have the widths that
// follow from the values and which instantiates the module with the values
// as literal overrides. A linter given the wrapper and the committed RTL
// checks the module at those values as a user's design would use it.
func (e Emitter) Wrapper(values Values) ([]byte, error) {
	v, err := e.Check(values)
	if err != nil {
		return nil, err
	}
	name := "user_" + e.Name
	var b strings.Builder
	fmt.Fprintf(&b, "// %s: an instantiation of %s at %s.\n\n`default_nettype none\n\nmodule %s (\n", name, e.Name, e.summary(v), name)
	for i, p := range e.Ports {
		dir := "input "
		if p.Dir == Out {
			dir = "output"
		}
		rng := ""
		if n := p.BitsAt(v); n > 1 {
			rng = fmt.Sprintf("[%d:0] ", n-1)
		}
		sep := ","
		if i == len(e.Ports)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s wire %s%s%s\n", dir, rng, p.Name, sep)
	}
	fmt.Fprintf(&b, ");\n  %s %s u_dut (\n", e.Name, e.Overrides(v))
	for i, p := range e.Ports {
		sep := ","
		if i == len(e.Ports)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    .%s(%s)%s\n", p.Name, p.Name, sep)
	}
	b.WriteString("  );\nendmodule\n\n`default_nettype wire\n")
	return []byte(b.String()), nil
}
