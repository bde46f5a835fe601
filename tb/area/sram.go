package area

import "fmt"

// SRAM macros are not synthesized: a flip-flop array would overstate their
// area several times. They are estimated analytically as
//
//	area = bits x BitcellArea / ArrayEfficiency
//
// at the node of BitcellArea.
const (
	// BitcellArea is the high-density 6T SRAM bitcell of a 7 nm FinFET
	// logic process, 0.027 um^2 (S.-Y. Wu et al., "A 7nm CMOS platform
	// technology featuring 4th generation FinFET transistors with a
	// 0.027um2 high density 6-T SRAM cell for mobile SoC applications",
	// IEDM 2016). It matches the 7 nm node of NAND2Area.
	BitcellArea = 0.027
	// ArrayEfficiency is the fraction of a macro's area taken by bitcells.
	// Small single-port compiler macros (a few Kb to a few tens of Kb, as
	// the FrAB) spend about half their area on decoders, sense amplifiers,
	// write drivers and I/O; 0.5 is this model's stated assumption, not a
	// measured figure.
	ArrayEfficiency = 0.5
	// SRAMNode names the node of the analytic SRAM estimate.
	SRAMNode = "7 nm HD 6T bitcell (IEDM 2016), array efficiency 0.5"
)

// SRAM is one macro: Words words of Bits bits.
type SRAM struct {
	Name   string `json:"name"`
	Words  int    `json:"words"`
	Bits   int    `json:"word_bits"`
	Source string `json:"source"`
	// Module is the emitted module that models the macro in the RTL, if
	// any. The synthesis flows treat it as a black box, so the logic of the
	// modules around it is counted without the array.
	Module string `json:"module,omitempty"`
}

// SRAMResult is the analytic estimate of one macro.
type SRAMResult struct {
	SRAM
	TotalBits int     `json:"total_bits"`
	AreaUM2   float64 `json:"area_um2_analytic"`
}

// Estimate applies the analytic model.
func (s SRAM) Estimate() (SRAMResult, error) {
	if s.Words < 1 || s.Bits < 1 {
		return SRAMResult{}, fmt.Errorf("SRAM %s: words %d and word bits %d must be at least 1", s.Name, s.Words, s.Bits)
	}
	n := s.Words * s.Bits
	return SRAMResult{SRAM: s, TotalBits: n, AreaUM2: float64(n) * BitcellArea / ArrayEfficiency}, nil
}

var srams []func() (SRAM, error)

// RegisterSRAM adds a macro to the report. The function derives the
// geometry from the Go package that owns the macro's parameters (for the
// FrAB, the DA configuration), so the report follows the model.
func RegisterSRAM(f func() (SRAM, error)) { srams = append(srams, f) }

// SRAMs evaluates the registered macros in registration order.
func SRAMs() ([]SRAM, error) {
	out := make([]SRAM, 0, len(srams))
	for _, f := range srams {
		s, err := f()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
