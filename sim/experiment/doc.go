// Package experiment runs whole-system simulations in bulk and turns their
// results into the UVMMU paper's figures and the validation table of SPEC
// section 10.
//
// A Spec names one run (workload, policy, oversubscription ratio, scale,
// seed and configuration overrides). Run simulates a list of specs as
// independent systems on a pool of workers and returns the outcomes in spec
// order, so the output is the same for any number of workers. WriteResults
// stores them as results.csv and results.json with the keys of
// system.Result's JSON tags.
//
// An Experiment (fig1, fig4, fig5, fig6, migration-latency) declares the
// specs it needs and builds a Figure from their outcomes: panels of grouped
// values per workload with a geometric-mean group, printed as a table,
// written as CSV and JSON and drawn as SVG. Validate computes the SPEC 10
// rows (paper figure, model figure, tolerance, pass/fail, explanation) from
// the same outcomes and renders them as Markdown.
package experiment
