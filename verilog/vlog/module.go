package vlog

import (
	"errors"
	"fmt"
	"strings"
)

type sigKind int

const (
	kindInput sigKind = iota
	kindOutput
	kindOutputReg
	kindWire
	kindReg
)

// Signal is a port, wire, register or memory of a module. It is an
// expression of its declared width (a memory must be read through Word).
type Signal struct {
	m        *Module
	name     string
	rng      Range
	kind     sigKind
	memDepth int
	comment  string
	// driver names the process that drives the signal ("" while undriven).
	driver string
	// read marks, per bit, whether anything reads it.
	read []bool
}

// Name is the signal's Verilog name.
func (s *Signal) Name() string { return s.name }

// Width is the signal's width (a memory's word width).
func (s *Signal) Width() int { return s.rng.Width() }

// Err reports a memory used as a value; memories are read through Word.
func (s *Signal) Err() error {
	if s.memDepth > 0 {
		return fmt.Errorf("memory %s is read through Word, not as a value", s.name)
	}
	return nil
}

func (s *Signal) text(b *strings.Builder) { b.WriteString(s.name) }
func (s *Signal) atomic() bool            { return true }
func (s *Signal) visit(f func(*Signal, int, int)) {
	if s.memDepth > 0 {
		f(s, -2, 0)
		return
	}
	f(s, -1, 0)
}
func (s *Signal) target() (*Signal, int, int) { return s, -1, 0 }

// Comment attaches a comment printed above the declaration and returns s.
func (s *Signal) Comment(text string) *Signal {
	s.comment = text
	return s
}

func (s *Signal) isReg() bool { return s.kind == kindReg || s.kind == kindOutputReg }

// LValue is an expression that can be assigned: a signal, a constant select
// of a signal, or a memory word.
type LValue interface {
	Expr
	target() (s *Signal, hi, lo int)
}

// Module is one Verilog module under construction.
type Module struct {
	name      string
	generator string
	doc       []string
	params    []*Param
	ports     []*Signal
	decls     []*Signal
	body      []item
	names     map[string]bool
	errs      []error
	processes int
}

type item interface {
	write(w *writer)
}

// NewModule starts a module. generator names the program that emits it; it
// is printed in the header comment.
func NewModule(name, generator string) *Module {
	return &Module{name: name, generator: generator, names: map[string]bool{}}
}

// Name is the module's name.
func (m *Module) Name() string { return m.name }

// Doc adds a line to the module's header comment (what the block is, where
// its numbers come from).
func (m *Module) Doc(lines ...string) { m.doc = append(m.doc, lines...) }

func (m *Module) errorf(format string, args ...any) {
	m.errs = append(m.errs, fmt.Errorf("module %s: "+format, append([]any{m.name}, args...)...))
}

func (m *Module) claim(name string) bool {
	if name == "" || m.names[name] {
		m.errorf("name %q is empty or declared twice", name)
		return false
	}
	m.names[name] = true
	return true
}

// Param declares an untyped integer parameter with the given value.
func (m *Module) Param(name string, value uint64) *Param {
	m.claim(name)
	p := &Param{name: name, value: value}
	m.params = append(m.params, p)
	return p
}

// TypedParam declares a parameter with a range, such as
// `parameter [WIDTH-1:0] SEED = 32'd1`. Its value must fit the range.
func (m *Module) TypedParam(name string, rng Range, value uint64) *Param {
	m.claim(name)
	w := rng.Width()
	if w < 1 || (w < 64 && value>>uint(w) != 0) {
		m.errorf("parameter %s: value %d does not fit its %d-bit range", name, value, w)
	}
	p := &Param{name: name, value: value, typed: true, rng: rng}
	m.params = append(m.params, p)
	return p
}

// Specialize records that the module body was generated for the current
// values of ps. The module then carries an elaboration-time guard that stops
// with a message if an instantiation overrides any of them.
func (m *Module) Specialize(ps ...*Param) {
	for _, p := range ps {
		p.specialized = true
	}
}

func (m *Module) signal(name string, rng Range, kind sigKind, depth int) *Signal {
	s := &Signal{m: m, name: name, rng: rng, kind: kind, memDepth: depth}
	if !m.claim(name) {
		return s
	}
	if w := rng.Width(); w < 1 {
		m.errorf("signal %s: width %d must be at least 1", name, w)
		w = 1
		s.rng = Bits(1)
	}
	s.read = make([]bool, s.Width())
	if kind <= kindOutputReg {
		m.ports = append(m.ports, s)
	} else {
		m.decls = append(m.decls, s)
	}
	return s
}

// Input declares an input port (`input wire`).
func (m *Module) Input(name string, rng Range) *Signal {
	return m.signal(name, rng, kindInput, 0)
}

// Output declares an output port driven by a continuous assign
// (`output wire`).
func (m *Module) Output(name string, rng Range) *Signal {
	return m.signal(name, rng, kindOutput, 0)
}

// OutputReg declares an output port driven from an always block
// (`output reg`).
func (m *Module) OutputReg(name string, rng Range) *Signal {
	return m.signal(name, rng, kindOutputReg, 0)
}

// Wire declares a wire of width bits, driven by one continuous assign or
// an instance output.
func (m *Module) Wire(name string, width int) *Signal {
	return m.signal(name, Bits(width), kindWire, 0)
}

// Reg declares a reg of width bits, driven from one always block.
func (m *Module) Reg(name string, width int) *Signal {
	return m.signal(name, Bits(width), kindReg, 0)
}

// Memory declares `reg [width-1:0] name [0:depth-1]`, read with Word and
// written from one clocked always block.
func (m *Module) Memory(name string, width, depth int) *Signal {
	if depth < 2 {
		m.errorf("memory %s: depth %d must be at least 2", name, depth)
		depth = 2
	}
	return m.signal(name, Bits(width), kindReg, depth)
}

// Comment adds a comment line to the module body at this point.
func (m *Module) Comment(text string) { m.body = append(m.body, commentItem(text)) }

type commentItem string

// drive records that process drives s, rejecting a second driver.
func (m *Module) drive(s *Signal, process string) {
	switch {
	case s.m != m:
		m.errorf("signal %s belongs to module %s", s.name, s.m.name)
	case s.kind == kindInput:
		m.errorf("input %s cannot be driven inside the module", s.name)
	case s.driver != "" && s.driver != process:
		m.errorf("signal %s is driven by both %s and %s", s.name, s.driver, process)
	default:
		s.driver = process
	}
}

func (m *Module) use(e Expr) {
	e.visit(func(s *Signal, hi, lo int) {
		if s.m != m {
			m.errorf("signal %s of module %s used in module %s", s.name, s.m.name, m.name)
			return
		}
		if hi < 0 {
			lo, hi = 0, len(s.read)-1
		}
		for i := lo; i <= hi; i++ {
			s.read[i] = true
		}
	})
}

func (m *Module) check(e Expr) bool {
	if err := e.Err(); err != nil {
		m.errs = append(m.errs, fmt.Errorf("module %s: %w", m.name, err))
		return false
	}
	return true
}

type assign struct {
	lhs *Signal
	rhs Expr
}

// Assign adds `assign lhs = rhs;`. lhs is a whole wire or output port.
func (m *Module) Assign(lhs *Signal, rhs Expr) {
	if !m.check(rhs) {
		return
	}
	if lhs.isReg() || lhs.memDepth > 0 {
		m.errorf("assign to %s: a continuous assign drives a wire or output, not a reg", lhs.name)
		return
	}
	if lhs.Width() != rhs.Width() {
		m.errorf("assign %s (%d bits) = %s (%d bits): widths differ", lhs.name, lhs.Width(), String(rhs), rhs.Width())
		return
	}
	m.drive(lhs, "assign "+lhs.name)
	m.use(rhs)
	m.body = append(m.body, assign{lhs, rhs})
}

// Err returns every error recorded while building the module and the
// result of its completeness checks: undriven outputs, wires and regs, and
// signals or bits that nothing reads.
func (m *Module) Err() error {
	errs := append([]error(nil), m.errs...)
	for _, s := range append(append([]*Signal(nil), m.ports...), m.decls...) {
		if s.kind != kindInput && s.driver == "" {
			errs = append(errs, fmt.Errorf("module %s: %s is never driven", m.name, s.name))
		}
		if s.kind == kindOutput || s.kind == kindOutputReg {
			continue
		}
		if unread := unreadBits(s.read); unread != "" {
			errs = append(errs, fmt.Errorf("module %s: %s %s is never read", m.name, s.name, unread))
		}
	}
	return errors.Join(errs...)
}

func unreadBits(read []bool) string {
	var spans []string
	for i := 0; i < len(read); {
		if read[i] {
			i++
			continue
		}
		j := i
		for j+1 < len(read) && !read[j+1] {
			j++
		}
		if i == 0 && j == len(read)-1 {
			return "(all bits)"
		}
		if i == j {
			spans = append(spans, fmt.Sprintf("bit %d", i))
		} else {
			spans = append(spans, fmt.Sprintf("bits %d:%d", j, i))
		}
		i = j + 1
	}
	return strings.Join(spans, ", ")
}
