package experiment

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// ValidateName is the experiment that regenerates the validation table.
const ValidateName = "validate"

// Files validate writes: the table as Markdown and the same rows as CSV.
const (
	ValidationFile = "validation.md"
	ValidationCSV  = "validation.csv"
)

// ExplainThreshold is the relative difference from the paper above which a
// row needs an explanation (SPEC 10).
const ExplainThreshold = 0.25

// A Methodology is one way of timing the far faults of the fault-based
// policies (FaultTimedPolicies); the table has one model column per
// methodology, and every figure is built once per methodology.
type Methodology struct {
	Name string // column heading
	// Timing is the <policy>.fault_timing every run of a fault-based
	// policy gets (config.FaultTimingCycle or FaultTimingReference).
	Timing string
	// FileSuffix follows a figure's ID in its file names (fig4-reference.svg);
	// empty for the methodology whose figures are the experiments' own.
	FileSuffix string
}

// Methodologies are the table's model columns, the paper's first: the
// UVMMU paper's UM and UVMSmart figures come from the UVMSmart simulator's
// published configuration, -enable_accurate_simulation 0, which keeps the
// fault latency off the timeline and adds faults x latency afterwards
// (gpu-sim.cc:116-126; fault_timing = "reference"); the in-loop model
// (fault_timing = "cycle", the default and what `uvmsim experiment fig4`
// runs) puts each fault's latency in the cycle loop with the faulting SM's
// TLB frozen. UVMMU's runs are the same in both.
var Methodologies = []Methodology{
	{Name: "paper's methodology", Timing: config.FaultTimingReference, FileSuffix: "-reference"},
	{Name: "in-loop", Timing: config.FaultTimingCycle},
}

// FaultTimedPolicies are the policies whose configuration section (of the
// same name) has the fault_timing key.
var FaultTimedPolicies = []string{PolicyUM, PolicyUVMSmart, PolicyAdaptive}

// FaultTimingKey is the key of a fault-based policy's section that selects
// the methodology.
const FaultTimingKey = "fault_timing"

// Spec is s as the methodology runs it: a fault-based policy's run gets its
// section's fault_timing set explicitly, so the column holds whatever the
// base configuration says; other runs are unchanged and shared.
func (m Methodology) Spec(s Spec) Spec {
	if !slices.Contains(FaultTimedPolicies, s.Policy) {
		return s
	}
	s.Sets = append(slices.Clip(s.Sets), s.Policy+"."+FaultTimingKey+"="+m.Timing)
	return s
}

// Lookup reads the methodology's runs through l with the specs the
// figures and rows name.
func (m Methodology) Lookup(l Lookup) Lookup { return func(s Spec) *Outcome { return l(m.Spec(s)) } }

// View is what a row of the table reads: the parameters, one methodology,
// the figures built over its runs and the runs themselves (l translates
// the figures' specs into the methodology's).
type View struct {
	p    Params
	m    Methodology
	figs []Figure
	l    Lookup
}

// NewView builds every figure over the methodology's runs in l.
func NewView(p Params, m Methodology, l Lookup) *View {
	ml := m.Lookup(l)
	return &View{p: p, m: m, figs: BuildFigures(p, ml), l: ml}
}

// Figures are the view's figures, in Experiments order.
func (v *View) Figures() []Figure { return v.figs }

// A Row is one line of the validation table as data: a figure of a paper,
// the tolerance that separates pass from fail, how the model's figure for
// the same quantity is read from one methodology's view, and how a
// difference over ExplainThreshold is explained from the same runs.
type Row struct {
	ID        string  // SPEC 10 result id
	Quantity  string  // what is compared
	Paper     float64 // the paper's figure
	Tolerance float64 // allowed |model/paper - 1|
	// Measure is the model's figure, or NaN and why it is missing.
	Measure func(v *View) (float64, string)
	// Explain is the measured reason for the difference of value from the
	// paper; nil when the row offers none.
	Explain func(v *View, value float64) string
}

// A RowSet is a block of the table: its rows and the runs they need beyond
// the figure experiments'. A new comparison adds a RowSet to RowSets.
type RowSet struct {
	Specs func(Params) []Spec // nil: the figures' runs suffice
	Rows  func(Params) []Row
}

// RowSets are the table's blocks in table order.
func RowSets() []RowSet {
	return []RowSet{
		{Rows: uvmmuRows},
		{Specs: adaptiveSpecs, Rows: adaptiveRows},
		{Rows: incompleteRows},
	}
}

// Measured is a row's model figure in one methodology.
type Measured struct {
	Value   float64 // NaN when not measured
	Missing string  // why the figure is missing
	// Why is the measured reason for a difference over ExplainThreshold,
	// computed from the validation runs (explain.go).
	Why string
}

// Check is one row of the validation table as measured: the paper's figure
// and the model's in each of Methodologies, in order.
type Check struct {
	ID        string
	Quantity  string
	Paper     float64
	Tolerance float64
	Models    []Measured
}

// Difference is |model/paper - 1| in methodology i, NaN when not measured.
func (c *Check) Difference(i int) float64 { return math.Abs(c.Models[i].Value/c.Paper - 1) }

// Status is "pass", "fail" or "not measured" in methodology i.
func (c *Check) Status(i int) string {
	switch d := c.Difference(i); {
	case math.IsNaN(d):
		return "not measured"
	case d <= c.Tolerance:
		return "pass"
	}
	return "fail"
}

// needsWhy reports whether methodology i's figure must be explained: it
// differs by more than ExplainThreshold or fails its tolerance.
func (c *Check) needsWhy(i int) bool {
	return c.Difference(i) > ExplainThreshold || c.Status(i) == "fail"
}

// Explanation is the reason the model differs from the paper by more than
// ExplainThreshold or falls outside the row's tolerance in methodology i,
// or why it was not measured; empty when nothing needs saying.
func (c *Check) Explanation(i int) string {
	m := &c.Models[i]
	switch {
	case math.IsNaN(c.Difference(i)) && m.Missing == "":
		return "not measured: no completed runs"
	case math.IsNaN(c.Difference(i)):
		return "not measured: " + m.Missing
	case !c.needsWhy(i):
		return ""
	case m.Why != "":
		return m.Why
	}
	return "difference not explained"
}

// Explanations joins the explanations of every methodology that needs one,
// each under the methodology's name.
func (c *Check) Explanations() string {
	var parts []string
	for i, m := range Methodologies {
		if e := c.Explanation(i); e != "" {
			parts = append(parts, m.Name+": "+e)
		}
	}
	return strings.Join(parts, " — ")
}

// Tolerances (relative to the paper's figure).
const (
	// ratioTolerance applies to the headline speedups and slowdowns: the
	// model is a different simulator with its own workload generators
	// (SPEC 10), so it must land the ratios, not the digits.
	ratioTolerance = 0.25
	// sameTolerance applies where the paper reports no difference (UVMSmart
	// = UM without oversubscription, regular workloads under UVMSmart,
	// linear-random within a few percent of the other evictions).
	sameTolerance = 0.10
)

// ValidationSpecs are the runs every row of the table needs in every
// methodology: the figure experiments' runs and the row sets' own, each as
// every methodology runs it, without repeats (UVMMU's runs are shared).
func ValidationSpecs(p Params) []Spec {
	var base []Spec
	for _, e := range Experiments() {
		base = append(base, e.Specs(p)...)
	}
	for _, rs := range RowSets() {
		if rs.Specs != nil {
			base = append(base, rs.Specs(p)...)
		}
	}
	var specs []Spec
	for _, m := range Methodologies {
		for _, s := range base {
			specs = append(specs, m.Spec(s))
		}
	}
	return Dedupe(specs)
}

// BuildFigures builds every figure experiment from one set of outcomes.
func BuildFigures(p Params, l Lookup) []Figure {
	var figs []Figure
	for _, e := range Experiments() {
		figs = append(figs, e.Build(p, l))
	}
	return figs
}

// figureValue reads one value of a figure and the reason it is missing.
func figureValue(figs []Figure, id, panel, group, series string) (float64, string) {
	for i := range figs {
		f := &figs[i]
		if f.ID != id {
			continue
		}
		for j := range f.Panels {
			if f.Panels[j].Title == panel {
				if v := f.Panels[j].Value(series, group); !math.IsNaN(v) {
					return v, ""
				}
				if !f.Panels[j].HasSeries(series) && len(f.Notes) > 0 {
					return math.NaN(), f.Notes[0]
				}
				return math.NaN(), fmt.Sprintf("%s has no value for %s, %s, %s (a run failed or was not run)", id, panel, group, series)
			}
		}
		if len(f.Notes) > 0 {
			return math.NaN(), f.Notes[0]
		}
		return math.NaN(), fmt.Sprintf("%s has no panel %q", id, panel)
	}
	return math.NaN(), fmt.Sprintf("no figure %s", id)
}

// value reads a figure of the view.
func (v *View) value(id, panel, group, series string) (float64, string) {
	return figureValue(v.figs, id, panel, group, series)
}

// Validate measures every row of RowSets in every methodology from the
// outcomes l holds, and explains each difference over ExplainThreshold
// from the same runs.
func Validate(p Params, l Lookup) []Check {
	views := make([]*View, len(Methodologies))
	for i, m := range Methodologies {
		views[i] = NewView(p, m, l)
	}
	return validateViews(p, views)
}

// validateViews measures the rows in views already built.
func validateViews(p Params, views []*View) []Check {
	var checks []Check
	for _, rs := range RowSets() {
		for _, r := range rs.Rows(p) {
			c := Check{ID: r.ID, Quantity: r.Quantity, Paper: r.Paper, Tolerance: r.Tolerance}
			for _, v := range views {
				x, missing := r.Measure(v)
				c.Models = append(c.Models, Measured{Value: x, Missing: missing})
			}
			for i, v := range views {
				if c.needsWhy(i) && r.Explain != nil {
					c.Models[i].Why = r.Explain(v, c.Models[i].Value)
				}
			}
			checks = append(checks, c)
		}
	}
	return checks
}

// uvmmuRows are the UVMMU paper's rows: Fig. 1, 4, 5, 6 and the migration
// latency of Section V-A.
func uvmmuRows(Params) []Row {
	var rows []Row
	// UVMMU Section III: 50 -> 20 us gives 1.35x (100%) and 1.54x (125%,
	// 150%); 50 -> 0 us gives 1.82x, 2.35x and 2.74x.
	for _, r := range []struct {
		ratio int
		us    float64
		paper float64
	}{{100, 20, 1.35}, {125, 20, 1.54}, {150, 20, 1.54}, {100, 0, 1.82}, {125, 0, 2.35}, {150, 0, 2.74}} {
		series := strconv.FormatFloat(r.us, 'g', -1, 64) + " us"
		rows = append(rows, Row{ID: "F1", Quantity: fmt.Sprintf("UM speedup, fault latency 50 us -> %s, %s, geomean", series, pct(r.ratio)),
			Paper: r.paper, Tolerance: ratioTolerance,
			Measure: func(v *View) (float64, string) {
				x, why := v.value("fig1", ratioTitle(r.ratio), GeomeanGroup, series)
				return 1 / x, why
			},
			Explain: func(v *View, _ float64) string { return v.explainFaultLatency(r.ratio, r.us, r.paper) }})
	}

	// UVMMU Section V-A2 and Fig. 4.
	speedup := func(id string, ratio int, series, group string, paper, tol float64) Row {
		return Row{ID: id, Quantity: fmt.Sprintf("%s speedup over UM, %s, %s", series, pct(ratio), group), Paper: paper, Tolerance: tol,
			Measure: func(v *View) (float64, string) { return v.value("fig4", ratioTitle(ratio), group, series) },
			Explain: func(v *View, _ float64) string { return v.explainFig4(ratio, series, group, paper) }}
	}
	over := func(id string, ratio int, paper float64) Row {
		return Row{ID: id, Quantity: fmt.Sprintf("UVMMU speedup over UVMSmart, %s, geomean", pct(ratio)), Paper: paper, Tolerance: ratioTolerance,
			Measure: func(v *View) (float64, string) {
				a, whyA := v.value("fig4", ratioTitle(ratio), GeomeanGroup, "UVMMU")
				b, whyB := v.value("fig4", ratioTitle(ratio), GeomeanGroup, "UVMSmart")
				if whyA == "" {
					whyA = whyB
				}
				return a / b, whyA
			},
			Explain: func(v *View, _ float64) string {
				return v.explainFig4(ratio, "UVMMU over UVMSmart", GeomeanGroup, paper)
			}}
	}
	rows = append(rows,
		speedup("F4a", 100, "UVMMU", GeomeanGroup, 1.59, ratioTolerance),
		speedup("F4a", 100, "UVMSmart", GeomeanGroup, 1.00, sameTolerance),
		speedup("F4b", 125, "UVMSmart", GeomeanGroup, 1.24, ratioTolerance),
		speedup("F4b", 125, "UVMMU", GeomeanGroup, 2.73, ratioTolerance),
		over("F4b", 125, 2.21),
		speedup("F4c", 150, "UVMSmart", GeomeanGroup, 1.37, ratioTolerance),
		speedup("F4c", 150, "UVMMU", GeomeanGroup, 3.29, ratioTolerance),
		over("F4c", 150, 2.40),
		speedup("F4c", 150, "UVMMU", "ra", 14.52, ratioTolerance),
		speedup("F4c", 150, "UVMSmart", "ra", 2.79, ratioTolerance),
	)

	// UVMMU Section V-C1: linear-random is the best at 125% and 1% slower
	// than sequential-local at 150%. The row compares linear-random with
	// the best other eviction policy.
	for _, r := range []struct {
		ratio int
		paper float64
	}{{125, 1.00}, {150, 1.01}} {
		rows = append(rows, Row{ID: "F5", Quantity: fmt.Sprintf("UVMMU time, linear-random / best other eviction, %s, geomean", pct(r.ratio)),
			Paper: r.paper, Tolerance: sameTolerance,
			Measure: func(v *View) (float64, string) {
				best, why := math.NaN(), ""
				for _, ev := range EvictionVariants[1:] {
					x, w := v.value("fig5", ratioTitle(r.ratio), GeomeanGroup, ev)
					if !math.IsNaN(x) && (math.IsNaN(best) || x < best) {
						best = x
					} else if why == "" {
						why = w
					}
				}
				return 1 / best, why
			},
			Explain: func(v *View, _ float64) string { return v.explainEviction(r.ratio) }})
	}

	// UVMMU Section V-C2.
	for _, r := range []struct {
		policy string
		ratio  int
		paper  float64
	}{{"UVMMU", 150, 1.52}, {"UVMMU", 200, 1.90}, {"UVMSmart", 125, 1.75}, {"UVMSmart", 150, 2.27}} {
		rows = append(rows, Row{ID: "F6", Quantity: fmt.Sprintf("%s slowdown, %s over 100%%, geomean", r.policy, pct(r.ratio)),
			Paper: r.paper, Tolerance: ratioTolerance,
			Measure: func(v *View) (float64, string) { return v.value("fig6", r.policy, GeomeanGroup, pct(r.ratio)) },
			Explain: func(v *View, x float64) string { return v.explainScaling(r.policy, r.ratio, r.paper, x) }})
	}

	// UVMMU Section V-A2: about 1.3 us per migration to a free frame-group,
	// the sum of its parts on an idle link (10-cycle handling + 1 us round
	// trip + the critical 4 KB page). The first row compares the shortest
	// free-destination sample of the migration-latency runs, pooled over the
	// workloads; the second their median, which also holds the wait for the
	// link. Microseconds at the configured core clock.
	for _, st := range []struct{ series, what string }{
		{"min", "on an idle link (the shortest)"},
		{"median", "median"},
	} {
		rows = append(rows, Row{ID: "M1", Quantity: "UVMMU migration latency to a free destination (remote walk taken to the critical page's PTE returned), " + st.what +
			" over all workloads, us at the core clock", Paper: 1.3, Tolerance: ratioTolerance,
			Measure: func(v *View) (float64, string) {
				return v.value("migration-latency", LatencyFree+" (us)", LatencyPooled, st.series)
			},
			Explain: func(v *View, _ float64) string { return v.explainMigrationLatency() }})
	}
	return rows
}

// adaptiveRatio is the oversubscription of the UVMSmart adaptive paper's
// headline (abstract and Section VI-C).
const adaptiveRatio = 125

// adaptiveSpecs are the U1 rows' runs: UM and adaptive at adaptiveRatio.
func adaptiveSpecs(p Params) []Spec {
	if !p.has(PolicyAdaptive) || !p.has(PolicyUM) {
		return nil
	}
	return Grid(p.Workloads, []string{PolicyUM, PolicyAdaptive}, []int{adaptiveRatio}, p.Scale, p.Seed, nil)
}

// adaptiveSpeedup is the adaptive policy's speedup over UM on workload w
// at adaptiveRatio, NaN with the reason when a run is missing.
func (v *View) adaptiveSpeedup(w string) (float64, string) {
	if !v.p.has(PolicyAdaptive) {
		return math.NaN(), notRegistered(v.p, PolicyAdaptive)
	}
	um, ad := v.l.cycles(v.p.spec(w, PolicyUM, adaptiveRatio)), v.l.cycles(v.p.spec(w, PolicyAdaptive, adaptiveRatio))
	if um == 0 || ad == 0 {
		return math.NaN(), fmt.Sprintf("the um or adaptive run of %s at %d%% is missing or failed", w, adaptiveRatio)
	}
	return Ratio(um, ad), ""
}

// adaptiveBy is the adaptive speedup of every workload of one class (or
// of every other class), and the first reason one is missing.
func (v *View) adaptiveBy(irregular bool) ([]float64, string) {
	var xs []float64
	var missing string
	for _, w := range v.p.Workloads {
		if isIrregular(w, v.p) != irregular {
			continue
		}
		x, why := v.adaptiveSpeedup(w)
		if missing == "" {
			missing = why
		}
		xs = append(xs, x)
	}
	return xs, missing
}

// isIrregular reports whether workload w is of the irregular class
// (SPEC 7); a workload that cannot be built counts as regular.
func isIrregular(w string, p Params) bool {
	wl, err := workload.New(w, workload.Params{Scale: p.Scale, Seed: p.Seed})
	return err == nil && wl.Class() == workload.Irregular
}

// adaptiveRows are the UVMSmart adaptive paper's rows (IPDPS'20, the
// adaptive policy), abstract and Section VI-C: irregular workloads 22% to
// 78% faster at 125% than first-touch migration, regular workloads
// unchanged.
func adaptiveRows(Params) []Row {
	what := "adaptive (IPDPS'20) speedup over UM, " + pct(adaptiveRatio) + ", "
	explain := func(v *View, _ float64) string { return v.explainAdaptive() }
	return []Row{
		{ID: "U1", Quantity: what + "slowest irregular workload", Paper: 1.22, Tolerance: ratioTolerance, Explain: explain,
			Measure: func(v *View) (float64, string) {
				xs, why := v.adaptiveBy(true)
				lo, _ := minMax(xs)
				return lo, why
			}},
		{ID: "U1", Quantity: what + "fastest irregular workload", Paper: 1.78, Tolerance: ratioTolerance, Explain: explain,
			Measure: func(v *View) (float64, string) {
				xs, why := v.adaptiveBy(true)
				_, hi := minMax(xs)
				return hi, why
			}},
		{ID: "U1", Quantity: what + "regular workloads, geomean", Paper: 1.00, Tolerance: sameTolerance, Explain: explain,
			Measure: func(v *View) (float64, string) {
				xs, why := v.adaptiveBy(false)
				g, n := Geomean(xs)
				if n < len(xs) || n == 0 {
					g = math.NaN()
				}
				return g, why
			}},
	}
}

// minMax of the values, NaN when any is missing or there are none.
func minMax(vs []float64) (float64, float64) {
	if len(vs) == 0 {
		return math.NaN(), math.NaN()
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if math.IsNaN(v) {
			return math.NaN(), math.NaN()
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

func formatCheck(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// WriteValidationMarkdown writes the table with a line naming the command
// and sizes that produced it, then the findings drawn from the same runs
// (Findings).
func WriteValidationMarkdown(w io.Writer, p Params, checks []Check, findings []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Generated by `uvmsim experiment validate` over %s at scale %g, seed %d. ",
		strings.Join(p.Workloads, ", "), p.Scale, p.Seed)
	fmt.Fprintf(&b, "Each model column is one methodology for the fault-based policies' far faults (UVMMU's runs are the same in both): ")
	fmt.Fprintf(&b, "the paper's methodology keeps the fault latency off the timeline and adds faults x latency afterwards, as the UVMSmart simulator's published runs do (`%s=%s`); ",
		FaultTimingKey, config.FaultTimingReference)
	fmt.Fprintf(&b, "the in-loop model puts each fault's latency in the cycle loop and freezes the faulting SM's TLB (`%s=%s`, the default). ", FaultTimingKey, config.FaultTimingCycle)
	fmt.Fprintf(&b, "Tolerance is the allowed |model / paper - 1|; status is the paper's methodology's, then the in-loop model's; "+
		"differences over %.0f%% carry an explanation measured from the same runs.\n\n", ExplainThreshold*100)
	b.WriteString("| id | result | paper |")
	for _, m := range Methodologies {
		fmt.Fprintf(&b, " %s |", m.Name)
	}
	b.WriteString(" tolerance | status | explanation |\n|---|---|---:|")
	b.WriteString(strings.Repeat("---:|", len(Methodologies)))
	b.WriteString("---:|---|---|\n")
	for i := range checks {
		c := &checks[i]
		fmt.Fprintf(&b, "| %s | %s | %s |", c.ID, c.Quantity, formatCheck(c.Paper))
		var status []string
		for j := range c.Models {
			fmt.Fprintf(&b, " %s |", formatCheck(c.Models[j].Value))
			status = append(status, c.Status(j))
		}
		fmt.Fprintf(&b, " ±%.0f%% | %s | %s |\n", c.Tolerance*100, strings.Join(status, " / "), strings.ReplaceAll(c.Explanations(), "|", "\\|"))
	}
	if len(findings) > 0 {
		b.WriteString("\nWhat the same runs say:\n\n")
		for _, f := range findings {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ValidationCSVColumns are the columns of validation.csv: per methodology
// (Methodologies order, by Timing) its model figure, status and
// explanation.
func ValidationCSVColumns() []string {
	cols := []string{"id", "result", "paper", "tolerance"}
	for _, m := range Methodologies {
		cols = append(cols, "model_"+m.Timing, "status_"+m.Timing, "explanation_"+m.Timing)
	}
	return cols
}

// WriteValidationCSV writes the same rows as CSV; a missing model figure
// is an empty cell.
func WriteValidationCSV(w io.Writer, checks []Check) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ValidationCSVColumns()); err != nil {
		return err
	}
	for i := range checks {
		c := &checks[i]
		row := []string{c.ID, c.Quantity, strconv.FormatFloat(c.Paper, 'g', -1, 64), strconv.FormatFloat(c.Tolerance, 'g', -1, 64)}
		for j := range c.Models {
			model := ""
			if v := c.Models[j].Value; !math.IsNaN(v) && !math.IsInf(v, 0) {
				model = strconv.FormatFloat(v, 'g', 6, 64)
			}
			row = append(row, model, c.Status(j), c.Explanation(j))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
