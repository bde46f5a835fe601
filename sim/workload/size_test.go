package workload

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SizeOf, which builds nothing at the asked scale, predicts the
// allocations New builds to within 3% (the generators round their
// dimensions to whole blocks and rows).
func TestSizeOfPredictsAllocations(t *testing.T) {
	for _, name := range Names() {
		for _, scale := range []float64{0.5, 3} {
			pred, err := SizeOf(name, Params{Scale: scale, Seed: 1})
			require.NoError(t, err)
			wl, err := New(name, Params{Scale: scale, Seed: 1})
			require.NoError(t, err)
			got := SizeOfWorkload(wl)
			assert.InEpsilon(t, float64(got.Bytes), float64(pred.Bytes), 0.03, "%s at scale %g", name, scale)
			assert.InEpsilon(t, float64(got.Host+1), float64(pred.Host+1), 0.03, "%s at scale %g", name, scale)
		}
	}
}

func TestSizeOfTrace(t *testing.T) {
	_, err := SizeOf("trace:/nonexistent.trace", Params{})
	require.ErrorContains(t, err, "no such file")
	_, err = SizeOf("nosuch", Params{})
	require.ErrorContains(t, err, `workload "nosuch" unknown`)
}

// The predicted host memory of the generators that hold data bounds every
// byte they allocate while building (runtime.MemStats.TotalAlloc, which
// counts garbage too, so the heap never grows further at any moment of the
// build), at scales from a fraction to several times the shipped inputs.
func TestSizeBoundsHostMemory(t *testing.T) {
	for _, name := range []string{"bfs", "sssp"} {
		for _, scale := range []float64{0.05, 1, 4, 16} {
			if testing.Short() && scale > 1 {
				continue
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			wl := mustNew(t, name, Params{Scale: scale, Seed: 3})
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			size := SizeOfWorkload(wl)
			t.Logf("%s at scale %g: %d B of allocations, %d B allocated while building, %d B predicted", name, scale, size.Bytes, allocated, size.Host)
			assert.LessOrEqual(t, allocated, size.Host, "%s at scale %g", name, scale)
			runtime.KeepAlive(wl)
		}
	}
}
