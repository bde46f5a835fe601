package workload

import (
	"fmt"
	"testing"
)

func TestProbeAllocs(t *testing.T) {
	for _, n := range Names() {
		wl, _ := New(n, Params{Scale: 1, Seed: 1})
		nk := 0
		for _, p := range wl.Phases() {
			if p.Kernel != nil {
				nk++
			}
		}
		fmt.Printf("%s kernels=%d footprint=%.4f MB\n", n, nk, float64(wl.Footprint())/(1<<20))
		for _, a := range wl.Allocs() {
			fmt.Printf("   %-22s %10d B %8.4f MB kind=%v ro=%v\n", a.Name, a.Bytes, float64(a.Bytes)/(1<<20), a.Kind, a.ReadOnly)
		}
	}
}
