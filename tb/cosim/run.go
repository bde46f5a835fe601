package cosim

import (
	"os"
	"strconv"
	"testing"
)

// CyclesEnv overrides the number of co-simulation cycles per test: the long
// run sets UVMMU_COSIM_CYCLES=10000000.
const CyclesEnv = "UVMMU_COSIM_CYCLES"

// Cycles is the cycle count a co-simulation test runs: def, or the value of
// UVMMU_COSIM_CYCLES when set.
func Cycles(t testing.TB, def uint64) uint64 {
	t.Helper()
	s := os.Getenv(CyclesEnv)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 || n > 1<<31-1 {
		t.Fatalf("%s=%q: want a cycle count in 1..%d", CyclesEnv, s, 1<<31-1)
	}
	return n
}

// LongRun reports whether UVMMU_COSIM_CYCLES is set: tests then run every
// parameter set under every simulator, with no regard for build time.
func LongRun() bool { return os.Getenv(CyclesEnv) != "" }

// Case is one co-simulation: a module, its sources, and the Go model and
// stimulus that produce the golden vectors.
type Case struct {
	// Top is the module under test; Sources hold it and any modules it
	// instantiates (the testbench is added).
	Top     string
	Sources []Source
	// Params is the parameter override list the testbench instantiates
	// Top with ("#(.DEPTH(4))"); empty for its defaults.
	Params string
	DUT    DUT
	Stim   Stimulus
	Cycles uint64
	// Simulators to run; nil means all of Simulators.
	Simulators []Simulator
}

// Run records the vectors once and checks them under every simulator as
// subtests named after the simulators. A missing simulator skips its
// subtest (or fails it, with UVMMU_REQUIRE_SIM=1).
func Run(t *testing.T, c Case) {
	t.Helper()
	l, err := NewLayout(c.DUT.Ports())
	if err != nil {
		t.Fatalf("%s: %v", c.Top, err)
	}
	tb, err := Testbench(c.Top, c.Params, l)
	if err != nil {
		t.Fatalf("%s: testbench: %v", c.Top, err)
	}
	v, err := Record(c.DUT, c.Stim, c.Cycles, t.TempDir(), c.Top)
	if err != nil {
		t.Fatalf("%s: recording the Go model: %v", c.Top, err)
	}
	sources := append([]Source{{Name: TestbenchTop(c.Top) + ".v", Text: tb}}, c.Sources...)
	sims := c.Simulators
	if sims == nil {
		sims = Simulators
	}
	for _, sim := range sims {
		t.Run(sim.Name, func(t *testing.T) {
			sim.Require(t)
			exe, err := sim.Build(TestbenchTop(c.Top), nil, sources)
			if err != nil {
				t.Fatal(err)
			}
			if err := exe.Check(v); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s matches the Go model for %d cycles", sim.Name, c.Top, v.Cycles)
		})
	}
}
