package main

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// gritFlags are the flags every GRIT experiment command takes (workloads,
// output directory, preset, overrides, scale, seed, jobs); a command adds
// its own to fs before parse.
type gritFlags struct {
	name  string
	fs    *pflag.FlagSet
	names string
	out   string
	pre   string
	sets  []string
	scale float64
	seed  uint64
	jobs  int
}

// newGritFlags declares the shared flags of the command name; jobsUsage
// describes --jobs.
func newGritFlags(name, jobsUsage string, stderr io.Writer) *gritFlags {
	g := &gritFlags{name: name, fs: pflag.NewFlagSet("uvmsim experiment "+name, pflag.ContinueOnError)}
	g.fs.SetOutput(stderr)
	g.fs.StringVar(&g.names, "workloads", "all", "comma-separated workloads, or all ("+strings.Join(workload.GRITNames(), ", ")+")")
	g.fs.StringVar(&g.out, "out", "", "output directory (default out/"+name+")")
	g.fs.StringVar(&g.pre, "preset", "grit", "platform preset the runs start from")
	g.fs.StringArrayVar(&g.sets, "set", nil, "override one configuration key for every run (repeatable)")
	g.fs.Float64Var(&g.scale, "scale", 1, "workload size multiplier")
	g.fs.Uint64Var(&g.seed, "seed", 1, "random seed")
	g.fs.IntVar(&g.jobs, "jobs", 1, jobsUsage)
	return g
}

// gritRun is what the shared flags resolve to: the configuration every
// run starts from, the workloads, and the prepared output directory.
type gritRun struct {
	cfg       config.Config
	workloads []string
	out       string
	jobs      int
}

// parse parses args and checks every flag before anything runs: the
// workloads, then the command's own flags (check, may be nil), then the
// preset, overrides, scale, jobs and output directory.
func (g *gritFlags) parse(args []string, check func() error) (gritRun, error) {
	if err := g.fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return gritRun{}, err
		}
		return gritRun{}, usage("%v", err)
	}
	if g.fs.NArg() > 0 {
		return gritRun{}, usage("experiment %s takes no arguments, got %q", g.name, g.fs.Args())
	}
	wls := workload.GRITNames()
	if g.names != "all" {
		wls = strings.Split(g.names, ",")
		for _, n := range wls {
			if !slices.Contains(workload.GRITNames(), n) {
				return gritRun{}, usage("--workloads: %q is not one of GRIT's workloads (%s)", n, strings.Join(workload.GRITNames(), ", "))
			}
		}
	}
	if check != nil {
		if err := check(); err != nil {
			return gritRun{}, err
		}
	}
	cfg := config.Default()
	if err := cfg.ApplyPreset(g.pre); err != nil {
		return gritRun{}, usage("--preset: %v", err)
	}
	for _, s := range g.sets {
		if err := cfg.Set(s); err != nil {
			return gritRun{}, usage("--set: %v", err)
		}
	}
	cfg.Run.Scale, cfg.Run.Seed = g.scale, g.seed
	if err := cfg.Validate(); err != nil {
		return gritRun{}, usage("--scale or --set: %v", err)
	}
	if g.jobs < 1 || g.jobs > experiment.MaxJobs {
		return gritRun{}, usage("--jobs = %d out of range; allowed: 1..%d", g.jobs, experiment.MaxJobs)
	}
	out := g.out
	if out == "" {
		out = filepath.Join("out", g.name)
	}
	if err := experiment.PrepareDir(out, false); err != nil {
		return gritRun{}, usage("--out: %v", err)
	}
	return gritRun{cfg: cfg, workloads: wls, out: out, jobs: g.jobs}, nil
}

// gritFile is one output file of a GRIT command and how it is written.
type gritFile struct {
	name  string
	write func(io.Writer) error
}

// writeGritOutputs prints table to stdout and writes under out the
// command's files: results.json (results), results.csv (writeCSV),
// table.txt (table), the figure as JSON and SVG, and any more.
func writeGritOutputs(stdout io.Writer, out string, fig *experiment.Figure, results any, writeCSV, table func(io.Writer) error, more ...gritFile) error {
	if err := table(stdout); err != nil {
		return err
	}
	files := []gritFile{
		{experiment.ResultsJSON, func(w io.Writer) error {
			data, err := json.MarshalIndent(results, "", "  ")
			if err != nil {
				return err
			}
			_, err = w.Write(append(data, '\n'))
			return err
		}},
		{experiment.ResultsCSV, writeCSV},
		{"table.txt", table},
		{"figure.json", fig.WriteJSON},
		{"figure.svg", fig.WriteSVG},
	}
	for _, f := range append(files, more...) {
		if err := experiment.WriteFileAtomic(filepath.Join(out, f.name), f.write); err != nil {
			return ioError{err}
		}
	}
	_, err := io.WriteString(stdout, "wrote "+out+"\n")
	return err
}
