package tb

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// runDirected builds the hand-written testbench tb/directed/<tbTop>.v with
// the design under sims and expects it to print PASS.
func runDirected(t *testing.T, tbTop string, params []string, design cosim.Source, sims []cosim.Simulator) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("directed", tbTop+".v"))
	require.NoError(t, err)
	sources := []cosim.Source{{Name: tbTop + ".v", Text: text}, design}
	for _, sim := range sims {
		t.Run(sim.Name, func(t *testing.T) {
			sim.Require(t)
			exe, err := sim.Build(tbTop, params, sources)
			require.NoError(t, err)
			out, err := exe.Run()
			require.NoError(t, err, out)
			require.Contains(t, out, "PASS", out)
			require.NotContains(t, out, "FAIL", out)
		})
	}
}

// The directed tests follow the co-simulation's rule for simulators: the
// default parameter set under both, the others under Icarus except in the
// long run.
func TestDirectedDCQ(t *testing.T) {
	for _, ps := range []paramSet{
		{name: "default"},
		{name: "depth128", values: gen.Values{"DEPTH": 128, "THRESHOLD": 100, "FG_BITS": 20}},
		{name: "depth5", values: gen.Values{"DEPTH": 5, "THRESHOLD": 5, "FG_BITS": 1}},
		{name: "depth2", values: gen.Values{"DEPTH": 2, "THRESHOLD": 1, "FG_BITS": 63}},
	} {
		t.Run(ps.name, func(t *testing.T) {
			e, err := gen.Lookup("uvmmu_dcq")
			require.NoError(t, err)
			v, err := e.Resolve(ps.values)
			require.NoError(t, err)
			params := []string{
				fmt.Sprintf("DEPTH=%d", v["DEPTH"]),
				fmt.Sprintf("THRESHOLD=%d", v["THRESHOLD"]),
				fmt.Sprintf("FG_BITS=%d", v["FG_BITS"]),
			}
			runDirected(t, "tb_uvmmu_dcq_directed", params, emit(t, "uvmmu_dcq", ps.values), ps.simulators())
		})
	}
}

func TestDirectedLFSR(t *testing.T) {
	for _, tc := range []struct {
		name        string
		width       int
		seed        uint64
		checkPeriod bool
	}{
		{"default", lfsr.DefaultConfig().Width, lfsr.DefaultConfig().Seed, false},
		// Width 16 walks the whole period, 65,535 steps.
		{"width16", 16, 0xace1, true},
		{"width61", 61, 0x1234_5678_9abc_def, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			taps, err := lfsr.Taps(tc.width)
			require.NoError(t, err)
			steps := 10000
			if tc.checkPeriod {
				steps = 1<<tc.width - 1
			}
			params := []string{
				fmt.Sprintf("WIDTH=%d", tc.width),
				fmt.Sprintf("SEED=%d'h%x", tc.width, tc.seed),
				fmt.Sprintf("TAPS=%d'h%x", tc.width, taps),
				fmt.Sprintf("CHECK_PERIOD=%d", map[bool]int{false: 0, true: 1}[tc.checkPeriod]),
				fmt.Sprintf("STEPS=%d", steps),
			}
			values := gen.Values{"WIDTH": uint64(tc.width), "SEED": tc.seed}
			ps := paramSet{values: values}
			if tc.name == "default" {
				ps.values = nil
			}
			runDirected(t, "tb_uvmmu_lfsr_directed", params, emit(t, "uvmmu_lfsr", values), ps.simulators())
		})
	}
}

// TestDirectedCatchesABrokenQueue runs the DCQ corner cases against a copy
// of the RTL whose push_ready ignores the full condition, and expects a
// failure: the directed checks are not vacuous.
func TestDirectedCatchesABrokenQueue(t *testing.T) {
	good := emit(t, "uvmmu_dcq", gen.Values{"DEPTH": 4, "THRESHOLD": 2, "FG_BITS": 8})
	broken := strings.Replace(string(good.Text), "assign push_ready = not_full;", "assign push_ready = 1'b1;", 1)
	require.NotEqual(t, string(good.Text), broken)
	text, err := os.ReadFile(filepath.Join("directed", "tb_uvmmu_dcq_directed.v"))
	require.NoError(t, err)
	sim := cosim.Icarus
	sim.Require(t)
	exe, err := sim.Build("tb_uvmmu_dcq_directed", []string{"DEPTH=4", "THRESHOLD=2", "FG_BITS=8"},
		[]cosim.Source{{Name: "tb.v", Text: text}, {Name: "uvmmu_dcq.v", Text: []byte(broken)}})
	require.NoError(t, err)
	out, _ := exe.Run()
	require.Contains(t, out, "FAIL: push_ready != count < DEPTH", out)
}
