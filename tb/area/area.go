// Package area estimates the silicon cost of the emitted modules with
// Yosys, and of SRAM macros with an analytic model.
//
// The generic flow needs no cell library:
//
//	read_verilog <all emitted modules>
//	synth -top M -flatten
//	dfflegalize -cell $_DFF_P_ 01    every flip-flop becomes a plain D flip-flop;
//	                                 reset and enable become gates
//	abc -g cmos3                     NAND, NOR, NOT, AOI3, OAI3, AOI4, OAI4
//	stat -tech cmos                  cell counts and a transistor estimate
//	ltp -noff                        longest path in gate levels, flip-flop to flip-flop
//
// NAND2-equivalents are transistors / 4 (a static CMOS NAND2 has four), and
// the area estimate is NAND2-equivalents times the NAND2 cell of a named
// library (NAND2Area). It counts cell area only: no placement density, no
// wiring, no clock tree.
//
// The Liberty flow maps to a real library instead (dfflibmap, abc -liberty,
// stat -liberty) and reports its cell area and ABC's delay estimate after
// buffering and sizing, without wire load.
//
// Both flows fail when Yosys infers a latch: every emitted module is
// flip-flops and combinational logic only.
package area

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// NAND2Area is the area of the generic flow's unit gate: the ASAP7 7.5-track
// RVT NAND2xp33 cell, 0.05832 um^2 (cell area attribute in
// asap7sc7p5t_SIMPLE_RVT_TT.lib of the ASAP7 PDK, The-OpenROAD-Project
// asap7sc7p5t_28; 0.27 um tall x 0.216 um wide).
const NAND2Area = 0.05832

// NAND2Node names the node NAND2Area belongs to.
const NAND2Node = "ASAP7 (predictive 7 nm), NAND2xp33"

// transistorsPerNAND2 converts a transistor count to NAND2-equivalents.
const transistorsPerNAND2 = 4

// Source is one Verilog file.
type Source struct {
	Name string
	Text []byte
}

// Result is the synthesis report of one module.
type Result struct {
	Module string `json:"module"`
	Params string `json:"params"`
	// Generic flow.
	Cells       int            `json:"cells"`
	CellsByType map[string]int `json:"cells_by_type"`
	Transistors int            `json:"transistors"`
	NAND2Eq     float64        `json:"nand2_equivalents"`
	FlipFlops   int            `json:"flip_flops"`
	LogicDepth  int            `json:"logic_depth_gates"`
	AreaUM2     float64        `json:"area_um2_nand2_estimate"`
	// Liberty flow (zero when not run).
	Liberty        string  `json:"liberty,omitempty"`
	LibertyCells   int     `json:"liberty_cells,omitempty"`
	LibertyAreaUM2 float64 `json:"liberty_area_um2,omitempty"`
	LibertyDelayPS float64 `json:"liberty_delay_ps,omitempty"`
}

// Yosys is the program the flows run; tests and the command check it is
// installed (Debian package yosys).
const Yosys = "yosys"

// Available reports why Yosys cannot run, or nil.
func Available() error {
	if _, err := exec.LookPath(Yosys); err != nil {
		return fmt.Errorf("yosys not found on PATH: install the Debian package yosys")
	}
	return nil
}

var (
	reTransistors = regexp.MustCompile(`Estimated number of transistors:\s+(\d+)`)
	reLTP         = regexp.MustCompile(`Longest topological path in \S+ \(length=(\d+)\)`)
	reChipArea    = regexp.MustCompile(`Chip area for module '[^']*':\s+([0-9.eE+-]+)`)
	reDelay       = regexp.MustCompile(`Delay =\s+([0-9.]+) ps`)
)

// Generic runs the generic flow for module top over sources. Modules named
// in macros (SRAM macros, see SRAM.Module) are black boxes: their instances
// are left out of the counts, since the analytic SRAM model covers them.
func Generic(top, params string, sources []Source, macros []string) (Result, error) {
	r := Result{Module: top, Params: params}
	script := []string{
		blackboxes(macros),
		"synth -top " + top + " -flatten",
		latchAssert,
		"dfflegalize -cell $_DFF_P_ 01",
		"abc -g cmos3",
		"opt_clean",
		"tee -o {dir}/stat.json stat -json",
		"stat -tech cmos",
		"ltp -noff" + exceptMacros(macros),
	}
	log, dir, err := runYosys(top, sources, script)
	defer os.RemoveAll(dir)
	if err != nil {
		return r, err
	}
	cells, err := readStat(filepath.Join(dir, "stat.json"), macros)
	if err != nil {
		return r, fmt.Errorf("%s: %w", top, err)
	}
	r.CellsByType = cells
	for t, n := range cells {
		r.Cells += n
		if strings.HasPrefix(t, "$_DFF") || strings.HasPrefix(t, "$_SDFF") {
			r.FlipFlops += n
		}
	}
	if r.Transistors, err = lastInt(reTransistors, log, "transistor estimate"); err != nil {
		return r, fmt.Errorf("%s: %w", top, err)
	}
	if r.LogicDepth, err = lastInt(reLTP, log, "longest path"); err != nil {
		return r, fmt.Errorf("%s: %w", top, err)
	}
	r.NAND2Eq = float64(r.Transistors) / transistorsPerNAND2
	r.AreaUM2 = r.NAND2Eq * NAND2Area
	return r, nil
}

// WithLiberty runs the Liberty flow for r's module and fills the Liberty
// fields; macros are black boxes as in Generic.
func WithLiberty(r *Result, sources []Source, macros []string, liberty string) error {
	abs, err := filepath.Abs(liberty)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("liberty file: %w", err)
	}
	script := []string{
		blackboxes(macros),
		"synth -top " + r.Module + " -flatten",
		latchAssert,
		"dfflibmap -liberty " + abs,
		"abc -liberty " + abs + " -script +strash;dch,-f;map;topo;buffer,-p;upsize;dnsize;stime,-p",
		"opt_clean",
		"tee -o {dir}/stat.json stat -json",
		"stat -liberty " + abs,
	}
	log, dir, err := runYosys(r.Module, sources, script)
	defer os.RemoveAll(dir)
	if err != nil {
		return err
	}
	cells, err := readStat(filepath.Join(dir, "stat.json"), macros)
	if err != nil {
		return fmt.Errorf("%s: %w", r.Module, err)
	}
	r.Liberty = liberty
	r.LibertyCells = 0
	for _, n := range cells {
		r.LibertyCells += n
	}
	if r.LibertyAreaUM2, err = lastFloat(reChipArea, log, "chip area"); err != nil {
		return fmt.Errorf("%s: %w", r.Module, err)
	}
	if r.LibertyDelayPS, err = lastFloat(reDelay, log, "ABC delay"); err != nil {
		return fmt.Errorf("%s: %w", r.Module, err)
	}
	return nil
}

// latchAssert stops the flow right after synthesis if any latch cell
// exists; runYosys turns that stop into a latch error.
const latchAssert = "select -assert-none t:$_DLATCH* t:$_SR_* t:$dlatch t:$adlatch t:$dlatchsr t:$sr"

// runYosys writes the sources to a temporary directory, reads them all,
// runs script ({dir} replaced by that directory) and returns the log.
func runYosys(top string, sources []Source, script []string) (string, string, error) {
	if err := Available(); err != nil {
		return "", "", err
	}
	dir, err := os.MkdirTemp("", "uvmmu-area-")
	if err != nil {
		return "", "", err
	}
	var lines []string
	for _, s := range sources {
		path := filepath.Join(dir, s.Name)
		if err := os.WriteFile(path, s.Text, 0o644); err != nil {
			return "", dir, err
		}
		lines = append(lines, "read_verilog -sv "+path)
	}
	for _, l := range script {
		lines = append(lines, strings.ReplaceAll(l, "{dir}", dir))
	}
	ys := filepath.Join(dir, "flow.ys")
	if err := os.WriteFile(ys, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return "", dir, err
	}
	logFile := filepath.Join(dir, "yosys.log")
	out, err := exec.Command(Yosys, "-q", "-l", logFile, ys).CombinedOutput()
	log, _ := os.ReadFile(logFile)
	if err != nil && strings.Contains(string(log), "Assertion failed: selection is not empty") {
		return "", dir, fmt.Errorf("%s: yosys inferred latches; every emitted module must be flip-flops and combinational logic only:\n%s",
			top, tail(string(log), 8))
	}
	if err != nil {
		return "", dir, fmt.Errorf("yosys on %s: %v\n%s%s", top, err, out, tail(string(log), 20))
	}
	return string(log), dir, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// blackboxes is the Yosys command that turns the macro modules into black
// boxes (a no-op without macros).
func blackboxes(macros []string) string {
	if len(macros) == 0 {
		return "hierarchy"
	}
	return "blackbox " + strings.Join(macros, " ")
}

// exceptMacros is a selection of everything but macro cells, so that the
// longest-path search starts and ends at a macro's ports as at flip-flops
// (the SRAM macros register their read data).
func exceptMacros(macros []string) string {
	if len(macros) == 0 {
		return ""
	}
	sel := " *"
	for _, m := range macros {
		sel += " t:" + m + " %d"
	}
	return sel
}

// readStat reads the cell counts of `stat -json`, leaving out instances of
// the black-box macros.
func readStat(path string, macros []string) (map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st struct {
		Design struct {
			Cells map[string]int `json:"num_cells_by_type"`
		} `json:"design"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("parsing yosys stat -json: %w", err)
	}
	if st.Design.Cells == nil {
		st.Design.Cells = map[string]int{}
	}
	for _, m := range macros {
		delete(st.Design.Cells, m)
		delete(st.Design.Cells, "\\"+m)
	}
	return st.Design.Cells, nil
}

func lastInt(re *regexp.Regexp, log, what string) (int, error) {
	m := re.FindAllStringSubmatch(log, -1)
	if m == nil {
		return 0, fmt.Errorf("no %s in the yosys log", what)
	}
	return strconv.Atoi(m[len(m)-1][1])
}

func lastFloat(re *regexp.Regexp, log, what string) (float64, error) {
	m := re.FindAllStringSubmatch(log, -1)
	if m == nil {
		return 0, fmt.Errorf("no %s in the yosys log", what)
	}
	return strconv.ParseFloat(m[len(m)-1][1], 64)
}
