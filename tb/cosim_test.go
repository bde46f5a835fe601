package tb

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// Cycle counts of the default run: the default parameter set of each top
// gets at least 1e5 cycles; the other sets are shorter, since they exist to
// catch width and wrap-around mistakes. UVMMU_COSIM_CYCLES overrides both.
//
// The default parameter sets run under both simulators. A Verilator build
// takes tens of seconds of the two-core budget, so the other sets run under
// Icarus only, except in the long run (UVMMU_COSIM_CYCLES set), which runs
// everything under both.
const (
	defaultCycles = 100_000
	sweepCycles   = 20_000
)

// paramSet is one parameter set of a top for the co-simulation sweep.
type paramSet struct {
	name   string
	values gen.Values
	cycles uint64
}

// simulators is the simulators a parameter set runs under.
func (ps paramSet) simulators() []cosim.Simulator {
	if ps.values == nil || cosim.LongRun() {
		return cosim.Simulators
	}
	return []cosim.Simulator{cosim.Icarus}
}

// emit returns the committed module top as a source (the generator's
// default file, which TestCommittedRTLMatchesGenerator holds equal to
// verilog/rtl) after linting a user's instantiation of it at values.
func emit(t *testing.T, top string, values gen.Values) cosim.Source {
	t.Helper()
	e, err := gen.Lookup(top)
	require.NoError(t, err)
	lintUser(t, e, values)
	text, err := e.Text(nil)
	require.NoError(t, err)
	return cosim.Source{Name: top + ".v", Text: text}
}

// overrides is the parameter override list of top at values.
func overrides(t *testing.T, top string, values gen.Values) string {
	t.Helper()
	e, err := gen.Lookup(top)
	require.NoError(t, err)
	v, err := e.Check(values)
	require.NoError(t, err)
	return e.Overrides(v)
}

func TestCosimLFSR(t *testing.T) {
	for _, ps := range []paramSet{
		{"default", nil, defaultCycles},
		{"width16", gen.Values{"WIDTH": 16, "SEED": 0xace1}, sweepCycles},
		{"width61", gen.Values{"WIDTH": 61, "SEED": 0x1234_5678_9abc_def}, sweepCycles},
	} {
		t.Run(ps.name, func(t *testing.T) {
			src := emit(t, "uvmmu_lfsr", ps.values)
			e, err := gen.Lookup("uvmmu_lfsr")
			require.NoError(t, err)
			v, err := e.Resolve(ps.values)
			require.NoError(t, err)
			dut, err := NewLFSR(lfsr.Config{Width: int(v["WIDTH"]), Seed: v["SEED"]})
			require.NoError(t, err)
			cosim.Run(t, cosim.Case{
				Top: "uvmmu_lfsr", Sources: []cosim.Source{src}, Params: overrides(t, "uvmmu_lfsr", ps.values), DUT: dut,
				Stim: LFSRStimulus(1), Cycles: cosim.Cycles(t, ps.cycles), Simulators: ps.simulators(),
			})
		})
	}
}

func TestCosimDCQ(t *testing.T) {
	for _, ps := range []paramSet{
		{"default", nil, defaultCycles},
		{"depth128", gen.Values{"DEPTH": 128, "THRESHOLD": 100, "FG_BITS": 20}, sweepCycles},
		{"depth5", gen.Values{"DEPTH": 5, "THRESHOLD": 5, "FG_BITS": 1}, sweepCycles},
	} {
		t.Run(ps.name, func(t *testing.T) {
			src := emit(t, "uvmmu_dcq", ps.values)
			e, err := gen.Lookup("uvmmu_dcq")
			require.NoError(t, err)
			v, err := e.Resolve(ps.values)
			require.NoError(t, err)
			cfg := dcq.Config{Depth: int(v["DEPTH"]), Threshold: int(v["THRESHOLD"]), FGBits: int(v["FG_BITS"])}
			dut, err := NewDCQ(cfg)
			require.NoError(t, err)
			var cov dcqCoverage
			cosim.Run(t, cosim.Case{
				Top: "uvmmu_dcq", Sources: []cosim.Source{src}, Params: overrides(t, "uvmmu_dcq", ps.values), DUT: dut,
				Stim: cov.observe(cfg, DCQStimulus(2, cfg.FGBits)), Cycles: cosim.Cycles(t, ps.cycles), Simulators: ps.simulators(),
			})
			require.Positive(t, cov.pushPopFull, "no cycle offered a push and a pop at full")
			require.Positive(t, cov.pushPopEmpty, "no cycle offered a push and a pop at empty")
			require.Positive(t, cov.pushPopMiddle, "no cycle pushed and popped together below full")
			require.Positive(t, cov.thresholdCrossings, "refill never rose again after falling")
			require.Positive(t, cov.resets, "no reset after the first cycle")
		})
	}
}

// dcqCoverage counts the corner cases the DCQ stimulus reached, so that a
// change to the stimulus cannot quietly stop exercising them.
type dcqCoverage struct {
	pushPopFull, pushPopEmpty, pushPopMiddle int
	thresholdCrossings, resets               int
	refillWasLow                             bool
}

func (c *dcqCoverage) observe(cfg dcq.Config, stim cosim.Stimulus) cosim.Stimulus {
	return func(cycle uint64, out, in []uint64) {
		stim(cycle, out, in)
		if cycle == 0 {
			return
		}
		both := in[dcqInPushValid] == 1 && in[dcqInPopReady] == 1
		switch n := out[dcqOutCount]; {
		case both && n == uint64(cfg.Depth):
			c.pushPopFull++
		case both && n == 0:
			c.pushPopEmpty++
		case both:
			c.pushPopMiddle++
		}
		if out[dcqOutRefill] == 0 {
			c.refillWasLow = true
		} else if c.refillWasLow {
			c.thresholdCrossings++
			c.refillWasLow = false
		}
		if in[dcqInRst] == 1 {
			c.resets++
		}
	}
}

// TestCosimDetectsWrongModel runs the DCQ vectors of one configuration
// against the RTL of another and expects the harness to report the first
// differing cycle: the check is not vacuous. (tb/cosim's own tests check the
// failure path under Verilator too.)
func TestCosimDetectsWrongModel(t *testing.T) {
	cfg := dcq.Config{Depth: 4, Threshold: 2, FGBits: 8}
	dut, err := NewDCQ(cfg)
	require.NoError(t, err)
	rtl := emit(t, "uvmmu_dcq", nil)
	// The testbench instantiates uvmmu_dcq with THRESHOLD 3, so the only
	// difference is the threshold.
	l, err := cosim.NewLayout(dut.Ports())
	require.NoError(t, err)
	tbText, err := cosim.Testbench("uvmmu_dcq", overrides(t, "uvmmu_dcq", gen.Values{"DEPTH": 4, "THRESHOLD": 3, "FG_BITS": 8}), l)
	require.NoError(t, err)
	vec, err := cosim.Record(dut, DCQStimulus(3, cfg.FGBits), 2000, t.TempDir(), "wrong")
	require.NoError(t, err)
	for _, sim := range []cosim.Simulator{cosim.Icarus} {
		t.Run(sim.Name, func(t *testing.T) {
			sim.Require(t)
			exe, err := sim.Build(cosim.TestbenchTop("uvmmu_dcq"), nil,
				[]cosim.Source{{Name: "tb_uvmmu_dcq.v", Text: tbText}, rtl})
			require.NoError(t, err)
			err = exe.Check(vec)
			require.Error(t, err)
			require.Regexp(t, `cycle \d+ port refill expected 0 got 1`, err.Error())
			require.Contains(t, err.Error(), fmt.Sprintf("uvmmu_dcq_%s.vcd", sim.Name))
		})
	}
}
