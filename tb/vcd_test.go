package tb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// vcdSignal is one signal's value changes: times ascending, each value a
// binary string (x or z bits possible).
type vcdSignal struct {
	kind  string // reg or wire
	times []uint64
	vals  []string
}

// at is the value at time t: the last change at or before it.
func (s *vcdSignal) at(t uint64) (string, bool) {
	i := sort.Search(len(s.times), func(i int) bool { return s.times[i] > t })
	if i == 0 {
		return "", false
	}
	return s.vals[i-1], true
}

// parseVCD reads a value change dump into its signals by dotted
// hierarchical name (scope.scope.name).
func parseVCD(r io.Reader) (map[string]*vcdSignal, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	sc.Split(bufio.ScanWords)
	byID := map[string][]*vcdSignal{}
	sigs := map[string]*vcdSignal{}
	var scope []string
	var t uint64
	next := func() string {
		if sc.Scan() {
			return sc.Text()
		}
		return "$end"
	}
	set := func(id, val string) {
		for _, s := range byID[id] {
			if n := len(s.times); n > 0 && s.times[n-1] == t {
				s.vals[n-1] = val
				continue
			}
			s.times, s.vals = append(s.times, t), append(s.vals, val)
		}
	}
	for sc.Scan() {
		tok := sc.Text()
		switch {
		case tok == "$scope":
			next()
			scope = append(scope, next())
			next()
		case tok == "$upscope":
			scope = scope[:len(scope)-1]
			next()
		case tok == "$var":
			kind, _, id, name := next(), next(), next(), next()
			for w := next(); w != "$end"; w = next() {
			}
			s := &vcdSignal{kind: kind}
			full := strings.Join(append(append([]string{}, scope...), name), ".")
			sigs[full] = s
			byID[id] = append(byID[id], s)
		case tok == "$comment" || tok == "$date" || tok == "$version" || tok == "$timescale":
			for w := next(); w != "$end"; w = next() {
			}
		case tok == "$dumpvars" || tok == "$end" || tok == "$enddefinitions" || tok == "$dumpall" || tok == "$dumpon" || tok == "$dumpoff":
		case strings.HasPrefix(tok, "#"):
			n, err := strconv.ParseUint(tok[1:], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("VCD time %q: %v", tok, err)
			}
			t = n
		case tok[0] == 'b' || tok[0] == 'B':
			set(next(), tok[1:])
		case tok[0] == 'r' || tok[0] == 'R':
			next()
		case strings.ContainsRune("01xzXZ", rune(tok[0])):
			set(tok[1:], tok[:1])
		default:
			return nil, fmt.Errorf("VCD token %q not understood", tok)
		}
	}
	return sigs, sc.Err()
}

// vcdValue turns a VCD binary string into a number; ok is false when it
// has x or z bits.
func vcdValue(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 2, 64)
	return v, err == nil
}

// noResets is stim with its resets after cycle 0 removed: the Go model's
// VCD counts cycles from its last reset, the simulator's from time 0.
func noResets(stim cosim.Stimulus) cosim.Stimulus {
	return func(cycle uint64, out, in []uint64) {
		stim(cycle, out, in)
		in[0] = 0 // rst is the first input of every adapter
	}
}

// compareVCD runs the vectors of dut (its Go simulator traced)
// through the committed module top under Icarus with a VCD dump, and
// compares the two dumps signal by signal: every port but clk and rst (the
// Go model resets through its simulator, not a wire) and every
// register of top's module (arrays aside, which Icarus does not dump) must
// exist in the Go dump under the same name and show the same value in
// every cycle from the first after the reset (a payload while its valid is
// high). It returns the first
// difference (lowest cycle, then name).
//
// goName maps a signal of top's module to its Go name; false means the Go
// model has no such signal by design (it is then not compared). A signal
// of an instance inside top is named by its path (u_dcq.mem_fill); a
// goName that maps it has it compared too.
func compareVCD(t *testing.T, top, params string, sim *rtl.Sim, goName func(string) (string, bool), dut cosim.DUT, stim cosim.Stimulus, cycles uint64) error {
	t.Helper()
	cosim.Icarus.Require(t)
	var goVCD bytes.Buffer
	require.NoError(t, sim.TraceVCD(&goVCD, "*"))
	dir := t.TempDir()
	v, err := cosim.Record(dut, noResets(stim), cycles, dir, top)
	require.NoError(t, err)
	require.NoError(t, sim.CloseTrace())
	l, err := cosim.NewLayout(dut.Ports())
	require.NoError(t, err)
	tbText, err := cosim.Testbench(top, params, l)
	require.NoError(t, err)
	srcs := []cosim.Source{{Name: cosim.TestbenchTop(top) + ".v", Text: tbText}}
	files, err := gen.DefaultFiles()
	require.NoError(t, err)
	for _, f := range files {
		srcs = append(srcs, cosim.Source{Name: f.Name, Text: f.Text})
	}
	exe, err := cosim.Icarus.Build(cosim.TestbenchTop(top), nil, srcs)
	require.NoError(t, err)
	path := filepath.Join(dir, top+".vcd")
	// A run that differs from the Go model stops at the first differing
	// output; its VCD still holds every cycle up to there.
	out, _ := exe.Run("vectors="+v.Prefix, fmt.Sprintf("cycles=%d", cycles), "vcd="+path)
	f, err := os.Open(path)
	require.NoError(t, err, out)
	defer f.Close()
	hw, err := parseVCD(f)
	require.NoError(t, err)
	gm, err := parseVCD(&goVCD)
	require.NoError(t, err)

	// The DUT's own signals: directly in the dut scope.
	prefix := cosim.TestbenchTop(top) + ".dut."
	type pair struct {
		name   string
		hw, gm *vcdSignal
	}
	var pairs []pair
	var missing []string
	for name, s := range hw {
		leaf, ok := strings.CutPrefix(name, prefix)
		if !ok || leaf == "clk" || leaf == cosim.ResetPort {
			continue
		}
		gn, expected := goName(leaf)
		if !expected {
			continue
		}
		g, found := gm[gn]
		if !found {
			if s.kind == "reg" || isPort(top, leaf) {
				missing = append(missing, leaf)
			}
			continue
		}
		pairs = append(pairs, pair{leaf, s, g})
	}
	sort.Strings(missing)
	require.Empty(t, missing, "%s: ports and registers of the Verilog with no Go signal of the same name", top)
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].name < pairs[j].name })
	// A payload is compared while its valid is high, as the co-simulation
	// does: the Verilog's head entry of an empty queue is an unwritten
	// array word.
	validBy := map[string]*vcdSignal{}
	for _, p := range dut.Ports() {
		if p.ValidBy != "" {
			gn, _ := goName(p.ValidBy)
			validBy[p.Name] = gm[gn]
		}
	}
	t.Logf("%s: %d signals compared over %d cycles: %s", top, len(pairs), cycles-1, names(pairs, func(p pair) string { return p.name }))
	// Vector cycle c is applied at time 10c and the clock rises at 10c+5
	// (tb/cosim's testbench); the Go model dumps cycle c at its cycle c-1,
	// counted from the reset of cycle 0.
	for c := uint64(1); c < cycles; c++ {
		for _, p := range pairs {
			if v, ok := validBy[p.name]; ok {
				if x, _ := v.at(c - 1); x != "1" {
					continue
				}
			}
			hv, _ := p.hw.at(10*c + 1)
			gv, _ := p.gm.at(c - 1)
			h, hok := vcdValue(hv)
			g, gok := vcdValue(gv)
			if !hok || !gok || h != g {
				return fmt.Errorf("%s: first difference at cycle %d, signal %s: Go %s, Verilog %s", top, c, p.name, gv, hv)
			}
		}
	}
	return nil
}

func names[T any](xs []T, f func(T) string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return strings.Join(out, " ")
}

// isPort reports a port of top's module.
func isPort(top, name string) bool {
	e, err := gen.Lookup(top)
	if err != nil {
		return false
	}
	for _, p := range e.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

// TestVCDMatchesGo compares the Go model's VCD and Icarus's VCD of the same
// stimulus signal by signal for the tops whose Go registers carry the
// Verilog's names.
func TestVCDMatchesGo(t *testing.T) {
	t.Run("uvmmu_lfsr", func(t *testing.T) {
		cfg := lfsr.Config{Width: 20, Seed: 0x5eed}
		dut, err := NewLFSR(cfg)
		require.NoError(t, err)
		require.NoError(t, compareVCD(t, "uvmmu_lfsr", overrides(t, "uvmmu_lfsr", gen.Values{"WIDTH": 20, "SEED": 0x5eed}),
			dut.sim, inScope("lfsr"), dut, LFSRStimulus(3), 3000))
	})
	t.Run("uvmmu_dcq", func(t *testing.T) {
		values := gen.Values{"DEPTH": 6, "THRESHOLD": 4, "FG_BITS": 9}
		cfg := dcq.Config{Depth: 6, Threshold: 4, FGBits: 9}
		dut, err := NewDCQ(cfg)
		require.NoError(t, err)
		require.NoError(t, compareVCD(t, "uvmmu_dcq", overrides(t, "uvmmu_dcq", values), dut.sim, inScope("dcq"), dut, DCQStimulus(4, cfg.FGBits), 3000))
	})
	for _, victims := range []uint64{0, 1} {
		t.Run(fmt.Sprintf("uvmmu_da_afm/victims%d", victims), func(t *testing.T) {
			values := gen.Values{"NFG": 1000, "DCQ_DEPTH": 8, "FRAB_WORD": 32, "FG_BITS": 16, "ADDR_W": 24, "IPGT_BASE": 0x1000, "LFSR_WIDTH": 12, "VICTIMS": victims}
			cfg := afmConfig(mustCheck(t, mustLookup(t, "uvmmu_da_afm"), values))
			m := dram.DefaultConfig(1)
			m.Latency, m.BytesPerCycle = 17, 3
			dut, err := NewAFMTop(cfg, m, daTable(7, cfg.NFG, 0.3))
			require.NoError(t, err)
			require.NoError(t, compareVCD(t, "uvmmu_da_afm", overrides(t, "uvmmu_da_afm", values), dut.da.sim, dut.goName, dut, AFMStimulus(dut, 11), 6000))
		})
	}
	t.Run("uvmmu_da_frab", func(t *testing.T) {
		// 200 regions in words of 32: seven words, the last one partial.
		values := gen.Values{"NFG": 200 * frab.FrameGroupsPerRegion, "FRAB_WORD": 32}
		cfg := frab.Config{Regions: 200, WordBits: 32}
		dut, err := NewFrAB(cfg)
		require.NoError(t, err)
		require.NoError(t, compareVCD(t, "uvmmu_da_frab", overrides(t, "uvmmu_da_frab", values), dut.sim, inScope("frab"), dut, FrABStimulus(dut, cfg.Regions, 5), 6000))
	})
	for _, victims := range []uint64{0, 1} {
		t.Run(fmt.Sprintf("uvmmu_da/victims%d", victims), func(t *testing.T) {
			values := gen.Values{"NFG": 1000, "DCQ_DEPTH": 8, "DCQ_THRESHOLD": 3, "FRAB_WORD": 32, "FG_BITS": 16, "ADDR_W": 24,
				"IPGT_BASE": 0x1000, "LFSR_WIDTH": 12, "LFSR_SEED": 0x5a5, "VICTIMS": victims}
			cfg := daConfigOf(t, values)
			m := dram.DefaultConfig(1)
			m.Latency, m.BytesPerCycle = 17, 3
			// Few free frame-groups, so that victim mode starts early.
			dut, err := NewDA(cfg, m, daTable(7, cfg.NFG, 0.02))
			require.NoError(t, err)
			require.NoError(t, compareVCD(t, "uvmmu_da", overrides(t, "uvmmu_da", values), dut.sim, daGoName(cfg), dut, DAStimulus(dut, 11), 6000))
			t.Logf("%d destinations handed out, %d of them victims", dut.handed, dut.victims)
			require.Positive(t, dut.victims, "the stimulus must reach victim mode")
		})
	}
}

// daGoName names uvmmu_da's signals as the Go DA under "da" does: its
// ports, and the ports and registers of its instances u_dcq, u_frab,
// u_lfsr and u_afm, which are the Go blocks da.dcq, da.frab, da.lfsr and
// da.afm (an instance port wired to another block's Go wire has no Go
// signal of its path and is compared as that block's). The nets that only
// connect instances, the instances' own instances and, with the LFSR
// picker, the victim port are not compared.
func daGoName(cfg da.Config) func(string) (string, bool) {
	return func(leaf string) (string, bool) {
		inst, name, nested := strings.Cut(leaf, ".")
		if !nested {
			if !isPort("uvmmu_da", leaf) || strings.HasPrefix(leaf, "victim_") && cfg.Victims != afm.VictimExternal {
				return "", false
			}
			return "da." + leaf, true
		}
		block, ok := strings.CutPrefix(inst, "u_")
		if !ok || strings.Contains(name, ".") {
			return "", false
		}
		return "da." + block + "." + name, true
	}
}

// inScope names a module's own signals as the Go block under path does;
// the signals of its instances are not compared.
func inScope(path string) func(string) (string, bool) {
	return func(leaf string) (string, bool) { return path + "." + leaf, !strings.Contains(leaf, ".") }
}

func mustLookup(t *testing.T, top string) gen.Emitter {
	t.Helper()
	e, err := gen.Lookup(top)
	require.NoError(t, err)
	return e
}

// TestVCDCompareFindsADifference feeds the DCQ's vectors to the RTL of
// another threshold: the comparison names refill and the first cycle it
// differs in.
func TestVCDCompareFindsADifference(t *testing.T) {
	cfg := dcq.Config{Depth: 6, Threshold: 4, FGBits: 9}
	dut, err := NewDCQ(cfg)
	require.NoError(t, err)
	err = compareVCD(t, "uvmmu_dcq", overrides(t, "uvmmu_dcq", gen.Values{"DEPTH": 6, "THRESHOLD": 5, "FG_BITS": 9}),
		dut.sim, inScope("dcq"), dut, DCQStimulus(4, cfg.FGBits), 3000)
	require.Error(t, err)
	require.Regexp(t, `uvmmu_dcq: first difference at cycle \d+, signal refill: Go 0, Verilog 1`, err.Error())
}
