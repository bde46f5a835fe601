package vlog

import (
	"fmt"
	"sort"
)

// Stmt is a statement inside an always block.
type Stmt interface {
	bind(m *Module, p *process)
	write(w *writer)
}

// process is the always block a statement belongs to.
type process struct {
	name    string
	clocked bool
}

// Stmts groups statements, for the branches of If and the arms of Case.
func Stmts(s ...Stmt) []Stmt { return s }

type assignStmt struct {
	lhs      LValue
	rhs      Expr
	blocking bool
}

// NB is the non-blocking assignment lhs <= rhs, for clocked blocks.
func NB(lhs LValue, rhs Expr) Stmt { return assignStmt{lhs, rhs, false} }

// BA is the blocking assignment lhs = rhs, for combinational blocks.
func BA(lhs LValue, rhs Expr) Stmt { return assignStmt{lhs, rhs, true} }

func (a assignStmt) bind(m *Module, p *process) {
	if !m.check(a.lhs) || !m.check(a.rhs) {
		return
	}
	s, _, _ := a.lhs.target()
	switch {
	case a.blocking && p.clocked:
		m.errorf("blocking assignment to %s in clocked block %s; use NB", String(a.lhs), p.name)
	case !a.blocking && !p.clocked:
		m.errorf("non-blocking assignment to %s in combinational block %s; use BA", String(a.lhs), p.name)
	case !s.isReg():
		m.errorf("%s is assigned in always block %s but is not declared reg", s.name, p.name)
	case a.lhs.Width() != a.rhs.Width():
		m.errorf("assignment %s (%d bits) = %s (%d bits): widths differ",
			String(a.lhs), a.lhs.Width(), String(a.rhs), a.rhs.Width())
	default:
		m.drive(s, p.name)
		if idx, ok := a.lhs.(index); ok {
			m.use(idx.idx)
		}
		m.use(a.rhs)
	}
}

func (a assignStmt) write(w *writer) {
	op := " <= "
	if a.blocking {
		op = " = "
	}
	w.line(String(a.lhs) + op + String(a.rhs) + ";")
}

type ifStmt struct {
	cond       Expr
	then, els_ []Stmt
}

// If is `if (cond) then else els`; cond is one bit, els may be nil.
func If(cond Expr, then, els []Stmt) Stmt { return ifStmt{cond, then, els} }

func (s ifStmt) bind(m *Module, p *process) {
	if !m.check(s.cond) {
		return
	}
	if s.cond.Width() != 1 {
		m.errorf("if condition %s is %d bits wide; a condition must be 1 bit", String(s.cond), s.cond.Width())
	}
	m.use(s.cond)
	bindAll(m, p, s.then)
	bindAll(m, p, s.els_)
}

func (s ifStmt) write(w *writer) {
	w.line("if (" + String(s.cond) + ") begin")
	w.block(s.then)
	for len(s.els_) > 0 {
		if next, ok := s.els_[0].(ifStmt); ok && len(s.els_) == 1 {
			w.line("end else if (" + String(next.cond) + ") begin")
			w.block(next.then)
			s = next
			continue
		}
		w.line("end else begin")
		w.block(s.els_)
		break
	}
	w.line("end")
}

// CaseItem is one arm of a Case statement.
type CaseItem struct {
	labels []Expr
	body   []Stmt
}

// When is a case arm taken when the selector equals any of labels.
func When(labels []Expr, body ...Stmt) CaseItem { return CaseItem{labels, body} }

type caseStmt struct {
	sel   Expr
	items []CaseItem
	def   []Stmt
}

// Case is `case (sel) ... default: def endcase`. Every label has the
// selector's width; the default arm is always printed, so no case is
// incomplete.
func Case(sel Expr, items []CaseItem, def []Stmt) Stmt { return caseStmt{sel, items, def} }

func (c caseStmt) bind(m *Module, p *process) {
	if !m.check(c.sel) {
		return
	}
	m.use(c.sel)
	for _, it := range c.items {
		if len(it.labels) == 0 {
			m.errorf("case on %s has an arm without labels", String(c.sel))
		}
		for _, l := range it.labels {
			if !m.check(l) {
				continue
			}
			if l.Width() != c.sel.Width() {
				m.errorf("case label %s is %d bits; selector %s is %d bits", String(l), l.Width(), String(c.sel), c.sel.Width())
			}
			m.use(l)
		}
		bindAll(m, p, it.body)
	}
	bindAll(m, p, c.def)
}

func (c caseStmt) write(w *writer) {
	w.line("case (" + String(c.sel) + ")")
	w.indent++
	arm := func(label string, body []Stmt) {
		if len(body) == 0 {
			w.line(label + ": begin")
			w.line("end")
			return
		}
		w.line(label + ": begin")
		w.block(body)
		w.line("end")
	}
	for _, it := range c.items {
		label := ""
		for i, l := range it.labels {
			if i > 0 {
				label += ", "
			}
			label += String(l)
		}
		arm(label, it.body)
	}
	arm("default", c.def)
	w.indent--
	w.line("endcase")
}

func bindAll(m *Module, p *process, ss []Stmt) {
	for _, s := range ss {
		s.bind(m, p)
	}
}

type always struct {
	clk  *Signal
	body []Stmt
}

// AlwaysFF adds `always @(posedge clk) begin ... end`; its statements use
// NB.
func (m *Module) AlwaysFF(clk *Signal, body ...Stmt) {
	m.processes++
	p := &process{name: fmt.Sprintf("always_ff #%d", m.processes), clocked: true}
	if clk.Width() != 1 {
		m.errorf("clock %s is %d bits wide", clk.name, clk.Width())
	}
	m.use(clk)
	bindAll(m, p, body)
	m.body = append(m.body, always{clk, body})
}

// AlwaysComb adds `always @(*) begin ... end`; its statements use BA and
// must assign every reg they drive, whole, on every path: a reg left
// unassigned on some path would be a latch, and is reported as an error.
func (m *Module) AlwaysComb(body ...Stmt) {
	m.processes++
	p := &process{name: fmt.Sprintf("always_comb #%d", m.processes)}
	bindAll(m, p, body)
	some := map[*Signal]bool{}
	all := assigned(body, some)
	for _, s := range sortedSignals(some) {
		if !all[s] {
			m.errorf("%s is not assigned as a whole on every path of %s; it would be a latch (assign a default first)", s.name, p.name)
		}
	}
	m.body = append(m.body, always{nil, body})
}

// assigned returns the signals that ss assign as a whole on every path, and
// adds every signal they assign at all (whole or in part) to some.
func assigned(ss []Stmt, some map[*Signal]bool) map[*Signal]bool {
	all := map[*Signal]bool{}
	for _, st := range ss {
		var got map[*Signal]bool
		switch x := st.(type) {
		case assignStmt:
			s, hi, _ := x.lhs.target()
			if s == nil {
				continue
			}
			some[s] = true
			if _, word := x.lhs.(index); hi < 0 && !word {
				got = map[*Signal]bool{s: true}
			}
		case ifStmt:
			got = intersect(assigned(x.then, some), assigned(x.els_, some))
		case caseStmt:
			got = assigned(x.def, some)
			for _, it := range x.items {
				got = intersect(got, assigned(it.body, some))
			}
		}
		for s := range got {
			all[s] = true
		}
	}
	return all
}

func intersect(a, b map[*Signal]bool) map[*Signal]bool {
	out := map[*Signal]bool{}
	for s := range a {
		if b[s] {
			out[s] = true
		}
	}
	return out
}

// sortedSignals lists the keys of a set by name, so errors come out in a
// fixed order.
func sortedSignals(set map[*Signal]bool) []*Signal {
	out := make([]*Signal, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Conn connects a port of an instance.
type Conn struct {
	port string
	expr Expr
}

// Port connects the instance port named port to e: an expression for an
// input, a whole wire of the parent module for an output.
func Port(port string, e Expr) Conn { return Conn{port, e} }

type instance struct {
	sub   *Module
	name  string
	conns []Conn
}

// Instance instantiates sub as name. Its parameters are passed with the
// values sub was generated with, so a specialized sub-module's guard holds.
// Every port must be connected exactly once with an expression of the
// port's width.
func (m *Module) Instance(sub *Module, name string, conns ...Conn) {
	m.claim(name)
	byName := map[string]Conn{}
	for _, c := range conns {
		if _, dup := byName[c.port]; dup {
			m.errorf("instance %s: port %s connected twice", name, c.port)
		}
		byName[c.port] = c
	}
	ordered := make([]Conn, 0, len(sub.ports))
	for _, p := range sub.ports {
		c, ok := byName[p.name]
		if !ok {
			m.errorf("instance %s: port %s of %s is not connected", name, p.name, sub.name)
			continue
		}
		delete(byName, p.name)
		if !m.check(c.expr) {
			continue
		}
		if c.expr.Width() != p.Width() {
			m.errorf("instance %s: port %s is %d bits, connected to %s (%d bits)", name, p.name, p.Width(), String(c.expr), c.expr.Width())
			continue
		}
		if p.kind == kindInput {
			m.use(c.expr)
		} else if s, ok := c.expr.(*Signal); ok && (s.kind == kindWire || s.kind == kindOutput) {
			m.drive(s, "instance "+name)
		} else {
			m.errorf("instance %s: output %s must connect to a whole wire, not %s", name, p.name, String(c.expr))
			continue
		}
		ordered = append(ordered, c)
	}
	for _, c := range conns {
		if _, left := byName[c.port]; left {
			m.errorf("instance %s: %s has no port %s", name, sub.name, c.port)
		}
	}
	m.body = append(m.body, instance{sub, name, ordered})
}
