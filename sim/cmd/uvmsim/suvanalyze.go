package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/suv"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// suvAnalyzeCmd prints SUV's classification (SUV Section V-B) of each
// managed data structure of a described workload: class in Table I's
// notation, access density, working set and per-iteration span; with
// --kernels also one row per launch and structure.
func suvAnalyzeCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("suv-analyze", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	def := config.Default().GPU
	g := suv.GPU{SMs: def.SMs, WarpsPerSM: def.WarpsPerSM}
	var name string
	var scale float64
	var seed uint64
	var perKernel bool
	fs.StringVar(&name, "workload", "", "described workload ("+strings.Join(workload.DescribedNames(), ", ")+")")
	fs.Float64Var(&scale, "scale", 1, "problem size factor (0, 10000]")
	fs.Uint64Var(&seed, "seed", 1, "random seed")
	fs.IntVar(&g.SMs, "sms", g.SMs, "SMs, >= 1 (default: the [gpu] sms default)")
	fs.IntVar(&g.WarpsPerSM, "warps-per-sm", g.WarpsPerSM, "occupancy limit in warps per SM, >= 1")
	fs.BoolVar(&perKernel, "kernels", false, "also a row per kernel launch and data structure")
	var table bool
	fs.BoolVar(&table, "table", false, "instead of --workload: a Markdown table of every SUV Table I workload's types next to the paper's")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if err := g.Validate(); err != nil {
		return usage("--sms/--warps-per-sm: %v", err)
	}
	if table {
		return suvTableI(stdout, g, scale, seed)
	}
	if name == "" {
		return usage("--workload is required (%s), or --table", strings.Join(workload.DescribedNames(), ", "))
	}
	_, prog, err := workload.Describe(name, workload.Params{Scale: scale, Seed: seed})
	if err != nil {
		return usage("--workload/--scale: %v", err)
	}
	fmt.Fprintf(stdout, "%s: %d launches, %d SMs x %d warps\n", name, len(prog.Kernels), g.SMs, g.WarpsPerSM)
	fmt.Fprintf(stdout, "%-26s %12s %-6s %10s %12s %12s %8s\n", "structure", "bytes", "types", "density", "wss", "span", "launches")
	for _, r := range suv.Analyze(prog, g) {
		fmt.Fprintf(stdout, "%-26s %12d %-6s %10s %12s %12s %8d\n", r.Alloc, r.Bytes, r.Types(),
			suvDensity(r.Class, r.Density), suvBytes(r.WSSKnown, r.WSS), suvBytes(r.Iterative, r.Span), r.Launches)
	}
	if !perKernel {
		return nil
	}
	fmt.Fprintf(stdout, "\n%-6s %-22s %-26s %-9s %10s %12s %s\n", "launch", "kernel", "structure", "class", "density", "wss", "spans (start+bytes)")
	for ki := range prog.Kernels {
		k := &prog.Kernels[ki]
		for _, r := range suv.AnalyzeKernel(prog, k, g) {
			var spans []string
			for _, s := range r.Spans {
				spans = append(spans, fmt.Sprintf("%d+%d", s.Start, s.Bytes))
			}
			class := r.Class.String()
			if r.Iterative {
				class += ",I"
			}
			line := fmt.Sprintf("%-6d %-22s %-26s %-9s %10s %12s %s", ki, k.Name, r.Alloc, class,
				suvDensity(r.Class, r.Density), suvBytes(r.WSSKnown, r.WSS), strings.Join(spans, " "))
			fmt.Fprintln(stdout, strings.TrimRight(line, " "))
		}
	}
	return nil
}

// suvDensity prints accesses per byte; an Unknown structure has none.
func suvDensity(c suv.Class, d float64) string {
	if c == suv.Unknown {
		return "-"
	}
	return fmt.Sprintf("%.4g", d)
}

func suvBytes(known bool, b uint64) string {
	if !known {
		return "-"
	}
	return fmt.Sprintf("%d", b)
}

// suvTableI prints, for every application of SUV Table I the simulator
// models, the paper's types, the types the analysis gives its structures
// here (in the order I, D, T, U) and each structure's.
func suvTableI(stdout io.Writer, g suv.GPU, scale float64, seed uint64) error {
	abbrs := make([]string, 0, len(workload.SUVTableNames))
	for a := range workload.SUVTableNames {
		abbrs = append(abbrs, a)
	}
	slices.Sort(abbrs)
	fmt.Fprintf(stdout, "| Table I | workload | Table I types | types here | same | structures |\n|---|---|---|---|---|---|\n")
	for _, a := range abbrs {
		name := workload.SUVTableNames[a]
		_, prog, err := workload.Describe(name, workload.Params{Scale: scale, Seed: seed})
		if err != nil {
			return usage("--scale: %v", err)
		}
		has := map[string]bool{}
		var structs []string
		for _, r := range suv.Analyze(prog, g) {
			for _, t := range strings.Split(r.Types(), ",") {
				has[t] = true
			}
			structs = append(structs, r.Alloc+" "+r.Types())
		}
		var here []string
		for _, t := range []string{"I", "D", "T", "U"} {
			if has[t] {
				here = append(here, t)
			}
		}
		paper := strings.Split(workload.SUVTableTypes[a], ", ")
		slices.Sort(paper)
		mine := slices.Clone(here)
		slices.Sort(mine)
		same := "no"
		if slices.Equal(paper, mine) {
			same = "yes"
		}
		fmt.Fprintf(stdout, "| %s | %s | %s | %s | %s | %s |\n", a, name, workload.SUVTableTypes[a], strings.Join(here, ", "), same, strings.Join(structs, "; "))
	}
	return nil
}
