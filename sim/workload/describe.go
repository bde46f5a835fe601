package workload

import (
	"fmt"
	"sort"
	"strings"

	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// describers build a workload's static description (package static) from
// the same Params and constants its generator uses; TestDescriptionBounds
// proves every address the generator emits lies inside the description.
var describers = map[string]func(wl *builtin, scale float64) *static.Program{
	"2dconv":   describeConv2D,
	"backprop": describeBackprop,
	"fdtd":     describeFDTD,
	"hotspot":  describeHotspot,
	"nw":       describeNW,
	"ra":       describeRA,
	"srad":     describeSRAD,
	"sssp":     describeSSSP,
	"bfs":      describeBFS,
}

// DescribedNames returns the workloads with a static description, sorted.
func DescribedNames() []string {
	names := make([]string, 0, len(describers)+len(suvDescribers))
	for n := range describers {
		names = append(names, n)
	}
	for n := range suvDescribers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Describe builds the named workload and its static description.
func Describe(name string, p Params) (Workload, *static.Program, error) {
	if build, ok := suvDescribers[name]; ok {
		if _, err := New(name, p); err != nil {
			return nil, nil, err
		}
		scale := p.Scale
		if scale == 0 {
			scale = 1
		}
		wl, prog := build(p, scale).build()
		if err := prog.Validate(); err != nil {
			return nil, nil, err
		}
		return wl, prog, nil
	}
	d, ok := describers[name]
	if !ok {
		return nil, nil, fmt.Errorf("workload: %q has no static description; described: %s", name, strings.Join(DescribedNames(), ", "))
	}
	wl, err := New(name, p)
	if err != nil {
		return nil, nil, err
	}
	scale := p.Scale
	if scale == 0 {
		scale = 1
	}
	prog := d(wl.(*builtin), scale)
	if err := prog.Validate(); err != nil {
		return nil, nil, err
	}
	return wl, prog, nil
}

// staticProgram starts a description with the workload's allocations.
func staticProgram(wl *builtin) *static.Program {
	p := &static.Program{Workload: wl.name}
	for _, a := range wl.allocs {
		p.Allocs = append(p.Allocs, static.Alloc{Name: a.Name, Bytes: a.Bytes, Managed: a.Kind == Managed})
	}
	return p
}

// affine builds Const + sum of (var, coef) pairs.
func affine(c int64, terms ...static.Term) static.Affine {
	return static.Affine{Const: c, Terms: terms}
}

func term(v static.Var, coef int64) static.Term { return static.Term{Var: v, Coef: coef} }

// memop is an operation reached by a fraction frac of the threads.
func memop(alloc string, acc static.Access, elem int64, index static.Affine, frac float64) static.MemOp {
	return static.MemOp{Alloc: alloc, Access: acc, ElemBytes: elem, Index: index, BranchFraction: frac}
}

// indirect is an operation whose index is a loaded value.
func indirect(alloc string, acc static.Access, elem int64, frac float64) static.MemOp {
	return static.MemOp{Alloc: alloc, Access: acc, ElemBytes: elem, Kind: static.Indirect, BranchFraction: frac}
}

// inLoops places op inside the given kernel loops.
func inLoops(op static.MemOp, loops ...int) static.MemOp {
	op.Loops = loops
	return op
}

// frac is n/d as a branch fraction.
func frac(n, d int) float64 { return float64(n) / float64(d) }

// allocBytes is the size of the named allocation of wl.
func allocBytes(wl *builtin, name string) uint64 {
	for _, a := range wl.allocs {
		if a.Name == name {
			return a.Bytes
		}
	}
	panic("workload: no allocation " + name)
}
