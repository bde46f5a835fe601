package vlog

import (
	"fmt"
	"math/bits"
	"strconv"
)

// Param is a module parameter. An untyped parameter prints as
// `parameter NAME = value`; a typed one (see Module.TypedParam) as
// `parameter [range] NAME = W'dvalue`.
type Param struct {
	name  string
	value uint64
	typed bool
	rng   Range
	// specialized parameters are fixed by the generator; overriding them at
	// instantiation trips the guard Module.Specialize emits.
	specialized bool
}

func (p *Param) valueText() string {
	if p.typed {
		return literal(p.rng.Width(), p.value, false)
	}
	return strconv.FormatUint(p.value, 10)
}

// ParamExpr is an integer expression over parameters, used for port and
// declaration ranges and for parameter values. It evaluates to the value the
// module was generated with and prints in terms of the parameter names.
type ParamExpr interface {
	Eval() int
	String() string
}

type pRef struct{ p *Param }

func (e pRef) Eval() int      { return int(e.p.value) }
func (e pRef) String() string { return e.p.name }

type pInt int

func (e pInt) Eval() int      { return int(e) }
func (e pInt) String() string { return strconv.Itoa(int(e)) }

type pBin struct {
	op   byte
	a, b ParamExpr
}

func (e pBin) Eval() int {
	if e.op == '+' {
		return e.a.Eval() + e.b.Eval()
	}
	return e.a.Eval() - e.b.Eval()
}

func (e pBin) String() string { return e.a.String() + string(e.op) + e.b.String() }

type pClog2 struct{ a ParamExpr }

func (e pClog2) Eval() int      { return Clog2(e.a.Eval()) }
func (e pClog2) String() string { return "$clog2(" + e.a.String() + ")" }

// PRef refers to a parameter by name.
func PRef(p *Param) ParamExpr { return pRef{p} }

// PInt is an integer constant in a parameter expression.
func PInt(n int) ParamExpr { return pInt(n) }

// PAdd is a+b.
func PAdd(a, b ParamExpr) ParamExpr { return pBin{'+', a, b} }

// PSub is a-b.
func PSub(a, b ParamExpr) ParamExpr { return pBin{'-', a, b} }

// PClog2 is $clog2(a): the number of bits needed to index a items.
func PClog2(a ParamExpr) ParamExpr { return pClog2{a} }

// Clog2 is Verilog's $clog2 for a non-negative n: the smallest k with
// 2^k >= n (0 for n <= 1).
func Clog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// Range is the width of a declaration: a concrete number of bits, or a
// parameter expression that prints as [expr-1:0].
type Range struct {
	bits int
	expr ParamExpr
}

// Bits is a concrete range of n bits, printed as [n-1:0] (nothing for 1).
func Bits(n int) Range { return Range{bits: n} }

// PBits is a range of e bits, printed as [e-1:0] in terms of parameters.
func PBits(e ParamExpr) Range { return Range{expr: e} }

// Width is the number of bits.
func (r Range) Width() int {
	if r.expr != nil {
		return r.expr.Eval()
	}
	return r.bits
}

func (r Range) String() string {
	if r.expr != nil {
		return "[" + r.expr.String() + "-1:0]"
	}
	if r.bits == 1 {
		return ""
	}
	return fmt.Sprintf("[%d:0]", r.bits-1)
}
