package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/workload"
	"github.com/uvmmu/uvmmu/sim/workload/characterize"
)

// gritCharacterizeCmd prints GRIT Fig. 4's page classification (private,
// shared read-only, shared read-write, and the accesses going to each) for
// GRIT's workloads, optionally per allocation, and writes it as CSV (every
// row of the table, with counts).
func gritCharacterizeCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("grit-characterize", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	p := characterize.GRIT
	var names, out string
	var scale float64
	var perAlloc bool
	var seed uint64
	fs.StringVar(&names, "workloads", "all", "comma-separated workloads, or all ("+strings.Join(workload.GRITNames(), ", ")+")")
	fs.IntVar(&p.GPUs, "gpus", p.GPUs, "GPUs, 1..16")
	fs.IntVar(&p.SMs, "sms", p.SMs, "SMs per GPU, 1..1024")
	fs.IntVar(&p.WarpsPerSM, "warps-per-sm", p.WarpsPerSM, "occupancy limit in warps per SM, 1..1024")
	fs.Float64Var(&scale, "scale", 1, "problem size factor (0, 10000]")
	fs.Uint64Var(&seed, "seed", 1, "random seed")
	fs.BoolVar(&perAlloc, "allocs", false, "also a row per allocation")
	fs.StringVar(&out, "out", "", "directory to write grit-characterize.csv into (default: print only)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if err := p.Validate(); err != nil {
		return usage("%v", err)
	}
	list := workload.GRITNames()
	if names != "all" {
		list = strings.Split(names, ",")
	}
	var wls []workload.Workload
	for _, n := range list {
		if !slices.Contains(workload.GRITNames(), n) {
			return usage("--workloads: %q is not one of GRIT's workloads (%s)", n, strings.Join(workload.GRITNames(), ", "))
		}
		wl, err := workload.New(n, workload.Params{Scale: scale, Seed: seed})
		if err != nil {
			return usage("--workloads/--scale: %v", err)
		}
		wls = append(wls, wl)
	}
	// The CSV goes under --out only: nothing is written into the working
	// directory unasked.
	var sink io.Writer = io.Discard
	var f *os.File
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return usage("--out: %v", err)
		}
		var err error
		if f, err = os.Create(filepath.Join(out, "grit-characterize.csv")); err != nil {
			return usage("--out: %v", err)
		}
		defer f.Close()
		sink = f
	}
	w := csv.NewWriter(sink)
	_ = w.Write([]string{"workload", "allocation", "gpus", "pages", "private", "shared_ro", "shared_rw",
		"accesses", "private_accesses", "shared_ro_accesses", "shared_rw_accesses"})
	fmt.Fprintf(stdout, "%-10s %-14s %8s %9s %9s %9s %9s %9s\n", "workload", "allocation", "pages", "private%", "shared%", "sh-RO%", "sh-RW%", "acc-sh%")
	row := func(wl, alloc string, c characterize.Counts) {
		fmt.Fprintf(stdout, "%-10s %-14s %8d %9.1f %9.1f %9.1f %9.1f %9.1f\n", wl, alloc, c.Pages,
			characterize.Pct(c.Private, c.Pages), characterize.Pct(c.Shared(), c.Pages),
			characterize.Pct(c.SharedRO, c.Pages), characterize.Pct(c.SharedRW, c.Pages),
			characterize.Pct(c.SharedAccesses(), c.Accesses))
		u := func(v uint64) string { return strconv.FormatUint(v, 10) }
		_ = w.Write([]string{wl, alloc, strconv.Itoa(p.GPUs), strconv.Itoa(c.Pages), strconv.Itoa(c.Private),
			strconv.Itoa(c.SharedRO), strconv.Itoa(c.SharedRW), u(c.Accesses), u(c.PrivateAccesses),
			u(c.SharedROAccesses), u(c.SharedRWAccesses)})
	}
	for _, wl := range wls {
		r, err := characterize.Run(wl, p)
		if err != nil {
			return err
		}
		row(r.Workload, "all", r.Counts)
		if perAlloc {
			for _, a := range r.Allocs {
				row(r.Workload, a.Name, a.Counts)
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if f == nil {
		return nil
	}
	return f.Close()
}
