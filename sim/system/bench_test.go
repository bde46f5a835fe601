package system_test

import (
	"runtime"
	"testing"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
)

// BenchmarkRun runs a small hotspot under each policy and reports simulated
// cycles and warp instructions per second and heap allocations per
// evaluated cycle. The allocations are the construction's and the warp
// streams' first fills; BenchmarkSteadyState shows the per-cycle path.
func BenchmarkRun(b *testing.B) {
	for _, name := range []string{"ideal", "um", "uvmmu"} {
		b.Run(name, func(b *testing.B) {
			cfg := config.Default()
			cfg.Run.Policy = name
			cfg.Run.Scale = 0.1
			var cycles, instr, evaluated, mallocs uint64
			for range b.N {
				p, err := policy.New(name, &cfg)
				if err != nil {
					b.Fatal(err)
				}
				s, err := system.New(&cfg, p)
				if err != nil {
					b.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				r, err := s.Run(p, system.Options{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				cycles += r.Cycles
				instr += r.WarpInstructions
				evaluated += r.EvaluatedCycles
				mallocs += after.Mallocs - before.Mallocs
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(cycles)/sec, "cycles/s")
			b.ReportMetric(float64(instr)/sec, "warp-instr/s")
			b.ReportMetric(float64(mallocs)/float64(evaluated), "allocs/evaluated-cycle")
			b.ReportMetric(float64(mallocs)/float64(instr), "allocs/warp-instr")
		})
	}
}

// BenchmarkSteadyState times single evaluated cycles of a full system (sssp
// at 150% oversubscription, where kernels launch thread blocks all the
// time) after a warm-up of steadyWarmup cycles; with -benchmem, allocs/op
// is heap allocations per evaluated cycle, which must be 0. Use a fixed
// count such as -benchtime 200000x to stay inside the run.
func BenchmarkSteadyState(b *testing.B) {
	const steadyWarmup = 300000
	for _, name := range []string{"um", "uvmmu"} {
		b.Run(name, func(b *testing.B) {
			cfg := config.Default()
			cfg.Run.Policy = name
			cfg.Run.Workload = "sssp"
			cfg.Run.OversubPct = 150
			cfg.Run.Scale = 0.25
			p, err := policy.New(name, &cfg)
			if err != nil {
				b.Fatal(err)
			}
			s, err := system.New(&cfg, p)
			if err != nil {
				b.Fatal(err)
			}
			s.Sim.Reset()
			for s.Sim.Executed() < steadyWarmup {
				if err := s.Sim.Step(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := s.Sim.Step(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if s.Dispatcher.Done.Get() {
				b.Fatalf("the run ended inside the measurement; use fewer cycles")
			}
		})
	}
}
