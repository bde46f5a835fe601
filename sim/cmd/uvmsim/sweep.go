package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
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

// sweepFlags are the flags of uvmsim sweep.
type sweepFlags struct {
	workloads, policies, oversub, out, configFile string
	jobs                                          int
	scale                                         float64
	seed                                          string
	sets                                          []string
}

// sweepCmd runs every workload x policy x oversubscription combination
// and writes DIR/results.csv and DIR/results.json.
func sweepCmd(args []string, stdout, stderr io.Writer) error {
	var f sweepFlags
	fs := pflag.NewFlagSet("uvmsim sweep", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.workloads, "workloads", "all", "comma-separated workloads, or all ("+strings.Join(workload.Names(), ", ")+"); trace:FILE runs a recorded trace")
	fs.StringVar(&f.policies, "policies", "", "comma-separated migration policies ("+strings.Join(policy.Names(), ", ")+")")
	fs.StringVar(&f.oversub, "oversub", "100", "comma-separated oversubscription ratios in percent")
	fs.IntVar(&f.jobs, "jobs", runtime.NumCPU(), fmt.Sprintf("simulations run at once, 1..%d", experiment.MaxJobs))
	fs.StringVar(&f.out, "out", "sweep", "output directory for results.csv and results.json")
	fs.Float64Var(&f.scale, "scale", 0, "workload size multiplier; run.scale (default 1)")
	fs.StringVar(&f.seed, "seed", "", "random seed, 0..2^63-1 as in a TOML file (16, 0x10); run.seed (default 1)")
	fs.StringVar(&f.configFile, "config", "", "TOML configuration file read over the defaults")
	fs.StringArrayVar(&f.sets, "set", nil, "override one configuration key for every run: --set key=value (repeatable; uvmsim list shows the keys)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() > 0 {
		return usage("sweep takes no arguments, got %q", fs.Args())
	}
	base, err := sweepBase(fs, &f)
	if err != nil {
		return err
	}
	workloads, err := parseWorkloads(f.workloads)
	if err != nil {
		return err
	}
	policies, err := parseNames("--policies", f.policies, policy.Names(), false)
	if err != nil {
		return err
	}
	ratios, err := parseRatios(f.oversub, base)
	if err != nil {
		return err
	}
	if err := checkJobs(f.jobs); err != nil {
		return err
	}
	specs := experiment.Grid(workloads, policies, ratios, base.Run.Scale, base.Run.Seed, nil)
	outcomes, err := experiment.Run(specs, experiment.Options{Jobs: f.jobs, Base: base, Progress: progressOut(stderr)})
	if err != nil {
		return usageError{err}
	}
	if err := experiment.WriteResults(f.out, outcomes); err != nil {
		return usage("--out: %v", err)
	}
	if err := printSweep(stdout, outcomes); err != nil {
		return err
	}
	return experiment.Failures(outcomes)
}

// sweepBase layers the defaults, --config, --set, and --scale and --seed
// when given (they win, as in uvmsim run), and validates them.
func sweepBase(fs *pflag.FlagSet, f *sweepFlags) (config.Config, error) {
	cfg := config.Default()
	if f.configFile != "" {
		if err := cfg.LoadFile(f.configFile); err != nil {
			return cfg, usage("--config: %v", err)
		}
	}
	for _, s := range f.sets {
		if err := cfg.Set(s); err != nil {
			return cfg, usage("--set: %v", err)
		}
	}
	if fs.Changed("scale") {
		cfg.Run.Scale = f.scale
	}
	if fs.Changed("seed") {
		if err := cfg.Set("run.seed=" + f.seed); err != nil {
			return cfg, usage("--seed: %v", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usage("--scale, --seed, --config or --set: %v", err)
	}
	return cfg, nil
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
		if _, err := parseNames("--workloads", strings.Join(builtin, ","), workload.Names(), true); err != nil {
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

// progressOut is stderr when it is a terminal, so a progress bar never
// lands in a redirected log.
func progressOut(stderr io.Writer) io.Writer {
	if f, ok := stderr.(*os.File); ok {
		return experiment.TerminalProgress(f)
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
