package migrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// HostPages counts each 4 KB page a host access touches once: a page
// shared by two consecutive ranges counts once, an empty range none.
func TestHostPages(t *testing.T) {
	for _, tc := range []struct {
		ranges [][2]uint64
		want   int
	}{
		{nil, 0},
		{[][2]uint64{{0, 0}}, 0},
		{[][2]uint64{{0, 1}}, 1},
		{[][2]uint64{{0, 4096}}, 1},
		{[][2]uint64{{0, 4097}}, 2},
		{[][2]uint64{{4095, 4097}}, 2},
		{[][2]uint64{{0, 100}, {200, 300}}, 1},
		{[][2]uint64{{0, 8192}, {8000, 12288}}, 3},
		{[][2]uint64{{0, 4096}, {8192, 8193}}, 2},
	} {
		assert.Equal(t, tc.want, HostPages(tc.ranges), "%v", tc.ranges)
	}
}
