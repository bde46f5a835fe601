// Package experiment runs whole-system simulations in bulk and turns their
// results into the UVMMU paper's figures and the validation table of SPEC
// section 10.
//
// A Spec names one run (workload, policy, oversubscription ratio, scale,
// seed and configuration overrides). Run simulates a list of specs as
// independent systems on a pool of workers and returns the outcomes in spec
// order, so the output is the same for any number of workers. Given an
// output directory, it stores each finished run at once as a Record (the
// measured fields of system.Result with the configuration that produced
// them) named by ConfigID, the hash of the full configuration, and takes
// the runs already stored there instead of simulating them again (resume);
// specs of one configuration share one run. WriteResults assembles the
// records into results.csv and results.json; Plan (experiment.json) records
// what a directory holds, so Rebuild redraws every table and figure from the
// stored runs alone.
//
// An Experiment (fig1, fig4, fig5, fig6, migration-latency) declares the
// specs it needs and builds a Figure from their outcomes: panels of grouped
// values per workload with a geometric-mean group, printed as a table,
// written as CSV and JSON and drawn as SVG. Validate computes the SPEC 10
// rows (paper figure, model figure, tolerance, pass/fail, explanation) from
// the same outcomes and renders them as Markdown.
package experiment
