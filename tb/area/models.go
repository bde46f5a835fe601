package area

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/rtl"
)

// The emitted modules the SRAM and latency rows belong to; Latency.Block
// is a module name so that --top selects a module's rows.
const (
	daModule      = "uvmmu_da"
	dcqModule     = "uvmmu_dcq"
	paCacheModule = "grit_pa_cache"
	// frabSRAMModule is the module verilog/gen emits for the FrAB's SRAM
	// array inside uvmmu_da; Command checks that it is registered.
	frabSRAMModule = "uvmmu_da_frab_sram"
)

// paperFrABBytes is the GPU memory the UVMMU paper sizes its FrAB for: "40Kb
// (corresponding to 80GB physical memory)" (Section V).
const paperFrABBytes = 80 << 30

// frameGroupBytes is the 64 KB frame-group (SPEC 2).
const frameGroupBytes = 64 << 10

// localMemLatency is a local DRAM access, 100 cycles (SPEC 2), as
// blocks/dram defaults it: the IPgT and the PA-Table live in GPU memory.
var localMemLatency = dram.DefaultConfig(1).Latency

// ipgtLatencies are the IPgT latencies the DA is measured at: a local DRAM
// access, and three times that as a loaded memory, to show which figures
// depend on the memory and which do not.
var ipgtLatencies = []int{localMemLatency, 3 * localMemLatency}

func init() {
	RegisterSRAM(func() (SRAM, error) {
		s, err := frabMacro("FrAB (default DA)", da.DefaultConfig())
		s.Module = frabSRAMModule
		return s, err
	})
	RegisterSRAM(func() (SRAM, error) {
		cfg := da.DefaultConfig()
		cfg.NFG = paperFrABBytes / frameGroupBytes
		return frabMacro("FrAB (80 GB, paper)", cfg)
	})
	RegisterLatencies(daLatencies)
	RegisterLatencies(dcqLatencies)
	RegisterLatencies(paCacheLatencies)
}

// frabMacro is the FrAB SRAM of a DA configuration: one bit per frame
// region in FRAB_WORD-bit words.
func frabMacro(name string, cfg da.Config) (SRAM, error) {
	fc := frab.Config{Regions: int((cfg.NFG + frab.FrameGroupsPerRegion - 1) / frab.FrameGroupsPerRegion), WordBits: cfg.FrABWord}
	if err := fc.Validate(); err != nil {
		return SRAM{}, err
	}
	return SRAM{
		Name: name, Words: fc.Words(), Bits: fc.WordWidth(),
		Source: fmt.Sprintf("NFG=%d frame-groups, %d regions, FRAB_WORD=%d (blocks/da, blocks/frab)", cfg.NFG, fc.Regions, cfg.FrABWord),
	}, nil
}

// daLatencies measures the default DA with da.Measure at each IPgT latency.
// The allocation handshake does not involve the memory, so it is reported
// once.
func daLatencies() ([]Latency, error) {
	var rows []Latency
	for i, lat := range ipgtLatencies {
		f, err := da.Measure(da.DefaultConfig(), lat)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			rows = append(rows,
				Latency{daModule, "allocation: dst_ready to destination", float64(f.Handshake), "DCQ not empty; 0 = same cycle (the DCQ head is the port)"},
				Latency{daModule, "allocation: back to back", f.BackToBack, "cycles per destination, dst_ready held, DCQ not empty"})
		}
		mem := fmt.Sprintf("IPgT latency %d", lat)
		rows = append(rows,
			Latency{daModule, "reset to first destination", float64(f.ResetToFirst), mem + "; FrAB sweep, FIND, region fetch"},
			Latency{daModule, "AFM refill, free regions", f.RefillFree, mem + "; frame-groups per cycle"},
			Latency{daModule, "AFM refill, victim mode", f.RefillVictim, fmt.Sprintf("%s; frame-groups per cycle, every frame-group mapped, NFG=%d", mem, da.VictimNFG)})
	}
	return rows, nil
}

// dcqLatencies measures the default DCQ: the cycles from a push into the
// empty queue to the cycle the entry is on the pop port (first-word fall
// through), and the entries per cycle with a push and a pop offered in
// every cycle.
func dcqLatencies() ([]Latency, error) {
	cfg := dcq.DefaultConfig()
	s := rtl.New(rtl.Options{Checked: true})
	p := dcq.NewPorts(s, "dcq", cfg)
	if _, err := dcq.New(s, "dcq", cfg, p); err != nil {
		return nil, err
	}
	s.Reset()
	p.PushValid.Set(true)
	p.PushPFgN.Set(1)
	if err := s.Step(); err != nil {
		return nil, err
	}
	p.PushValid.Set(false)
	fallThrough := 1
	for ; !p.PopValid.Get(); fallThrough++ {
		if fallThrough > cfg.Depth {
			return nil, fmt.Errorf("dcq: a pushed entry did not reach the pop port")
		}
		if err := s.Step(); err != nil {
			return nil, err
		}
	}
	const window = 1000
	p.PushValid.Set(true)
	p.PopReady.Set(true)
	popped := 0
	for range window {
		if p.PopFire() {
			popped++
		}
		if err := s.Step(); err != nil {
			return nil, err
		}
	}
	params := fmt.Sprintf("DEPTH=%d THRESHOLD=%d", cfg.Depth, cfg.Threshold)
	return []Latency{
		{dcqModule, "push to pop (fall-through)", float64(fallThrough), params + "; push into the empty queue to pop_valid"},
		{dcqModule, "throughput", float64(popped) / window, params + "; entries per cycle, push and pop offered every cycle"},
	}, nil
}

// paCacheLatencies measures the default PA-Cache with
// pacache.MeasureLatency against a PA-Table in local GPU memory.
func paCacheLatencies() ([]Latency, error) {
	table := pacache.TableConfig{Latency: localMemLatency}
	ops, err := pacache.MeasureLatency(pacache.DefaultConfig(), table)
	if err != nil {
		return nil, err
	}
	rows := make([]Latency, len(ops))
	for i, o := range ops {
		rows[i] = Latency{paCacheModule, o.Operation, float64(o.Response),
			fmt.Sprintf("request accepted to response; PA-Table latency L=%d; req_ready again after %d", table.Latency, o.Occupancy)}
	}
	return rows, nil
}
