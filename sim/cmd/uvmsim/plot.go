package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/experiment"
)

// plotCmd rebuilds an output directory's results.csv, results.json and
// every table and figure from its stored runs (DIR/runs) and the plan its
// sweep or experiment recorded (DIR/experiment.json), simulating nothing:
// for results copied from elsewhere or collected from a Slurm job.
func plotCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("uvmsim plot", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: uvmsim plot DIR: rebuild the results, tables and figures of a sweep or experiment output directory from its stored runs, without simulating\n")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() != 1 {
		return usage("plot takes one output directory, got %d", fs.NArg())
	}
	dir := fs.Arg(0)
	pl, outcomes, sum, err := experiment.Rebuild(dir, stdout)
	if err != nil {
		return usage("%s: %v", dir, err)
	}
	if pl.Command == experiment.SweepCommand {
		if err := printSweep(stdout, outcomes); err != nil {
			return err
		}
	}
	if pl.Command != experiment.SweepCommand {
		fmt.Fprintf(stdout, "wrote %s\n", dir)
	}
	missing := 0
	seen := map[string]bool{}
	for _, o := range outcomes {
		if errors.Is(o.Err, experiment.ErrNotStored) && !seen[o.ConfigID] {
			seen[o.ConfigID] = true
			missing++
		}
	}
	fmt.Fprintf(stderr, "uvmsim: plot: %s (%s) rebuilt from %d stored runs of %d\n", dir, pl.Command, sum.Stored, sum.Runs)
	if missing > 0 {
		// As in experiment, runs that did not complete leave their values
		// out of the figures (n/a) rather than failing the rest.
		fmt.Fprintf(stderr, "uvmsim: plot: warning: %d of %d runs of %s have no stored result (failed, still running, or not copied); their values are missing\n", missing, sum.Runs, dir)
	}
	return nil
}
