package experiment

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/suv"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/uvm"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// SUVAllName is the experiment that runs the runs of the four SUV
// experiments together (each run once) and writes their figures as one
// (SUV Figs. 5-9) and their tables, validation rows and the explanations
// of the rows that fail, computed from the runs' counters, as Markdown
// (SUVAllName.md, the generated section of docs/suv.md).
const SUVAllName = "suv-all"

// suvFigures are the four SUV experiments whose runs suv-all joins.
func suvFigures() []Experiment { return SUVExperiments()[:4] }

// suvAllSpecs are the four experiments' specs, each once, in their order.
func suvAllSpecs(p Params) []Spec {
	seen := map[string]bool{}
	var specs []Spec
	for _, e := range suvFigures() {
		for _, s := range e.Specs(p) {
			if !seen[s.Key()] {
				seen[s.Key()] = true
				specs = append(specs, s)
			}
		}
	}
	return specs
}

// suvPanelPrefix names the paper's figure a panel of experiment exp draws
// (suv-baselines' panels name theirs).
var suvPanelPrefix = map[string]string{"suv": "Fig. 5, ", "suv-faults": "Fig. 6, ", "suv-baselines": "50% oversubscription, ", "suv-nooversub": "Fig. 9, "}

// suvAllBuild is the four experiments' panels in the paper's order, each
// with its own axis label and its figure named, and their notes.
func suvAllBuild(p Params, l Lookup) Figure {
	fig := Figure{ID: SUVAllName, Title: "SUV's evaluation (SUV Figs. 5-9)", YLabel: "normalised",
		Reference: "UVM at 0% (Fig. 5), UVM (Figs. 6, 9), SUV (Figs. 7, 8)"}
	for _, e := range suvFigures() {
		f := e.Build(p, l)
		for _, pan := range f.Panels {
			if pan.YLabel == "" {
				pan.YLabel = f.YLabel
			}
			pan.Title = suvPanelPrefix[e.Name] + pan.Title
			fig.Panels = append(fig.Panels, pan)
		}
		for _, n := range f.Notes {
			if !slices.Contains(fig.Notes, n) {
				fig.Notes = append(fig.Notes, n)
			}
		}
	}
	return fig
}

// suvCommand is the command line that runs the experiment as p has it,
// with the configuration keys every run shares away from the defaults
// (overrides, from the records) as --set.
func suvCommand(p Params, overrides map[string]string) string {
	cmd := "uvmsim experiment " + SUVAllName
	if !slices.Equal(suvSet(p), SUVWorkloads) {
		cmd += " --workloads " + strings.Join(suvSet(p), ",")
	}
	if p.Scale != 1 {
		cmd += " --scale " + strconv.FormatFloat(p.Scale, 'g', -1, 64)
	}
	if p.Seed != 1 {
		cmd += " --seed " + strconv.FormatUint(p.Seed, 10)
	}
	if pr, ok := overrides["run.preset"]; ok {
		cmd += " --preset " + pr
	}
	for _, k := range sortedKeys(overrides) {
		if k != "run.preset" {
			cmd += " --set " + k + "=" + overrides[k]
		}
	}
	return cmd
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// suvPlatform describes the platform of the runs from the overrides their
// records hold: the preset and its source, and any other key set.
func suvPlatform(overrides map[string]string) (string, config.Config) {
	// The preset first, as a run applies it under the other keys; the
	// keys are the records' own, which a run has set before.
	cfg := config.Default()
	if pr, ok := overrides["run.preset"]; ok {
		_ = cfg.Set("run.preset=" + pr)
	}
	for _, k := range sortedKeys(overrides) {
		if k != "run.preset" {
			_ = cfg.Set(k + "=" + overrides[k])
		}
	}
	name := cfg.Run.Preset
	text := "preset `" + name + "`"
	if pr, err := config.LookupPreset(name); err == nil {
		text += " (" + pr.Doc + ")"
	}
	var rest []string
	for _, k := range sortedKeys(overrides) {
		if k != "run.preset" {
			rest = append(rest, "`"+k+" = "+overrides[k]+"`")
		}
	}
	if len(rest) > 0 {
		text += " with " + strings.Join(rest, ", ")
	}
	return text, cfg
}

// suvRuns are the outcomes of suv-all's runs that completed, and the
// platform they ran on.
type suvRuns struct {
	p   Params
	l   Lookup
	cfg config.Config
}

func (r suvRuns) get(w, pol string, ratio int) *system.Result {
	if o := r.l(r.p.spec(w, pol, ratio)); completed(o) {
		return &o.Result
	}
	return nil
}

// megabytes formats bytes in MB (2^20), or in KB or bytes below a MB.
func megabytes(b uint64) string {
	switch {
	case b < 1<<10:
		return strconv.FormatUint(b, 10) + " B"
	case b < 10<<10:
		return strconv.FormatFloat(float64(b)/(1<<10), 'f', 1, 64) + " KB"
	case b < 1<<20:
		return strconv.FormatFloat(float64(b)/(1<<10), 'f', 0, 64) + " KB"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 2, 64) + " MB"
}

// suvCounters are a run's counters behind its time and traffic, those
// that are zero left out.
func suvCounters(r *system.Result) string {
	parts := []string{thousands(r.Cycles) + " cycles"}
	if r.FarFaults > 0 {
		parts = append(parts, fmt.Sprintf("%s far faults (their handling %s of the time)", thousands(r.FarFaults), mdPercent(float64(r.FaultCycles)/float64(r.Cycles))))
	}
	for _, c := range []struct {
		n    uint64
		what string
	}{{r.Migrations, "pages migrated"}, {r.Evictions, "evicted"}, {r.RemoteAccesses, "remote accesses"}} {
		if c.n > 0 {
			parts = append(parts, thousands(c.n)+" "+c.what)
		}
	}
	return strings.Join(append(parts, megabytes(r.PCIeH2DBytes+r.PCIeD2HBytes)+" over PCIe"), ", ")
}

// run names one run of workload w, with the GPU memory it had and its
// counters.
func (r suvRuns) run(w, pol string, ratio int) string {
	x := r.get(w, pol, ratio)
	if x == nil {
		return fmt.Sprintf("%s at %d%%: not run", suvDisplay(pol), ratio-100)
	}
	text := fmt.Sprintf("%s at %d%% (%s of GPU memory for %s): %s", suvDisplay(pol), ratio-100, megabytes(x.GPUMemoryBytes), megabytes(x.FootprintBytes), suvCounters(x))
	if pl := r.placement(w, pol, x); pl != "" {
		text += "; " + pl
	}
	return text
}

// placement is what the suv or sc policy placed for run x of workload w:
// the sim/suv plan the policy carries out (policy.staticOf's inputs: the
// workload's description at the run's scale and seed, the platform's SMs
// and warps, the run's managed memory in the lru64k evictor's 64 KB
// blocks), each structure's largest share over the launches; empty for
// the other policies.
func (r suvRuns) placement(w, pol string, x *system.Result) string {
	if pol != PolicySUV && pol != PolicySC {
		return ""
	}
	plan, err := func() ([]suv.Launch, error) {
		_, prog, err := workload.Describe(w, workload.Params{Scale: x.Scale, Seed: x.Seed, GraphFile: r.cfg.Run.GraphFile})
		if err != nil {
			return nil, err
		}
		g := suv.GPU{SMs: r.cfg.GPU.SMs, WarpsPerSM: r.cfg.GPU.WarpsPerSM}
		mem := suv.Memory{Capacity: x.ManagedCapacity, Unit: uvm.PagesPerBlock * suv.PageBytes}
		if pol == PolicySUV {
			rt, err := suv.NewRuntime(prog, g, mem)
			if err != nil {
				return nil, err
			}
			return rt.Plan(), nil
		}
		sc, err := suv.NewSC(prog, g, mem)
		if err != nil {
			return nil, err
		}
		return sc.Plan(), nil
	}()
	if err != nil {
		return fmt.Sprintf("%s's placement not made again: %v", suvDisplay(pol), err)
	}
	var order []string
	most := map[string]*suv.Decision{}
	for _, l := range plan {
		for _, d := range l.Decisions {
			m := most[d.Alloc]
			if m == nil {
				m = &suv.Decision{Alloc: d.Alloc, Class: d.Class}
				most[d.Alloc] = m
				order = append(order, d.Alloc)
			}
			m.GPUBytes, m.HostBytes, m.ReservedBytes = max(m.GPUBytes, d.GPUBytes), max(m.HostBytes, d.HostBytes), max(m.ReservedBytes, d.ReservedBytes)
			m.Counters = m.Counters || d.Counters
		}
	}
	var parts []string
	for _, a := range order {
		d := most[a]
		var how []string
		switch {
		case d.GPUBytes > 0 && d.GPUBytes == d.ReservedBytes && !d.Counters:
			// Algorithm 2's prefetch window is pinned and reserved alike.
			how = append(how, megabytes(d.GPUBytes)+" window")
		case d.GPUBytes > 0:
			how = append(how, megabytes(d.GPUBytes)+" on the GPU")
		}
		if d.HostBytes > 0 {
			how = append(how, megabytes(d.HostBytes)+" on host")
		}
		if d.ReservedBytes > 0 && d.ReservedBytes != d.GPUBytes {
			how = append(how, megabytes(d.ReservedBytes)+" reserved")
		}
		if d.Counters {
			how = append(how, "access counters")
		}
		if len(how) == 0 {
			how = append(how, "on demand")
		}
		parts = append(parts, fmt.Sprintf("%s (%s) %s", a, d.Class.String()[:1], strings.Join(how, ", ")))
	}
	blocks := x.ManagedCapacity / (uvm.PagesPerBlock * suv.PageBytes)
	return fmt.Sprintf("%s's placement in %d block%s: %s", suvDisplay(pol), blocks, map[bool]string{true: "", false: "s"}[blocks == 1], strings.Join(parts, "; "))
}

// pair is a nested list item: label, then workload w's runs under policy
// a at ra and b at rb.
func (r suvRuns) pair(label, w string, a, b string, ra, rb int) string {
	return "\n  - " + label + ": " + r.run(w, a, ra) + "; " + r.run(w, b, rb)
}

// ratio is a/b of the metric over workload w's runs, NaN when missing.
func (r suvRuns) ratio(w, a, b string, ra, rb int, metric func(*system.Result) float64) float64 {
	x, y := r.get(w, a, ra), r.get(w, b, rb)
	if x == nil || y == nil {
		return math.NaN()
	}
	return share(metric(x), metric(y))
}

func runtimeOf(r *system.Result) float64 { return float64(r.Cycles) }
func pcieOf(r *system.Result) float64    { return float64(r.PCIeH2DBytes + r.PCIeD2HBytes) }

// suvWorkloadRatio is one workload's ratio of two runs.
type suvWorkloadRatio struct {
	workload string
	ratio    float64
}

// ranked are the workloads' finite ratios, largest first.
func (r suvRuns) ranked(a, b string, ra, rb int, metric func(*system.Result) float64) []suvWorkloadRatio {
	var out []suvWorkloadRatio
	for _, w := range suvSet(r.p) {
		if v := r.ratio(w, a, b, ra, rb, metric); !math.IsNaN(v) {
			out = append(out, suvWorkloadRatio{w, v})
		}
	}
	slices.SortStableFunc(out, func(x, y suvWorkloadRatio) int {
		switch {
		case x.ratio > y.ratio:
			return -1
		case x.ratio < y.ratio:
			return 1
		}
		return 0
	})
	return out
}

// WriteSUVDoc writes SUV's evaluation as Markdown from the outcomes l
// holds: which runs it has and what they ran on, Fig. 5's table, Fig. 6,
// Figs. 7 and 8's table, Fig. 9, the validation rows, and for every row
// outside its tolerance and every workload that breaks the paper's
// ordering the runs' counters behind it.
func WriteSUVDoc(w io.Writer, p Params, l Lookup) error {
	var b strings.Builder
	specs := suvAllSpecs(p)
	stored, seconds := 0, 0.0
	var missing []string
	var overrides map[string]string
	for _, s := range specs {
		if o := l(s); completed(o) {
			stored++
			seconds += o.Result.WallSeconds
			if overrides == nil {
				overrides = o.Config
			}
		} else {
			missing = append(missing, fmt.Sprintf("%s %s %d%%", s.Workload, s.Policy, s.OversubPct))
		}
	}
	platform, cfg := suvPlatform(overrides)
	fmt.Fprintf(&b, "Generated by `%s` from %d of its %d runs (those of the experiments suv, suv-faults, suv-baselines and suv-nooversub, each run once) "+
		"over %s at scale %g, seed %d, on %s. Times are in cycles at %d MHz. The runs took %.0f minutes of simulation, one after another.",
		suvCommand(p, overrides), stored, len(specs), strings.Join(suvSet(p), ", "), p.Scale, p.Seed, platform, cfg.GPU.ClockMHz, seconds/60)
	if len(missing) > 0 {
		fmt.Fprintf(&b, " Not run (n/a below, and left out of the geomeans): %s.", strings.Join(missing, "; "))
	}
	b.WriteString("\n")
	if !suvReady(p, &Figure{}, PolicyUM, PolicySUV, PolicySC, PolicyAC) {
		b.WriteString("\nThe build does not offer the um, suv, sc and ac policies.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	figs := map[string]Figure{}
	for _, e := range suvFigures() {
		figs[e.Name] = e.Build(p, l)
	}

	// Fig. 5: one column per (level, policy).
	b.WriteString("\n### Fig. 5: UVM and SUV at 15, 30, 50% (`suv`)\n\nRuntime normalised to UVM without oversubscription:\n\n| workload |")
	f5 := figs["suv"]
	for _, pan := range f5.Panels {
		for _, s := range pan.Series {
			fmt.Fprintf(&b, " %s %s |", s.Name, strings.TrimSuffix(pan.Title, " oversubscription"))
		}
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", 2*len(f5.Panels)) + "\n")
	for gi, g := range f5.Panels[0].Groups {
		fmt.Fprintf(&b, "| %s |", g)
		for _, pan := range f5.Panels {
			for _, s := range pan.Series {
				fmt.Fprintf(&b, " %s |", formatValue(s.Values[gi]))
			}
		}
		b.WriteString("\n")
	}

	// Fig. 6 and Fig. 9 as lines.
	line := func(pan Panel) string {
		var parts []string
		for gi, g := range pan.Groups {
			parts = append(parts, g+" "+formatValue(pan.Series[0].Values[gi]))
		}
		return strings.Join(parts, ", ")
	}
	f6 := figs["suv-faults"]
	fmt.Fprintf(&b, "\n### Fig. 6: far faults at 50%% (`suv-faults`)\n\nSUV's far faults over UVM's: %s.", line(f6.Panels[0]))
	for _, n := range f6.Notes {
		fmt.Fprintf(&b, " %s.", strings.ToUpper(n[:1])+n[1:])
	}
	b.WriteString(" The paper: 37% to 100% fewer.\n")

	// Figs. 7 and 8: one column per (panel, policy).
	f78 := figs["suv-baselines"]
	b.WriteString("\n### Figs. 7 and 8: SC and AC at 50% (`suv-baselines`)\n\nRuntime and PCIe bytes normalised to SUV's (above 1: SUV better):\n\n| workload |")
	for _, pan := range f78.Panels {
		for _, s := range pan.Series {
			fmt.Fprintf(&b, " %s %s |", strings.Fields(pan.Title)[0], s.Name)
		}
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", 4) + "\n")
	for gi, g := range f78.Panels[0].Groups {
		fmt.Fprintf(&b, "| %s |", g)
		for _, pan := range f78.Panels {
			for _, s := range pan.Series {
				fmt.Fprintf(&b, " %s |", formatValue(s.Values[gi]))
			}
		}
		b.WriteString("\n")
	}
	f9 := figs["suv-nooversub"]
	fmt.Fprintf(&b, "\n### Fig. 9: no oversubscription (`suv-nooversub`)\n\nSUV's runtime over UVM's: %s.\n", line(f9.Panels[0]))

	// The validation rows.
	var checks []Check
	for _, exp := range []string{"suv", "suv-baselines", "suv-nooversub"} {
		checks = append(checks, SUVChecks(p, l, exp)...)
	}
	b.WriteString("\n### Validation rows\n\n| row | quantity | paper | model | tolerance | status |\n|---|---|---:|---:|---:|---|\n")
	byID := map[string]*Check{}
	for i := range checks {
		c := &checks[i]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | ±%.0f%% | %s |\n", c.ID, c.Quantity, formatCheck(c.Paper), formatCheck(c.Models[0].Value), 100*c.Tolerance, c.Status(0))
		byID[c.ID] = c
	}
	runs := suvRuns{p, l, cfg}
	levels := suvLevelReductions(runs)
	var lv []string
	for i, r := range SUVLevels {
		lv = append(lv, fmt.Sprintf("%s at %d%%", formatCheck(levels[i]), r-100))
	}
	fmt.Fprintf(&b, "\nSUV's geomean runtime reductions over UVM: %s.\n", strings.Join(lv, ", "))

	whys := suvExplain(runs, byID, levels)
	if len(whys) > 0 {
		b.WriteString("\nRows outside their tolerance and workloads that break the paper's ordering, from the runs' counters. " +
			"SUV's and SC's placements are the sim/suv plans the policies carry out, made again from the workload's description and the run's memory: " +
			"the 64 KB blocks of managed memory (one is kept back for on-demand migration), and each structure's class (D, T, U) and its largest share over the launches " +
			"pinned on the GPU, pinned on host (remote access), reserved for on-demand or counter-driven migration, or Algorithm 2's prefetch window:\n\n")
		for _, e := range whys {
			b.WriteString("- " + e + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// suvLevelReductions are 1 - the geomean of SUV's runtime over UVM's at
// each of SUVLevels, NaN where a workload's runs are missing (as
// SUVChecks measures the level rows).
func suvLevelReductions(r suvRuns) []float64 {
	var out []float64
	for _, lvl := range SUVLevels {
		var vs []float64
		for _, x := range r.ranked(PolicySUV, PolicyUM, lvl, lvl, runtimeOf) {
			vs = append(vs, x.ratio)
		}
		g, n := Geomean(vs)
		if n < len(suvSet(r.p)) {
			g = math.NaN()
		}
		out = append(out, 1-g)
	}
	return out
}

// suvExplain computes the explanations, each a list item with the
// workloads behind it as nested items: for a failing level row, what UVM
// and SUV each lose with the level and the two workloads that pull the
// extreme level's reduction furthest towards the model's side; for a
// reduction that falls from one level to the next, the two workloads whose
// SUV time rises most; for a failing thrash row, UVM's runs at the levels
// where it stays under 2x; for the baseline rows, failing or not, the
// workloads where the baseline is at least SUV's equal (the paper has SUV
// ahead); and at every level, the workloads where SUV is not faster than
// UVM.
func suvExplain(r suvRuns, checks map[string]*Check, levels []float64) []string {
	var whys []string
	failed := func(id string) bool { c := checks[id]; return c != nil && c.Status(0) == "fail" }
	geo := func(a, b string, ra, rb int) float64 {
		var vs []float64
		for _, x := range r.ranked(a, b, ra, rb, runtimeOf) {
			vs = append(vs, x.ratio)
		}
		g, _ := Geomean(vs)
		return g
	}
	// UVM's and SUV's geomean time over UVM's without oversubscription.
	var um, suv []string
	for _, x := range SUVLevels {
		um = append(um, fmt.Sprintf("%.2fx at %d%%", geo(PolicyUM, PolicyUM, x, SUVNoOversub), x-100))
		suv = append(suv, fmt.Sprintf("%.2fx", geo(PolicySUV, PolicyUM, x, SUVNoOversub)))
	}
	slowdowns := fmt.Sprintf("UVM's geomean runtime over its runtime without oversubscription is %s; SUV's %s", strings.Join(um, ", "), strings.Join(suv, ", "))
	for _, row := range []struct {
		id   string
		pick func([]float64) int
	}{{"suv-min", argMin}, {"suv-max", argMax}} {
		if !failed(row.id) {
			continue
		}
		paper := checks[row.id].Paper
		i := row.pick(levels)
		lvl := SUVLevels[i]
		// A reduction above the paper's is carried by the workloads where
		// SUV gains most (smallest SUV/UVM), one below by those where it
		// gains least.
		ends, what := r.ranked(PolicySUV, PolicyUM, lvl, lvl, runtimeOf), "least"
		if levels[i] > paper {
			slices.Reverse(ends)
			what = "most"
		}
		text := fmt.Sprintf("**%s (%s against %s) is the reduction at %d%%.** %s. SUV gains %s on:", row.id, formatCheck(levels[i]), formatCheck(paper), lvl-100, slowdowns, what)
		for _, x := range ends[:min(2, len(ends))] {
			text += r.pair(fmt.Sprintf("%s (SUV %.3fx UVM's runtime)", x.workload, x.ratio), x.workload, PolicyUM, PolicySUV, lvl, lvl)
		}
		whys = append(whys, text)
	}
	for i := 1; i < len(SUVLevels); i++ {
		if !(levels[i] < levels[i-1]) {
			continue
		}
		a, c := SUVLevels[i-1], SUVLevels[i]
		var rise []suvWorkloadRatio
		for _, w := range suvSet(r.p) {
			if v := r.ratio(w, PolicySUV, PolicySUV, c, a, runtimeOf); v > 1 {
				rise = append(rise, suvWorkloadRatio{w, v})
			}
		}
		slices.SortStableFunc(rise, func(x, y suvWorkloadRatio) int { return cmpDesc(x.ratio, y.ratio) })
		text := fmt.Sprintf("**The reduction falls from %s at %d%% to %s at %d%%.** %s. SUV slows most from %d%% to %d%% on:",
			formatCheck(levels[i-1]), a-100, formatCheck(levels[i]), c-100, slowdowns, a-100, c-100)
		for _, x := range rise[:min(2, len(rise))] {
			text += r.pair(fmt.Sprintf("%s (%.2fx)", x.workload, x.ratio), x.workload, PolicySUV, PolicySUV, a, c)
		}
		whys = append(whys, text)
	}
	for _, w := range []string{"floydwarshall", "mvt", "fdtd"} {
		if !failed("suv-thrash-" + w) {
			continue
		}
		text := fmt.Sprintf("**suv-thrash-%s.** UVM runs %s less than 2x slower than without oversubscription at", w, w)
		for _, lvl := range SUVLevels {
			if v := r.ratio(w, PolicyUM, PolicyUM, lvl, SUVNoOversub, runtimeOf); v < 2 {
				text += r.pair(fmt.Sprintf("%d%% (%.2fx)", lvl-100, v), w, PolicyUM, PolicyUM, SUVNoOversub, lvl)
			}
		}
		whys = append(whys, text)
	}
	lvl := SUVBaselineLevel
	for _, row := range []struct {
		id, pol, metric string
		of              func(*system.Result) float64
	}{{"suv-sc", PolicySC, "runtime", runtimeOf}, {"suv-ac", PolicyAC, "runtime", runtimeOf}, {"suv-sc-pcie", PolicySC, "PCIe bytes", pcieOf}, {"suv-ac-pcie", PolicyAC, "PCIe bytes", pcieOf}} {
		rk := r.ranked(row.pol, PolicySUV, lvl, lvl, row.of)
		slices.Reverse(rk)
		n := 0
		for n < len(rk) && rk[n].ratio <= 1 {
			n++
		}
		if n == 0 && !failed(row.id) {
			continue
		}
		text := suvHead(row.id, fmt.Sprintf("%s's %s at 50%% at most SUV's", suvDisplay(row.pol), row.metric), failed(row.id))
		text += fmt.Sprintf(" on %d of %d workloads", n, len(rk))
		if n < len(rk) {
			var rest []float64
			for _, x := range rk[n:] {
				rest = append(rest, x.ratio)
			}
			g, _ := Geomean(rest)
			text += fmt.Sprintf("; on the other %d it is %.2fx SUV's (geomean)", len(rk)-n, g)
		}
		text += ":"
		for _, x := range rk[:n] {
			text += r.pair(fmt.Sprintf("%s (%.3fx)", x.workload, x.ratio), x.workload, PolicySUV, row.pol, lvl, lvl)
		}
		whys = append(whys, strings.TrimSuffix(text, ":")+map[bool]string{true: "", false: "."}[n > 0])
	}
	for _, x := range append([]int{SUVNoOversub}, SUVLevels...) {
		var behind []suvWorkloadRatio
		for _, y := range r.ranked(PolicySUV, PolicyUM, x, x, runtimeOf) {
			if y.ratio >= 1 {
				behind = append(behind, y)
			}
		}
		rowFailed := x == SUVNoOversub && failed("suv-0")
		if len(behind) == 0 && !rowFailed {
			continue
		}
		text := suvHead("suv-0", fmt.Sprintf("SUV at least as slow as UVM at %d%%", x-100), rowFailed) + fmt.Sprintf(" on %d workloads", len(behind))
		if len(behind) == 0 {
			whys = append(whys, text+".")
			continue
		}
		text += ":"
		for _, y := range behind {
			text += r.pair(fmt.Sprintf("%s (%.3fx)", y.workload, y.ratio), y.workload, PolicyUM, PolicySUV, x, x)
		}
		whys = append(whys, text)
	}
	return whys
}

// suvHead is an explanation's bold head: what it shows, after the row's
// ID when the row fails.
func suvHead(id, what string, failed bool) string {
	if failed {
		return "**" + id + " (" + what + ")**"
	}
	return "**" + what + "**"
}

func argMin(v []float64) int {
	i := 0
	for j := range v {
		if v[j] < v[i] {
			i = j
		}
	}
	return i
}

func argMax(v []float64) int {
	i := 0
	for j := range v {
		if v[j] > v[i] {
			i = j
		}
	}
	return i
}

func cmpDesc(x, y float64) int {
	switch {
	case x > y:
		return -1
	case x < y:
		return 1
	}
	return 0
}
