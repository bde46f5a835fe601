package tb

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/tb/cosim"
)

// speedEnv enables TestSpeed and sets its cycle count per top (1,000,000
// in docs/verilog.md). The comparison is a measurement, not part of the
// default run: each top needs an optimised Verilator build.
const speedEnv = "UVMMU_SPEED_CYCLES"

// Further settings of TestSpeed: how many times each measurement is
// repeated (the table gives medians), the workload scale of the
// full-system rows, and the Markdown file the report is written to
// (make speed: docs/performance.md).
const (
	speedRunsEnv   = "UVMMU_SPEED_RUNS"
	speedScaleEnv  = "UVMMU_SPEED_SCALE"
	speedReportEnv = "UVMMU_SPEED_REPORT"

	defaultSpeedRuns  = 3
	defaultSpeedScale = 0.5
)

// speedCase is one top of the speed comparison: its default RTL, and a
// constructor for a fresh Go model, in a simulator with the given options,
// with the stimulus of its default co-simulation set.
type speedCase struct {
	top     string
	sources func(t *testing.T) []cosim.Source
	model   func(t *testing.T, opts rtl.Options) (cosim.DUT, cosim.Stimulus)
}

// daSpeedFree is the fraction of free frame-groups in the DA's initial
// IPgT, as in the default set of TestCosimDA.
const daSpeedFree = 0.05

var speedCases = []speedCase{
	{
		top:     "uvmmu_dcq",
		sources: func(t *testing.T) []cosim.Source { return []cosim.Source{emit(t, "uvmmu_dcq", nil)} },
		model: func(t *testing.T, opts rtl.Options) (cosim.DUT, cosim.Stimulus) {
			cfg := dcq.DefaultConfig()
			d, err := NewDCQIn(cfg, opts)
			require.NoError(t, err)
			return d, DCQStimulus(2, cfg.FGBits)
		},
	},
	{
		top:     "uvmmu_da",
		sources: func(t *testing.T) []cosim.Source { return emitDA(t, nil) },
		model: func(t *testing.T, opts rtl.Options) (cosim.DUT, cosim.Stimulus) {
			cfg := da.DefaultConfig()
			d, err := newDAIn(cfg, dram.DefaultConfig(1), daTable(7, cfg.NFG, daSpeedFree), opts)
			require.NoError(t, err)
			return d, DAStimulus(d, 11)
		},
	},
	{
		top:     "grit_pa_cache",
		sources: func(t *testing.T) []cosim.Source { return []cosim.Source{emit(t, "grit_pa_cache", nil)} },
		model: func(t *testing.T, opts rtl.Options) (cosim.DUT, cosim.Stimulus) {
			d, err := newPACacheIn(pacache.DefaultConfig(), pacache.TableConfig{Latency: 3, StallSeed: 0xbeef}, opts)
			require.NoError(t, err)
			return d, PACacheStimulus(d, 5)
		},
	},
}

// speedRow is one line of the comparison table: medians over the runs.
type speedRow struct {
	top                                string
	cycles                             uint64
	goRate, checkedRate, verilatorRate float64
	sumsEqual                          bool
}

// TestSpeed runs the same stimulus through the Go model and through a
// Verilator -O3 build of the emitted RTL driven by a raw eval() loop, and
// reports cycles per second of each. The stimulus is recorded once as the
// co-simulation's golden vectors and its inputs are replayed into fresh Go
// models and into the Verilated model; each folds every checked output of
// every cycle into a checksum (cosim.Checksum), and the test fails unless
// the checksums are equal. Only the cycle loops are timed: the Go model's
// Outputs/Clock loop, and the harness's eval() loop with the inputs
// already in memory. The Go models run in the fast kernel, as a simulation
// does, and in the checked kernel the tests use, reported beside it. Every
// figure is the median of UVMMU_SPEED_RUNS runs.
//
// It then times the full system (TestSpeed's second table): every built-in
// workload at 150% oversubscription under um, uvmmu and ideal at the scale
// UVMMU_SPEED_SCALE, set-up apart from the simulation loop, warp
// instructions and evaluated cycles per second of the loop.
// With UVMMU_SPEED_REPORT set, both tables and the machine they ran on are
// written there as Markdown.
func TestSpeed(t *testing.T) {
	s := os.Getenv(speedEnv)
	if s == "" {
		t.Skipf("set %s to a cycle count to compare Go and Verilator speed (make speed)", speedEnv)
	}
	cycles, err := strconv.ParseUint(s, 10, 64)
	if err != nil || cycles < 2 || cycles > 1<<31-1 {
		t.Fatalf("%s=%q: want a cycle count in 2..%d", speedEnv, s, 1<<31-1)
	}
	runs := defaultSpeedRuns
	if s := os.Getenv(speedRunsEnv); s != "" {
		if runs, err = strconv.Atoi(s); err != nil || runs < 1 || runs > 100 {
			t.Fatalf("%s=%q: want a run count in 1..100", speedRunsEnv, s)
		}
	}
	scale := defaultSpeedScale
	if s := os.Getenv(speedScaleEnv); s != "" {
		if scale, err = strconv.ParseFloat(s, 64); err != nil || !(scale >= 0.0001 && scale <= 10000) {
			t.Fatalf("%s=%q: want a workload scale in [0.0001, 10000]", speedScaleEnv, s)
		}
	}
	cosim.VerilatorSpeed.Require(t)
	start := time.Now()
	machine := describeMachine()
	var rows []speedRow
	for _, sc := range speedCases {
		t.Run(sc.top, func(t *testing.T) {
			rows = append(rows, measureSpeed(t, sc, cycles, runs))
		})
	}
	var sys []systemSpeedRow
	t.Run("system", func(t *testing.T) { sys = measureSystemSpeed(t, scale, runs) })
	report := speedReport(machine, loadAverage(), time.Since(start), rows, sys, cycles, runs, scale)
	t.Logf("speed of the Go models, of Verilator -O3 builds of the RTL, and of the full system:\n%s", report)
	if path := os.Getenv(speedReportEnv); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(report), 0o644))
	}
}

// median is the middle of xs (the mean of the two middle ones for an even
// count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// goSpeed replays the inputs into a fresh Go model and returns its cycles
// per second and output checksum.
func goSpeed(t *testing.T, sc speedCase, v cosim.Vectors, in []uint64, cycles uint64, opts rtl.Options) (float64, uint64) {
	model, _ := sc.model(t, opts)
	n := len(v.Layout.Inputs)
	out := make([]uint64, len(v.Layout.Outputs))
	sum := cosim.NewChecksum(v.Layout)
	start := time.Now()
	for c := range cycles {
		model.Outputs(out)
		if c > 0 {
			sum.Add(out)
		}
		if err := model.Clock(in[c*uint64(n) : (c+1)*uint64(n)]); err != nil {
			t.Fatalf("%s: cycle %d: %v", sc.top, c, err)
		}
	}
	return float64(cycles) / time.Since(start).Seconds(), sum.Sum()
}

func measureSpeed(t *testing.T, sc speedCase, cycles uint64, runs int) speedRow {
	dir := t.TempDir()
	recorder, stim := sc.model(t, rtl.Options{Checked: true})
	v, err := cosim.Record(recorder, stim, cycles, dir, sc.top)
	require.NoError(t, err)
	in, err := cosim.ReadInputs(v)
	require.NoError(t, err)

	harness, err := cosim.Harness(sc.top, v.Layout)
	require.NoError(t, err)
	srcs := append(sc.sources(t), cosim.Source{Name: cosim.HarnessName(sc.top), Text: harness})
	exe, err := cosim.VerilatorSpeed.Build(sc.top, nil, srcs)
	require.NoError(t, err)

	row := speedRow{top: sc.top, cycles: cycles, sumsEqual: true}
	var fast, checked, verilator []float64
	for range runs {
		res, err := exe.RunSpeed(dir, in, cycles)
		require.NoError(t, err)
		require.Equal(t, cycles, res.Cycles)
		verilator = append(verilator, float64(cycles)/res.Seconds)
		rate, sum := goSpeed(t, sc, v, in, cycles, rtl.Options{})
		fast = append(fast, rate)
		row.sumsEqual = row.sumsEqual && sum == res.Checksum
		assert.Equalf(t, res.Checksum, sum, "%s: output checksums of the fast Go model and the Verilated RTL differ", sc.top)
		rate, sum = goSpeed(t, sc, v, in, cycles, rtl.Options{Checked: true})
		checked = append(checked, rate)
		row.sumsEqual = row.sumsEqual && sum == res.Checksum
		assert.Equalf(t, res.Checksum, sum, "%s: output checksums of the checked Go model and the Verilated RTL differ", sc.top)
	}
	row.goRate, row.checkedRate, row.verilatorRate = median(fast), median(checked), median(verilator)
	return row
}
