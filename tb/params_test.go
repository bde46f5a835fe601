package tb

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// SeedEnv fixes the seed of the random parameter points; unset, every run
// draws fresh points from the clock, and a failure prints the seed.
const SeedEnv = "UVMMU_PARAM_SEED"

// Random parameter points per top: linted and co-simulated (both
// simulators) in every run, more in the long run.
const (
	lintPoints      = 3
	cosimPoints     = 1
	cosimLongPoints = 5
	randomCycles    = 5_000
	// randomLongCycles caps a random point's run in the long run, so that
	// its 25 points take minutes, not hours.
	randomLongCycles = 1_000_000
)

// paramSeed is the seed of this run's random points.
func paramSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv(SeedEnv); s != "" {
		n, err := strconv.ParseUint(s, 0, 64)
		require.NoError(t, err, "%s=%q", SeedEnv, s)
		return n
	}
	return uint64(time.Now().UnixNano())
}

// reportSeed makes a failing test print how to draw its points again.
func reportSeed(t *testing.T, seed uint64) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random parameter points drawn with %s=%d", SeedEnv, seed)
		}
	})
}

// draw is one random legal parameter point of a top. The ranges are the
// documented ones, narrowed where a co-simulation would otherwise be long
// (NFG, SETS) without leaving out any code path: the narrowed ranges still
// reach one-word and many-word FrABs, NFG a power of two and not, and
// every threshold.
type drawer func(r *rand.Rand) gen.Values

var drawers = map[string]drawer{
	"uvmmu_lfsr": func(r *rand.Rand) gen.Values {
		w := lfsr.MinWidth + r.IntN(lfsr.MaxWidth-lfsr.MinWidth+1)
		seed := r.Uint64()
		if w < 64 {
			seed &= 1<<w - 1
		}
		return gen.Values{"WIDTH": uint64(w), "SEED": max(seed, 1)}
	},
	"uvmmu_dcq": func(r *rand.Rand) gen.Values {
		depth := 2 + r.IntN(200)
		return gen.Values{"DEPTH": uint64(depth), "THRESHOLD": uint64(1 + r.IntN(depth)), "FG_BITS": uint64(1 + r.IntN(63))}
	},
	"uvmmu_da": drawDA,
	"uvmmu_da_frab": func(r *rand.Rand) gen.Values {
		// up to 400 regions: one word to many, the last one partial or
		// full; words of 32 and 64 bits (TestCosimFrAB says why)
		return gen.Values{"NFG": uint64(1+r.IntN(400)) * frab.FrameGroupsPerRegion, "FRAB_WORD": uint64(32 << r.IntN(2))}
	},
	"uvmmu_da_afm": func(r *rand.Rand) gen.Values {
		v := drawDA(r)
		delete(v, "DCQ_THRESHOLD")
		delete(v, "LFSR_SEED")
		return v
	},
	"grit_pa_cache": func(r *rand.Rand) gen.Values {
		sets := 2 << r.IntN(6)
		return gen.Values{"SETS": uint64(sets), "WAYS": uint64(pacache.MinWays + r.IntN(pacache.MaxWays-pacache.MinWays+1)),
			"VPN_BITS": uint64(8 + r.IntN(pacache.MaxVPNBits-7)), "THRESHOLD": uint64(pacache.MinThreshold + r.IntN(pacache.MaxThreshold))}
	},
}

// drawDA draws a uvmmu_da point: NFG up to 6,000 (a power of two one time
// in four), either victim source.
func drawDA(r *rand.Rand) gen.Values {
	nfg := uint64(1 + r.IntN(6000))
	if r.IntN(4) == 0 {
		nfg = 1 << (5 + r.IntN(8))
	}
	depth := 2 + r.IntN(40)
	fg := 6 + r.IntN(30)
	lw := 8 + r.IntN(57)
	return gen.Values{"NFG": nfg, "DCQ_DEPTH": uint64(depth), "DCQ_THRESHOLD": uint64(1 + r.IntN(depth)),
		"FRAB_WORD": uint64(32 << r.IntN(5)), "FG_BITS": uint64(fg), "ADDR_W": uint64(fg + 3 + r.IntN(64-fg-2)),
		"IPGT_BASE": uint64(8 * r.IntN(512)), "LFSR_WIDTH": uint64(lw), "LFSR_SEED": uint64(1 + r.IntN(255)), "VICTIMS": uint64(r.IntN(2))}
}

// tops are the modules linted and co-simulated as a user's top.
var tops = []string{"uvmmu_lfsr", "uvmmu_dcq", "uvmmu_da", "uvmmu_da_afm", "uvmmu_da_frab", "grit_pa_cache"}

// randomPoints draws n legal points of top: draws the Go block's
// Config.Validate rejects are drawn again.
func randomPoints(t *testing.T, r *rand.Rand, top string, n int) []gen.Values {
	t.Helper()
	e, err := gen.Lookup(top)
	require.NoError(t, err)
	var out []gen.Values
	for tries := 0; len(out) < n; tries++ {
		require.Less(t, tries, 1000*n, "%s: no legal point drawn", top)
		v := drawers[top](r)
		if _, err := e.Check(v); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// TestLintRandomPoints lints a user's instantiation of every top at random
// legal points under Verilator -Wall and Icarus -Wall: both print nothing.
func TestLintRandomPoints(t *testing.T) {
	seed := paramSeed(t)
	reportSeed(t, seed)
	r := rand.New(rand.NewPCG(seed, 18))
	for _, top := range tops {
		e, err := gen.Lookup(top)
		require.NoError(t, err)
		for i, v := range randomPoints(t, r, top, lintPoints) {
			t.Run(fmt.Sprintf("%s/%d", top, i), func(t *testing.T) {
				t.Logf("%s", e.Summary(mustCheck(t, e, v)))
				lintUser(t, e, v)
			})
		}
	}
}

func mustCheck(t *testing.T, e gen.Emitter, v gen.Values) gen.Values {
	t.Helper()
	full, err := e.Check(v)
	require.NoError(t, err)
	return full
}

// TestUserInstantiation is a user's design instantiating every top with
// non-default parameters, linted by both simulators with the committed
// RTL: the lint output is empty. The wrapper is logged.
func TestUserInstantiation(t *testing.T) {
	for _, tc := range []struct {
		top    string
		values gen.Values
	}{
		{"uvmmu_lfsr", gen.Values{"WIDTH": 20, "SEED": 0x5eed}},
		{"uvmmu_dcq", gen.Values{"DEPTH": 4, "THRESHOLD": 3, "FG_BITS": 12}},
		{"uvmmu_da", gen.Values{"NFG": 4096, "DCQ_DEPTH": 16, "DCQ_THRESHOLD": 8, "FRAB_WORD": 64, "FG_BITS": 20,
			"ADDR_W": 32, "IPGT_BASE": 0x10000, "LFSR_WIDTH": 16, "LFSR_SEED": 0xace1}},
		{"uvmmu_da_afm", gen.Values{"NFG": 1000, "DCQ_DEPTH": 8, "FRAB_WORD": 32, "FG_BITS": 16, "ADDR_W": 24, "IPGT_BASE": 0x1000, "LFSR_WIDTH": 12, "VICTIMS": 1}},
		{"uvmmu_da_frab", gen.Values{"NFG": 6400, "FRAB_WORD": 64}},
		{"grit_pa_cache", gen.Values{"SETS": 64, "WAYS": 8, "VPN_BITS": 12, "THRESHOLD": 16}},
	} {
		t.Run(tc.top, func(t *testing.T) {
			e, err := gen.Lookup(tc.top)
			require.NoError(t, err)
			text, err := e.Wrapper(tc.values)
			require.NoError(t, err)
			t.Logf("\n%s", text)
			lintUser(t, e, tc.values)
		})
	}
}

// TestCosimRandomPoints co-simulates every top against its Go model at
// random legal points, under both simulators: cosimPoints per top, or
// cosimLongPoints in the long run (make cosim-long).
func TestCosimRandomPoints(t *testing.T) {
	seed := paramSeed(t)
	reportSeed(t, seed)
	r := rand.New(rand.NewPCG(seed, 19))
	n := cosimPoints
	if cosim.LongRun() {
		n = cosimLongPoints
	}
	for _, top := range tops {
		for i, v := range randomPoints(t, r, top, n) {
			t.Run(fmt.Sprintf("%s/%d", top, i), func(t *testing.T) {
				cosimAt(t, top, v, r.Uint64())
			})
		}
	}
}

// cosimAt co-simulates top at values with stimulus seed stim.
func cosimAt(t *testing.T, top string, values gen.Values, stim uint64) {
	t.Helper()
	e, err := gen.Lookup(top)
	require.NoError(t, err)
	v := mustCheck(t, e, values)
	t.Logf("%s %s, stimulus seed %d", top, e.Summary(v), stim)
	c := cosim.Case{Top: top, Params: e.Overrides(v), Cycles: min(cosim.Cycles(t, randomCycles), randomLongCycles)}
	switch top {
	case "uvmmu_lfsr":
		dut, err := NewLFSR(lfsrConfig(v))
		require.NoError(t, err)
		c.DUT, c.Stim, c.Sources = dut, LFSRStimulus(stim), []cosim.Source{emit(t, top, values)}
	case "uvmmu_dcq":
		cfg := dcqConfigOf(v)
		dut, err := NewDCQ(cfg)
		require.NoError(t, err)
		c.DUT, c.Stim, c.Sources = dut, DCQStimulus(stim, cfg.FGBits), []cosim.Source{emit(t, top, values)}
	case "uvmmu_da":
		cfg := daConfigOf(t, values)
		m := dram.DefaultConfig(1)
		m.Latency, m.BytesPerCycle = 5+int(stim%60), float64(2+stim%30)
		dut, err := NewDA(cfg, m, daTable(stim, cfg.NFG, 0.1))
		require.NoError(t, err)
		c.DUT, c.Stim, c.Sources = dut, DAStimulus(dut, stim), emitDA(t, values)
	case "uvmmu_da_afm":
		cfg := afmConfig(v)
		m := dram.DefaultConfig(1)
		m.Latency, m.BytesPerCycle = 5+int(stim%60), float64(2+stim%30)
		dut, err := NewAFMTop(cfg, m, daTable(stim, cfg.NFG, 0.1))
		require.NoError(t, err)
		c.DUT, c.Stim, c.Sources = dut, AFMStimulus(dut, stim), afmSources(t, values)
	case "uvmmu_da_frab":
		cfg := frab.Config{Regions: int(v["NFG"] / frab.FrameGroupsPerRegion), WordBits: int(v["FRAB_WORD"])}
		dut, err := NewFrAB(cfg)
		require.NoError(t, err)
		c.DUT, c.Stim, c.Sources = dut, FrABStimulus(dut, cfg.Regions, stim), frabSources(t, values)
	case "grit_pa_cache":
		cfg := pacache.Config{Sets: int(v["SETS"]), Ways: int(v["WAYS"]), VPNBits: int(v["VPN_BITS"]), Threshold: int(v["THRESHOLD"])}
		dut, err := NewPACache(cfg, pacache.TableConfig{Latency: 1 + int(stim%8), StallSeed: uint16(stim)})
		require.NoError(t, err)
		c.DUT, c.Stim, c.Sources = dut, PACacheStimulus(dut, stim), []cosim.Source{emit(t, top, values)}
	}
	cosim.Run(t, c)
}

func lfsrConfig(v gen.Values) lfsr.Config {
	return lfsr.Config{Width: int(v["WIDTH"]), Seed: v["SEED"]}
}

func dcqConfigOf(v gen.Values) dcq.Config {
	return dcq.Config{Depth: int(v["DEPTH"]), Threshold: int(v["THRESHOLD"]), FGBits: int(v["FG_BITS"])}
}

// TestIllegalParameterRejected instantiates each top with one illegal
// value (a user's wrapper with the literal changed): Verilator stops at
// elaboration and Icarus at time 0, both with a message naming the
// parameter and its range.
func TestIllegalParameterRejected(t *testing.T) {
	for _, tc := range []struct {
		top      string
		values   gen.Values
		from, to string
		want     string
	}{
		{"uvmmu_lfsr", gen.Values{"WIDTH": 20}, ".WIDTH(20)", ".WIDTH(7)", "uvmmu_lfsr: WIDTH = 7 is outside 8..64"},
		{"uvmmu_dcq", gen.Values{"DEPTH": 4, "THRESHOLD": 3}, ".THRESHOLD(3)", ".THRESHOLD(5)", "uvmmu_dcq: THRESHOLD = 5 is outside 1..DEPTH (4)"},
		{"uvmmu_da", gen.Values{"FRAB_WORD": 64}, ".FRAB_WORD(64)", ".FRAB_WORD(48)", "uvmmu_da: FRAB_WORD = 48 is not a power of two"},
		{"grit_pa_cache", gen.Values{"WAYS": 8}, ".WAYS(8)", ".WAYS(17)", "grit_pa_cache: WAYS = 17 is outside 2..16"},
	} {
		t.Run(tc.top, func(t *testing.T) {
			text, err := mustLookup(t, tc.top).Wrapper(tc.values)
			require.NoError(t, err)
			bad := strings.Replace(string(text), tc.from, tc.to, 1)
			require.NotEqual(t, string(text), bad)
			src := []cosim.Source{{Name: "user_" + tc.top + ".v", Text: []byte(bad)}}
			for _, sim := range cosim.Simulators {
				t.Run(sim.Name, func(t *testing.T) {
					sim.Require(t)
					var out string
					if sim.Name == cosim.Verilator.Name {
						dir := t.TempDir()
						path := filepath.Join(dir, src[0].Name)
						require.NoError(t, os.WriteFile(path, src[0].Text, 0o644))
						lib, err := filepath.Abs(rtlDir)
						require.NoError(t, err)
						b, err := exec.Command("verilator", "--lint-only", "-Wall", "--top-module", "user_"+tc.top, "-y", lib, path).CombinedOutput()
						require.Error(t, err)
						out = string(b)
					} else {
						files, err := gen.DefaultFiles()
						require.NoError(t, err)
						srcs := src
						for _, f := range files {
							srcs = append(srcs, cosim.Source{Name: f.Name, Text: f.Text})
						}
						exe, err := sim.Build("user_"+tc.top, nil, srcs)
						require.NoError(t, err)
						out, _ = exe.Run()
					}
					require.Contains(t, out, tc.want)
				})
			}
		})
	}
}

// frabSources are uvmmu_da_frab, linted at values, and the modules it
// instantiates (uvmmu_da_prio, uvmmu_da_frab_sram), top first.
func frabSources(t *testing.T, values gen.Values) []cosim.Source {
	t.Helper()
	srcs := []cosim.Source{emit(t, "uvmmu_da_frab", values)}
	for _, m := range []string{"uvmmu_da_prio", "uvmmu_da_frab_sram"} {
		text, err := mustLookup(t, m).Text(nil)
		require.NoError(t, err)
		srcs = append(srcs, cosim.Source{Name: m + ".v", Text: text})
	}
	return srcs
}
