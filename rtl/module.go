package rtl

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/exp/constraints"
)

// Module is the one description of a block that is also emitted as a
// Verilog module: its ports (name, direction, width) and its registers
// (name, width, reset value, and depth for an array), with every width
// and reset written as a Verilog constant expression over the module's
// parameters and localparams. The Go block makes its wires and registers
// from it (PortWire, DeclReg, ...), verilog/gen prints the module's port
// list, register declarations and reset assignments from it, and the
// testbenches build their port lists from it, so Go and Verilog name and
// size every port and register the same way.
type Module struct {
	Name   string
	Locals []Local // localparams, in order; each may use the ones before
	Ports  []PortDecl
	Regs   []RegDecl
}

// Dir is a port's direction.
type Dir uint8

// Port directions.
const (
	In Dir = iota
	Out
)

// Local is a localparam: a name for a constant expression.
type Local struct {
	Name, Expr string
	Doc        string
}

// PortDecl is one port. Width is a constant expression; "" is one bit.
type PortDecl struct {
	Name  string
	Dir   Dir
	Width string
}

// RegDecl is one register. Width is a constant expression ("" is one bit);
// Reset the value reset loads ("" for an array, which is not reset, like an
// SRAM); Depth, for an array, its number of entries.
type RegDecl struct {
	Name  string
	Width string
	Reset string
	Depth string
	Doc   string
}

// Params are parameter values by name, as the Verilog module takes them.
type Params map[string]uint64

// Env is a module at one parameter point: the parameters and the
// localparams that follow from them.
type Env struct {
	m *Module
	v Params
}

// At evaluates the module's localparams for parameter values p. A value
// missing or an expression it cannot evaluate is a programming error in the
// description, which the packages' tests evaluate at their defaults and at
// random points; it panics.
func (m *Module) At(p Params) Env {
	v := make(Params, len(p)+len(m.Locals))
	for k, x := range p {
		v[k] = x
	}
	for _, l := range m.Locals {
		x, err := Eval(l.Expr, v)
		if err != nil {
			panic(fmt.Sprintf("rtl: %s localparam %s: %v", m.Name, l.Name, err))
		}
		v[l.Name] = x
	}
	return Env{m: m, v: v}
}

// Module is the description e evaluates.
func (e Env) Module() *Module { return e.m }

// Value is a parameter's or localparam's value.
func (e Env) Value(name string) uint64 {
	x, ok := e.v[name]
	if !ok {
		panic(fmt.Sprintf("rtl: %s has no parameter or localparam %s", e.m.Name, name))
	}
	return x
}

// Eval evaluates a constant expression over the module's parameters and
// localparams.
func (e Env) Eval(expr string) uint64 {
	x, err := Eval(expr, e.v)
	if err != nil {
		panic(fmt.Sprintf("rtl: %s: %v", e.m.Name, err))
	}
	return x
}

// width evaluates a width expression, "" being one bit.
func (e Env) width(expr string) int {
	if expr == "" {
		return 1
	}
	return int(e.Eval(expr))
}

// Port is the declaration of a port.
func (m *Module) Port(name string) PortDecl {
	for _, p := range m.Ports {
		if p.Name == name {
			return p
		}
	}
	panic(fmt.Sprintf("rtl: %s has no port %s", m.Name, name))
}

// Reg is the declaration of a register.
func (m *Module) Reg(name string) RegDecl {
	for _, r := range m.Regs {
		if r.Name == name {
			return r
		}
	}
	panic(fmt.Sprintf("rtl: %s has no register %s", m.Name, name))
}

// PortWidth is a port's width in bits.
func (e Env) PortWidth(name string) int { return e.width(e.m.Port(name).Width) }

// RegWidth is a register's width in bits (an array's entry width).
func (e Env) RegWidth(name string) int { return e.width(e.m.Reg(name).Width) }

// RegDepth is an array's number of entries.
func (e Env) RegDepth(name string) int {
	r := e.m.Reg(name)
	if r.Depth == "" {
		panic(fmt.Sprintf("rtl: %s register %s is not an array", e.m.Name, name))
	}
	return int(e.Eval(r.Depth))
}

// RegReset is a register's reset value.
func (e Env) RegReset(name string) uint64 {
	r := e.m.Reg(name)
	if r.Reset == "" {
		return 0
	}
	return e.Eval(r.Reset)
}

// PortWire makes the wire of port name under path (path.name) with its
// declared width.
func PortWire[T constraints.Unsigned](s *Sim, path string, e Env, name string) *Wire[T] {
	return NewWire[T](s, path+"."+name, e.PortWidth(name))
}

// PortBit makes the wire of a one-bit port under path.
func PortBit(s *Sim, path string, e Env, name string) *Wire[bool] {
	if w := e.PortWidth(name); w != 1 {
		panic(fmt.Sprintf("rtl: %s port %s is %d bits, not a bit", e.m.Name, name, w))
	}
	return NewBit(s, path+"."+name)
}

// DeclReg makes the declared register name in block b.
func DeclReg[T constraints.Unsigned](b *Base, e Env, name string) *Reg[T] {
	return NewReg(b, name, e.RegWidth(name), T(e.RegReset(name)))
}

// DeclFlag makes the declared one-bit register name in block b.
func DeclFlag(b *Base, e Env, name string) *Reg[bool] {
	if w := e.RegWidth(name); w != 1 {
		panic(fmt.Sprintf("rtl: %s register %s is %d bits, not a flag", e.m.Name, name, w))
	}
	return NewFlag(b, name, e.RegReset(name) != 0)
}

// DeclVec makes the declared array name in block b: RegDepth entries
// named name[i].
func DeclVec[T constraints.Unsigned](b *Base, e Env, name string) *Vec[T] {
	return NewVec(b, name, e.RegDepth(name), e.RegWidth(name), T(e.RegReset(name)))
}

// Check compares the registers the Go block under path made in s with the
// description at e: the same names, and for each the declared width, reset
// value and (for an array) depth. A Go block whose registers come from a
// helper that names them itself (an rtl.Ring) is held to the description
// this way.
func (e Env) Check(s *Sim, path string) error {
	type got struct {
		width int
		reset uint64
		n     int
	}
	regs := map[string]*got{}
	for _, set := range s.regs {
		set.eachReg(func(t traced) {
			leaf, ok := strings.CutPrefix(t.Name(), path+".")
			if !ok || strings.Contains(leaf, ".") {
				return
			}
			reset := resetBits(t)
			if i := strings.IndexByte(leaf, '['); i >= 0 {
				leaf = leaf[:i]
			}
			g := regs[leaf]
			if g == nil {
				g = &got{width: t.Width(), reset: reset}
				regs[leaf] = g
			}
			g.n++
		})
	}
	var errs []string
	for _, d := range e.m.Regs {
		g, ok := regs[d.Name]
		if !ok {
			errs = append(errs, fmt.Sprintf("register %s is declared but the Go block has none", d.Name))
			continue
		}
		delete(regs, d.Name)
		want := got{width: e.RegWidth(d.Name), reset: e.RegReset(d.Name), n: 1}
		if d.Depth != "" {
			want.n = e.RegDepth(d.Name)
		}
		if *g != want {
			errs = append(errs, fmt.Sprintf("register %s: Go has width %d reset %#x entries %d, the description %d, %#x, %d",
				d.Name, g.width, g.reset, g.n, want.width, want.reset, want.n))
		}
	}
	extra := make([]string, 0, len(regs))
	for n := range regs {
		extra = append(extra, n)
	}
	slices.Sort(extra)
	for _, n := range extra {
		errs = append(errs, fmt.Sprintf("Go register %s is not declared", n))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s at %s: %s", e.m.Name, path, strings.Join(errs, "; "))
	}
	return nil
}

// resetBits is a register's reset value as a bit vector.
func resetBits(r traced) uint64 {
	type resetter interface{ resetPacked() uint64 }
	if x, ok := r.(resetter); ok {
		return x.resetPacked()
	}
	return 0
}

func (r *Reg[T]) resetPacked() uint64 {
	info := r.about()
	return info.pack(info.reset)
}

// AnyWire is a wire of any unsigned or bool type seen as a bit vector: how
// a testbench that follows a description drives and reads ports by name.
type AnyWire interface {
	Name() string
	Width() int
	// Bits is the value, read from outside any block.
	Bits() uint64
	// SetBits drives the value, between cycles, as a testbench does.
	SetBits(x uint64)
}

// WireNamed finds the wire of the given hierarchical name.
func (s *Sim) WireNamed(name string) (AnyWire, bool) {
	for _, w := range s.wires {
		if a, ok := w.(AnyWire); ok && a.Name() == name {
			return a, true
		}
	}
	return nil, false
}

// Bits is the wire's value as a bit vector.
func (w *Wire[T]) Bits() uint64 { return w.pack(w.v) }

// SetBits drives an unsigned or bool wire from a bit vector; a wire of a
// struct type panics.
func (w *Wire[T]) SetBits(x uint64) {
	var v T
	switch p := any(&v).(type) {
	case *bool:
		*p = x != 0
	case *uint8:
		*p = uint8(x)
	case *uint16:
		*p = uint16(x)
	case *uint32:
		*p = uint32(x)
	case *uint64:
		*p = x
	default:
		panic(fmt.Sprintf("rtl: wire %s of type %T is not driven from bits", w.name, v))
	}
	w.Set(v)
}
