// Package gen is the registry of Verilog module emitters. Every emitted
// module is parameterized: its body is written once in terms of its
// parameters (widths from $clog2 and parameter expressions, generate loops
// for replicated logic) and elaborates for every value in the documented
// ranges, which are the ranges of the Go blocks' Config.Validate; an
// illegal value stops elaboration with a message naming the parameter.
// verilog/cmd/vgen writes every registered module with the Go blocks'
// default configuration as the parameter defaults to verilog/rtl and checks
// the committed files against them; the co-simulation and area flows
// instantiate the same modules with other parameter values.
//
// An emitter registers itself from an init function in this package:
//
//	func init() {
//		Register(Emitter{
//			Name:     "uvmmu_dcq",
//			Doc:      "destination candidate queue (SPEC 5.3)",
//			Params:   []Param{{Name: "DEPTH", Default: uint64(cfg.Depth), Min: dcq.MinDepth, Max: dcq.MaxDepth}, ...},
//			Ports:    []Port{{Name: "push_pfgn", Dir: In, Width: "FG_BITS"}, ...},
//			Validate: func(v Values) error { return dcqConfig(v).Validate() },
//			Body:     dcqBody,
//		})
//	}
//
// Parameter defaults and ranges come from the Go package that models the
// block (its default config and its range constants), never from numbers
// written here. Validate receives values that are already range-checked
// against Params and checks the relations between them (for example
// THRESHOLD <= DEPTH) with the Go block's Config.Validate; Checks state the
// same relations in Verilog, for the elaboration-time check.
package gen

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/rtl"
)

// Generator is the name printed in the header of every emitted file.
const Generator = "verilog/cmd/vgen"

// Param describes one parameter of an emitted module.
type Param struct {
	Name     string
	Default  uint64
	Min, Max uint64
	Doc      string
	// Range, when set, is how messages state the range ("1..2^WIDTH-1");
	// else Min..Max.
	Range string
	// TypeWidth names the parameter whose value is this one's width: the
	// parameter prints as `parameter [W-1:0] NAME`. Empty: untyped.
	TypeWidth string
}

// RangeText is the allowed range as messages print it.
func (p Param) RangeText() string {
	if p.Range != "" {
		return p.Range
	}
	return fmt.Sprintf("%d..%d", p.Min, p.Max)
}

// Values holds parameter values by name. Emitters only look values up, so
// the map's order never matters.
type Values map[string]uint64

// Emitter produces one module.
type Emitter struct {
	// Name is the module name and the file name (Name + ".v").
	Name string
	// Doc is a one-line description for vgen -list.
	Doc string
	// Params lists the parameters in the module's declaration order.
	Params []Param
	// Module, when set, is the block's one description (its Go package's
	// Module): Register takes the port list from it, and the module prints
	// its localparams and register declarations before Body. Body uses
	// resets(Module, ...) for the reset assignments.
	Module *rtl.Module
	// Ports lists the ports in declaration order.
	Ports []Port
	// Checks are the relations between parameters the module checks at
	// elaboration, besides each parameter's range.
	Checks []Check
	// Validate checks complete, range-checked values with the Go block's
	// Config.Validate.
	Validate func(Values) error
	// Describe is the header comment for the values (it may print derived
	// geometry).
	Describe func(Values) []string
	// Body is the module's text after the port list and the checks.
	Body string
}

var registry []Emitter

// Register adds an emitter. It is called from init functions; registering a
// name twice is a programming error and panics at start-up.
func Register(e Emitter) {
	if e.Module != nil {
		if e.Module.Name != e.Name || e.Ports != nil {
			panic("gen: emitter " + e.Name + " has a description of " + e.Module.Name + " and a port list of its own")
		}
		e.Ports = modulePorts(e.Module)
	}
	for _, r := range registry {
		if r.Name == e.Name {
			panic("gen: emitter " + e.Name + " registered twice")
		}
	}
	registry = append(registry, e)
	sort.Slice(registry, func(i, j int) bool { return registry[i].Name < registry[j].Name })
}

// Emitters lists every registered emitter, sorted by name.
func Emitters() []Emitter { return slices.Clone(registry) }

// Lookup finds an emitter by module name.
func Lookup(name string) (Emitter, error) {
	for _, e := range registry {
		if e.Name == name {
			return e, nil
		}
	}
	names := make([]string, len(registry))
	for i, e := range registry {
		names[i] = e.Name
	}
	return Emitter{}, fmt.Errorf("no emitter for module %q; known modules: %s", name, strings.Join(names, ", "))
}

// Defaults returns the emitter's default parameter values.
func (e Emitter) Defaults() Values {
	v := Values{}
	for _, p := range e.Params {
		v[p.Name] = p.Default
	}
	return v
}

// Resolve fills in defaults for parameters not in overrides and checks every
// value against its range. An unknown name or a value out of range is an
// error naming the parameter and what is allowed.
func (e Emitter) Resolve(overrides Values) (Values, error) {
	v := e.Defaults()
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := e.param(k)
		if !ok {
			return nil, fmt.Errorf("%s has no parameter %s; parameters: %s", e.Name, k, e.paramNames())
		}
		x := overrides[k]
		if x < p.Min || x > p.Max {
			return nil, fmt.Errorf("%s parameter %s = %d is outside the allowed range %s", e.Name, k, x, p.RangeText())
		}
		v[k] = x
	}
	return v, nil
}

func (e Emitter) param(name string) (Param, bool) {
	for _, p := range e.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

func (e Emitter) paramNames() string {
	names := make([]string, len(e.Params))
	for i, p := range e.Params {
		names[i] = fmt.Sprintf("%s (%s)", p.Name, p.RangeText())
	}
	return strings.Join(names, ", ")
}

// Check resolves overrides and checks the relations between the values
// with the Go block's Config.Validate.
func (e Emitter) Check(overrides Values) (Values, error) {
	v, err := e.Resolve(overrides)
	if err != nil {
		return nil, err
	}
	if e.Validate != nil {
		if err := e.Validate(v); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", e.Name, e.summary(v), err)
		}
	}
	return v, nil
}

// Text resolves and checks overrides and prints the module with those
// values as its parameter defaults. The body is the same for every value:
// verilog/rtl holds the module at the Go blocks' defaults, and a design
// that needs other values sets them at instantiation.
func (e Emitter) Text(overrides Values) ([]byte, error) {
	v, err := e.Check(overrides)
	if err != nil {
		return nil, err
	}
	var doc []string
	if e.Describe != nil {
		doc = e.Describe(v)
	}
	return e.render(v, doc)
}

// Overrides prints values as a Verilog parameter override list,
// "#(.A(1), .B(2))", in declaration order, skipping parameters not in
// values.
func (e Emitter) Overrides(values Values) string {
	var parts []string
	for _, p := range e.Params {
		x, ok := values[p.Name]
		if !ok {
			continue
		}
		if p.TypeWidth != "" {
			w, ok := values[p.TypeWidth]
			if !ok {
				w = e.Defaults()[p.TypeWidth]
			}
			parts = append(parts, fmt.Sprintf(".%s(%d'd%d)", p.Name, w, x))
			continue
		}
		parts = append(parts, fmt.Sprintf(".%s(%d)", p.Name, x))
	}
	if len(parts) == 0 {
		return ""
	}
	return "#(" + strings.Join(parts, ", ") + ")"
}

// File is one emitted module file.
type File struct {
	Name string // base name, Module + ".v"
	Text []byte
}

// DefaultFiles emits every registered module at its default parameters,
// sorted by name: the content of verilog/rtl.
func DefaultFiles() ([]File, error) {
	files := make([]File, 0, len(registry))
	for _, e := range registry {
		text, err := e.Text(nil)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: e.Name + ".v", Text: text})
	}
	return files, nil
}

// ParseValues parses "NAME=VALUE" assignments (VALUE decimal or 0x hex)
// as given to vgen -set.
func ParseValues(assignments []string) (Values, error) {
	v := Values{}
	for _, a := range assignments {
		name, val, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("parameter assignment %q: want NAME=VALUE", a)
		}
		x, err := strconv.ParseUint(strings.TrimSpace(val), 0, 64)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: value %q is not an unsigned 64-bit integer (decimal or 0x hex)", name, val)
		}
		if _, dup := v[name]; dup {
			return nil, fmt.Errorf("parameter %s assigned twice", name)
		}
		v[name] = x
	}
	return v, nil
}
