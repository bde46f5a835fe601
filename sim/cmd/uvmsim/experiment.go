package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
)

// experimentCmd runs one of the paper's experiments (or validate), storing
// each run's result as it finishes (resuming from those already stored),
// and writes its results, tables and plots.
func experimentCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && slices.Contains(gritExperimentNames, args[0]) {
		return gritExperimentCmd(args[0], args[1:], stdout, stderr)
	}
	if len(args) > 0 && slices.Contains(experiment.GritStudyNames, args[0]) {
		return gritStudyCmd(args[0], args[1:], stdout, stderr)
	}
	var (
		b     batchFlags
		quick bool
		doc   string
	)
	names := strings.Join(experiment.Names(), ", ")
	fs := pflag.NewFlagSet("uvmsim experiment", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: uvmsim experiment NAME [flags]; NAME is one of:")
		for _, e := range experiment.Experiments() {
			fmt.Fprintf(stderr, "  %-18s %s\n", e.Name, e.Title)
		}
		fmt.Fprintf(stderr, "  %-18s every run of the above, and the validation table (validation.md)\n", experiment.ValidateName)
		fmt.Fprintf(stderr, "  %-18s the uniform multi-GPU schemes on GRIT's workloads (GRIT Fig. 1; own flags: uvmsim experiment %s --help)\n", experiment.GritSchemesName, experiment.GritSchemesName)
		fmt.Fprintf(stderr, "  %-18s the uniform schemes at each driver fault-handling latency (own flags)\n", experiment.GritFaultLatencyName)
		fmt.Fprintf(stderr, "  %-18s GRIT Fig. 4's page sharing of GRIT's workloads (own flags)\n", experiment.GritCharacterizeName)
		fmt.Fprintf(stderr, "  %-18s GRIT's evaluation, Figs. 17-29, and its validation rows (own flags)\n", strings.Join(experiment.GritStudyNames, ", "))
		for _, e := range experiment.SUVExperiments() {
			fmt.Fprintf(stderr, "  %-18s %s\n", e.Name, e.Title)
		}
		fmt.Fprintf(stderr, "flags:\n%s", fs.FlagUsages())
	}
	b.register(fs, "all", "output directory (default out/NAME): runs/ (one result per run), results.csv, results.json, tables and figures")
	fs.BoolVar(&quick, "quick", false, fmt.Sprintf("smoke run: workloads %s at scale %g (--workloads and --scale win)", strings.Join(experiment.QuickWorkloads, ", "), experiment.QuickScale))
	fs.StringVar(&doc, "doc", "", "replace the generated section of this Markdown page with the experiment's NAME.md (incomplete writes one; so do grit-schemes, grit-fault-latency and grit-characterize, with their own flags)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() != 1 {
		return usage("experiment takes one NAME, got %d; allowed: %s", fs.NArg(), names)
	}
	name := fs.Arg(0)
	if name != experiment.ValidateName {
		e, err := experiment.Find(name)
		if err != nil {
			return usageError{err}
		}
		if doc != "" && e.Doc == nil {
			return usage("--doc: experiment %s writes no Markdown section", name)
		}
	} else if doc != "" {
		return usage("--doc: experiment %s writes no Markdown section", name)
	}
	if err := checkDocFlag(doc, name); err != nil {
		return err
	}
	base, err := b.base(fs)
	if err != nil {
		return err
	}
	// --scale and --seed, or run.scale and run.seed from --config or
	// --set, win over the experiment's (and --quick's) sizes.
	p := experiment.DefaultParams(quick)
	def := config.Default()
	if fs.Changed("scale") || base.Run.Scale != def.Run.Scale {
		p.Scale = base.Run.Scale
	}
	if fs.Changed("seed") || base.Run.Seed != def.Run.Seed {
		p.Seed = base.Run.Seed
	}
	if fs.Changed("workloads") {
		if p.Workloads, err = parseWorkloads(b.workloads); err != nil {
			return err
		}
	}
	if err := b.check(fs); err != nil {
		return err
	}
	if b.out == "" {
		b.out = filepath.Join("out", name)
	}
	pl, err := experiment.ExperimentPlan(name, p, &base)
	if err != nil {
		return usageError{err}
	}
	start := time.Now()
	return runPlan(&pl, base, &b, fs, stdout, stderr, func(_ []experiment.Outcome, sum experiment.RunSummary) error {
		if sum.Failed != nil {
			fmt.Fprintf(stderr, "uvmsim: %s: some runs did not complete; their values are missing from the figures:\n%v\n", name, sum.Failed)
		}
		// The speed report goes to stderr so that stdout, like every file
		// written, is the same bytes for the same configuration.
		wall := time.Since(start).Seconds()
		fmt.Fprintf(stderr, "uvmsim: %s: %d simulations (%d of them stored before), %d jobs, %.1f s wall, %.1f s of simulation, %.3g simulated cycles/s per job\n",
			name, sum.Runs, sum.Stored, b.jobs, wall, sum.SimulationSeconds, float64(sum.Cycles)/max(sum.SimulationSeconds, 1e-9))
		fmt.Fprintf(stdout, "wrote %s\n", b.out)
		if doc != "" {
			return replaceDoc(doc, name, filepath.Join(b.out, name+".md"), stdout)
		}
		return nil
	})
}

// replaceDoc puts the experiment's Markdown, as written to generated, into
// the marked section of the page doc.
func replaceDoc(doc, name, generated string, stdout io.Writer) error {
	text, err := os.ReadFile(generated)
	if err != nil {
		return ioError{err}
	}
	page, err := os.ReadFile(doc)
	if err != nil {
		return ioError{err}
	}
	out, err := experiment.ReplaceDocSection(page, name, text)
	if err != nil {
		return usage("--doc: %s: %v", doc, err)
	}
	if err := experiment.WriteFileAtomic(doc, func(w io.Writer) error { _, err := w.Write(out); return err }); err != nil {
		return ioError{err}
	}
	fmt.Fprintf(stdout, "wrote %s\n", doc)
	return nil
}

// checkDocFlag checks, before the first run, that --doc names a readable
// page holding experiment name's generated-section markers; "" passes.
func checkDocFlag(doc, name string) error {
	if doc == "" {
		return nil
	}
	page, err := os.ReadFile(doc)
	if err != nil {
		return usage("--doc: %v", err)
	}
	if _, err := experiment.DocSection(page, name); err != nil {
		return usage("--doc: %s: %v", doc, err)
	}
	return nil
}
