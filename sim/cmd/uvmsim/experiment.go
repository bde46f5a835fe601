package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
)

// experimentCmd runs one of the paper's experiments (or validate) and
// writes its results, tables and plots.
func experimentCmd(args []string, stdout, stderr io.Writer) error {
	var (
		out   string
		quick bool
		jobs  int
	)
	names := strings.Join(experiment.Names(), ", ")
	fs := pflag.NewFlagSet("uvmsim experiment", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: uvmsim experiment NAME [flags]; NAME is one of:")
		for _, e := range experiment.Experiments() {
			fmt.Fprintf(stderr, "  %-18s %s\n", e.Name, e.Title)
		}
		fmt.Fprintf(stderr, "  %-18s every run of the above, and the validation table (validation.md)\nflags:\n%s", experiment.ValidateName, fs.FlagUsages())
	}
	fs.StringVar(&out, "out", "", "output directory (default out/NAME)")
	fs.BoolVar(&quick, "quick", false, fmt.Sprintf("smoke run: workloads %s at scale %g", strings.Join(experiment.QuickWorkloads, ", "), experiment.QuickScale))
	fs.IntVar(&jobs, "jobs", runtime.NumCPU(), fmt.Sprintf("simulations run at once, 1..%d", experiment.MaxJobs))
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
		if _, err := experiment.Find(name); err != nil {
			return usageError{err}
		}
	}
	if err := checkJobs(jobs); err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join("out", name)
	}
	opts := experiment.Options{Jobs: jobs, Base: config.Default(), Progress: progressOut(stderr)}
	start := time.Now()
	sum, err := experiment.RunExperiment(name, experiment.DefaultParams(quick), opts, out, stdout)
	if err != nil {
		return usageError{err}
	}
	if sum.Failed != nil {
		fmt.Fprintf(stderr, "uvmsim: %s: some runs did not complete; their values are missing from the figures:\n%v\n", name, sum.Failed)
	}
	// The speed report goes to stderr so that stdout, like every file
	// written, is the same bytes for the same configuration.
	wall := time.Since(start).Seconds()
	fmt.Fprintf(stderr, "uvmsim: %s: %d simulations, %d jobs, %.1f s wall, %.1f s of simulation, %.3g simulated cycles/s per job\n",
		name, sum.Runs, jobs, wall, sum.SimulationSeconds, float64(sum.Cycles)/max(sum.SimulationSeconds, 1e-9))
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}
