package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// batchFlags are the flags sweep and experiment share: the configuration
// every run is layered over, the output directory, resuming, and where the
// runs execute (here, or as a Slurm job array).
type batchFlags struct {
	configFile, preset, workloads, out, slurmOpts string
	sets                                          []string
	scale                                         float64
	seed                                          string
	jobs, slurmTask                               int
	fresh, slurm, noWait                          bool
}

// Flags that shape where runs execute rather than what they compute; a
// Slurm task's command line leaves them out.
var submitOnlyFlags = []string{"fresh", "slurm", "slurm-opts", "no-wait", "slurm-task", "jobs"}

func (b *batchFlags) register(fs *pflag.FlagSet, workloadsDefault, outDoc string) {
	fs.StringVar(&b.workloads, "workloads", workloadsDefault, "comma-separated workloads, or all ("+strings.Join(workload.Names(), ", ")+"); trace:FILE runs a recorded trace")
	fs.IntVar(&b.jobs, "jobs", runtime.NumCPU(), fmt.Sprintf("simulations run at once, 1..%d", experiment.MaxJobs))
	fs.StringVar(&b.out, "out", "", outDoc)
	fs.Float64Var(&b.scale, "scale", 0, "workload size multiplier; run.scale")
	fs.StringVar(&b.seed, "seed", "", "random seed, 0..2^63-1 as in a TOML file (16, 0x10); run.seed")
	fs.StringVar(&b.preset, "preset", "", "platform preset ("+strings.Join(config.PresetNames(), ", ")+"), applied under --config and --set; run.preset")
	fs.StringVar(&b.configFile, "config", "", "TOML configuration file read over the defaults")
	fs.StringArrayVar(&b.sets, "set", nil, "override one configuration key for every run: --set key=value (repeatable; uvmsim list shows the keys)")
	fs.BoolVar(&b.fresh, "fresh", false, "discard the results already in --out and simulate every run again (default: resume, skipping runs whose result is stored)")
	fs.BoolVar(&b.slurm, "slurm", false, "run the simulations not yet done as a Slurm job array (sbatch) writing the same result files, then assemble the results")
	fs.StringVar(&b.slurmOpts, "slurm-opts", "", `extra sbatch options, split at spaces, e.g. "--partition=short --time=1:00:00"`)
	fs.BoolVar(&b.noWait, "no-wait", false, "with --slurm: return once the job is submitted; uvmsim plot DIR assembles the results when it has finished")
	fs.IntVar(&b.slurmTask, "slurm-task", -1, "run only this spec index into --out (how a Slurm array task runs)")
	_ = fs.MarkHidden("slurm-task")
}

// base layers the defaults, --preset, --config, --set, and --scale and
// --seed when given (they win, as in uvmsim run), and validates them.
func (b *batchFlags) base(fs *pflag.FlagSet) (config.Config, error) {
	cfg := config.Default()
	if fs.Changed("preset") {
		if err := cfg.ApplyPreset(b.preset); err != nil {
			return cfg, usage("--preset: %v", err)
		}
	}
	if b.configFile != "" {
		if err := cfg.LoadFile(b.configFile); err != nil {
			return cfg, usage("--config: %v", err)
		}
	}
	for _, s := range b.sets {
		if err := cfg.Set(s); err != nil {
			return cfg, usage("--set: %v", err)
		}
	}
	if fs.Changed("scale") {
		cfg.Run.Scale = b.scale
	}
	if fs.Changed("seed") {
		if err := cfg.Set("run.seed=" + b.seed); err != nil {
			return cfg, usage("--seed: %v", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usage("--scale, --seed, --config or --set: %v", err)
	}
	return cfg, nil
}

func (b *batchFlags) check(fs *pflag.FlagSet) error {
	if err := checkJobs(b.jobs); err != nil {
		return err
	}
	if !b.slurm && (fs.Changed("slurm-opts") || b.noWait) {
		return usage("--slurm-opts and --no-wait need --slurm")
	}
	return nil
}

// runPlan checks every spec and the output directory, then runs the plan:
// one spec of it as a Slurm array task, all of them as a Slurm job array,
// or here. show prints the outcomes' table to stdout.
func runPlan(pl *experiment.Plan, base config.Config, b *batchFlags, fs *pflag.FlagSet, stdout, stderr io.Writer, show func([]experiment.Outcome, experiment.RunSummary) error) error {
	cfgs, err := experiment.Configure(pl.Specs, base)
	if err != nil {
		return usageError{err}
	}
	if b.slurmTask >= 0 {
		return slurmTask(pl, base, cfgs, b, stdout)
	}
	if err := experiment.PrepareDir(b.out, b.fresh); err != nil {
		return outDirError(err)
	}
	if b.slurm {
		return runSlurm(pl, base, cfgs, b, fs, stdout, stderr, show)
	}
	stop, abandon, release := interrupts(stderr)
	defer release()
	outcomes, sum, err := experiment.Execute(pl, experiment.Options{Jobs: b.jobs, Base: base, Progress: stderr, Bar: isTerminal(stderr),
		Stop: stop, Abandon: abandon}, b.out, stdout)
	if errors.Is(err, experiment.ErrInterrupted) {
		done := 0
		for _, o := range outcomes {
			if o.Err == nil {
				done++
			}
		}
		return fmt.Errorf("interrupted: %d of %d runs finished and are saved in %s (results.csv and results.json hold them); run the same command again to resume",
			done, len(outcomes), b.out)
	}
	if err != nil {
		return ioError{fmt.Errorf("--out: %w", err)}
	}
	return show(outcomes, sum)
}

// outDirError is the exit class of an --out directory that cannot be
// prepared: a path that names a file or cannot be a directory is a bad
// flag (status 2); a directory that cannot be created or written
// (permissions, a read-only or full file system, an I/O error) is an I/O
// failure (status 3), as every later write to it is.
func outDirError(err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, syscall.EINVAL) {
		return usage("--out: %v", err)
	}
	return ioError{fmt.Errorf("--out: %w", err)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && experiment.IsTerminal(f)
}

// interrupts turns the first SIGINT or SIGTERM into stop (no new runs
// start, the running ones finish and are stored) and the second into
// abandon (return at once; the finished runs are already stored).
func interrupts(stderr io.Writer) (stop, abandon <-chan struct{}, release func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	stopC, abandonC, quit := make(chan struct{}), make(chan struct{}), make(chan struct{})
	// On a terminal the message starts below the progress bar.
	newline := ""
	if isTerminal(stderr) {
		newline = "\n"
	}
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "%suvmsim: %v: starting no new runs; the running ones finish and are saved (signal again to abandon them)\n", newline, s)
			close(stopC)
		case <-quit:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "%suvmsim: %v: abandoning the running simulations\n", newline, s)
			close(abandonC)
		case <-quit:
		}
	}()
	return stopC, abandonC, func() { signal.Stop(sigs); close(quit) }
}
