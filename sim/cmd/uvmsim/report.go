package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/system"
)

// tableKeys are the configuration keys a report lays out as its table:
// rows (workload), columns (oversubscription ratio) and the compared
// policies. Results that differ in any other key are different variants
// and are not compared.
var tableKeys = []string{"run.workload", "run.policy", "run.oversub_pct"}

// reportCmd reads result files and prints, per workload and
// oversubscription ratio, the speedup of one policy over another (the
// UVMMU paper's Figure 4 reads as UVMMU over UM), with a geometric-mean
// row, and writes every result as one CSV row. Results are grouped by
// their full configuration: a set that differs in any key but workload,
// policy and ratio is refused with the keys named (--where picks one
// variant), a repeated configuration is reported and its first result
// kept, and a malformed entry is an error.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("uvmsim report", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	csvFile := fs.String("csv", "", "write every result as a CSV row (the columns of results.csv) to this file")
	over := fs.String("policy", "uvmmu", "policy whose speedup is shown")
	base := fs.String("baseline", "um", "policy the speedup is relative to")
	where := fs.StringArray("where", nil, "keep only the results whose configuration has key=value, e.g. --where um.fault_latency_us=20 (repeatable; uvmsim list shows the keys)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usage("%v", err)
	}
	if fs.NArg() == 0 {
		return usage("report needs result JSON files: results.json of sweep and experiment, their runs/*.json, or uvmsim run --json output")
	}
	filters, err := parseWhere(*where)
	if err != nil {
		return err
	}
	var records []experiment.Record
	var cfgs []config.Config
	seen := map[string]string{}
	for _, name := range fs.Args() {
		data, err := os.ReadFile(name)
		if err != nil {
			return usage("%v", err)
		}
		rs, err := experiment.DecodeRecords(data)
		if err != nil {
			return usage("%s: not a result file: %v", name, err)
		}
		for i := range rs {
			r := &rs[i]
			where := fmt.Sprintf("%s: result %d (%s/%s/%d%%)", name, i+1, r.Workload, r.Policy, r.OversubPct)
			if err := r.Check(); err != nil {
				return usage("%s: %v", where, err)
			}
			cfg, _ := r.FullConfig()
			if !filters.match(&cfg) {
				continue
			}
			if first, dup := seen[r.ConfigID]; dup {
				fmt.Fprintf(stderr, "uvmsim: report: warning: %s repeats the configuration of %s (config_id %s); keeping the first\n", where, first, r.ConfigID)
				continue
			}
			seen[r.ConfigID] = where
			records = append(records, *r)
			cfgs = append(cfgs, cfg)
		}
	}
	if len(records) == 0 {
		return usage("report: no result left to report (--where %s)", strings.Join(*where, " "))
	}
	if differ := differingKeys(cfgs); len(differ) > 0 {
		return usage("report: the results differ in more than workload, policy and oversubscription ratio, so they are different variants and are not compared: %s; pick one with --where KEY=VALUE",
			strings.Join(differ, "; "))
	}
	order := make([]int, len(records))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := records[order[i]], records[order[j]]
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		if a.OversubPct != b.OversubPct {
			return a.OversubPct < b.OversubPct
		}
		return a.Policy < b.Policy
	})
	sorted := make([]experiment.Record, len(records))
	results := make([]system.Result, len(records))
	for i, k := range order {
		sorted[i], results[i] = records[k], records[k].Result
	}
	if err := checkPolicies(results, *over, *base); err != nil {
		return err
	}
	if len(records[0].Config) > 0 {
		fmt.Fprintf(stdout, "configuration: %s\n", experiment.ConfigText(records[0].Config))
	}
	printSpeedups(stdout, results, *over, *base)
	if *csvFile != "" {
		err := experiment.WriteFileAtomic(*csvFile, func(w io.Writer) error { return experiment.WriteCSV(w, sorted) })
		if err != nil {
			return usage("--csv: %v", err)
		}
	}
	return nil
}

// whereFilter is the --where selection: key and the value formatted as
// the configuration formats it.
type whereFilter []struct {
	key   config.Key
	value string
}

func parseWhere(list []string) (whereFilter, error) {
	var f whereFilter
	for _, w := range list {
		name, _, _ := strings.Cut(w, "=")
		k, err := config.LookupKey(strings.TrimSpace(name))
		if err != nil {
			return nil, usage("--where: %v", err)
		}
		cfg := config.Default()
		if err := cfg.Set(w); err != nil {
			return nil, usage("--where: %v", err)
		}
		f = append(f, struct {
			key   config.Key
			value string
		}{k, k.Value(&cfg)})
	}
	return f, nil
}

func (f whereFilter) match(cfg *config.Config) bool {
	for _, w := range f {
		if w.key.Value(cfg) != w.value {
			return false
		}
	}
	return true
}

// differingKeys names each configuration key, the table's own aside,
// whose value is not the same in every configuration, with its values.
func differingKeys(cfgs []config.Config) []string {
	var out []string
	for _, k := range config.Keys() {
		if slices.Contains(tableKeys, k.Name) {
			continue
		}
		var values []string
		for i := range cfgs {
			if v := k.Value(&cfgs[i]); !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		if len(values) > 1 {
			sort.Strings(values)
			out = append(out, fmt.Sprintf("%s has %d values (%s)", k.Name, len(values), strings.Join(values, ", ")))
		}
	}
	return out
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
