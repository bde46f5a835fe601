package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/system"
)

// reportCmd reads result JSON files and prints, per workload and
// oversubscription ratio, the speedup of one policy over another (the
// UVMMU paper's Figure 4 reads as UVMMU over UM), with a geometric-mean
// row, and writes every result as one CSV row.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("uvmsim report", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	csvFile := fs.String("csv", "", "write every result as a CSV row to this file")
	over := fs.String("policy", "uvmmu", "policy whose speedup is shown")
	base := fs.String("baseline", "um", "policy the speedup is relative to")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() == 0 {
		return usage("report needs result JSON files (written by uvmsim run --json, or results.json of sweep and experiment)")
	}
	var results []system.Result
	for _, name := range fs.Args() {
		data, err := os.ReadFile(name)
		if err != nil {
			return usage("%v", err)
		}
		// One result (run --json) or an array of them (results.json of
		// sweep and experiment).
		if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
			var rs []system.Result
			if err := json.Unmarshal(data, &rs); err != nil {
				return usage("%s: %v", name, err)
			}
			results = append(results, rs...)
			continue
		}
		var r system.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return usage("%s: %v", name, err)
		}
		results = append(results, r)
	}
	sort.Slice(results, func(i, j int) bool {
		a, b := results[i], results[j]
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		if a.OversubPct != b.OversubPct {
			return a.OversubPct < b.OversubPct
		}
		return a.Policy < b.Policy
	})
	if err := checkPolicies(results, *over, *base); err != nil {
		return err
	}
	printSpeedups(stdout, results, *over, *base)
	if *csvFile != "" {
		return writeCSV(*csvFile, results)
	}
	return nil
}

// checkPolicies fails when --policy or --baseline names a policy no
// result has, listing those the results hold.
func checkPolicies(results []system.Result, over, base string) error {
	held := map[string]bool{}
	for _, r := range results {
		held[r.Policy] = true
	}
	names := make([]string, 0, len(held))
	for n := range held {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, f := range []struct{ flag, name string }{{"--policy", over}, {"--baseline", base}} {
		if !held[f.name] {
			return usage("%s %q: no result has this policy; the results hold: %s", f.flag, f.name, strings.Join(names, ", "))
		}
	}
	return nil
}

type runKey struct {
	workload, policy string
	oversub          int
}

func printSpeedups(w io.Writer, results []system.Result, over, base string) {
	cycles := map[runKey]uint64{}
	var workloads []string
	var ratios []int
	seenW, seenR := map[string]bool{}, map[int]bool{}
	for _, r := range results {
		cycles[runKey{r.Workload, r.Policy, r.OversubPct}] = r.Cycles
		if !seenW[r.Workload] {
			seenW[r.Workload] = true
			workloads = append(workloads, r.Workload)
		}
		if !seenR[r.OversubPct] {
			seenR[r.OversubPct] = true
			ratios = append(ratios, r.OversubPct)
		}
	}
	sort.Ints(ratios)
	fmt.Fprintf(w, "speedup of %s over %s (%s cycles / %s cycles)\n", over, base, base, over)
	fmt.Fprintf(w, "%-10s", "workload")
	for _, o := range ratios {
		fmt.Fprintf(w, " %9s", strconv.Itoa(o)+"%")
	}
	fmt.Fprintln(w)
	logSum := make([]float64, len(ratios))
	count := make([]int, len(ratios))
	for _, wl := range workloads {
		fmt.Fprintf(w, "%-10s", wl)
		for i, o := range ratios {
			b, okB := cycles[runKey{wl, base, o}]
			p, okP := cycles[runKey{wl, over, o}]
			if !okB || !okP || p == 0 {
				fmt.Fprintf(w, " %9s", "-")
				continue
			}
			s := float64(b) / float64(p)
			logSum[i] += math.Log(s)
			count[i]++
			fmt.Fprintf(w, " %9.2f", s)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-10s", "geomean")
	for i := range ratios {
		if count[i] == 0 {
			fmt.Fprintf(w, " %9s", "-")
			continue
		}
		fmt.Fprintf(w, " %9.2f", math.Exp(logSum[i]/float64(count[i])))
	}
	fmt.Fprintln(w)
}

func writeCSV(name string, results []system.Result) error {
	f, err := os.Create(name)
	if err != nil {
		return usage("--csv: %v", err)
	}
	cw := csv.NewWriter(f)
	header := []string{"workload", "policy", "oversub_pct", "scale", "seed", "cycles", "wall_seconds", "sim_cycles_per_second",
		"warp_instructions", "warp_instructions_per_second", "far_faults", "migrations", "evictions", "pcie_h2d_bytes", "pcie_d2h_bytes", "tlb_misses"}
	if err := cw.Write(header); err != nil {
		return err
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range results {
		row := []string{r.Workload, r.Policy, strconv.Itoa(r.OversubPct), g(r.Scale), u(r.Seed), u(r.Cycles), g(r.WallSeconds), g(r.SimCyclesPerSecond),
			u(r.WarpInstructions), g(r.WarpInstrPerSecond), u(r.FarFaults), u(r.Migrations), u(r.Evictions), u(r.PCIeH2DBytes), u(r.PCIeD2HBytes), u(r.TLBMisses)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return f.Close()
}
