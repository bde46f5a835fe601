package rtl

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Eval evaluates a Verilog constant expression of the subset that port and
// register widths use: unsigned decimal numbers, names looked up in v,
// $clog2(x), parentheses, ?:, ||, &&, == != < <= > >=, << >>, + -, * / %,
// with Verilog's precedence. Values are 64-bit unsigned; a division by zero
// or an unknown name is an error.
func Eval(expr string, v Params) (uint64, error) {
	p := exprParser{s: expr, v: v}
	x := p.ternary()
	p.space()
	if p.err == nil && p.i < len(p.s) {
		p.fail("unexpected %q", p.s[p.i:])
	}
	if p.err != nil {
		return 0, fmt.Errorf("expression %q: %w", expr, p.err)
	}
	return x, nil
}

type exprParser struct {
	s   string
	i   int
	v   Params
	err error
}

func (p *exprParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

func (p *exprParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// eat consumes op when it comes next (and is not the start of a longer
// operator that also begins with it).
func (p *exprParser) eat(op string) bool {
	p.space()
	if !strings.HasPrefix(p.s[p.i:], op) {
		return false
	}
	if rest := p.s[p.i+len(op):]; len(op) == 1 && rest != "" {
		switch two := op + rest[:1]; two {
		case "<<", ">>", "<=", ">=", "||", "&&", "==", "!=":
			return false
		}
	}
	p.i += len(op)
	return true
}

func (p *exprParser) ternary() uint64 {
	c := p.binary(0)
	if !p.eat("?") {
		return c
	}
	a := p.ternary()
	if !p.eat(":") {
		p.fail("?: without :")
	}
	b := p.ternary()
	if c != 0 {
		return a
	}
	return b
}

// levels are the binary operators from the loosest to the tightest.
var levels = [][]string{{"||"}, {"&&"}, {"==", "!="}, {"<=", ">=", "<", ">"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}}

func (p *exprParser) binary(level int) uint64 {
	if level == len(levels) {
		return p.primary()
	}
	x := p.binary(level + 1)
	for {
		op := ""
		for _, o := range levels[level] {
			if p.eat(o) {
				op = o
				break
			}
		}
		if op == "" || p.err != nil {
			return x
		}
		y := p.binary(level + 1)
		x = apply(p, op, x, y)
	}
}

func b2x(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func apply(p *exprParser, op string, x, y uint64) uint64 {
	switch op {
	case "||":
		return b2x(x != 0 || y != 0)
	case "&&":
		return b2x(x != 0 && y != 0)
	case "==":
		return b2x(x == y)
	case "!=":
		return b2x(x != y)
	case "<":
		return b2x(x < y)
	case "<=":
		return b2x(x <= y)
	case ">":
		return b2x(x > y)
	case ">=":
		return b2x(x >= y)
	case "<<":
		return x << y
	case ">>":
		return x >> y
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	}
	if y == 0 {
		p.fail("division by zero")
		return 0
	}
	if op == "/" {
		return x / y
	}
	return x % y
}

func (p *exprParser) primary() uint64 {
	p.space()
	switch {
	case p.err != nil:
		return 0
	case p.eat("("):
		x := p.ternary()
		if !p.eat(")") {
			p.fail("missing )")
		}
		return x
	case p.eat("$clog2"):
		if !p.eat("(") {
			p.fail("$clog2 without (")
		}
		x := p.ternary()
		if !p.eat(")") {
			p.fail("missing )")
		}
		if x == 0 {
			return 0
		}
		return uint64(bits.Len64(x - 1))
	}
	j := p.i
	for j < len(p.s) && (p.s[j] == '_' || p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] >= 'A' && p.s[j] <= 'Z' || p.s[j] >= 'a' && p.s[j] <= 'z') {
		j++
	}
	tok := p.s[p.i:j]
	p.i = j
	switch {
	case tok == "":
		p.fail("operand expected at %q", p.s[j:])
		return 0
	case tok[0] >= '0' && tok[0] <= '9':
		x, err := strconv.ParseUint(tok, 10, 64)
		if err != nil {
			p.fail("number %q", tok)
		}
		return x
	}
	x, ok := p.v[tok]
	if !ok {
		p.fail("unknown name %s", tok)
	}
	return x
}
