package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/workload"
	"github.com/uvmmu/uvmmu/sim/workload/characterize"
)

// gritCharacterizeCmd prints GRIT Fig. 4's page classification (private,
// shared read-only, shared read-write, and the accesses going to each) for
// GRIT's workloads and writes it as CSV.
func gritCharacterizeCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("grit-characterize", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	p := characterize.GRIT
	var names, csvFile string
	var scale float64
	var seed uint64
	fs.StringVar(&names, "workloads", "all", "comma-separated workloads, or all ("+strings.Join(workload.GRITNames(), ", ")+")")
	fs.IntVar(&p.GPUs, "gpus", p.GPUs, "GPUs, 1..16")
	fs.IntVar(&p.SMs, "sms", p.SMs, "SMs per GPU, 1..1024")
	fs.IntVar(&p.WarpsPerSM, "warps-per-sm", p.WarpsPerSM, "occupancy limit in warps per SM, 1..1024")
	fs.Float64Var(&scale, "scale", 1, "problem size factor (0, 10000]")
	fs.Uint64Var(&seed, "seed", 1, "random seed")
	fs.StringVar(&csvFile, "csv", "grit-characterize.csv", "CSV output file")
	if err := fs.Parse(args); err != nil {
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
		wl, err := workload.New(n, workload.Params{Scale: scale, Seed: seed})
		if err != nil {
			return usage("--workloads/--scale: %v", err)
		}
		wls = append(wls, wl)
	}
	f, err := os.Create(csvFile)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	_ = w.Write([]string{"workload", "gpus", "pages", "private", "shared_ro", "shared_rw", "accesses", "private_accesses", "shared_accesses"})
	fmt.Fprintf(stdout, "%-10s %8s %9s %9s %9s %9s %9s\n", "workload", "pages", "private%", "shared%", "sh-RO%", "sh-RW%", "acc-sh%")
	for _, wl := range wls {
		r, err := characterize.Run(wl, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-10s %8d %9.1f %9.1f %9.1f %9.1f %9.1f\n", r.Workload, r.Pages,
			characterize.Pct(r.Private, r.Pages), characterize.Pct(r.Shared(), r.Pages),
			characterize.Pct(r.SharedRO, r.Pages), characterize.Pct(r.SharedRW, r.Pages),
			characterize.Pct(r.SharedAccesses, r.Accesses))
		u := func(v uint64) string { return strconv.FormatUint(v, 10) }
		_ = w.Write([]string{r.Workload, strconv.Itoa(p.GPUs), strconv.Itoa(r.Pages), strconv.Itoa(r.Private),
			strconv.Itoa(r.SharedRO), strconv.Itoa(r.SharedRW), u(r.Accesses), u(r.PrivateAccesses), u(r.SharedAccesses)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return f.Close()
}
