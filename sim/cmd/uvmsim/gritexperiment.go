package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/multigpu"
	"github.com/uvmmu/uvmmu/sim/workload"
	"github.com/uvmmu/uvmmu/sim/workload/characterize"
)

// gritExperimentCmd runs GRIT's experiments on the multi-GPU system:
// grit-schemes (the uniform schemes on the eight workloads, GRIT Fig. 1)
// and grit-characterize (GRIT Fig. 4). Both write under --out (default
// out/NAME): results.json, results.csv, table.txt and figure.svg; the
// scheme comparison keeps one record per run in runs/ and resumes from
// them.
func gritExperimentCmd(name string, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("uvmsim experiment "+name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var names, out, preset string
	var sets, schemes []string
	var scale float64
	var seed uint64
	var jobs int
	fs.StringVar(&names, "workloads", "all", "comma-separated workloads, or all ("+strings.Join(workload.GRITNames(), ", ")+")")
	fs.StringVar(&out, "out", "", "output directory (default out/"+name+")")
	fs.StringVar(&preset, "preset", "grit", "platform preset the runs start from")
	fs.StringArrayVar(&sets, "set", nil, "override one configuration key for every run (repeatable)")
	fs.StringSliceVar(&schemes, "schemes", experiment.GritSchemes, "multi-GPU schemes compared, the reference first (grit-schemes)")
	fs.Float64Var(&scale, "scale", 1, "workload size multiplier")
	fs.Uint64Var(&seed, "seed", 1, "random seed")
	fs.IntVar(&jobs, "jobs", 1, "simulations run at once (grit-schemes)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() > 0 {
		return usage("experiment %s takes no arguments, got %q", name, fs.Args())
	}
	wls := workload.GRITNames()
	if names != "all" {
		wls = strings.Split(names, ",")
		for _, n := range wls {
			if !slices.Contains(workload.GRITNames(), n) {
				return usage("--workloads: %q is not one of GRIT's workloads (%s)", n, strings.Join(workload.GRITNames(), ", "))
			}
		}
	}
	if len(schemes) == 0 {
		return usage("--schemes: name at least one scheme (%s)", strings.Join(multigpu.Names(), ", "))
	}
	for _, sc := range schemes {
		if !slices.Contains(multigpu.Names(), sc) {
			return usage("--schemes: %q is not a multi-GPU scheme; allowed: %s", sc, strings.Join(multigpu.Names(), ", "))
		}
	}
	cfg := config.Default()
	if err := cfg.ApplyPreset(preset); err != nil {
		return usage("--preset: %v", err)
	}
	for _, s := range sets {
		if err := cfg.Set(s); err != nil {
			return usage("--set: %v", err)
		}
	}
	cfg.Run.Scale, cfg.Run.Seed = scale, seed
	if err := cfg.Validate(); err != nil {
		return usage("--scale or --set: %v", err)
	}
	if jobs < 1 || jobs > experiment.MaxJobs {
		return usage("--jobs = %d out of range; allowed: 1..%d", jobs, experiment.MaxJobs)
	}
	if out == "" {
		out = filepath.Join("out", name)
	}
	if err := experiment.PrepareDir(out, false); err != nil {
		return usage("--out: %v", err)
	}
	var fig *experiment.Figure
	var results any
	var writeCSV func(io.Writer) error
	switch name {
	case experiment.GritSchemesName:
		recs, err := experiment.RunGritSchemes(experiment.GritOptions{Base: cfg, Workloads: wls, Schemes: schemes, Jobs: jobs, Dir: out, Progress: stderr})
		if err != nil {
			return err
		}
		fig, results = experiment.GritSchemesFigure(recs, wls, schemes, cfg.MultiGPU.GPUs), recs
		writeCSV = func(w io.Writer) error { return experiment.WriteGritCSV(w, recs) }
	case experiment.GritCharacterizeName:
		p := characterize.GRIT
		p.GPUs, p.SMs, p.WarpsPerSM = max(cfg.MultiGPU.GPUs, 1), cfg.GPU.SMs, cfg.GPU.WarpsPerSM
		f, res, err := experiment.GritCharacterization(wls, p, scale, seed)
		if err != nil {
			return usageError{err}
		}
		fig, results, writeCSV = f, res, f.WriteCSV
	default:
		return usage("experiment %q unknown", name)
	}
	if err := fig.WriteTable(stdout); err != nil {
		return err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{experiment.ResultsJSON, func(w io.Writer) error {
			data, err := json.MarshalIndent(results, "", "  ")
			if err != nil {
				return err
			}
			_, err = w.Write(append(data, '\n'))
			return err
		}},
		{experiment.ResultsCSV, writeCSV},
		{"table.txt", fig.WriteTable},
		{"figure.json", fig.WriteJSON},
		{"figure.svg", fig.WriteSVG},
	}
	for _, f := range files {
		if err := experiment.WriteFileAtomic(filepath.Join(out, f.name), f.write); err != nil {
			return ioError{err}
		}
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}
