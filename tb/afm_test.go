package tb

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// AFMTop presents the AFM of blocks/da through the ports of uvmmu_da_afm:
// the whole Go DA runs under DAStimulus, and each cycle's vector holds the
// AFM's inputs (the DA's external inputs, and what the Go DCQ, FrAB and
// LFSR drive) and the AFM's outputs. The Verilog AFM is simulated alone,
// so a difference shows at the AFM's own ports.
type AFMTop struct {
	da    *DA
	ports []cosim.Port
	// For each input and output, in layout order: how the Go model shows
	// it, and for the DA's external inputs their index among the DA's.
	in, out []func() uint64
	fromDA  []int // index into the DA's inputs, or -1 for a sub-block output
	daIn    []uint64
	daOut   []uint64
	rst     int
	// goNames are the Go wires of the AFM's ports by port name (the
	// registers are the AFM block's own, da.afm.<name>).
	goNames map[string]string
}

// goName is the Go signal of a uvmmu_da_afm port or register; the victim
// port has none with the LFSR picker.
func (t *AFMTop) goName(leaf string) (string, bool) {
	if n, ok := t.goNames[leaf]; ok {
		return n, true
	}
	if strings.HasPrefix(leaf, "victim_") || strings.Contains(leaf, ".") {
		return "", false
	}
	return "da.afm." + leaf, true
}

// NewAFMTop builds the Go DA of cfg as NewDA does and maps uvmmu_da_afm's
// ports (gen's port list at the configuration's values) onto its wires.
func NewAFMTop(cfg da.Config, mc dram.Config, table []uint64) (*AFMTop, error) {
	d, err := NewDA(cfg, mc, table)
	if err != nil {
		return nil, err
	}
	e, err := gen.Lookup("uvmmu_da_afm")
	if err != nil {
		return nil, err
	}
	v, err := e.Check(afmValues(cfg))
	if err != nil {
		return nil, err
	}
	t := &AFMTop{da: d, goNames: map[string]string{}}
	wires := map[string]func() uint64{}
	for _, p := range e.Ports {
		if w, ok := afmGoWire(d.sim, p.Name); ok {
			if w.Width() != p.BitsAt(v) {
				return nil, fmt.Errorf("uvmmu_da_afm port %s: %d bits, its Go wire %s %d", p.Name, p.BitsAt(v), w.Name(), w.Width())
			}
			wires[p.Name], t.goNames[p.Name] = w.Bits, w.Name()
		}
	}
	if _, ok := wires["victim_ready"]; !ok {
		wires["victim_ready"] = func() uint64 { return 0 } // the LFSR picker: no victim port in Go
	}
	daIns := map[string]int{}
	nDAOut := 0
	for _, p := range d.Ports() {
		if p.Dir == cosim.In {
			daIns[p.Name] = len(daIns)
		} else {
			nDAOut++
		}
	}
	t.daIn, t.daOut = make([]uint64, len(daIns)), make([]uint64, nDAOut)
	for _, p := range e.Ports {
		if p.Name == "clk" {
			continue
		}
		cp := cosim.Port{Name: p.Name, Width: p.BitsAt(v)}
		if p.Dir == gen.Out {
			cp.Dir = cosim.Out
			w, ok := wires[p.Name]
			if !ok {
				return nil, fmt.Errorf("uvmmu_da_afm output %s has no Go wire", p.Name)
			}
			t.out = append(t.out, w)
		} else {
			cp.Dir = cosim.In
			if p.Name == cosim.ResetPort {
				t.rst = len(t.in)
			}
			i, external := daIns[p.Name]
			w, internal := wires[p.Name]
			switch {
			case external:
				t.in, t.fromDA = append(t.in, nil), append(t.fromDA, i)
			case internal:
				t.in, t.fromDA = append(t.in, w), append(t.fromDA, -1)
			default:
				return nil, fmt.Errorf("uvmmu_da_afm input %s is neither a DA input nor a Go wire", p.Name)
			}
		}
		t.ports = append(t.ports, cp)
	}
	return t, nil
}

// afmGoWire is the Go wire of uvmmu_da_afm's port in the Go DA, as
// uvmmu_da wires it: the DA's port of the same name, or the DCQ's or the
// FrAB's, or the LFSR's without the lfsr_ prefix.
func afmGoWire(s *rtl.Sim, port string) (rtl.AnyWire, bool) {
	for _, name := range []string{"da." + port, "da.dcq." + port, "da.frab." + port, "da.lfsr." + strings.TrimPrefix(port, "lfsr_")} {
		if w, ok := s.WireNamed(name); ok {
			return w, true
		}
	}
	return nil, false
}

// afmConfig is the DA configuration around a uvmmu_da_afm parameter point:
// the DCQ refills below half its depth and the LFSR starts at 0x5a5 masked
// to its width (neither is an AFM parameter).
func afmConfig(v gen.Values) da.Config {
	cfg := da.DefaultConfig()
	cfg.NFG, cfg.DCQDepth, cfg.DCQThreshold, cfg.FrABWord = v["NFG"], int(v["DCQ_DEPTH"]), max(1, int(v["DCQ_DEPTH"])/2), int(v["FRAB_WORD"])
	cfg.FGBits, cfg.AddrBits, cfg.IPGTBase, cfg.LFSRWidth = int(v["FG_BITS"]), int(v["ADDR_W"]), v["IPGT_BASE"], int(v["LFSR_WIDTH"])
	cfg.LFSRSeed = max(1, 0x5a5&(uint64(1)<<cfg.LFSRWidth-1))
	cfg.Victims = afm.VictimSource(v["VICTIMS"])
	return cfg
}

// afmSources are the committed modules with uvmmu_da_afm first, after
// linting a user's instantiation of it at values.
func afmSources(t *testing.T, values gen.Values) []cosim.Source {
	t.Helper()
	srcs := emitDA(t, nil)
	for i, s := range srcs {
		if s.Name == "uvmmu_da_afm.v" {
			srcs[0], srcs[i] = srcs[i], srcs[0]
		}
	}
	e, err := gen.Lookup("uvmmu_da_afm")
	require.NoError(t, err)
	lintUser(t, e, values)
	return srcs
}

// afmValues are uvmmu_da_afm's parameters for a DA configuration.
func afmValues(c da.Config) gen.Values { return gen.Values(c.AFM().Params()) }

// Ports are uvmmu_da_afm's ports without clk.
func (t *AFMTop) Ports() []cosim.Port { return t.ports }

// Outputs shows the AFM's outputs.
func (t *AFMTop) Outputs(out []uint64) {
	for i, get := range t.out {
		out[i] = get()
	}
}

// Clock checks that the vector's sub-block inputs are what the Go DCQ, FrAB
// and LFSR drive, then clocks the DA with the DA inputs the stimulus chose
// (and the vector's reset).
func (t *AFMTop) Clock(in []uint64) error {
	for i, get := range t.in {
		if get != nil && in[i] != get() {
			return fmt.Errorf("input %s is %#x but the Go DA drives %#x", t.ports[i].Name, in[i], get())
		}
	}
	t.daIn[daInRst] = in[t.rst]
	return t.da.Clock(t.daIn)
}

// AFMStimulus is DAStimulus on the DA around the AFM: it chooses the DA's
// inputs from the DA's outputs and shows the AFM the inputs that follow.
func AFMStimulus(t *AFMTop, seed uint64) cosim.Stimulus {
	daStim := DAStimulus(t.da, seed)
	return func(cycle uint64, out, in []uint64) {
		t.da.Outputs(t.daOut)
		clear(t.daIn)
		daStim(cycle, t.daOut, t.daIn)
		for i, get := range t.in {
			if get != nil {
				in[i] = get()
			} else {
				in[i] = t.daIn[t.fromDA[i]]
			}
		}
	}
}

// TestCosimAFM co-simulates uvmmu_da_afm as its own top, with both victim
// sources.
func TestCosimAFM(t *testing.T) {
	for _, ps := range []struct {
		paramSet
		victims afm.VictimSource
	}{
		{paramSet{"nfg1000_lfsr", gen.Values{"NFG": 1000, "DCQ_DEPTH": 8, "FRAB_WORD": 32, "FG_BITS": 16,
			"ADDR_W": 24, "IPGT_BASE": 0x1000, "LFSR_WIDTH": 12}, sweepCycles}, afm.VictimLFSR},
		{paramSet{"nfg1500_external", gen.Values{"NFG": 1500, "DCQ_DEPTH": 8, "FRAB_WORD": 64, "FG_BITS": 16,
			"ADDR_W": 24, "LFSR_WIDTH": 12, "VICTIMS": 1}, sweepCycles}, afm.VictimExternal},
	} {
		t.Run(ps.name, func(t *testing.T) {
			e, err := gen.Lookup("uvmmu_da_afm")
			require.NoError(t, err)
			v, err := e.Check(ps.values)
			require.NoError(t, err)
			cfg := afmConfig(v)
			require.Equal(t, ps.victims, cfg.Victims)
			m := dram.DefaultConfig(1)
			m.Latency, m.BytesPerCycle = 17, 3
			dut, err := NewAFMTop(cfg, m, daTable(7, cfg.NFG, 0.3))
			require.NoError(t, err)
			srcs := afmSources(t, ps.values)
			cosim.Run(t, cosim.Case{
				Top: "uvmmu_da_afm", Sources: srcs, Params: e.Overrides(v), DUT: dut,
				Stim: AFMStimulus(dut, 11), Cycles: cosim.Cycles(t, ps.cycles), Simulators: ps.simulators(),
			})
			require.Positive(t, dut.da.victims, "the stimulus must reach victim mode")
		})
	}
}
