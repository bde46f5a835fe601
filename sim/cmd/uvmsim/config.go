package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/multigpu"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// configCmd prints the default configuration as a TOML file that --config
// loads, or checks a configuration file: an unknown key, a value of the
// wrong type or out of its range is a usage error (exit status 2) naming
// the key. The check is run's own, up to the first simulated cycle, so a
// file passes it exactly when run accepts it: with multigpu.gpus above 1
// (in the file or from --gpus) it builds the multi-GPU system, as run
// does.
func configCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("uvmsim config", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	printDefaults := fs.Bool("print-defaults", false, "print every configuration key with its default value as a TOML file")
	check := fs.String("check", "", "validate this TOML configuration file against the keys and their allowed values")
	gpus := fs.String("gpus", "", "with --check: GPUs of the system to check (multigpu.gpus; above 1, the multi-GPU system)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() > 0 {
		return usage("config takes no arguments, got %q", fs.Args())
	}
	switch {
	case *printDefaults && *check != "":
		return usage("config: give either --print-defaults or --check FILE, not both")
	case *printDefaults:
		def := config.Default()
		_, err := io.WriteString(stdout, defaultsTOML(&def))
		return err
	case fs.Changed("gpus") && *check == "":
		return usage("config: --gpus goes with --check FILE")
	case *check != "":
		cfg := config.Default()
		if err := cfg.LoadFile(*check); err != nil {
			return usageError{err}
		}
		if fs.Changed("gpus") {
			if err := cfg.Set("multigpu.gpus=" + *gpus); err != nil {
				return usage("--gpus: %v", err)
			}
		}
		if err := cfg.Validate(); err != nil {
			return usageError{err}
		}
		if cfg.MultiGPU.GPUs > 1 {
			if err := checkMultiGPUWorkload(cfg.Run.Workload); err != nil {
				return usage("%s: %v", *check, err)
			}
			if _, err := multigpu.New(&cfg); err != nil {
				return usage("%s: %v", *check, err)
			}
			fmt.Fprintf(stdout, "%s: ok (%d GPUs)\n", *check, cfg.MultiGPU.GPUs)
			return nil
		}
		if err := workload.CheckName(cfg.Run.Workload); err != nil {
			return usage("%s: run.workload: %v", *check, err)
		}
		// The checks run makes on the built system (the workload's
		// footprint against memory.capacity_gb, its thread blocks against
		// gpu.warps_per_sm), without simulating a cycle.
		if _, _, err := build(&cfg); err != nil {
			return usage("%s: %v", *check, err)
		}
		fmt.Fprintf(stdout, "%s: ok\n", *check)
		return nil
	}
	return usage("config needs --print-defaults or --check FILE")
}

// defaultsTOML writes every key of c, section by section in declaration
// order, each after a comment with its documentation and allowed values.
func defaultsTOML(c *config.Config) string {
	var b strings.Builder
	b.WriteString("# uvmsim configuration: every key with its default value.\n")
	b.WriteString("# Load with: uvmsim run --config FILE (keys left out keep their defaults).\n")
	section := ""
	for _, k := range config.Keys() {
		sec, name, _ := strings.Cut(k.Name, ".")
		if sec != section {
			fmt.Fprintf(&b, "\n[%s]\n", sec)
			section = sec
		}
		fmt.Fprintf(&b, "# %s; %s\n%s = %s\n", k.Doc, k.Allowed(c), name, tomlValue(&k, c))
	}
	return b.String()
}

// tomlValue is the key's value as a TOML literal: a float always carries a
// fraction or an exponent, so that it decodes as a float.
func tomlValue(k *config.Key, c *config.Config) string {
	v := k.Value(c)
	if k.Kind == "float" && !strings.ContainsAny(v, ".eE") {
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			v += ".0"
		}
	}
	return v
}
