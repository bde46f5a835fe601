package area

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	flag "github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/verilog/gen"
)

// UsageError is a mistake in the command's arguments, as opposed to a
// failure of the flow: commands exit with status 2 for it.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }

func (e UsageError) Unwrap() error { return e.Err }

// Command is the area report as a command line: it synthesizes every
// emitted module at its default parameters (or only --top), estimates the
// registered SRAM macros, measures the registered latencies, prints the
// tables to stdout and, with --json, writes the report as JSON. name is the
// program name in messages ("area" for tb/cmd/area, "uvmsim area" for the
// simulator's subcommand); flag errors and --help go to stderr.
func Command(name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [--liberty FILE] [--json FILE] [--top MODULE] [--sweep PARAM=a,b,c ...]\n%s", name, fs.FlagUsages())
	}
	liberty := fs.String("liberty", "", "Liberty file to map to as well (cell area and ABC delay)")
	jsonOut := fs.String("json", "", "write the report as JSON to this file")
	top := fs.String("top", "", "report only this module (see go run ./verilog/cmd/vgen -list)")
	sweeps := fs.StringArray("sweep", nil, "PARAM=a,b,c: synthesize the module with PARAM at each value, the others at their defaults, "+
		"and print how area and logic depth grow (repeatable; the module is --top or the first of uvmmu_da, grit_pa_cache, uvmmu_dcq, uvmmu_lfsr with PARAM)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return UsageError{err}
	}
	if fs.NArg() > 0 {
		return UsageError{fmt.Errorf("unexpected argument %q; flags are --liberty FILE, --json FILE, --top MODULE, --sweep PARAM=a,b,c", fs.Arg(0))}
	}
	if *liberty != "" {
		if _, err := os.Stat(*liberty); err != nil {
			return UsageError{fmt.Errorf("--liberty %s: %w", *liberty, err)}
		}
	}
	if len(*sweeps) > 0 {
		return sweepCommand(*sweeps, *top, *liberty, *jsonOut, stdout)
	}
	emitters := gen.Emitters()
	if *top != "" {
		e, err := gen.Lookup(*top)
		if err != nil {
			return UsageError{fmt.Errorf("--top: %w", err)}
		}
		emitters = []gen.Emitter{e}
	}
	if err := Available(); err != nil {
		return err
	}
	rep, err := build(emitters, *top, *liberty)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if *jsonOut == "" {
		return nil
	}
	f, err := os.Create(*jsonOut)
	if err != nil {
		return fmt.Errorf("--json: %w", err)
	}
	return errors.Join(rep.WriteJSON(f), f.Close())
}

// build synthesizes the emitters' modules at their defaults with every
// SRAM macro module as a black box, and collects the SRAM estimates and
// the latency rows; when top names a module, only its rows (an SRAM macro
// module has its SRAM row and no synthesis row).
func build(emitters []gen.Emitter, top, liberty string) (Report, error) {
	files, err := gen.DefaultFiles()
	if err != nil {
		return Report{}, err
	}
	sources := make([]Source, len(files))
	for i, f := range files {
		sources[i] = Source{Name: f.Name, Text: f.Text}
	}
	macros, err := SRAMs()
	if err != nil {
		return Report{}, err
	}
	var blackBoxes []string
	for _, s := range macros {
		if s.Module == "" {
			continue
		}
		if _, err := gen.Lookup(s.Module); err != nil {
			return Report{}, fmt.Errorf("SRAM %s: %w", s.Name, err)
		}
		blackBoxes = append(blackBoxes, s.Module)
	}
	var mods []Result
	for _, e := range emitters {
		if slices.Contains(blackBoxes, e.Name) {
			continue
		}
		r, err := Generic(e.Name, e.Summary(e.Defaults()), sources, blackBoxes)
		if err != nil {
			return Report{}, err
		}
		if liberty != "" {
			if err := WithLiberty(&r, sources, blackBoxes, liberty); err != nil {
				return Report{}, err
			}
		}
		mods = append(mods, r)
	}
	var srams []SRAMResult
	for _, s := range macros {
		if top != "" && s.Module != top {
			continue
		}
		est, err := s.Estimate()
		if err != nil {
			return Report{}, err
		}
		srams = append(srams, est)
	}
	lat, err := Latencies()
	if err != nil {
		return Report{}, err
	}
	if top != "" {
		lat = slices.DeleteFunc(lat, func(l Latency) bool { return l.Block != top })
	}
	return NewReport(mods, srams, lat), nil
}

// sweepCommand runs and prints every --sweep, checking them all before the
// first synthesis starts.
func sweepCommand(specs []string, top, liberty, jsonOut string, stdout io.Writer) error {
	var sweeps []Sweep
	for _, spec := range specs {
		s, err := ParseSweep(spec, top)
		if err != nil {
			return UsageError{err}
		}
		sweeps = append(sweeps, s)
	}
	if err := Available(); err != nil {
		return err
	}
	type result struct {
		Sweep Sweep      `json:"sweep"`
		Rows  []SweepRow `json:"rows"`
	}
	var all []result
	for i, s := range sweeps {
		rows, err := s.Run(liberty)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := WriteSweep(stdout, s, rows); err != nil {
			return err
		}
		all = append(all, result{s, rows})
	}
	if jsonOut == "" {
		return nil
	}
	f, err := os.Create(jsonOut)
	if err != nil {
		return fmt.Errorf("--json: %w", err)
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	return errors.Join(enc.Encode(all), f.Close())
}
