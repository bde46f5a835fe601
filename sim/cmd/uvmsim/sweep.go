package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// sweepCmd runs every workload x policy x oversubscription combination,
// stores each run's result in DIR/runs as it finishes (resuming from those
// already there) and assembles DIR/results.csv and DIR/results.json.
func sweepCmd(args []string, stdout, stderr io.Writer) error {
	var (
		b                 batchFlags
		policies, oversub string
	)
	fs := pflag.NewFlagSet("uvmsim sweep", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	b.register(fs, "all", "output directory: runs/ (one result per run), results.csv, results.json")
	fs.StringVar(&policies, "policies", "", "comma-separated migration policies ("+strings.Join(policy.Names(), ", ")+")")
	fs.StringVar(&oversub, "oversub", "100", "comma-separated oversubscription ratios in percent")
	fs.Lookup("out").DefValue, b.out = "sweep", "sweep"
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() > 0 {
		return usage("sweep takes no arguments, got %q", fs.Args())
	}
	base, err := b.base(fs)
	if err != nil {
		return err
	}
	workloads, err := parseWorkloads(b.workloads)
	if err != nil {
		return err
	}
	pols, err := parseNames("--policies", policies, policy.Names(), false)
	if err != nil {
		return err
	}
	ratios, err := parseRatios(oversub, base)
	if err != nil {
		return err
	}
	if err := b.check(fs); err != nil {
		return err
	}
	pl := experiment.SweepPlan(experiment.Grid(workloads, pols, ratios, base.Run.Scale, base.Run.Seed, nil), &base)
	return runPlan(&pl, base, &b, fs, stdout, stderr, func(outcomes []experiment.Outcome, _ experiment.RunSummary) error {
		if err := printSweep(stdout, outcomes); err != nil {
			return err
		}
		return experiment.Failures(outcomes)
	})
}

// parseNames splits a comma-separated list and checks each name against
// allowed; "all" selects every name when allowAll is set.
func parseNames(flag, list string, allowed []string, allowAll bool) ([]string, error) {
	choices := strings.Join(allowed, ", ")
	if allowAll {
		choices = "all, or a comma-separated list of " + choices
	}
	if allowAll && strings.TrimSpace(list) == "all" {
		return allowed, nil
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(allowed, n) {
			if n == "" {
				return nil, usage("%s: empty name in %q; allowed: %s", flag, list, choices)
			}
			return nil, usage("%s: unknown name %q; allowed: %s", flag, n, choices)
		}
		names = append(names, n)
	}
	return names, nil
}

// parseWorkloads is parseNames for --workloads, which also takes trace:FILE
// names.
func parseWorkloads(list string) ([]string, error) {
	var builtin, all []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if _, ok := workload.TraceFile(n); ok {
			if err := workload.CheckName(n); err != nil {
				return nil, usage("--workloads: %v", err)
			}
			all = append(all, n)
			continue
		}
		if n == "all" {
			all = append(all, workload.Names()...)
			continue
		}
		builtin = append(builtin, n)
		all = append(all, n)
	}
	if len(builtin) > 0 {
		if _, err := parseNames("--workloads", strings.Join(builtin, ","), workload.AllNames(), true); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// parseRatios splits --oversub and checks each ratio against run.oversub_pct's
// range.
func parseRatios(list string, base config.Config) ([]int, error) {
	key, err := config.LookupKey("run.oversub_pct")
	if err != nil {
		return nil, err
	}
	var ratios []int
	for _, s := range strings.Split(list, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(s))
		cfg := base
		cfg.Run.OversubPct = r
		if err != nil || cfg.Validate() != nil {
			return nil, usage("--oversub: %q is not a ratio in percent; allowed: integers in %s, comma-separated", strings.TrimSpace(s), key.Allowed(&base))
		}
		ratios = append(ratios, r)
	}
	return ratios, nil
}

func checkJobs(jobs int) error {
	if jobs < 1 || jobs > experiment.MaxJobs {
		return usage("--jobs = %d out of range; allowed: 1 to %d", jobs, experiment.MaxJobs)
	}
	return nil
}

// printSweep prints one line per run in spec order.
func printSweep(w io.Writer, outcomes []experiment.Outcome) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tpolicy\toversub\tcycles\tmigrations\tevictions\tfar faults\twall s\t")
	for _, o := range outcomes {
		if o.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t%d%%\tfailed: %v\t\t\t\t\t\n", o.Spec.Workload, o.Spec.Policy, o.Spec.OversubPct, o.Err)
			continue
		}
		r := &o.Result
		fmt.Fprintf(tw, "%s\t%s\t%d%%\t%d\t%d\t%d\t%d\t%.2f\t\n", r.Workload, r.Policy, r.OversubPct, r.Cycles, r.Migrations, r.Evictions, r.FarFaults, r.WallSeconds)
	}
	return tw.Flush()
}
