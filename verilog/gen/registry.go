// Package gen is the registry of Verilog module emitters. Each emitter turns
// a set of parameter values into a vlog.Module; verilog/cmd/vgen writes every
// registered module at its default parameters to verilog/rtl and checks the
// committed files against them, and the co-simulation and area flows in tb/
// generate modules at other parameter values through the same entry point.
//
// An emitter registers itself from an init function in this package:
//
//	func init() {
//		Register(Emitter{
//			Name:   "uvmmu_dcq",
//			Doc:    "destination candidate queue (SPEC 5.3)",
//			Params: []Param{{Name: "DEPTH", Default: uint64(cfg.Depth), Min: 2, Max: 1 << 16}, ...},
//			Emit:   emitDCQ,
//		})
//	}
//
// Parameter defaults come from the Go package that models the block (its
// default config), never from numbers written here. Emit receives values that
// are already range-checked against Params; it checks the relations between
// them (for example THRESHOLD <= DEPTH) and returns an error naming the
// parameter and the allowed range.
package gen

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/verilog/vlog"
)

// Generator is the name printed in the header of every emitted file.
const Generator = "verilog/cmd/vgen"

// Param describes one parameter of an emitted module.
type Param struct {
	Name     string
	Default  uint64
	Min, Max uint64
	Doc      string
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
	// Emit builds the module for complete, range-checked values.
	Emit func(Values) (*vlog.Module, error)
}

var registry []Emitter

// Register adds an emitter. It is called from init functions; registering a
// name twice is a programming error and panics at start-up.
func Register(e Emitter) {
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
			return nil, fmt.Errorf("%s parameter %s = %d is outside the allowed range %d..%d", e.Name, k, x, p.Min, p.Max)
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
		names[i] = fmt.Sprintf("%s (%d..%d)", p.Name, p.Min, p.Max)
	}
	return strings.Join(names, ", ")
}

// Module resolves overrides and builds the module.
func (e Emitter) Module(overrides Values) (*vlog.Module, error) {
	v, err := e.Resolve(overrides)
	if err != nil {
		return nil, err
	}
	m, err := e.Emit(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Name, err)
	}
	return m, nil
}

// Text resolves overrides, builds the module and prints it.
func (e Emitter) Text(overrides Values) ([]byte, error) {
	m, err := e.Module(overrides)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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
