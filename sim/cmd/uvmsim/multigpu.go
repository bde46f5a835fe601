package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/multigpu"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// checkMultiGPUWorkload accepts a built-in workload, GRIT's included; a
// recorded trace runs on one GPU only.
func checkMultiGPUWorkload(name string) error {
	if _, trace := workload.TraceFile(name); trace {
		return usage("run.workload: a trace runs on one GPU; multigpu.gpus must be 1")
	}
	for _, n := range append(workload.GRITNames(), workload.Names()...) {
		if n == name {
			return nil
		}
	}
	return usage("run.workload: %q unknown; allowed with more than one GPU: %s", name, strings.Join(append(workload.GRITNames(), workload.Names()...), ", "))
}

// multiGPURecord is the JSON of a multi-GPU run: the configuration's keys
// that differ from the defaults and the result.
type multiGPURecord struct {
	ConfigID string            `json:"config_id"`
	Config   map[string]string `json:"config"`
	Result   multigpu.Result   `json:"result"`
}

// runMultiGPU runs cfg on the multi-GPU system (multigpu.gpus > 1).
func runMultiGPU(cfg *config.Config, f *runFlags, fs *pflag.FlagSet, stdout io.Writer) error {
	switch {
	case f.vcdFile != "" || len(f.signals) > 0:
		return usage("--vcd: waveforms are written for the single-GPU system only (multigpu.gpus = 1)")
	case fs.Changed("json") && f.jsonFile == "":
		return usage("--json needs a file name")
	}
	s, err := multigpu.New(cfg)
	if err != nil {
		return usageError{err}
	}
	var out *os.File
	if f.jsonFile != "" {
		if out, err = os.Create(f.jsonFile); err != nil {
			return usage("--json: %v", err)
		}
		defer out.Close()
	}
	r, err := s.Run()
	if err != nil {
		return err
	}
	printMultiGPU(stdout, &r)
	if out == nil {
		return nil
	}
	data, err := json.MarshalIndent(multiGPURecord{ConfigID: experiment.ConfigID(cfg), Config: experiment.Overrides(cfg), Result: r}, "", "  ")
	if err != nil {
		return err
	}
	if _, err := out.Write(append(data, '\n')); err != nil {
		return ioError{fmt.Errorf("--json: %w", err)}
	}
	if err := out.Close(); err != nil {
		return ioError{fmt.Errorf("--json: %w", err)}
	}
	return nil
}

// printMultiGPU prints the run's totals and a row per GPU.
func printMultiGPU(w io.Writer, r *multigpu.Result) {
	fmt.Fprintf(w, "workload %s, multi-GPU policy %s, %d GPUs, scale %g, seed %d\n", r.Workload, r.Policy, r.GPUs, r.Scale, r.Seed)
	fmt.Fprintf(w, "  footprint          %10.1f MB; GPU memory %.1f MB per GPU\n", mb(r.FootprintBytes), mb(r.GPUMemoryBytes))
	fmt.Fprintf(w, "  simulated cycles   %14d  (%.1f us at %d MHz; %d evaluated, the rest skipped idle)\n", r.Cycles, float64(r.Cycles)/float64(r.ClockMHz), r.ClockMHz, r.EvaluatedCycles)
	fmt.Fprintf(w, "  wall time          %14.2f s  (%.3g simulated cycles/s)\n", r.WallSeconds, r.SimCyclesPerSecond)
	fmt.Fprintf(w, "  %-5s %12s %10s %10s %8s %8s %9s %8s %8s %8s %8s %12s %12s %12s\n",
		"gpu", "warp instr", "local acc", "remote acc", "faults", "protect", "promote", "migrate", "replicas", "collapse", "invalid", "NVLink B", "PCIe H2D B", "PCIe D2H B")
	row := func(name string, g multigpu.GPUResult) {
		fmt.Fprintf(w, "  %-5s %12d %10d %10d %8d %8d %9d %8d %8d %8d %8d %12d %12d %12d\n", name, g.WarpInstr, g.LocalAccesses, g.RemoteAccesses,
			g.LocalFaults, g.ProtectionFaults, g.Promotions, g.Migrations, g.ReplicasMade, g.ReplicasCollapse, g.Invalidations, g.NVLinkBytes, g.PCIeH2DBytes, g.PCIeD2HBytes)
	}
	for _, g := range r.PerGPU {
		row(fmt.Sprint(g.GPU), g)
	}
	row("total", r.Total)
}
