package static

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAffineRangeTakesEachTermAtItsEnd(t *testing.T) {
	// 10 + 3*tid.x - 2*bid.x with tid.x in [0, 7], bid.x in [1, 4]:
	// min 10 + 0 - 8 = 2, max 10 + 21 - 2 = 29.
	a := Affine{Const: 10, Terms: []Term{{ThreadX, 3}, {BlockX, -2}}}
	lo, hi := a.Range(func(v Var) (int64, int64) {
		if v == ThreadX {
			return 0, 7
		}
		return 1, 4
	})
	assert.Equal(t, [2]int64{2, 29}, [2]int64{lo, hi})
}

func TestOpRange(t *testing.T) {
	k := &Kernel{Name: "k", GridX: 4, GridY: 1, BlockX: 32, BlockY: 1, HostIter: 2, HostIters: 4,
		Loops: []Loop{{Name: "l", Trips: 3}, {Name: "d", DataDependent: true}}}
	a := Alloc{Name: "a", Bytes: 4096}
	// a[iter*256 + bid*32 + tid - 1 + 10*loop0] in 4 B elements, iter = 2.
	op := MemOp{Alloc: "a", ElemBytes: 4, BranchFraction: 1,
		Index: Affine{Const: -1, Terms: []Term{{HostIter, 256}, {BlockX, 32}, {ThreadX, 1}, {LoopVar(0), 10}}}}
	// Whole grid: 512 - 1 = 511 .. 512 + 96 + 31 - 1 + 20 = 658, bytes
	// [2044, 2636).
	lo, hi, ok := WholeGrid(k).OpRange(&op, a)
	assert.Equal(t, []any{uint64(2044), uint64(2636), true}, []any{lo, hi, ok})
	// Block 0 alone: 511 .. 562, bytes [2044, 2252).
	lo, hi, ok = OneBlock(k, 0, 0).OpRange(&op, a)
	assert.Equal(t, []any{uint64(2044), uint64(2252), true}, []any{lo, hi, ok})
	// At iter 0, block 0: -1 .. 50, clipped to [0, 204).
	k.HostIter = 0
	lo, hi, _ = OneBlock(k, 0, 0).OpRange(&op, a)
	assert.Equal(t, [2]uint64{0, 204}, [2]uint64{lo, hi})
	// The data-dependent loop's variable: the whole allocation, unknown.
	op.Index.Terms = append(op.Index.Terms, Term{LoopVar(1), 1})
	lo, hi, ok = WholeGrid(k).OpRange(&op, a)
	assert.Equal(t, []any{uint64(0), uint64(4096), false}, []any{lo, hi, ok})
	op.Kind = Indirect
	_, _, ok = WholeGrid(k).OpRange(&op, a)
	assert.False(t, ok)
}

func TestValidateNamesTheProblem(t *testing.T) {
	good := func() *Program {
		return &Program{Workload: "w", Allocs: []Alloc{{Name: "a", Bytes: 64, Managed: true}},
			Kernels: []Kernel{{Name: "k", GridX: 1, GridY: 1, BlockX: 32, BlockY: 1, Loops: []Loop{{Name: "l", Trips: 2}},
				Ops: []MemOp{{Alloc: "a", ElemBytes: 4, BranchFraction: 1, Loops: []int{0}}}}}}
	}
	require.NoError(t, good().Validate())
	for _, tc := range []struct {
		edit func(p *Program)
		msg  string
	}{
		{func(p *Program) { p.Kernels[0].GridX = 0 }, "grid 0x1 of blocks 32x1 must be positive"},
		{func(p *Program) { p.Kernels[0].Ops[0].Alloc = "b" }, `unknown allocation "b"`},
		{func(p *Program) { p.Kernels[0].Ops[0].BranchFraction = 0 }, "BranchFraction 0 outside (0, 1]"},
		{func(p *Program) { p.Kernels[0].Ops[0].ElemBytes = 0 }, "ElemBytes 0 must be >= 1"},
		{func(p *Program) { p.Kernels[0].Ops[0].Loops = []int{1} }, "loop 1 does not exist"},
		{func(p *Program) { p.Kernels[0].Loops[0].Trips = 0 }, "loop 0 (l) Trips 0 must be >= 1"},
		{func(p *Program) { p.Kernels[0].Ops[0].Index.Terms = []Term{{HostIter, 1}} }, "index uses iter outside a host loop"},
		{func(p *Program) { p.Kernels[0].Ops[0].Index.Terms = []Term{{LoopVar(3), 1}} }, "index uses loop3, which does not exist"},
		{func(p *Program) { p.Kernels[0].HostIters, p.Kernels[0].HostIter = 2, 2 }, "HostIter 2 outside [0, HostIters 2)"},
	} {
		p := good()
		tc.edit(p)
		err := p.Validate()
		require.Error(t, err, tc.msg)
		assert.Contains(t, err.Error(), "static w: kernel 0 (k)")
		assert.Contains(t, err.Error(), tc.msg)
	}
}
