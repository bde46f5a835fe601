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
	"github.com/uvmmu/uvmmu/sim/workload"
)

// gritStudyCmd runs one of GRIT's evaluation commands (experiment
// GritStudyNames: grit, grit-faults, grit-ablation, grit-threshold,
// grit-gpus, grit-first-touch, grit-validate) on the multi-GPU system. The
// runs' records go to --runs (shared by the commands, so that one command
// reads back another's runs); the figure, its validation rows, CSV, JSON
// and SVG go to --out (default out/NAME).
func gritStudyCmd(name string, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("uvmsim experiment "+name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var names, out, runs, preset string
	var sets []string
	var gpus []int
	var scale float64
	var seed uint64
	var jobs int
	defGPUs := []int{4}
	if name == experiment.GritGPUsName {
		defGPUs = []int{2, 4, 8, 16}
	}
	fs.StringVar(&names, "workloads", "all", "comma-separated workloads, or all ("+strings.Join(workload.GRITNames(), ", ")+")")
	fs.StringVar(&out, "out", "", "output directory (default out/"+name+")")
	fs.StringVar(&runs, "runs", filepath.Join("out", "grit-runs"), "directory of the run records, shared by GRIT's commands (resume)")
	fs.StringVar(&preset, "preset", "grit", "platform preset the runs start from")
	fs.StringArrayVar(&sets, "set", nil, "override one configuration key for every run (repeatable)")
	fs.IntSliceVar(&gpus, "gpus", defGPUs, "GPU counts (grit-gpus: each; the others: the first, GRIT's 4-GPU rows)")
	fs.Float64Var(&scale, "scale", 1, "workload size multiplier")
	fs.Uint64Var(&seed, "seed", 1, "random seed")
	fs.IntVar(&jobs, "jobs", 1, "simulations run at once")
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
	if len(gpus) == 0 {
		return usage("--gpus: give at least one GPU count")
	}
	for _, n := range gpus {
		if n < 2 || n > 16 {
			return usage("--gpus = %d out of range; allowed: 2..16", n)
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
	st, err := experiment.NewGritStudy(name, gpus)
	if err != nil {
		return usage("%v", err)
	}
	recs, err := experiment.RunGritStudy(st, experiment.GritOptions{Base: cfg, Workloads: wls, Jobs: jobs, Dir: runs, Progress: stderr})
	if err != nil {
		return err
	}
	fig := experiment.GritStudyFigure(st, recs, wls)
	rows := experiment.GritValidations(st, recs, wls, gpus[0])
	table := func(w io.Writer) error {
		if err := fig.WriteTable(w); err != nil {
			return err
		}
		return experiment.WriteGritValidation(w, rows)
	}
	if err := table(stdout); err != nil {
		return err
	}
	results := struct {
		Runs       []experiment.GritPointRecord `json:"runs"`
		Validation []experiment.GritValidation  `json:"validation"`
	}{recs, rows}
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
		{experiment.ResultsCSV, func(w io.Writer) error { return experiment.WriteGritStudyCSV(w, recs) }},
		{"table.txt", table},
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
