package main

import (
	"io"
	"slices"
	"strings"

	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/multigpu"
	"github.com/uvmmu/uvmmu/sim/workload/characterize"
)

// gritExperimentCmd runs GRIT's experiments on the multi-GPU system:
// grit-schemes (the uniform schemes on the eight workloads, GRIT Fig. 1)
// and grit-characterize (GRIT Fig. 4). Both write under --out (default
// out/NAME): results.json, results.csv, table.txt and figure.svg; the
// scheme comparison keeps one record per run in runs/ and resumes from
// them.
func gritExperimentCmd(name string, args []string, stdout, stderr io.Writer) error {
	flags := newGritFlags(name, "simulations run at once (grit-schemes)", stderr)
	var schemes []string
	flags.fs.StringSliceVar(&schemes, "schemes", experiment.GritSchemes, "multi-GPU schemes compared, the reference first (grit-schemes)")
	run, err := flags.parse(args, func() error {
		if len(schemes) == 0 {
			return usage("--schemes: name at least one scheme (%s)", strings.Join(multigpu.Names(), ", "))
		}
		for _, sc := range schemes {
			if !slices.Contains(multigpu.Names(), sc) {
				return usage("--schemes: %q is not a multi-GPU scheme; allowed: %s", sc, strings.Join(multigpu.Names(), ", "))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	cfg, wls := run.cfg, run.workloads
	var fig *experiment.Figure
	var results any
	var writeCSV func(io.Writer) error
	switch name {
	case experiment.GritSchemesName:
		recs, err := experiment.RunGritSchemes(experiment.GritOptions{Base: cfg, Workloads: wls, Schemes: schemes, Jobs: run.jobs, Dir: run.out, Progress: stderr})
		if err != nil {
			return err
		}
		fig, results = experiment.GritSchemesFigure(recs, wls, schemes, cfg.MultiGPU.GPUs), recs
		writeCSV = func(w io.Writer) error { return experiment.WriteGritCSV(w, recs) }
	case experiment.GritCharacterizeName:
		p := characterize.GRIT
		p.GPUs, p.SMs, p.WarpsPerSM = max(cfg.MultiGPU.GPUs, 1), cfg.GPU.SMs, cfg.GPU.WarpsPerSM
		f, res, err := experiment.GritCharacterization(wls, p, cfg.Run.Scale, cfg.Run.Seed)
		if err != nil {
			return usageError{err}
		}
		fig, results, writeCSV = f, res, f.WriteCSV
	default:
		return usage("experiment %q unknown", name)
	}
	return writeGritOutputs(stdout, run.out, fig, results, writeCSV, fig.WriteTable)
}
