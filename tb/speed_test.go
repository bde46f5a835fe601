package tb

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/tb/cosim"
)

// speedEnv enables TestSpeed and sets its cycle count per top (1,000,000
// in docs/verilog.md). The comparison is a measurement, not part of the
// default run: each top needs an optimised Verilator build.
const speedEnv = "UVMMU_SPEED_CYCLES"

// speedCase is one top of the speed comparison: its default RTL, and a
// constructor for a fresh Go model with the stimulus of its default
// co-simulation set.
type speedCase struct {
	top     string
	sources func(t *testing.T) []cosim.Source
	model   func(t *testing.T) (cosim.DUT, cosim.Stimulus)
}

// daSpeedFree is the fraction of free frame-groups in the DA's initial
// IPgT, as in the default set of TestCosimDA.
const daSpeedFree = 0.05

var speedCases = []speedCase{
	{
		top:     "uvmmu_dcq",
		sources: func(t *testing.T) []cosim.Source { return []cosim.Source{emit(t, "uvmmu_dcq", nil)} },
		model: func(t *testing.T) (cosim.DUT, cosim.Stimulus) {
			cfg := dcq.DefaultConfig()
			d, err := NewDCQ(cfg)
			require.NoError(t, err)
			return d, DCQStimulus(2, cfg.FGBits)
		},
	},
	{
		top:     "uvmmu_da",
		sources: func(t *testing.T) []cosim.Source { return emitDA(t, nil) },
		model: func(t *testing.T) (cosim.DUT, cosim.Stimulus) {
			cfg := da.DefaultConfig()
			d, err := NewDA(cfg, dram.DefaultConfig(1), daTable(7, cfg.NFG, daSpeedFree))
			require.NoError(t, err)
			return d, DAStimulus(d, 11)
		},
	},
	{
		top:     "grit_pa_cache",
		sources: func(t *testing.T) []cosim.Source { return []cosim.Source{emit(t, "grit_pa_cache", nil)} },
		model: func(t *testing.T) (cosim.DUT, cosim.Stimulus) {
			d, err := NewPACache(pacache.DefaultConfig(), pacache.TableConfig{Latency: 3, StallSeed: 0xbeef})
			require.NoError(t, err)
			return d, PACacheStimulus(d, 5)
		},
	},
}

// speedRow is one line of the comparison table.
type speedRow struct {
	top                   string
	cycles                uint64
	goRate, verilatorRate float64
	goSum, verilatorSum   uint64
}

// TestSpeed runs the same stimulus through the Go model and through a
// Verilator -O3 build of the emitted RTL driven by a raw eval() loop, and
// reports cycles per second of each. The stimulus is recorded once as the
// co-simulation's golden vectors and its inputs are replayed into a fresh
// Go model and into the Verilated model; both fold every checked output of
// every cycle into a checksum (cosim.Checksum), and the test fails unless
// the two checksums are equal. Only the cycle loops are timed: the Go
// model's Outputs/Clock loop, and the harness's eval() loop with the inputs
// already in memory. The Go models run in the checked kernel of the
// co-simulation adapters.
func TestSpeed(t *testing.T) {
	s := os.Getenv(speedEnv)
	if s == "" {
		t.Skipf("set %s to a cycle count to compare Go and Verilator speed (make speed)", speedEnv)
	}
	cycles, err := strconv.ParseUint(s, 10, 64)
	if err != nil || cycles < 2 || cycles > 1<<31-1 {
		t.Fatalf("%s=%q: want a cycle count in 2..%d", speedEnv, s, 1<<31-1)
	}
	cosim.VerilatorSpeed.Require(t)
	var rows []speedRow
	for _, sc := range speedCases {
		t.Run(sc.top, func(t *testing.T) {
			rows = append(rows, measureSpeed(t, sc, cycles))
		})
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "top\tcycles\tGo cycles/s\tVerilator cycles/s\tVerilator/Go\tchecksums equal\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.1f\t%t\t\n", r.top, r.cycles, r.goRate, r.verilatorRate, r.verilatorRate/r.goRate, r.goSum == r.verilatorSum)
	}
	require.NoError(t, tw.Flush())
	t.Logf("speed of the Go models and of Verilator -O3 builds of the RTL, same stimulus:\n%s", buf.String())
}

func measureSpeed(t *testing.T, sc speedCase, cycles uint64) speedRow {
	dir := t.TempDir()
	recorder, stim := sc.model(t)
	v, err := cosim.Record(recorder, stim, cycles, dir, sc.top)
	require.NoError(t, err)
	in, err := cosim.ReadInputs(v)
	require.NoError(t, err)

	model, _ := sc.model(t)
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
	goSeconds := time.Since(start).Seconds()

	harness, err := cosim.Harness(sc.top, v.Layout)
	require.NoError(t, err)
	srcs := append(sc.sources(t), cosim.Source{Name: cosim.HarnessName(sc.top), Text: harness})
	exe, err := cosim.VerilatorSpeed.Build(sc.top, nil, srcs)
	require.NoError(t, err)
	res, err := exe.RunSpeed(dir, in, cycles)
	require.NoError(t, err)
	require.Equal(t, cycles, res.Cycles)
	assert.Equalf(t, sum.Sum(), res.Checksum, "%s: output checksums of the Go model and the Verilated RTL differ", sc.top)
	return speedRow{top: sc.top, cycles: cycles, goRate: float64(cycles) / goSeconds, verilatorRate: float64(cycles) / res.Seconds,
		goSum: sum.Sum(), verilatorSum: res.Checksum}
}
