package experiment

import (
	"math"
	"slices"
)

// MigrationLatencyRecorder is what the migration-latency experiment needs
// from a policy (the uvmmu policy): after the run, the latency of every
// page-group migration it completed, in core cycles from the moment the
// GMMU handed the remote PTE to the policy to the moment the updated PTE
// was returned to the SM, split by whether the destination was free or
// had to be swapped. UVMMU Section V-A puts a free migration at about
// 1.3 us (10-cycle handling + 1 us PCIe round trip + the critical 4 KB
// page).
type MigrationLatencyRecorder interface {
	MigrationLatencies() (free, swap []uint64)
}

// Latencies are one run's migration latency samples in core cycles.
type Latencies struct {
	ClockMHz int
	Free     []uint64
	Swap     []uint64
}

// Summary describes a latency distribution in microseconds.
type Summary struct {
	Count                    int
	Min, P10, P50, Mean, P90 float64
	P99, Max                 float64
}

// Summarize sorts a copy of the samples (cycles at clockMHz) and reads the
// order statistics in microseconds; an empty sample gives NaNs.
func Summarize(samples []uint64, clockMHz int) Summary {
	if len(samples) == 0 {
		nan := math.NaN()
		return Summary{Min: nan, P10: nan, P50: nan, Mean: nan, P90: nan, P99: nan, Max: nan}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	us := func(c uint64) float64 { return float64(c) / float64(clockMHz) }
	at := func(q float64) float64 { return us(s[int(math.Ceil(q*float64(len(s))))-1]) }
	var sum float64
	for _, c := range s {
		sum += us(c)
	}
	return Summary{
		Count: len(s), Min: us(s[0]), P10: at(0.10), P50: at(0.50), Mean: sum / float64(len(s)),
		P90: at(0.90), P99: at(0.99), Max: us(s[len(s)-1]),
	}
}

// Histogram counts samples (cycles at clockMHz) in bins of binUs
// microseconds from 0; the last bin also holds everything beyond maxUs.
func Histogram(samples []uint64, clockMHz int, binUs, maxUs float64) []float64 {
	n := int(math.Ceil(maxUs / binUs))
	counts := make([]float64, n)
	for _, c := range samples {
		b := int(float64(c) / float64(clockMHz) / binUs)
		counts[min(b, n-1)]++
	}
	return counts
}
