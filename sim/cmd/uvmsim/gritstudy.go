package main

import (
	"io"
	"path/filepath"

	"github.com/uvmmu/uvmmu/sim/experiment"
)

// gritStudyCmd runs one of GRIT's evaluation commands (experiment
// GritStudyNames: grit, grit-faults, grit-ablation, grit-threshold,
// grit-gpus, grit-first-touch, grit-validate) on the multi-GPU system. The
// runs' records go to --runs (shared by the commands, so that one command
// reads back another's runs); the figure, its validation rows (table and
// validation.md, the form docs/results/grit-validation.md keeps), CSV,
// JSON and SVG go to --out (default out/NAME).
func gritStudyCmd(name string, args []string, stdout, stderr io.Writer) error {
	flags := newGritFlags(name, "simulations run at once", stderr)
	var runs string
	var stored bool
	var gpus []int
	defGPUs := []int{4}
	if name == experiment.GritGPUsName {
		defGPUs = []int{2, 4, 8, 16}
	}
	flags.fs.StringVar(&runs, "runs", filepath.Join("out", "grit-runs"), "directory of the run records, shared by GRIT's commands (resume)")
	flags.fs.BoolVar(&stored, "stored", false, "build the figure and rows from the records in --runs, simulating nothing (a run not stored leaves its workload out of the rows that need it)")
	flags.fs.IntSliceVar(&gpus, "gpus", defGPUs, "GPU counts (grit-gpus: each; the others: the first, GRIT's 4-GPU rows)")
	run, err := flags.parse(args, func() error {
		if len(gpus) == 0 {
			return usage("--gpus: give at least one GPU count")
		}
		for _, n := range gpus {
			if n < 2 || n > 16 {
				return usage("--gpus = %d out of range; allowed: 2..16", n)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	st, err := experiment.NewGritStudy(name, gpus)
	if err != nil {
		return usage("%v", err)
	}
	recs, err := experiment.RunGritStudy(st, experiment.GritOptions{Base: run.cfg, Workloads: run.workloads, Jobs: run.jobs, Dir: runs, StoredOnly: stored, Progress: stderr})
	if err != nil {
		return err
	}
	fig := experiment.GritStudyFigure(st, recs, run.workloads)
	rows := experiment.GritValidations(st, recs, run.workloads, gpus[0])
	ord := experiment.GritThresholdOrdering(rows, recs, run.workloads, gpus[0])
	table := func(w io.Writer) error {
		if err := fig.WriteTable(w); err != nil {
			return err
		}
		return experiment.WriteGritValidation(w, rows, ord)
	}
	results := struct {
		Runs       []experiment.GritPointRecord `json:"runs"`
		Validation []experiment.GritValidation  `json:"validation"`
		Ordering   *experiment.GritOrdering     `json:"threshold_ordering,omitempty"`
	}{recs, rows, ord}
	validation := gritFile{experiment.ValidationFile, func(w io.Writer) error {
		return experiment.WriteGritValidationMarkdown(w, rows, ord, run.cfg.Run.Scale, run.cfg.GPU.SMs, len(recs), len(st.Points)*len(run.workloads))
	}}
	return writeGritOutputs(stdout, run.out, fig, results, func(w io.Writer) error { return experiment.WriteGritStudyCSV(w, recs) }, table, validation)
}
