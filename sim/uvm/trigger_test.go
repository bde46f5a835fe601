package uvm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The trigger at a capacity of 1,000 pages, worked by hand:
//
//	allocated  reads  writes  buffer  left side  right side       evict
//	     1000      0       0    0%        1000   0 + 1000 = 1000  no: equal is not over
//	     1000      1       0    0%        1000   1001             yes
//	      990     10       0    0%        1000   1000             no
//	      990     11       0    0%        1000   1001             yes
//	      990     11       1    0%        1001   1001             no: a write-back in the queue frees one
//	      950      0       0    5%        1000   50 + 950 = 1000  no
//	      950      1       0    5%        1000   1001             yes
//	      950      0       0  5.5%        1000   55 + 950 = 1005  yes
func TestShouldEvictAsTheReference(t *testing.T) {
	cases := []struct {
		allocated, reads, writes int
		buffer                   float64
		want                     bool
	}{
		{1000, 0, 0, 0, false},
		{1000, 1, 0, 0, true},
		{990, 10, 0, 0, false},
		{990, 11, 0, 0, true},
		{990, 11, 1, 0, false},
		{950, 0, 0, 5, false},
		{950, 1, 0, 5, true},
		{950, 0, 0, 5.5, true},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, ShouldEvict(1000, c.allocated, c.reads, c.writes, c.buffer), "%+v", c)
	}
}
