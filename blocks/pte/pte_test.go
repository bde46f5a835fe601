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

func TestReadOnlyBit(t *testing.T) {
	p := Remote(0x42)
	assert.False(t, p.ReadOnly())
	ro := p.AsReadOnly()
	assert.True(t, ro.ReadOnly())
	assert.Equal(t, PTE(1<<2), ro^p, "bit 2")
	assert.True(t, ro.Valid())
	assert.True(t, ro.IsRemote())
	assert.Equal(t, uint64(0x42), ro.Frame())
}

func TestRequestLayout(t *testing.T) {
	assert.Equal(t, 53, RequestBits)
	p := PackRequest(0xF_FFFF_FFFF, 0xFFFF, true)
	assert.Equal(t, uint64(1)<<RequestBits-1, p)
	for _, tc := range []struct {
		vpn   uint64
		who   uint16
		write bool
	}{{0, 0, false}, {0x123, 0xBEEF, true}, {0xF_FFFF_FFFF, 1, false}} {
		vpn, who, write := UnpackRequest(PackRequest(tc.vpn, tc.who, tc.write))
		assert.Equal(t, tc.vpn, vpn)
		assert.Equal(t, tc.who, who)
		assert.Equal(t, tc.write, write)
	}
	assert.Equal(t, uint64(1)<<52|7<<36|5, PackRequest(5, 7, true))
}
