// Command uvmsim runs whole-system experiments: one workload under one
// migration policy at one oversubscription ratio, on the single-GPU + PCIe
// system of SPEC 6. See docs/cli.md.
//
//	uvmsim run --workload hotspot --policy uvmmu --oversub 125
//	uvmsim run --trace-file example.trace --policy um
//	uvmsim list
//	uvmsim signals --policy uvmmu
//	uvmsim report --csv out/results.csv out/*.json
//
// Exit status: 0 on success; 2 for anything the user can fix in the
// command or its files (a bad flag, configuration key or value, a
// malformed trace or graph, a run predicted to need more memory than
// run.max_memory_gb; the message names it and its allowed values); 1 when
// the simulation fails (an invariant, the watchdog, a modeling error); 3
// when reading or writing a file fails after it was opened (a full disk,
// an I/O error).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/multigpu"
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
	exitIO      = 3
)

// usageError marks an error in what the user asked for (exit status 2).
type usageError struct{ error }

func usage(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// ioError marks a failure to read or write a file that was opened (exit
// status 3).
type ioError struct{ error }

// exitStatus maps an error to the documented exit status.
func exitStatus(err error) int {
	var (
		ue  usageError
		ie  ioError
		me  *system.MemoryError
		rde *workload.ReadError
	)
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return exitOK
	case errors.As(err, &ie), errors.As(err, &rde):
		return exitIO
	case errors.As(err, &ue), errors.As(err, &me):
		return exitUsage
	}
	return exitFailure
}

// Main runs the command line args and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	code := exitStatus(err)
	if err != nil && code != exitOK {
		fmt.Fprintln(stderr, printable("uvmsim: "+err.Error()))
	}
	return code
}

// maxLineBytes bounds every line of an error message: a huge value given
// on the command line or read from a file is cut, not echoed whole.
const maxLineBytes = 2048

// printable makes an error message safe for a terminal: bytes that are not
// printable UTF-8 are escaped as Go would quote them, and every line
// longer than maxLineBytes is cut in the middle.
func printable(msg string) string {
	var b strings.Builder
	for i, line := range strings.Split(msg, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if len(line) > maxLineBytes {
			cut := len(line) - maxLineBytes
			head := line[:maxLineBytes*3/4]
			tail := line[len(line)-maxLineBytes/4:]
			line = fmt.Sprintf("%s ... (%d bytes left out) ... %s", strings.ToValidUTF8(head, ""), cut, strings.ToValidUTF8(tail, ""))
		}
		for len(line) > 0 {
			r, n := utf8.DecodeRuneInString(line)
			switch {
			case r == utf8.RuneError && n == 1:
				fmt.Fprintf(&b, "\\x%02x", line[0])
			case r == '\t' || unicode.IsPrint(r):
				b.WriteString(line[:n])
			default:
				b.WriteString(strings.Trim(fmt.Sprintf("%+q", string(r)), `"`))
			}
			line = line[n:]
		}
	}
	return b.String()
}

const commands = "commands: run, sweep, experiment, plot, list, signals, report, config, area, grit-characterize, suv-analyze (uvmsim COMMAND --help for flags)"

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
	case "signals":
		return signalsCmd(args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "plot":
		return plotCmd(args[1:], stdout, stderr)
	case "config":
		return configCmd(args[1:], stdout, stderr)
	case "area":
		return areaCmd(args[1:], stdout, stderr)
	case "grit-characterize":
		return gritCharacterizeCmd(args[1:], stdout, stderr)
	case "suv-analyze":
		return suvAnalyzeCmd(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: uvmsim COMMAND [flags];", commands)
		return nil
	}
	return usage("unknown command %q; %s", args[0], commands)
}

// configFlags are the flags that make a configuration, shared by run and
// signals.
type configFlags struct {
	workload, traceFile, policy, oversub, scale, seed, configFile, preset, gpus string
	sets                                                                        []string
	check                                                                       bool
}

// add declares the flags on fs. The run.* flags are strings applied with
// config.Set, so that --seed 0x10 and --set run.seed=0x10 get the same
// answer.
func (f *configFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.workload, "workload", "", "workload name ("+strings.Join(workload.Names(), ", ")+"); run.workload")
	fs.StringVar(&f.traceFile, "trace-file", "", "run a recorded trace (docs/trace-format.md, plain or gzip) instead of a built-in workload")
	fs.StringVar(&f.policy, "policy", "", "migration policy ("+strings.Join(policy.Names(), ", ")+"; run.policy), or with more than one GPU the multi-GPU scheme ("+strings.Join(multigpu.Names(), ", ")+"; multigpu.policy)")
	fs.StringVar(&f.gpus, "gpus", "", "GPUs, 1..16: above 1 the multi-GPU system of GRIT (docs/grit.md); multigpu.gpus")
	fs.StringVar(&f.oversub, "oversub", "", "oversubscription ratio in percent, 100..1000; run.oversub_pct")
	fs.StringVar(&f.scale, "scale", "", "workload size multiplier; run.scale")
	fs.StringVar(&f.seed, "seed", "", "random seed, a decimal integer; run.seed")
	fs.StringVar(&f.preset, "preset", "", "platform preset ("+strings.Join(config.PresetNames(), ", ")+"), applied under --config and --set; run.preset")
	fs.StringVar(&f.configFile, "config", "", "TOML configuration file read over the defaults")
	fs.StringArrayVar(&f.sets, "set", nil, "override one configuration key: --set key=value (repeatable; uvmsim list shows the keys)")
}

// build layers the defaults, the preset, the config file, --set overrides
// and the dedicated flags (which win), then validates.
func (f *configFlags) build(fs *pflag.FlagSet) (config.Config, error) {
	cfg := config.Default()
	if fs.Changed("preset") {
		if err := cfg.ApplyPreset(f.preset); err != nil {
			return cfg, usage("--preset: %v", err)
		}
	}
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
	if fs.Changed("gpus") {
		if err := cfg.Set("multigpu.gpus=" + f.gpus); err != nil {
			return cfg, usage("--gpus: %v", err)
		}
	}
	policyKey := "run.policy"
	if cfg.MultiGPU.GPUs > 1 {
		policyKey = "multigpu.policy"
	}
	for _, d := range []struct{ flag, key, value string }{
		{"workload", "run.workload", f.workload},
		{"policy", policyKey, f.policy},
		{"oversub", "run.oversub_pct", f.oversub},
		{"scale", "run.scale", f.scale},
		{"seed", "run.seed", f.seed},
	} {
		if !fs.Changed(d.flag) {
			continue
		}
		if err := cfg.Set(d.key + "=" + d.value); err != nil {
			return cfg, usage("--%s: %v", d.flag, err)
		}
	}
	if fs.Changed("trace-file") {
		switch {
		case f.traceFile == "":
			return cfg, usage("--trace-file needs a file name")
		case fs.Changed("workload"):
			return cfg, usage("give --workload or --trace-file, not both")
		case fs.Changed("scale"):
			return cfg, usage("--scale does not apply to --trace-file: a trace runs at its recorded size")
		}
		cfg.Run.Workload = workload.TracePrefix + f.traceFile
	}
	if f.check {
		cfg.Check.Invariants = true
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	if cfg.MultiGPU.GPUs > 1 {
		return cfg, checkMultiGPUWorkload(cfg.Run.Workload)
	}
	if err := workload.CheckName(cfg.Run.Workload); err != nil {
		return cfg, usage("run.workload: %v", err)
	}
	return cfg, nil
}

// build makes the policy and the system of a validated configuration
// without running it: every check `run` makes before its first cycle,
// which `config --check` makes too.
func build(cfg *config.Config) (system.Policy, *system.System, error) {
	p, err := policy.New(cfg.Run.Policy, cfg)
	if err != nil {
		return nil, nil, usageError{err}
	}
	sys, err := system.New(cfg, p)
	if err != nil {
		// A trace file that cannot be read is an I/O failure, not a
		// usage error.
		var rde *workload.ReadError
		if errors.As(err, &rde) {
			return nil, nil, err
		}
		return nil, nil, usageError{err}
	}
	return p, sys, nil
}

// runFlags are the flags of uvmsim run.
type runFlags struct {
	configFlags
	jsonFile, vcdFile string
	cpuProfile        string
	signals, oldTrace []string
}

func runCmd(args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := pflag.NewFlagSet("uvmsim run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	f.add(fs)
	fs.StringVar(&f.jsonFile, "json", "", "write the result as JSON to this file")
	fs.StringVar(&f.vcdFile, "vcd", "", "write a VCD waveform of the signals selected by --vcd-signals")
	fs.StringArrayVar(&f.signals, "vcd-signals", nil, "hierarchical name pattern to dump into the VCD, e.g. 'uvmmu.da.afm.*' (repeatable; uvmsim signals lists the names)")
	fs.BoolVar(&f.check, "check", false, "check the SPEC 6.5 invariants and modeling rules during the run (slower)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run, set-up included, to this file (go tool pprof; make pgo merges such profiles into the build's default.pgo)")
	// --trace was the VCD signal filter; it is refused with the new names.
	fs.StringArrayVar(&f.oldTrace, "trace", nil, "")
	_ = fs.MarkHidden("trace")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() > 0 {
		return usage("run takes no arguments, got %q", fs.Args())
	}
	if fs.Changed("trace") {
		return usage("--trace is not a flag: a recorded trace runs with --trace-file FILE, and the VCD's signals are chosen with --vcd-signals GLOB")
	}
	cfg, err := f.build(fs)
	if err != nil {
		return err
	}
	if fs.Changed("cpuprofile") {
		if f.cpuProfile == "" {
			return usage("--cpuprofile needs a file name")
		}
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if cfg.MultiGPU.GPUs > 1 {
		return runMultiGPU(&cfg, &f, fs, stdout)
	}
	switch {
	case fs.Changed("json") && f.jsonFile == "":
		return usage("--json needs a file name")
	case fs.Changed("vcd") && f.vcdFile == "":
		return usage("--vcd needs a file name")
	case f.vcdFile != "" && len(f.signals) == 0:
		return usage("--vcd needs at least one --vcd-signals pattern (uvmsim signals lists the names)")
	case f.vcdFile == "" && len(f.signals) > 0:
		return usage("--vcd-signals selects what --vcd FILE dumps; give --vcd FILE too")
	}
	p, sys, err := build(&cfg)
	if err != nil {
		return err
	}
	if note := oversubNote(sys); note != "" {
		fmt.Fprintln(stderr, "uvmsim: note:", note)
	}
	// Every output file is created before the run, so that a bad path
	// costs no simulation.
	var opts system.Options
	var outputs []*os.File
	ok := false
	defer func() {
		for _, o := range outputs {
			o.Close()
			// A failed run's waveform is kept for debugging; a file it
			// left empty is removed.
			if fi, err := os.Stat(o.Name()); !ok && err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
				os.Remove(o.Name())
			}
		}
	}()
	create := func(flag, name string) (*os.File, error) {
		out, err := os.Create(name)
		if err != nil {
			return nil, usage("%s: %v", flag, err)
		}
		outputs = append(outputs, out)
		return out, nil
	}
	var jsonOut *os.File
	if f.jsonFile != "" {
		if jsonOut, err = create("--json", f.jsonFile); err != nil {
			return err
		}
	}
	if f.vcdFile != "" {
		if _, err := sys.Sim.MatchSignals(f.signals...); err != nil {
			return usage("--vcd-signals: %v (uvmsim signals lists the names)", err)
		}
		vf, err := create("--vcd", f.vcdFile)
		if err != nil {
			return err
		}
		opts.VCD, opts.Signals = writeChecked{vf}, f.signals
	}
	res, err := sys.Run(p, opts)
	if err != nil {
		return err
	}
	printSummary(stdout, &res)
	if jsonOut != nil {
		data, err := json.MarshalIndent(experiment.NewRecord(&cfg, res, nil), "", "  ")
		if err != nil {
			return err
		}
		if _, err := jsonOut.Write(append(data, '\n')); err != nil {
			return ioError{fmt.Errorf("--json: %w", err)}
		}
	}
	for _, o := range outputs {
		if err := o.Close(); err != nil {
			return ioError{fmt.Errorf("%s: %w", o.Name(), err)}
		}
	}
	outputs, ok = nil, true
	return nil
}

// startCPUProfile profiles the process into the file name until stop is
// called; an unwritable profile is a usage error, found before the run.
func startCPUProfile(name string) (stop func(), err error) {
	out, err := os.Create(name)
	if err != nil {
		return nil, usage("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, ioError{fmt.Errorf("--cpuprofile: %w", err)}
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}

// writeChecked turns a failed VCD write into an I/O error; runCmd closes
// the file.
type writeChecked struct{ f *os.File }

func (w writeChecked) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = ioError{fmt.Errorf("--vcd: %w", err)}
	}
	return n, err
}

// oversubNote explains a managed capacity larger than the ratio asks for:
// managed memory is the managed allocations as the UVMSmart simulator's
// cudaMallocManaged sizes them (system.ManagedGroups: whole 2 MB pages, the
// rest rounded up to a power of two of 64 KB) over the ratio, which at a
// small scale can exceed the footprint itself.
func oversubNote(s *system.System) string {
	r := s.Cfg.Run.OversubPct
	footprint := s.Workload.Footprint()
	allocated := uint64(s.Layout.FootprintPages) << system.PageShift
	capacity := uint64(s.Layout.ManagedPages) << system.PageShift
	eff := effectiveOversub(footprint, capacity)
	if r == 100 || eff >= r || s.Cfg.Run.GPUMemoryMB > 0 {
		return ""
	}
	return fmt.Sprintf("run.oversub_pct = %d asks for %.1f MB of managed GPU memory for %.1f MB of managed data; it is the managed allocations as cudaMallocManaged sizes them (whole 2 MB pages, the rest rounded up to a power of two of 64 KB), %.1f MB, over the ratio, %.1f MB, so footprint / managed memory is %d%%",
		r, mb(footprint)*100/float64(r), mb(footprint), mb(allocated), mb(capacity), eff)
}

// effectiveOversub is footprint / managed capacity in whole percent.
func effectiveOversub(footprint, capacity uint64) int {
	if capacity == 0 {
		return 0
	}
	return int((footprint*100 + capacity/2) / capacity)
}

// printSummary prints every field of the result JSON (docs/cli.md, The
// summary; TestSummaryShowsEveryJSONField holds the two together).
func printSummary(w io.Writer, r *system.Result) {
	us := func(c uint64) float64 { return float64(c) / float64(r.ClockMHz) }
	oversub := fmt.Sprintf("%d%%", r.OversubPct)
	if eff := effectiveOversub(r.FootprintBytes, r.ManagedCapacity); eff != r.OversubPct && r.OversubPct != 100 {
		oversub += fmt.Sprintf(" (footprint / managed memory %d%%)", eff)
	}
	fmt.Fprintf(w, "workload %s, policy %s, oversubscription %s, scale %g, seed %d\n", r.Workload, r.Policy, oversub, r.Scale, r.Seed)
	fmt.Fprintf(w, "  footprint          %10.1f MB managed; GPU memory %.1f MB (%.1f MB for managed data; run.gpu_memory_mb = %s)\n",
		mb(r.FootprintBytes), mb(r.GPUMemoryBytes), mb(r.ManagedCapacity), strconv.FormatFloat(r.GPUMemoryMB, 'f', -1, 64))
	fmt.Fprintf(w, "  host memory        %10.1f MB predicted for the simulator\n", mb(r.ModelMemoryBytes))
	fmt.Fprintf(w, "  simulated cycles   %14d  (%.1f us at %d MHz; %d evaluated, the rest skipped idle)\n", r.Cycles, us(r.Cycles), r.ClockMHz, r.EvaluatedCycles)
	fmt.Fprintf(w, "  wall time          %14.2f s  (%.3g simulated cycles/s, %.3g warp instructions/s)\n",
		r.WallSeconds, r.SimCyclesPerSecond, r.WarpInstrPerSecond)
	fmt.Fprintf(w, "  warp instructions  %14d  (%d memory)\n", r.WarpInstructions, r.MemInstructions)
	fmt.Fprintf(w, "  TLB lookups        %14d  misses %d, walks %d, remote walks %d\n", r.TLBLookups, r.TLBMisses, r.Walks, r.RemoteWalks)
	fmt.Fprintf(w, "  DRAM bytes         %14d\n", r.DRAMBytes)
	fmt.Fprintf(w, "  L2 hits            %14d  misses %d, lines invalidated %d, written back %d B; L1 hits %d, misses %d\n",
		r.L2Hits, r.L2Misses, r.CacheInvalidations, r.L2WriteBackBytes, r.L1Hits, r.L1Misses)
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
	fmt.Fprintln(stdout, "multi-GPU policies (--gpus N above 1, or multigpu.policy):")
	for _, n := range multigpu.Names() {
		fmt.Fprintf(stdout, "  %-11s %s\n", n, multigpu.Describe[n])
	}
	fmt.Fprintln(stdout, "presets (--preset NAME, or run.preset; the keys each one sets):")
	for _, p := range config.Presets() {
		fmt.Fprintf(stdout, "  %-10s %s\n", p.Name, p.Doc)
		for _, s := range p.Sets {
			fmt.Fprintf(stdout, "  %-10s   %s\n", "", s)
		}
	}
	fmt.Fprintln(stdout, "configuration keys (--set key=value, or in a --config TOML file):")
	def := config.Default()
	for _, k := range config.Keys() {
		fmt.Fprintf(stdout, "  %-26s %-12s %s; %s\n", k.Name, k.Value(&def), k.Allowed(&def), k.Doc)
	}
	return nil
}
