package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/multigpu"
	"github.com/uvmmu/uvmmu/sim/workload/characterize"
)

// gritTestSweep is a sweep of two workloads under ot, ac and dup on the
// grit preset with gpu.sms=4, as the command would describe it.
func gritTestSweep(t *testing.T, latencies ...float64) GritSweep {
	t.Helper()
	cfg := config.Default()
	require.NoError(t, cfg.ApplyPreset("grit"))
	require.NoError(t, cfg.Set("gpu.sms=4"))
	cfg.Run.Scale = 0.05
	s := NewGritSweep(GritSchemesName, []string{"--scale", "0.05", "--set", "gpu.sms=4", "--jobs", "2"}, &cfg, []string{"a", "b"})
	s.Schemes, s.LatenciesUs = GritSchemes, latencies
	s.Host = Host{GoVersion: "go1", CPUs: 2, CPU: "cpu", LoadAverage: "1.00 2.00 3.00"}
	s.Speed = GritSpeed{Simulated: 6, Jobs: 2, WallSeconds: 10, CPUSeconds: 18}
	return s
}

// gritTestRecord is a run of wl under scheme with cycles cycles, faults
// local faults and cycles/s per second of its wall time.
func gritTestRecord(wl, scheme string, cycles, faults uint64, rate float64) GritRecord {
	r := multigpu.Result{Workload: wl, Policy: scheme, GPUs: 4, Cycles: cycles, EvaluatedCycles: cycles / 10, SimCyclesPerSecond: rate}
	r.Total.LocalFaults = faults
	r.Total.LocalAccesses, r.Total.RemoteAccesses = 300, 100
	r.Total.Promotions, r.Total.ProtectionFaults, r.Total.ReplicasMade, r.Total.ReplicasCollapse = 2, 3, 4, 5
	return GritRecord{Result: r}
}

// The scheme table from hand-made records: a: ot 1,000 cycles, ac 500
// (2x), dup 2,000 (0.5x); b: ot 9,000, ac 1,000 (9x), dup missing. The
// geomeans: ac sqrt(2 x 9) = 4.24x, dup 0.5x over 1 of 2 workloads. The
// speed: 5 runs, 1,000 + 500 + 2,000 + 9,000 + 1,000 = 13,500 cycles
// (1,350 evaluated), 1,350 per second of the 10 s wall time = 0.00135
// million; per run rates 1, 2, 3, 4, 5 million: median 3.
func TestGritSchemesMarkdown(t *testing.T) {
	s := gritTestSweep(t)
	recs := []GritRecord{
		gritTestRecord("a", "ot", 1000, 10, 1e6), gritTestRecord("a", "ac", 500, 7, 2e6), gritTestRecord("a", "dup", 2000, 11, 3e6),
		gritTestRecord("b", "ot", 9000, 20, 4e6), gritTestRecord("b", "ac", 1000, 8, 5e6), {},
	}
	s.Speed.Simulated = 5
	var b strings.Builder
	require.NoError(t, WriteGritSchemesMarkdown(&b, &s, recs))
	want := "Uniform schemes on 4 GPUs (GRIT Fig. 1): each scheme's performance relative to `ot` (`ot` cycles over the scheme's), from 5 of the 6 runs.\n\n" +
		"Made by `uvmsim experiment grit-schemes --scale 0.05 --set gpu.sms=4 --jobs 2` on uvmmu (go1), 2 CPUs (cpu), load average 1.00 2.00 3.00 at the start. " +
		"System: preset `grit` with gpu.sms=4: 4 GPUs of 4 SMs (64 warps each) at 1000 MHz, faults in batches of up to 256 at 20 us per batch, access-counter threshold 256, GPU memory 70% of the footprint; workloads at scale 0.05, seed 1.\n\n" +
		"| workload | ot cycles | ac | dup | ot faults | ac: faults, promotions, remote / all accesses | dup: faults, protection faults, replicas, collapses |\n" +
		"|---|---|---|---|---|---|---|\n" +
		"| a | 1,000 | 2.00x | 0.50x | 10 | 7, 2, 100 / 400 | 11, 3, 4, 5 |\n" +
		"| b | 9,000 | 9.00x | n/a | 20 | 8, 2, 100 / 400 | n/a |\n" +
		"| geomean |  | 4.24x | 0.50x (1 of 2) |  |  |  |\n\n" +
		"Speed: 5 runs with `--jobs 2`: 10.0 s of wall time, 18.0 s of CPU time (user and system); 13,500 simulated cycles (1,350 of them evaluated, the others skipped while every block slept), " +
		"0.00135 million per second of wall time; per run 1 / 3 / 5 million simulated cycles per second of its wall time (min / median / max).\n"
	assert.Equal(t, want, b.String())

	s.Speed.Simulated = 2
	b.Reset()
	require.NoError(t, WriteGritSchemesMarkdown(&b, &s, recs))
	assert.Contains(t, b.String(), "Speed: 5 runs (2 of them simulated by the command, the others read back from earlier runs) with `--jobs 2`: 10.0 s of wall time",
		"a partly resumed sweep says so and gives no rate over the wall time")
	assert.NotContains(t, b.String(), "per second of wall time;")
}

// The latency table: records in workload, latency, scheme order; at 0 us
// a: ot 100, ac 50 (2x), dup 100 (1x), b: ot 800, ac 100 (8x), dup 400
// (2x): geomeans ac sqrt(16) = 4x, dup sqrt(2) = 1.41x.
func TestGritFaultLatencyMarkdown(t *testing.T) {
	s := gritTestSweep(t, 0, 20)
	s.Command, s.Workloads = GritFaultLatencyName, []string{"a", "b"}
	var recs []GritRecord
	for _, wl := range []struct {
		name   string
		cycles [2][3]uint64
	}{{"a", [2][3]uint64{{100, 50, 100}, {1000, 1000, 1000}}}, {"b", [2][3]uint64{{800, 100, 400}, {2000, 1000, 1000}}}} {
		for li := range 2 {
			for si, sc := range GritSchemes {
				recs = append(recs, gritTestRecord(wl.name, sc, wl.cycles[li][si], 1, 1e6))
			}
		}
	}
	var b strings.Builder
	require.NoError(t, WriteGritFaultLatencyMarkdown(&b, &s, recs))
	assert.Contains(t, b.String(), "geomean over a, b, from 12 of the 12 runs.")
	assert.Contains(t, b.String(), "| fault latency | ot cycles, a | ot cycles, b | ac | dup |\n|---|---|---|---|---|\n"+
		"| 0 us | 100 | 800 | 4.00x | 1.41x |\n| 20 us | 1,000 | 2,000 | 1.41x | 1.41x |\n")
	fig := GritFaultLatencyFigure(&s, recs, 4)
	require.Len(t, fig.Panels, 2)
	assert.InDelta(t, 4, fig.Panels[0].Value("ac", GeomeanGroup), 1e-9)
}

// A latency sweep's runs: workload, then latency, then scheme, each
// at its latency; the scheme sweep keeps the base's latency.
func TestGritSchemeConfigsOrder(t *testing.T) {
	s := gritTestSweep(t, 0, 50)
	s.Workloads = []string{"grit-gemm", "grit-st"}
	o, err := s.Options(t.TempDir(), true)
	require.NoError(t, err)
	cfgs, labels, err := GritSchemeConfigs(o)
	require.NoError(t, err)
	require.Len(t, labels, 12)
	assert.Equal(t, []string{"grit-gemm/ot/0us", "grit-gemm/ac/0us", "grit-gemm/dup/0us", "grit-gemm/ot/50us"}, labels[:4])
	assert.Equal(t, 50.0, cfgs[5].MultiGPU.FaultLatencyUs)
	assert.Equal(t, "grit-st", cfgs[6].Run.Workload)
	assert.Equal(t, 4, cfgs[0].GPU.SMs, "the sweep's base: gpu.sms=4 over the grit preset")
	o.LatenciesUs = nil
	cfgs, labels, err = GritSchemeConfigs(o)
	require.NoError(t, err)
	assert.Equal(t, []string{"grit-gemm/ot", "grit-gemm/ac", "grit-gemm/dup", "grit-st/ot", "grit-st/ac", "grit-st/dup"}, labels)
	assert.Equal(t, 20.0, cfgs[0].MultiGPU.FaultLatencyUs)
}

// The sweep description survives its JSON and rebuilds its base.
func TestGritSweepRoundTrip(t *testing.T) {
	s := gritTestSweep(t, 0, 5)
	dir := t.TempDir()
	require.NoError(t, WriteFileAtomic(filepath.Join(dir, ManifestFile), s.WriteJSON))
	got, err := ReadGritSweep(dir)
	require.NoError(t, err)
	assert.Equal(t, s, got)
	assert.True(t, s.SameRuns(&got))
	got.Speed, got.CommandLine = GritSpeed{}, "uvmsim experiment other"
	assert.True(t, s.SameRuns(&got), "command line and speed aside")
	got.Scale = 0.1
	assert.False(t, s.SameRuns(&got))
	assert.Equal(t, "'a b'", shellQuote("a b"))
	assert.Equal(t, "gpu.sms=4", shellQuote("gpu.sms=4"))
}

func TestGritCharacterizeMarkdown(t *testing.T) {
	s := gritTestSweep(t)
	s.Command = GritCharacterizeName
	s.Placement = &characterize.Placement{GPUs: 4, SMs: 64, WarpsPerSM: 64}
	res := []characterize.Result{{Workload: "grit-fir", Counts: characterize.Counts{Pages: 8, Private: 6, SharedRO: 2, Accesses: 10, PrivateAccesses: 5, SharedROAccesses: 5}}}
	var b strings.Builder
	require.NoError(t, WriteGritCharacterizeMarkdown(&b, &s, res))
	assert.Contains(t, b.String(), "Page sharing (GRIT Fig. 4) on 4 GPUs of 64 SMs, 64 warps per SM")
	assert.Contains(t, b.String(), ": 10.0 s of wall time, 18.0 s of CPU time.")
	assert.Contains(t, b.String(), "| grit-fir | 8 | 75.0 | 25.0 | 25.0 | 0.0 | 50.0 | almost all private |\n")
}

// gritDocs are the GRIT tables docs/grit.md holds, each made by its
// experiment from the runs stored in docs/results/NAME.
var gritDocs = []string{GritSchemesName, GritFaultLatencyName, GritCharacterizeName}

// TestGritDocsAreGenerated rebuilds each GRIT table from the runs stored
// in docs/results/NAME (experiment.json and runs/, or results.json for
// grit-characterize), simulating nothing, and holds docs/results/NAME/NAME.md
// and docs/grit.md's section to it, byte for byte.
func TestGritDocsAreGenerated(t *testing.T) {
	page, err := os.ReadFile("../../docs/grit.md")
	require.NoError(t, err)
	for _, name := range gritDocs {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("../../docs/results", name)
			s, err := ReadGritSweep(dir)
			require.NoError(t, err)
			require.Equal(t, name, s.Command)
			var b strings.Builder
			if name == GritCharacterizeName {
				res, err := ReadGritCharacterization(dir)
				require.NoError(t, err)
				require.NoError(t, WriteGritCharacterizeMarkdown(&b, &s, res))
			} else {
				o, err := s.Options(dir, true)
				require.NoError(t, err)
				recs, err := RunGritSchemes(o)
				require.NoError(t, err)
				require.Equal(t, len(recs), gritStored(recs), "every run of the table is stored")
				if name == GritSchemesName {
					require.NoError(t, WriteGritSchemesMarkdown(&b, &s, recs))
				} else {
					require.NoError(t, WriteGritFaultLatencyMarkdown(&b, &s, recs))
				}
			}
			regen := "regenerate it with " + s.CommandLine
			stored, err := os.ReadFile(filepath.Join(dir, GritMarkdown(name)))
			require.NoError(t, err)
			assert.Equal(t, b.String(), string(stored), "%s differs from the runs stored beside it; %s", GritMarkdown(name), regen)
			section, err := DocSection(page, name)
			require.NoError(t, err)
			assert.Equal(t, b.String(), section, "docs/grit.md's %s section differs from the runs stored in %s; %s", name, dir, regen)
		})
	}
}
