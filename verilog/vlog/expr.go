package vlog

import (
	"fmt"
	"strconv"
	"strings"
)

// Expr is a Verilog expression of a known width. Build expressions with the
// functions of this package; a *Signal is an expression too.
type Expr interface {
	// Width is the expression's width in bits.
	Width() int
	// Err is the first building error inside the expression, if any.
	Err() error
	text(b *strings.Builder)
	// atomic expressions print without enclosing parentheses.
	atomic() bool
	// visit calls f for every signal read and the bits read of it
	// (lo..hi; hi < 0 means all bits).
	visit(f func(s *Signal, hi, lo int))
}

// String prints an expression as it appears in the emitted Verilog.
func String(e Expr) string {
	var b strings.Builder
	e.text(&b)
	return b.String()
}

func sub(b *strings.Builder, e Expr) {
	if e.atomic() {
		e.text(b)
		return
	}
	b.WriteByte('(')
	e.text(b)
	b.WriteByte(')')
}

// bad is an expression that failed to build; it carries the reason.
type bad struct{ err error }

func (e bad) Width() int                    { return 0 }
func (e bad) Err() error                    { return e.err }
func (e bad) text(b *strings.Builder)       { b.WriteString("/* error */") }
func (e bad) atomic() bool                  { return true }
func (e bad) visit(func(*Signal, int, int)) {}

// target lets a failed select stand where an LValue is expected; the
// error is reported before the target is ever asked for.
func (e bad) target() (*Signal, int, int) { return nil, 0, 0 }

func badf(format string, args ...any) bad { return bad{fmt.Errorf(format, args...)} }

func firstErr(es ...Expr) error {
	for _, e := range es {
		if err := e.Err(); err != nil {
			return err
		}
	}
	return nil
}

// lit is a sized constant.
type lit struct {
	width int
	value uint64
	hex   bool
}

func literal(width int, v uint64, hex bool) string {
	switch {
	case width == 1:
		return "1'b" + strconv.FormatUint(v, 2)
	case hex:
		return fmt.Sprintf("%d'h%0*x", width, (width+3)/4, v)
	default:
		return fmt.Sprintf("%d'd%d", width, v)
	}
}

func (e lit) Width() int                    { return e.width }
func (e lit) Err() error                    { return nil }
func (e lit) text(b *strings.Builder)       { b.WriteString(literal(e.width, e.value, e.hex)) }
func (e lit) atomic() bool                  { return true }
func (e lit) visit(func(*Signal, int, int)) {}

func makeLit(width int, v uint64, hex bool) Expr {
	if width < 1 {
		return badf("constant %d: width %d must be at least 1", v, width)
	}
	if width < 64 && v>>uint(width) != 0 {
		return badf("constant %d does not fit in %d bits", v, width)
	}
	return lit{width, v, hex}
}

// Lit is the constant v as a width-bit decimal literal (W'dN; 1'b0/1'b1 for
// one bit).
func Lit(width int, v uint64) Expr { return makeLit(width, v, false) }

// Hex is the constant v as a width-bit hexadecimal literal (W'hN), padded to
// the full number of digits.
func Hex(width int, v uint64) Expr { return makeLit(width, v, true) }

// Zero is the width-bit constant 0. Widths above 64 bits are printed with a
// replication.
func Zero(width int) Expr {
	if width > 64 {
		return Rep(width, Lit(1, 0))
	}
	return Lit(width, 0)
}

// Ones is the width-bit constant with every bit set.
func Ones(width int) Expr {
	if width > 64 {
		return Rep(width, Lit(1, 1))
	}
	return Hex(width, ^uint64(0)>>uint(64-width))
}

// True and False are the one-bit constants.
var (
	True  = Lit(1, 1)
	False = Lit(1, 0)
)

// paramVal is a typed parameter used as a value.
type paramVal struct{ p *Param }

func (e paramVal) Width() int                    { return e.p.rng.Width() }
func (e paramVal) Err() error                    { return nil }
func (e paramVal) text(b *strings.Builder)       { b.WriteString(e.p.name) }
func (e paramVal) atomic() bool                  { return true }
func (e paramVal) visit(func(*Signal, int, int)) {}

// PVal uses a typed parameter (Module.TypedParam) as an expression of its
// declared width, such as a reset value.
func PVal(p *Param) Expr {
	if !p.typed {
		return badf("parameter %s has no declared range and cannot be used as a sized value", p.name)
	}
	return paramVal{p}
}

type unary struct {
	op    string
	a     Expr
	width int
}

func (e unary) Width() int { return e.width }
func (e unary) Err() error { return e.a.Err() }

// A unary operator binds tighter than any binary one, so it needs no
// parentheses of its own when its operand has none.
func (e unary) atomic() bool { return e.a.atomic() }
func (e unary) text(b *strings.Builder) {
	b.WriteString(e.op)
	// Two operators in a row can lex as another token (~& is NAND, ~^
	// XNOR) or not at all (~~), so a unary operand is parenthesized.
	if _, nested := e.a.(unary); nested {
		b.WriteByte('(')
		e.a.text(b)
		b.WriteByte(')')
		return
	}
	sub(b, e.a)
}
func (e unary) visit(f func(*Signal, int, int)) { e.a.visit(f) }

// Not is the bitwise complement ~a.
func Not(a Expr) Expr {
	if err := a.Err(); err != nil {
		return bad{err}
	}
	return unary{"~", a, a.Width()}
}

// LNot is the logical negation !a of a one-bit a.
func LNot(a Expr) Expr {
	if err := checkBool("!", a); err != nil {
		return bad{err}
	}
	return unary{"!", a, 1}
}

// RedOr, RedAnd and RedXor are the reductions |a, &a and ^a.
func RedOr(a Expr) Expr  { return reduce("|", a) }
func RedAnd(a Expr) Expr { return reduce("&", a) }
func RedXor(a Expr) Expr { return reduce("^", a) }

func reduce(op string, a Expr) Expr {
	if err := a.Err(); err != nil {
		return bad{err}
	}
	return unary{op, a, 1}
}

func checkBool(op string, es ...Expr) error {
	if err := firstErr(es...); err != nil {
		return err
	}
	for _, e := range es {
		if e.Width() != 1 {
			return fmt.Errorf("operand %s of %q is %d bits wide; a condition must be 1 bit", String(e), op, e.Width())
		}
	}
	return nil
}

type binary struct {
	op    string
	a, b  Expr
	width int
}

func (e binary) Width() int   { return e.width }
func (e binary) Err() error   { return nil }
func (e binary) atomic() bool { return false }
func (e binary) text(b *strings.Builder) {
	sub(b, e.a)
	b.WriteString(" " + e.op + " ")
	sub(b, e.b)
}
func (e binary) visit(f func(*Signal, int, int)) {
	e.a.visit(f)
	e.b.visit(f)
}

func sameWidth(op string, a, b Expr) error {
	if err := firstErr(a, b); err != nil {
		return err
	}
	if a.Width() != b.Width() {
		return fmt.Errorf("operands of %q differ in width: %s is %d bits, %s is %d bits",
			op, String(a), a.Width(), String(b), b.Width())
	}
	return nil
}

func arith(op string, a, b Expr) Expr {
	if err := sameWidth(op, a, b); err != nil {
		return bad{err}
	}
	return binary{op, a, b, a.Width()}
}

func compare(op string, a, b Expr) Expr {
	if err := sameWidth(op, a, b); err != nil {
		return bad{err}
	}
	return binary{op, a, b, 1}
}

func logical(op string, a, b Expr) Expr {
	if err := checkBool(op, a, b); err != nil {
		return bad{err}
	}
	return binary{op, a, b, 1}
}

// Add and Sub are modular a+b and a-b of two equal-width operands; the
// result has the operands' width (the carry is dropped, as in hardware).
func Add(a, b Expr) Expr { return arith("+", a, b) }
func Sub(a, b Expr) Expr { return arith("-", a, b) }

// And, Or and Xor are the bitwise operators on equal-width operands.
func And(a, b Expr) Expr { return arith("&", a, b) }
func Or(a, b Expr) Expr  { return arith("|", a, b) }
func Xor(a, b Expr) Expr { return arith("^", a, b) }

// Eq, Ne, Lt, Le, Gt and Ge compare two equal-width unsigned operands.
func Eq(a, b Expr) Expr { return compare("==", a, b) }
func Ne(a, b Expr) Expr { return compare("!=", a, b) }
func Lt(a, b Expr) Expr { return compare("<", a, b) }
func Le(a, b Expr) Expr { return compare("<=", a, b) }
func Gt(a, b Expr) Expr { return compare(">", a, b) }
func Ge(a, b Expr) Expr { return compare(">=", a, b) }

// LAnd and LOr are the logical && and || of one-bit operands. With more
// than two operands they chain left to right.
func LAnd(a, b Expr, more ...Expr) Expr { return chain("&&", a, b, more) }
func LOr(a, b Expr, more ...Expr) Expr  { return chain("||", a, b, more) }

func chain(op string, a, b Expr, more []Expr) Expr {
	e := logical(op, a, b)
	for _, m := range more {
		e = logical(op, e, m)
	}
	return e
}

type mux struct{ c, a, b Expr }

func (e mux) Width() int   { return e.a.Width() }
func (e mux) Err() error   { return nil }
func (e mux) atomic() bool { return false }
func (e mux) text(b *strings.Builder) {
	sub(b, e.c)
	b.WriteString(" ? ")
	sub(b, e.a)
	b.WriteString(" : ")
	sub(b, e.b)
}
func (e mux) visit(f func(*Signal, int, int)) {
	e.c.visit(f)
	e.a.visit(f)
	e.b.visit(f)
}

// Mux is the ternary c ? a : b; c is one bit and a, b have equal widths.
func Mux(c, a, b Expr) Expr {
	if err := checkBool("?:", c); err != nil {
		return bad{err}
	}
	if err := sameWidth("?:", a, b); err != nil {
		return bad{err}
	}
	return mux{c, a, b}
}

type concat struct {
	parts []Expr
	width int
}

func (e concat) Width() int   { return e.width }
func (e concat) Err() error   { return nil }
func (e concat) atomic() bool { return true }
func (e concat) text(b *strings.Builder) {
	b.WriteByte('{')
	for i, p := range e.parts {
		if i > 0 {
			b.WriteString(", ")
		}
		p.text(b)
	}
	b.WriteByte('}')
}
func (e concat) visit(f func(*Signal, int, int)) {
	for _, p := range e.parts {
		p.visit(f)
	}
}

// Cat is the concatenation {parts...}, most significant part first.
func Cat(parts ...Expr) Expr {
	if len(parts) == 0 {
		return badf("empty concatenation")
	}
	if err := firstErr(parts...); err != nil {
		return bad{err}
	}
	w := 0
	for _, p := range parts {
		w += p.Width()
	}
	return concat{parts, w}
}

type replicate struct {
	n int
	a Expr
}

func (e replicate) Width() int   { return e.n * e.a.Width() }
func (e replicate) Err() error   { return nil }
func (e replicate) atomic() bool { return true }
func (e replicate) text(b *strings.Builder) {
	fmt.Fprintf(b, "{%d{", e.n)
	e.a.text(b)
	b.WriteString("}}")
}
func (e replicate) visit(f func(*Signal, int, int)) { e.a.visit(f) }

// Rep is the replication {n{a}}.
func Rep(n int, a Expr) Expr {
	if err := a.Err(); err != nil {
		return bad{err}
	}
	if n < 1 {
		return badf("replication of %s: count %d must be at least 1", String(a), n)
	}
	return replicate{n, a}
}

// ZeroExtend widens a to width bits with zeros at the top.
func ZeroExtend(a Expr, width int) Expr {
	if err := a.Err(); err != nil {
		return bad{err}
	}
	switch {
	case width < a.Width():
		return badf("cannot zero-extend %s (%d bits) to %d bits", String(a), a.Width(), width)
	case width == a.Width():
		return a
	}
	return Cat(Zero(width-a.Width()), a)
}

// sel is a constant bit or part select of a signal.
type sel struct {
	s      *Signal
	hi, lo int
}

func (e sel) Width() int   { return e.hi - e.lo + 1 }
func (e sel) Err() error   { return nil }
func (e sel) atomic() bool { return true }
func (e sel) text(b *strings.Builder) {
	if e.hi == e.lo {
		fmt.Fprintf(b, "%s[%d]", e.s.name, e.hi)
		return
	}
	fmt.Fprintf(b, "%s[%d:%d]", e.s.name, e.hi, e.lo)
}
func (e sel) visit(f func(*Signal, int, int)) { f(e.s, e.hi, e.lo) }
func (e sel) target() (*Signal, int, int)     { return e.s, e.hi, e.lo }

// Slice is the part select s[hi:lo].
func Slice(s *Signal, hi, lo int) LValue {
	if lo < 0 || hi < lo || hi >= s.Width() {
		return badf("part select %s[%d:%d] outside its range [%d:0]", s.name, hi, lo, s.Width()-1)
	}
	if s.memDepth > 0 {
		return badf("part select of memory %s; read a word with Word first", s.name)
	}
	return sel{s, hi, lo}
}

// Bit is the bit select s[i].
func Bit(s *Signal, i int) LValue { return Slice(s, i, i) }

// index is a variable bit select of a vector or a word of a memory.
type index struct {
	s   *Signal
	idx Expr
}

func (e index) Width() int {
	if e.s.memDepth > 0 {
		return e.s.Width()
	}
	return 1
}
func (e index) Err() error   { return nil }
func (e index) atomic() bool { return true }
func (e index) text(b *strings.Builder) {
	b.WriteString(e.s.name + "[")
	e.idx.text(b)
	b.WriteByte(']')
}
func (e index) visit(f func(*Signal, int, int)) {
	f(e.s, -1, 0)
	e.idx.visit(f)
}
func (e index) target() (*Signal, int, int) { return e.s, -1, 0 }

// Word is word idx of memory s (Module.Memory). The index must be exactly
// $clog2(depth) bits wide.
func Word(s *Signal, idx Expr) LValue {
	if s.memDepth == 0 {
		return badf("%s is not a memory; use BitAt for a variable bit select", s.name)
	}
	return makeIndex(s, s.memDepth, idx)
}

// BitAt is the variable bit select s[idx]. The index must be exactly
// $clog2(width) bits wide.
func BitAt(s *Signal, idx Expr) LValue {
	if s.memDepth > 0 {
		return badf("%s is a memory; use Word to read it", s.name)
	}
	return makeIndex(s, s.Width(), idx)
}

func makeIndex(s *Signal, n int, idx Expr) LValue {
	if err := idx.Err(); err != nil {
		return bad{err}
	}
	if want := Clog2(n); idx.Width() != want || want == 0 {
		return badf("index %s of %s is %d bits wide; %d entries need an index of %d bits (at least 1)",
			String(idx), s.name, idx.Width(), n, want)
	}
	return index{s, idx}
}
