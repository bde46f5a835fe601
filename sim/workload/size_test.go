package workload

import (
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
