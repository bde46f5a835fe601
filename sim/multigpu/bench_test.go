package multigpu

import (
	"testing"

	"github.com/uvmmu/uvmmu/sim/config"
)

// BenchmarkGEMM runs grit-gemm at a tenth of its size on the grit preset
// under each uniform scheme: simulated cycles per second of the whole
// system (go test -bench . ./sim/multigpu).
func BenchmarkGEMM(b *testing.B) {
	for _, pol := range []string{"ot", "ac", "dup"} {
		b.Run(pol, func(b *testing.B) {
			var cycles uint64
			for range b.N {
				cfg := config.Default()
				if err := cfg.ApplyPreset("grit"); err != nil {
					b.Fatal(err)
				}
				cfg.MultiGPU.Policy, cfg.Run.Workload, cfg.Run.Scale = pol, "grit-gemm", 0.1
				s, err := New(&cfg)
				if err != nil {
					b.Fatal(err)
				}
				r, err := s.Run()
				if err != nil {
					b.Fatal(err)
				}
				cycles += r.Cycles
			}
			b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
		})
	}
}
