package experiment

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// RunExperiment runs the named experiment (a figure, or validate for all
// of them and the validation table), writes the results, each figure's
// CSV, JSON and SVG, and for validate validation.md and validation.csv
// into dir, and prints the tables to w. The summary counts the runs and
// joins the errors of those that did not complete (their values are
// missing from the figures); err is a bad name, spec or output problem.
func RunExperiment(name string, p Params, opts Options, dir string, w io.Writer) (RunSummary, error) {
	var specs []Spec
	var builds []Experiment
	if name == ValidateName {
		specs, builds = ValidationSpecs(p), Experiments()
	} else {
		e, err := Find(name)
		if err != nil {
			return RunSummary{}, err
		}
		specs, builds = e.Specs(p), []Experiment{e}
	}
	outcomes, err := Run(specs, opts)
	if err != nil {
		return RunSummary{}, err
	}
	if err := WriteResults(dir, outcomes); err != nil {
		return RunSummary{}, err
	}
	lookup := NewLookup(outcomes)
	var figs []Figure
	for _, e := range builds {
		fig := e.Build(p, lookup)
		if err := WriteFigure(dir, &fig); err != nil {
			return RunSummary{}, err
		}
		if err := fig.WriteTable(w); err != nil {
			return RunSummary{}, err
		}
		fmt.Fprintln(w)
		figs = append(figs, fig)
	}
	if name == ValidateName {
		checks := Validate(p, figs, lookup)
		if err := writeFile(filepath.Join(dir, ValidationFile), func(f io.Writer) error { return WriteValidationMarkdown(f, p, checks) }); err != nil {
			return RunSummary{}, err
		}
		if err := writeFile(filepath.Join(dir, ValidationCSV), func(f io.Writer) error { return WriteValidationCSV(f, checks) }); err != nil {
			return RunSummary{}, err
		}
		if err := WriteValidationMarkdown(w, p, checks); err != nil {
			return RunSummary{}, err
		}
	}
	return SummarizeRuns(outcomes), nil
}

// WriteFigure writes dir/<id>.csv, dir/<id>.json and, when the figure has
// panels, dir/<id>.svg.
func WriteFigure(dir string, fig *Figure) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, fig.ID)
	if err := writeFile(base+".csv", fig.WriteCSV); err != nil {
		return err
	}
	if err := writeFile(base+".json", fig.WriteJSON); err != nil {
		return err
	}
	err := writeFile(base+".svg", fig.WriteSVG)
	if errors.Is(err, ErrNothingToPlot) {
		return os.Remove(base + ".svg")
	}
	return err
}

// RunSummary describes the runs of an experiment: how many, the simulated
// cycles and the simulation seconds of those that completed (summed over
// runs, so it exceeds the wall time when runs overlap), and the errors of
// those that did not.
type RunSummary struct {
	Runs              int
	Cycles            uint64
	SimulationSeconds float64
	Failed            error
}

// SummarizeRuns totals outcomes.
func SummarizeRuns(outcomes []Outcome) RunSummary {
	s := RunSummary{Runs: len(outcomes), Failed: Failures(outcomes)}
	for _, r := range Succeeded(outcomes) {
		s.Cycles += r.Cycles
		s.SimulationSeconds += r.WallSeconds
	}
	return s
}
