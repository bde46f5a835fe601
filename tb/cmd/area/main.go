// Command area synthesizes every emitted module with Yosys and prints cell
// counts, transistors, NAND2-equivalents, flip-flops, logic depth and an
// area estimate, the analytic area of the SRAM macros, and the per-operation
// latencies measured on the Go models.
//
//	go run ./tb/cmd/area                       generic flow, all modules
//	go run ./tb/cmd/area --top uvmmu_dcq       one module
//	go run ./tb/cmd/area --liberty my.lib      also map to a Liberty library
//	go run ./tb/cmd/area --json area.json      also write the report as JSON
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	flag "github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/tb/area"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "area:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("area", flag.ContinueOnError)
	liberty := fs.String("liberty", "", "Liberty file to map to (cell area and ABC delay)")
	jsonOut := fs.String("json", "", "write the report as JSON to this file")
	top := fs.String("top", "", "report only this module")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := area.Available(); err != nil {
		return err
	}
	files, err := gen.DefaultFiles()
	if err != nil {
		return err
	}
	sources := make([]area.Source, len(files))
	for i, f := range files {
		sources[i] = area.Source{Name: f.Name, Text: f.Text}
	}
	macros, err := area.SRAMs()
	if err != nil {
		return err
	}
	var blackBoxes []string
	for _, s := range macros {
		if s.Module == "" {
			continue
		}
		if _, err := gen.Lookup(s.Module); err != nil {
			return fmt.Errorf("SRAM %s: %w", s.Name, err)
		}
		blackBoxes = append(blackBoxes, s.Module)
	}
	emitters := gen.Emitters()
	if *top != "" {
		e, err := gen.Lookup(*top)
		if err != nil {
			return err
		}
		emitters = []gen.Emitter{e}
	}
	var mods []area.Result
	for _, e := range emitters {
		if slices.Contains(blackBoxes, e.Name) {
			continue
		}
		m, err := e.Module(nil)
		if err != nil {
			return err
		}
		r, err := area.Generic(e.Name, m.ParamSummary(), sources, blackBoxes)
		if err != nil {
			return err
		}
		if *liberty != "" {
			if err := area.WithLiberty(&r, sources, blackBoxes, *liberty); err != nil {
				return err
			}
		}
		mods = append(mods, r)
	}
	var srams []area.SRAMResult
	if *top == "" {
		for _, s := range macros {
			est, err := s.Estimate()
			if err != nil {
				return err
			}
			srams = append(srams, est)
		}
	}
	lat, err := area.Latencies()
	if err != nil {
		return err
	}
	rep := area.NewReport(mods, srams, lat)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if *jsonOut != "" {
		f, err := os.Create(*jsonOut)
		if err != nil {
			return err
		}
		if err := rep.WriteJSON(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return nil
}
