package uvm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three data structures of 8 blocks: a = blocks 0-7, b = 8-15, c = 16-23.
func threeStructures(t *testing.T) *SmartRuntime {
	r, err := NewSmartRuntime(32, []Allocation{{0, 8}, {8, 8}, {16, 8}})
	require.NoError(t, err)
	return r
}

func transfer(r *SmartRuntime, blocks ...int) {
	for _, b := range blocks {
		r.Transferred(b)
	}
}

// One kernel, by hand:
//
//	a: 0 1 2 3       ascending, no repeat          linear
//	b: 8 10 9        9 after 10                    random
//	c: 16 17 16      ascending? no (16 after 17)   random-reuse (16 twice)
//	blocks 24-31 belong to no allocation and are ignored.
//
// b and c are irregular: zero-copy once oversubscribed and tree eviction.
func TestSmartRuntimeOneKernel(t *testing.T) {
	r := threeStructures(t)
	transfer(r, 0, 8, 1, 16, 10, 2, 17, 9, 3, 16, 30)
	assert.Equal(t, []Pattern{Linear, Random, RandomReuse}, []Pattern{r.Pattern(0), r.Pattern(1), r.Pattern(2)})
	zc, tree := r.Decide()
	assert.True(t, zc)
	assert.True(t, tree)
}

// Reuse across kernels, by hand:
//
//	kernel 1: a 0 1 2 3 (linear)                      a linear
//	kernel 2: a 0 1 2 3 again (linear, seen before)   a linear + linear-reuse = linear-reuse
//
// Only linear reuse: tree eviction, no zero-copy. Before kernel 2 ends the
// running kernel already counts; after kernel 1 alone a is linear and
// nothing switches.
func TestSmartRuntimeLinearReuseAcrossKernels(t *testing.T) {
	r := threeStructures(t)
	transfer(r, 0, 1, 2, 3)
	r.KernelEnded()
	zc, tree := r.Decide()
	assert.False(t, zc)
	assert.False(t, tree)
	assert.Equal(t, Linear, r.Pattern(0))
	transfer(r, 0, 1)
	assert.Equal(t, LinearReuse, r.Pattern(0))
	transfer(r, 2, 3)
	r.KernelEnded()
	assert.Equal(t, LinearReuse, r.Pattern(0))
	zc, tree = r.Decide()
	assert.False(t, zc)
	assert.True(t, tree)
	assert.Equal(t, Undecided, r.Pattern(1))
}

// The merge table of gpu-sim.cc:2771-2807, row by row (so far x this
// kernel -> new), including its quirk: mixed without reuse stays mixed
// whatever follows.
func TestPatternMerge(t *testing.T) {
	cases := []struct{ so, cur, want Pattern }{
		{Undecided, RandomReuse, RandomReuse},
		{Linear, Linear, Linear},
		{Linear, LinearReuse, LinearReuse},
		{Linear, Random, Mixed},
		{Linear, RandomReuse, MixedReuse},
		{LinearReuse, Linear, LinearReuse},
		{LinearReuse, Random, MixedReuse},
		{LinearReuse, RandomReuse, MixedReuse},
		{Random, Random, Random},
		{Random, RandomReuse, RandomReuse},
		{Random, Linear, Mixed},
		{Random, LinearReuse, MixedReuse},
		{RandomReuse, Random, RandomReuse},
		{RandomReuse, Linear, MixedReuse},
		{RandomReuse, LinearReuse, MixedReuse},
		{Mixed, RandomReuse, Mixed},
		{Mixed, LinearReuse, Mixed},
		{MixedReuse, Linear, MixedReuse},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.so.merge(c.cur), "%v then %v", c.so, c.cur)
	}
}

// A kernel's pattern: linear then random across two kernels is mixed, an
// irregular pattern, even though each kernel alone had no reuse and the
// second kernel touched only new blocks (a: 0 1 then 5 4).
func TestSmartRuntimeLinearThenRandomIsMixed(t *testing.T) {
	r := threeStructures(t)
	transfer(r, 0, 1)
	r.KernelEnded()
	transfer(r, 5, 4)
	assert.Equal(t, Mixed, r.Pattern(0))
	zc, tree := r.Decide()
	assert.True(t, zc)
	assert.True(t, tree)
}

func TestSmartRuntimeRejectsBadAllocations(t *testing.T) {
	_, err := NewSmartRuntime(16, []Allocation{{0, 8}, {4, 8}})
	assert.ErrorContains(t, err, "allocations 0 and 1 overlap at block 4")
	_, err = NewSmartRuntime(16, []Allocation{{10, 8}})
	assert.ErrorContains(t, err, "outside the 16-block space")
}
