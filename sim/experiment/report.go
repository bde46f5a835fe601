package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
)

// ManifestFile is the file of an output directory that records what made
// it (Plan), written before the first simulation, so that uvmsim plot can
// rebuild every table and figure from the stored runs alone.
const ManifestFile = "experiment.json"

// SweepCommand is Plan.Command for a uvmsim sweep.
const SweepCommand = "sweep"

// Plan is what an output directory holds the results of: the command (an
// experiment name, validate or sweep), the experiment's parameters, the
// overrides of the base configuration every spec is layered over, and the
// specs in order.
type Plan struct {
	Command string            `json:"command"`
	Params  *Params           `json:"params,omitempty"`
	Base    map[string]string `json:"base"`
	Specs   []Spec            `json:"specs"`
}

// ExperimentPlan is the plan of a named experiment (or validate).
func ExperimentPlan(name string, p Params, base *config.Config) (Plan, error) {
	pl := Plan{Command: name, Params: &p, Base: Overrides(base)}
	if name == ValidateName {
		pl.Specs = ValidationSpecs(p)
		return pl, nil
	}
	e, err := Find(name)
	if err != nil {
		return Plan{}, err
	}
	pl.Specs = e.Specs(p)
	return pl, nil
}

// SweepPlan is the plan of a sweep over specs.
func SweepPlan(specs []Spec, base *config.Config) Plan {
	return Plan{Command: SweepCommand, Base: Overrides(base), Specs: specs}
}

// BaseConfig is the defaults with the plan's base overrides applied.
func (pl *Plan) BaseConfig() (config.Config, error) {
	cfg := config.Default()
	keys := make([]string, 0, len(pl.Base))
	for k := range pl.Base {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := cfg.Set(k + "=" + pl.Base[k]); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}

// WritePlan stores the plan as dir/experiment.json.
func WritePlan(dir string, pl *Plan) error {
	return WriteFileAtomic(filepath.Join(dir, ManifestFile), func(w io.Writer) error {
		data, err := json.MarshalIndent(pl, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	})
}

// ReadPlan reads dir/experiment.json.
func ReadPlan(dir string) (Plan, error) {
	var pl Plan
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return pl, fmt.Errorf("%w (written by uvmsim sweep and experiment before their first run)", err)
	}
	if err := json.Unmarshal(data, &pl); err != nil {
		return pl, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if pl.Command != SweepCommand && pl.Params == nil {
		return pl, fmt.Errorf("%s: experiment %q without params", filepath.Join(dir, ManifestFile), pl.Command)
	}
	return pl, nil
}

// RunExperiment runs the named experiment (a figure, or validate for all
// of them and the validation table) into dir, resuming from the runs dir
// already holds, and writes its tables and figures (Assemble). The summary
// counts the runs and joins the errors of those that did not complete
// (their values are missing from the figures); err is a bad name, spec or
// output problem, or ErrInterrupted after the results so far are written.
func RunExperiment(name string, p Params, opts Options, dir string, w io.Writer) (RunSummary, error) {
	pl, err := ExperimentPlan(name, p, &opts.Base)
	if err != nil {
		return RunSummary{}, err
	}
	if _, err := Configure(pl.Specs, opts.Base); err != nil {
		return RunSummary{}, err
	}
	if err := PrepareDir(dir, false); err != nil {
		return RunSummary{}, err
	}
	_, sum, err := Execute(&pl, opts, dir, w)
	return sum, err
}

// Execute records the plan in dir, runs its specs there (opts.Dir is set
// to dir) and assembles the results, tables and figures, also when the
// batch was interrupted.
func Execute(pl *Plan, opts Options, dir string, w io.Writer) ([]Outcome, RunSummary, error) {
	if err := WritePlan(dir, pl); err != nil {
		return nil, RunSummary{}, err
	}
	opts.Dir = dir
	outcomes, runErr := Run(pl.Specs, opts)
	if outcomes == nil {
		return nil, RunSummary{}, runErr
	}
	sum, err := Assemble(pl, outcomes, dir, w)
	return outcomes, sum, errors.Join(runErr, err)
}

// Rebuild reads dir's plan and stored runs, simulates nothing, and writes
// its results, tables and figures again.
func Rebuild(dir string, w io.Writer) (Plan, []Outcome, RunSummary, error) {
	pl, err := ReadPlan(dir)
	if err != nil {
		return pl, nil, RunSummary{}, err
	}
	base, err := pl.BaseConfig()
	if err != nil {
		return pl, nil, RunSummary{}, fmt.Errorf("%s: base: %w", filepath.Join(dir, ManifestFile), err)
	}
	outcomes, err := Run(pl.Specs, Options{Base: base, Dir: dir, StoredOnly: true})
	if err != nil {
		return pl, nil, RunSummary{}, err
	}
	sum, err := Assemble(&pl, outcomes, dir, w)
	return pl, outcomes, sum, err
}

// Assemble writes dir/results.csv and results.json from the outcomes and,
// for an experiment, each figure's CSV, JSON and SVG (and its Markdown
// when it has a Doc), and for validate
// validation.md and validation.csv, and prints the tables to w.
func Assemble(pl *Plan, outcomes []Outcome, dir string, w io.Writer) (RunSummary, error) {
	if err := WriteResults(dir, outcomes); err != nil {
		return RunSummary{}, err
	}
	sum := SummarizeRuns(outcomes)
	if pl.Command == SweepCommand {
		return sum, nil
	}
	p := *pl.Params
	lookup := NewLookup(outcomes)
	if pl.Command == ValidateName {
		return sum, assembleValidation(p, lookup, dir, w)
	}
	e, err := Find(pl.Command)
	if err != nil {
		return sum, err
	}
	fig := e.Build(p, lookup)
	if err := WriteFigure(dir, &fig, ""); err != nil {
		return sum, err
	}
	if e.Doc != nil {
		if err := WriteFileAtomic(filepath.Join(dir, e.Name+".md"), func(f io.Writer) error { return e.Doc(f, p, lookup) }); err != nil {
			return sum, err
		}
	}
	if err := fig.WriteTable(w); err != nil {
		return sum, err
	}
	fmt.Fprintln(w)
	return sum, nil
}

// assembleValidation writes every figure once per methodology (the
// methodology's FileSuffix after the ID), prints their tables under the
// methodology's name, and writes the validation table and its findings to
// validation.md and validation.csv and w.
func assembleValidation(p Params, lookup Lookup, dir string, w io.Writer) error {
	views := make([]*View, len(Methodologies))
	for i, m := range Methodologies {
		views[i] = NewView(p, m, lookup)
		for j := range views[i].figs {
			fig := &views[i].figs[j]
			if err := WriteFigure(dir, fig, m.FileSuffix); err != nil {
				return err
			}
			fmt.Fprintf(w, "[%s] ", m.Name)
			if err := fig.WriteTable(w); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
	}
	checks := validateViews(p, views)
	findings := Findings(p, checks, views)
	if err := WriteFileAtomic(filepath.Join(dir, ValidationFile), func(f io.Writer) error {
		return WriteValidationMarkdown(f, p, checks, findings)
	}); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, ValidationCSV), func(f io.Writer) error { return WriteValidationCSV(f, checks) }); err != nil {
		return err
	}
	return WriteValidationMarkdown(w, p, checks, findings)
}

// WriteFigure writes dir/<id><suffix>.csv, .json and, when the figure has
// panels, .svg.
func WriteFigure(dir string, fig *Figure, suffix string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, fig.ID+suffix)
	if err := WriteFileAtomic(base+".csv", fig.WriteCSV); err != nil {
		return err
	}
	if err := WriteFileAtomic(base+".json", fig.WriteJSON); err != nil {
		return err
	}
	err := WriteFileAtomic(base+".svg", fig.WriteSVG)
	if errors.Is(err, ErrNothingToPlot) {
		err = os.Remove(base + ".svg")
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	return err
}

// RunSummary describes the runs of an experiment: how many simulations
// (specs of one configuration share one), how many were taken from stored
// results, the simulated
// cycles and the simulation seconds of those simulated now (summed over
// runs, so it exceeds the wall time when runs overlap), and the errors of
// those that did not complete.
type RunSummary struct {
	Runs              int
	Stored            int
	Cycles            uint64
	SimulationSeconds float64
	Failed            error
}

// SummarizeRuns totals outcomes.
func SummarizeRuns(outcomes []Outcome) RunSummary {
	s := RunSummary{Failed: Failures(outcomes)}
	seen := map[string]bool{}
	for _, o := range outcomes {
		if o.ConfigID != "" && seen[o.ConfigID] {
			continue // a spec sharing another's run
		}
		seen[o.ConfigID] = true
		s.Runs++
		if o.Stored {
			s.Stored++
		}
		if o.Err == nil && !o.Stored {
			s.Cycles += o.Result.Cycles
			s.SimulationSeconds += o.Result.WallSeconds
		}
	}
	return s
}

// DocMarkers are the lines that delimit the section of a Markdown page
// the named experiment's Doc generates (uvmsim experiment NAME --doc).
func DocMarkers(name string) (begin, end string) {
	return "<!-- generated by uvmsim experiment " + name + " -->\n", "<!-- end of uvmsim experiment " + name + " -->\n"
}

// DocSection is the text between the named experiment's markers in page.
func DocSection(page []byte, name string) (string, error) {
	begin, end := DocMarkers(name)
	s := string(page)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %q ... %q section", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	return s[i+len(begin) : j], nil
}

// ReplaceDocSection puts text between the named experiment's markers in
// page.
func ReplaceDocSection(page []byte, name string, text []byte) ([]byte, error) {
	old, err := DocSection(page, name)
	if err != nil {
		return nil, err
	}
	begin, _ := DocMarkers(name)
	i := strings.Index(string(page), begin) + len(begin)
	return append(append(append([]byte{}, page[:i]...), text...), page[i+len(old):]...), nil
}
