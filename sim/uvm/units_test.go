package uvm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// TestUnitsAgreeWithTheSystemLayout: the page, block and region of this
// package are the system layout's page, page-group and frame-region
// (SPEC 2).
func TestUnitsAgreeWithTheSystemLayout(t *testing.T) {
	assert.Equal(t, system.PageShift, uvm.PageShift)
	assert.Equal(t, system.RegionShift, uvm.RegionShift)
	assert.Equal(t, system.PagesPerGroup, uvm.PagesPerBlock)
	assert.Equal(t, system.PagesPerRegion, uvm.PagesPerRegion)
	assert.Equal(t, system.GroupsPerRegion, uvm.BlocksPerRegion)
}
