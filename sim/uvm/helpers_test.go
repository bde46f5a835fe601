package uvm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// newDriver makes a driver from the default menu changed by edit.
func newDriver(t testing.TB, pages, capacity int, edit func(*Config)) *Driver {
	t.Helper()
	cfg := DefaultConfig()
	if edit != nil {
		edit(&cfg)
	}
	d, err := New(cfg, pages, capacity)
	require.NoError(t, err)
	return d
}

// fault handles a batch and returns a copy of its plan.
func fault(t testing.TB, d *Driver, pages ...int) Plan {
	t.Helper()
	p, err := d.HandleFaults(pages)
	require.NoError(t, err)
	return Plan{
		Fetch:      append([]int(nil), p.Fetch...),
		Prefetched: p.Prefetched,
		Evict:      append([]int(nil), p.Evict...),
		Deferred:   append([]int(nil), p.Deferred...),
	}
}

// span lists pages [lo, hi).
func span(lo, hi int) []int {
	s := make([]int, 0, hi-lo)
	for p := lo; p < hi; p++ {
		s = append(s, p)
	}
	return s
}

// spans concatenates page ranges given as lo, hi pairs.
func spans(bounds ...int) []int {
	var s []int
	for i := 0; i < len(bounds); i += 2 {
		s = append(s, span(bounds[i], bounds[i+1])...)
	}
	return s
}

// blockPages lists the pages of block b.
func blockPages(b int) []int { return span(b*PagesPerBlock, (b+1)*PagesPerBlock) }

// count records n accesses to page p.
func count(t testing.TB, d *Driver, p, n int, write bool) {
	t.Helper()
	for range n {
		require.NoError(t, d.Count(p, write))
	}
}
