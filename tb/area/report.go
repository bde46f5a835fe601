package area

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Reference is the comparison point from the UVMMU paper (Section V,
// "Overhead"): the DA logic synthesized with Design Compiler in Samsung
// 8 nm, and the FrAB sized with CACTI. The estimates here are at a 7 nm
// predictive node and are compared without scaling.
var Reference = []string{
	"UVMMU paper, Section V: DA logic 5,800 um^2 (Synopsys DC, Samsung 8 nm); FrAB 40 Kb SRAM for 80 GB (CACTI, 22 nm).",
}

// Report is everything the area command prints.
type Report struct {
	Modules   []Result     `json:"modules"`
	SRAMs     []SRAMResult `json:"srams"`
	Latencies []Latency    `json:"latencies"`
	Constants Constants    `json:"constants"`
	Reference []string     `json:"reference"`
}

// Constants records the numbers behind the estimates.
type Constants struct {
	NAND2AreaUM2    float64 `json:"nand2_area_um2"`
	NAND2Node       string  `json:"nand2_node"`
	BitcellAreaUM2  float64 `json:"sram_bitcell_area_um2"`
	ArrayEfficiency float64 `json:"sram_array_efficiency"`
	SRAMNode        string  `json:"sram_node"`
}

// NewReport wraps results with the constants and the reference.
func NewReport(mods []Result, srams []SRAMResult, lat []Latency) Report {
	return Report{Modules: mods, SRAMs: srams, Latencies: lat, Reference: Reference,
		Constants: Constants{NAND2Area, NAND2Node, BitcellArea, ArrayEfficiency, SRAMNode}}
}

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as aligned text tables.
func (r Report) WriteTable(w io.Writer) error {
	if err := r.writeModules(w); err != nil {
		return err
	}
	if len(r.SRAMs) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "SRAM macro\twords\tword bits\ttotal bits\tarea um^2 (analytic)\t")
		for _, s := range r.SRAMs {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t\n", s.Name, s.Words, s.Bits, s.TotalBits, s.AreaUM2)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "analytic SRAM area = bits x %.3f um^2 / %.2f (%s).\n", BitcellArea, ArrayEfficiency, SRAMNode)
		for _, s := range r.SRAMs {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, s.Source)
			if s.Module != "" {
				fmt.Fprintf(w, "    modelled by module %s, a black box in the synthesis above\n", s.Module)
			}
		}
	}
	fmt.Fprintln(w)
	if len(r.Latencies) == 0 {
		fmt.Fprintln(w, "latency: no latency rows in this report.")
	} else {
		tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "block\toperation\tcycles\tnote")
		for _, l := range r.Latencies {
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t%s\n", l.Block, l.Operation, l.Cycles, l.Note)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	for _, ref := range r.Reference {
		fmt.Fprintln(w, "reference: "+ref)
	}
	return nil
}

// writeModules writes the synthesis table and its notes, or nothing when
// the report has no synthesized module.
func (r Report) writeModules(w io.Writer) error {
	if len(r.Modules) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	liberty := r.Modules[0].Liberty != ""
	head := "module\tcells\ttransistors\tNAND2-eq\tflip-flops\tlogic depth\tarea um^2\t"
	if liberty {
		head += "lib cells\tlib area um^2\tABC delay ps\t"
	}
	fmt.Fprintln(tw, head)
	for _, m := range r.Modules {
		line := fmt.Sprintf("%s\t%d\t%d\t%.0f\t%d\t%d\t%.1f\t", m.Module, m.Cells, m.Transistors, m.NAND2Eq, m.FlipFlops, m.LogicDepth, m.AreaUM2)
		if liberty {
			line += fmt.Sprintf("%d\t%.1f\t%.1f\t", m.LibertyCells, m.LibertyAreaUM2, m.LibertyDelayPS)
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "area um^2 = NAND2-eq x %.5f um^2 (%s), cell area only; logic depth in gates, flip-flop to flip-flop.\n",
		NAND2Area, NAND2Node)
	if liberty {
		fmt.Fprintf(w, "lib columns: Yosys dfflibmap + abc + stat with %s; ABC delay after buffering and sizing, no wire load.\n", r.Modules[0].Liberty)
	}
	for _, m := range r.Modules {
		fmt.Fprintf(w, "  %s: %s\n", m.Module, m.Params)
	}
	return nil
}
