package pte

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFieldsRoundTrip(t *testing.T) {
	p := Remote(0xAB_CDEF_1234).WithScheme(SchemeDuplication).WithGroup(Group64)
	assert.True(t, p.Valid())
	assert.True(t, p.IsRemote())
	assert.Equal(t, uint64(0xAB_CDEF_1234), p.Frame())
	assert.Equal(t, SchemeDuplication, p.Scheme())
	assert.Equal(t, Group64, p.Group())
	// Bits 9-10 and 52-53 as GRIT places them.
	assert.Equal(t, PTE(3<<9), p&(3<<9))
	assert.Equal(t, PTE(2<<52), p&(3<<52))

	l := p.WithScheme(SchemeOnTouch).WithGroup(Group1)
	assert.Equal(t, SchemeOnTouch, l.Scheme())
	assert.Equal(t, Group1, l.Group())
	assert.Equal(t, p.Frame(), l.Frame())
	assert.False(t, Local(5).IsRemote())
	assert.False(t, PTE(0).Valid())
	assert.Equal(t, []int{1, 8, 64, 512}, []int{Group1.Pages(), Group8.Pages(), Group64.Pages(), Group512.Pages()})
}
