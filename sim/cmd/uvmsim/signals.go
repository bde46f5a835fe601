package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
)

// signalsCmd lists the hierarchical name of every register and wire of the
// system a run with the same flags builds: the names --vcd-signals
// patterns match.
func signalsCmd(args []string, stdout, stderr io.Writer) error {
	var f configFlags
	fs := pflag.NewFlagSet("uvmsim signals", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	f.add(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() > 0 {
		return usage("signals takes no arguments, got %q", fs.Args())
	}
	cfg, err := f.build(fs)
	if err != nil {
		return err
	}
	p, err := policy.New(cfg.Run.Policy, &cfg)
	if err != nil {
		return usageError{err}
	}
	sys, err := system.New(&cfg, p)
	if err != nil {
		return usageError{err}
	}
	for _, name := range sys.Sim.SignalNames() {
		if _, err := fmt.Fprintln(stdout, name); err != nil {
			return ioError{err}
		}
	}
	return nil
}
