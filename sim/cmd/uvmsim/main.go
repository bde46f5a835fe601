// Command uvmsim runs whole-system experiments: one workload under one
// migration policy at one oversubscription ratio, on the single-GPU + PCIe
// system of SPEC 6. See docs/cli.md.
//
//	uvmsim run --workload hotspot --policy uvmmu --oversub 125
//	uvmsim list
//	uvmsim report --csv out/results.csv out/*.json
//
// Exit status: 0 on success, 2 for a bad flag, configuration key or value
// (the message names it and its allowed values), 1 when the simulation
// fails (an invariant, the watchdog, a modeling error).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks an error in what the user asked for (exit status 2).
type usageError struct{ error }

func usage(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Main runs the command line args and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, pflag.ErrHelp):
		return exitOK
	case errors.As(err, new(usageError)):
		fmt.Fprintln(stderr, "uvmsim:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "uvmsim:", err)
		return exitFailure
	}
}

const commands = "commands: run, sweep, experiment, list, config, area, grit-characterize (uvmsim COMMAND --help for flags)"

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usage("no command; %s", commands)
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "sweep":
		return sweepCmd(args[1:], stdout, stderr)
	case "experiment":
		return experimentCmd(args[1:], stdout, stderr)
	case "list":
		return listCmd(args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "config":
		return configCmd(args[1:], stdout, stderr)
	case "area":
		return areaCmd(args[1:], stdout, stderr)
	case "grit-characterize":
		return gritCharacterizeCmd(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: uvmsim COMMAND [flags];", commands)
		return nil
	}
	return usage("unknown command %q; %s", args[0], commands)
}

// runFlags are the flags of uvmsim run.
type runFlags struct {
	workload, policy, configFile, jsonFile, vcdFile string
	oversub                                         int
	scale                                           float64
	seed                                            uint64
	sets, trace                                     []string
	check                                           bool
}

func runCmd(args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := pflag.NewFlagSet("uvmsim run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.workload, "workload", "", "workload name ("+strings.Join(workload.Names(), ", ")+"); run.workload")
	fs.StringVar(&f.policy, "policy", "", "migration policy ("+strings.Join(policy.Names(), ", ")+"); run.policy")
	fs.IntVar(&f.oversub, "oversub", 0, "oversubscription ratio in percent, 100..1000; run.oversub_pct")
	fs.Float64Var(&f.scale, "scale", 0, "workload size multiplier; run.scale")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed; run.seed")
	fs.StringVar(&f.configFile, "config", "", "TOML configuration file read over the defaults")
	fs.StringArrayVar(&f.sets, "set", nil, "override one configuration key: --set key=value (repeatable; uvmsim list shows the keys)")
	fs.StringVar(&f.jsonFile, "json", "", "write the result as JSON to this file")
	fs.StringVar(&f.vcdFile, "vcd", "", "write a VCD waveform of the signals selected by --trace")
	fs.StringArrayVar(&f.trace, "trace", nil, "hierarchical name pattern to dump into the VCD, e.g. 'sm0.*' (repeatable)")
	fs.BoolVar(&f.check, "check", false, "check the SPEC 6.5 invariants and modeling rules during the run (slower)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() > 0 {
		return usage("run takes no arguments, got %q", fs.Args())
	}
	cfg, err := buildConfig(fs, &f)
	if err != nil {
		return err
	}
	if f.vcdFile != "" && len(f.trace) == 0 {
		return usage("--vcd needs at least one --trace pattern")
	}
	p, err := policy.New(cfg.Run.Policy, &cfg)
	if err != nil {
		return usageError{err}
	}
	sys, err := system.New(&cfg, p)
	if err != nil {
		return usageError{err}
	}
	var opts system.Options
	if f.vcdFile != "" {
		vf, err := os.Create(f.vcdFile)
		if err != nil {
			return usage("--vcd: %v", err)
		}
		defer vf.Close()
		opts.VCD, opts.Trace = vf, f.trace
	}
	res, err := sys.Run(p, opts)
	if err != nil {
		return err
	}
	printSummary(stdout, &res)
	if f.jsonFile != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.jsonFile, append(data, '\n'), 0o644); err != nil {
			return usage("--json: %v", err)
		}
	}
	return nil
}

// buildConfig layers the defaults, the config file, --set overrides and
// the dedicated flags (which win), then validates.
func buildConfig(fs *pflag.FlagSet, f *runFlags) (config.Config, error) {
	cfg := config.Default()
	if f.configFile != "" {
		if err := cfg.LoadFile(f.configFile); err != nil {
			return cfg, usageError{err}
		}
	}
	for _, s := range f.sets {
		if err := cfg.Set(s); err != nil {
			return cfg, usageError{err}
		}
	}
	if fs.Changed("workload") {
		cfg.Run.Workload = f.workload
	}
	if fs.Changed("policy") {
		cfg.Run.Policy = f.policy
	}
	if fs.Changed("oversub") {
		cfg.Run.OversubPct = f.oversub
	}
	if fs.Changed("scale") {
		cfg.Run.Scale = f.scale
	}
	if fs.Changed("seed") {
		cfg.Run.Seed = f.seed
	}
	if f.check {
		cfg.Check.Invariants = true
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	if !contains(workload.Names(), cfg.Run.Workload) {
		return cfg, usage("run.workload = %q unknown; allowed: %s", cfg.Run.Workload, strings.Join(workload.Names(), ", "))
	}
	return cfg, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func printSummary(w io.Writer, r *system.Result) {
	us := func(c uint64) float64 { return float64(c) / float64(r.ClockMHz) }
	fmt.Fprintf(w, "workload %s, policy %s, oversubscription %d%%, scale %g, seed %d\n", r.Workload, r.Policy, r.OversubPct, r.Scale, r.Seed)
	fmt.Fprintf(w, "  footprint          %10.1f MB managed; GPU memory %.1f MB (%.1f MB for managed data)\n",
		mb(r.FootprintBytes), mb(r.GPUMemoryBytes), mb(r.ManagedCapacity))
	fmt.Fprintf(w, "  simulated cycles   %14d  (%.1f us at %d MHz)\n", r.Cycles, us(r.Cycles), r.ClockMHz)
	fmt.Fprintf(w, "  wall time          %14.2f s  (%.3g simulated cycles/s, %.3g warp instructions/s)\n",
		r.WallSeconds, r.SimCyclesPerSecond, r.WarpInstrPerSecond)
	fmt.Fprintf(w, "  warp instructions  %14d  (%d memory)\n", r.WarpInstructions, r.MemInstructions)
	fmt.Fprintf(w, "  TLB lookups        %14d  misses %d, walks %d, remote walks %d\n", r.TLBLookups, r.TLBMisses, r.Walks, r.RemoteWalks)
	fmt.Fprintf(w, "  far faults         %14d  fault time %d cycles (%.1f us)", r.FarFaults, r.FaultCycles, us(r.FaultCycles))
	if r.TimelineCycles != r.Cycles {
		fmt.Fprintf(w, ", added to the %d simulated cycles", r.TimelineCycles)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  migrations         %14d  evictions %d, zero-copy accesses %d\n", r.Migrations, r.Evictions, r.RemoteAccesses)
	fmt.Fprintf(w, "  PCIe bytes         %14d  host to device, %d device to host\n", r.PCIeH2DBytes, r.PCIeD2HBytes)
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

func listCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("uvmsim list", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	fmt.Fprintln(stdout, "workloads:")
	for _, n := range workload.Names() {
		wl, err := workload.New(n, workload.Params{Seed: 1})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  %-10s %-9s %8.1f MB managed, %d phases\n", n, wl.Class(), mb(wl.Footprint()), len(wl.Phases()))
	}
	fmt.Fprintln(stdout, "policies:")
	for _, n := range policy.Names() {
		fmt.Fprintf(stdout, "  %-10s %s\n", n, policy.Describe[n])
	}
	fmt.Fprintln(stdout, "configuration keys (--set key=value, or in a --config TOML file):")
	def := config.Default()
	for _, k := range config.Keys() {
		fmt.Fprintf(stdout, "  %-26s %-12s %s; %s\n", k.Name, k.Value(&def), k.Allowed, k.Doc)
	}
	return nil
}
