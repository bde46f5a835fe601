package area

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// Sweep is one parameter varied over values in one module, every other
// parameter at its default (but for the ones Adjust derives, named in
// the table's notes).
type Sweep struct {
	Module string
	Param  string
	Values []uint64
}

// SweepRow is the synthesis of one point of a sweep.
type SweepRow struct {
	Value  uint64 `json:"value"`
	Result Result `json:"result"`
	// SRAMBits is the analytic macro size the module's black box stands
	// for at this point (the FrAB of uvmmu_da), 0 for modules without one.
	SRAMBits int `json:"sram_bits,omitempty"`
}

// sweepOrder is the module a sweep's parameter belongs to when --top does
// not say: the first that has it.
var sweepOrder = []string{"uvmmu_da", "grit_pa_cache", "uvmmu_dcq", "uvmmu_lfsr"}

// ParseSweep parses "PARAM=a,b,c" for module top ("" picks the first of
// uvmmu_da, grit_pa_cache, uvmmu_dcq, uvmmu_lfsr with that parameter) and
// checks every point with the module's ranges and Config.Validate.
func ParseSweep(spec, top string) (Sweep, error) {
	name, list, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || list == "" {
		return Sweep{}, fmt.Errorf("--sweep %q: want PARAM=a,b,c", spec)
	}
	candidates := sweepOrder
	if top != "" {
		candidates = []string{top}
	}
	var e gen.Emitter
	for _, m := range candidates {
		em, err := gen.Lookup(m)
		if err != nil {
			return Sweep{}, err
		}
		if _, ok := em.Defaults()[name]; ok {
			e = em
			break
		}
	}
	if e.Name == "" {
		return Sweep{}, fmt.Errorf("--sweep %s: no parameter %s in %s", spec, name, strings.Join(candidates, ", "))
	}
	s := Sweep{Module: e.Name, Param: name}
	for _, f := range strings.Split(list, ",") {
		x, err := strconv.ParseUint(strings.TrimSpace(f), 0, 64)
		if err != nil {
			return Sweep{}, fmt.Errorf("--sweep %s: value %q is not an unsigned integer", spec, f)
		}
		if _, err := e.Check(s.point(x)); err != nil {
			return Sweep{}, fmt.Errorf("--sweep %s: %w", spec, err)
		}
		s.Values = append(s.Values, x)
	}
	return s, nil
}

// point is the parameter values of one sweep point: the swept value, and
// a DCQ threshold lowered to the depth when the depth goes below it.
func (s Sweep) point(x uint64) gen.Values {
	v := gen.Values{s.Param: x}
	e, _ := gen.Lookup(s.Module)
	d := e.Defaults()
	switch s.Param {
	case "DCQ_DEPTH":
		v["DCQ_THRESHOLD"] = min(d["DCQ_THRESHOLD"], x)
	case "DEPTH":
		v["THRESHOLD"] = min(d["THRESHOLD"], x)
	}
	return v
}

// Run synthesizes every point: the module's file with the point as its
// parameter defaults, the other committed modules as they are.
func (s Sweep) Run(liberty string) ([]SweepRow, error) {
	files, err := gen.DefaultFiles()
	if err != nil {
		return nil, err
	}
	macros, err := SRAMs()
	if err != nil {
		return nil, err
	}
	var blackBoxes []string
	for _, m := range macros {
		if m.Module != "" && !slices.Contains(blackBoxes, m.Module) {
			blackBoxes = append(blackBoxes, m.Module)
		}
	}
	e, err := gen.Lookup(s.Module)
	if err != nil {
		return nil, err
	}
	var rows []SweepRow
	for _, x := range s.Values {
		v, err := e.Check(s.point(x))
		if err != nil {
			return nil, err
		}
		text, err := e.Text(v)
		if err != nil {
			return nil, err
		}
		sources := make([]Source, len(files))
		for i, f := range files {
			sources[i] = Source{Name: f.Name, Text: f.Text}
			if f.Name == s.Module+".v" {
				sources[i].Text = text
			}
		}
		r, err := Generic(s.Module, e.Summary(v), sources, blackBoxes)
		if err != nil {
			return nil, err
		}
		if liberty != "" {
			if err := WithLiberty(&r, sources, blackBoxes, liberty); err != nil {
				return nil, err
			}
		}
		row := SweepRow{Value: x, Result: r}
		if s.Module == "uvmmu_da" {
			fc := frab.Config{Regions: int((v["NFG"] + frab.FrameGroupsPerRegion - 1) / frab.FrameGroupsPerRegion), WordBits: int(v["FRAB_WORD"])}
			row.SRAMBits = fc.Words() * fc.WordWidth()
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// WriteSweep prints a sweep's rows with the growth of area and logic depth
// relative to the first point.
func WriteSweep(w io.Writer, s Sweep, rows []SweepRow) error {
	fmt.Fprintf(w, "%s: %s swept, other parameters at their defaults\n", s.Module, s.Param)
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	head := s.Param + "\tcells\tflip-flops\tNAND2-eq\tarea um^2\tx first\tlogic depth\t"
	sram := s.Module == "uvmmu_da"
	if sram {
		head += "FrAB SRAM bits\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		m := r.Result
		line := fmt.Sprintf("%d\t%d\t%d\t%.0f\t%.1f\t%.2f\t%d\t", r.Value, m.Cells, m.FlipFlops, m.NAND2Eq, m.AreaUM2, m.AreaUM2/rows[0].Result.AreaUM2, m.LogicDepth)
		if sram {
			line += fmt.Sprintf("%d\t", r.SRAMBits)
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "area um^2 = NAND2-eq x %.5f um^2 (%s), cell area only, SRAM macros excluded (black boxes).\n", NAND2Area, NAND2Node)
	for _, r := range rows {
		fmt.Fprintf(w, "  %s=%d: %s\n", s.Param, r.Value, r.Result.Params)
	}
	return nil
}
