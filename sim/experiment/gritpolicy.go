package experiment

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/grit"
	"github.com/uvmmu/uvmmu/sim/multigpu"
)

// GRIT's evaluation (GRIT Section VI) on the multi-GPU system under the
// policy grit, one command per figure. Every command runs its points
// (a scheme or a GRIT configuration at a GPU count) on GRIT's workloads,
// keeps one record per run, prints the figure and the validation rows of
// grit.ValidationRows it covers, each computed as grit.Improvement or
// grit.Reduction says: the geometric mean over the workloads of the
// speedup (or fault ratio), minus one (one minus).
const (
	GritName           = "grit"             // Fig. 17: GRIT vs ot, ac, dup
	GritFaultsName     = "grit-faults"      // Fig. 18: GPU page faults
	GritAblationName   = "grit-ablation"    // Fig. 20: PA-Table, PA-Cache, prediction
	GritThresholdName  = "grit-threshold"   // Fig. 21: thresholds 2, 4, 8, 16
	GritGPUsName       = "grit-gpus"        // Figs. 22-24: 2, 4, 8, 16 GPUs
	GritFirstTouchName = "grit-first-touch" // Fig. 29: GRIT vs first-touch
	GritPrefetchName   = "grit-prefetch"    // Fig. 30: GRIT vs ot, both with prefetching
	GritValidateName   = "grit-validate"    // every row of grit.ValidationRows
)

// GritStudyNames lists the GRIT evaluation commands.
var GritStudyNames = []string{GritName, GritFaultsName, GritAblationName, GritThresholdName, GritGPUsName, GritFirstTouchName, GritPrefetchName, GritValidateName}

// GritPoint is one configuration of a study: a row's scheme name
// (grit.Row.Scheme, Baseline) at a GPU count.
type GritPoint struct {
	Name string `json:"name"`
	GPUs int    `json:"gpus"`
}

// apply sets cfg to the point: the policy, and GRIT's keys for the
// ablation and threshold points.
func (p GritPoint) apply(cfg *config.Config) error {
	cfg.MultiGPU.GPUs = p.GPUs
	switch p.Name {
	case grit.SchemeOnTouch, grit.SchemeAccessCtr, grit.SchemeDuplication, grit.SchemeFirstTouch, grit.SchemeGRIT:
		cfg.MultiGPU.Policy = p.Name
		return nil
	case grit.SchemeOTPrefetch:
		cfg.MultiGPU.Policy = "ot-prefetch"
		return nil
	case grit.SchemeGRITPrefetch:
		cfg.MultiGPU.Policy = multigpu.GritPrefetchPolicy
		return nil
	}
	cfg.MultiGPU.Policy = multigpu.GritPolicy
	for _, a := range grit.Ablation() {
		if a.Name == p.Name {
			cfg.Grit.PACache, cfg.Grit.Prediction = a.Config.PACache, a.Config.Prediction
			return nil
		}
	}
	for _, t := range grit.ThresholdStudy {
		if grit.ThresholdScheme(t) == p.Name {
			cfg.Grit.Threshold = t
			return nil
		}
	}
	return fmt.Errorf("no configuration for %q", p.Name)
}

// GritStudy is one command's points, the figure's reference and its rows.
type GritStudy struct {
	Name      string
	Points    []GritPoint
	Reference string // the point the figure normalises to, at each GPU count
	Faults    bool   // the figure shows faults, not performance
	Rows      []grit.Row
}

// NewGritStudy is the named study at gpus GPUs (the GPU counts for
// grit-gpus).
func NewGritStudy(name string, gpus []int) (GritStudy, error) {
	st := GritStudy{Name: name, Reference: grit.SchemeOnTouch}
	at := func(n int, names ...string) {
		for _, s := range names {
			st.Points = append(st.Points, GritPoint{Name: s, GPUs: n})
		}
	}
	g := gpus[0]
	schemes := []string{grit.SchemeOnTouch, grit.SchemeAccessCtr, grit.SchemeDuplication, grit.SchemeGRIT}
	switch name {
	case GritName:
		at(g, schemes...)
	case GritFaultsName:
		at(g, schemes...)
		st.Faults = true
	case GritAblationName:
		at(g, grit.SchemeOnTouch, grit.AblationTableOnly, grit.AblationCache, grit.AblationPrediction, grit.SchemeGRIT)
	case GritThresholdName:
		at(g, grit.SchemeOnTouch)
		for _, t := range grit.ThresholdStudy {
			at(g, grit.ThresholdScheme(t))
		}
	case GritGPUsName:
		for _, n := range gpus {
			at(n, schemes...)
		}
	case GritFirstTouchName:
		at(g, grit.SchemeOnTouch, grit.SchemeFirstTouch, grit.SchemeGRIT)
	case GritPrefetchName:
		// Normalised to on-touch as the other figures; the row compares
		// the two prefetching points.
		at(g, grit.SchemeOnTouch, grit.SchemeOTPrefetch, grit.SchemeGRITPrefetch)
	case GritValidateName:
		// The 4-GPU rows' points first, then the other GPU counts', so
		// that the runs of most rows are stored first.
		for _, fourGPUs := range []bool{true, false} {
			for _, r := range grit.ValidationRows {
				if (r.GPUs == grit.ValidationRows[0].GPUs) != fourGPUs {
					continue
				}
				for _, s := range []string{r.Scheme, r.Baseline} {
					p := GritPoint{Name: s, GPUs: r.GPUs}
					if fourGPUs {
						p.GPUs = g
					}
					if !containsPoint(st.Points, p) {
						st.Points = append(st.Points, p)
					}
				}
			}
		}
	default:
		return GritStudy{}, fmt.Errorf("unknown GRIT experiment %q", name)
	}
	for _, r := range grit.ValidationRows {
		if name == GritValidateName || r.Experiment == name || (name == GritName && r.Experiment == GritFaultsName) {
			st.Rows = append(st.Rows, r)
		}
	}
	return st, nil
}

func containsPoint(ps []GritPoint, p GritPoint) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// GritPointRecord is one run of a study.
type GritPointRecord struct {
	Point GritPoint `json:"point"`
	GritRecord
}

// RunGritStudy runs (or reads back from o.Dir) every point on every
// workload, point-major, o.Jobs at once; with o.StoredOnly it only reads
// back, and returns the records stored.
func RunGritStudy(st GritStudy, o GritOptions) ([]GritPointRecord, error) {
	type job struct {
		p   GritPoint
		cfg config.Config
	}
	var jobs []job
	for _, p := range st.Points {
		for _, wl := range o.Workloads {
			cfg := o.Base
			cfg.Run.Workload = wl
			if err := p.apply(&cfg); err != nil {
				return nil, err
			}
			if err := cfg.Validate(); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", wl, p.Name, err)
			}
			if cfg.MultiGPU.GPUs < 2 {
				return nil, fmt.Errorf("multigpu.gpus = %d: GRIT's experiments need 2..16 GPUs", cfg.MultiGPU.GPUs)
			}
			jobs = append(jobs, job{p, cfg})
		}
	}
	if err := PrepareDir(o.Dir, false); err != nil {
		return nil, err
	}
	cfgs := make([]*config.Config, len(jobs))
	labels := make([]string, len(jobs))
	for i := range jobs {
		cfgs[i] = &jobs[i].cfg
		labels[i] = fmt.Sprintf("%s/%s/%dgpu", jobs[i].cfg.Run.Workload, jobs[i].p.Name, jobs[i].p.GPUs)
	}
	runs, err := runGritRuns(o.Dir, cfgs, labels, o.Jobs, o.StoredOnly, o.Progress)
	recs := make([]GritPointRecord, len(jobs))
	for i := range jobs {
		recs[i] = GritPointRecord{Point: jobs[i].p, GritRecord: runs[i]}
	}
	if o.StoredOnly {
		recs = slices.DeleteFunc(recs, func(r GritPointRecord) bool { return r.Result.Cycles == 0 })
	}
	return recs, err
}

// gritFaults is a run's GPU page faults: local and protection faults.
func gritFaults(r multigpu.Result) uint64 { return r.Total.LocalFaults + r.Total.ProtectionFaults }

// gritValue is a point's cycles (or faults) on a workload, 0 if missing.
func gritValue(recs []GritPointRecord, p GritPoint, wl string, faults bool) uint64 {
	for _, r := range recs {
		if r.Point == p && r.Result.Workload == wl {
			if faults {
				return gritFaults(r.Result)
			}
			return r.Result.Cycles
		}
	}
	return 0
}

// GritStudyFigure is the study's figure: per GPU count a panel of every
// point's performance relative to the reference (reference cycles over
// the point's), or of its faults relative to the reference's, per
// workload and geomean.
func GritStudyFigure(st GritStudy, recs []GritPointRecord, workloads []string) *Figure {
	fig := &Figure{ID: st.Name, Title: "GRIT " + gritFigure(st.Name), YLabel: "performance relative to " + st.Reference, Reference: st.Reference}
	if st.Faults {
		fig.YLabel = "GPU page faults relative to " + st.Reference
	}
	var counts []int
	for _, p := range st.Points {
		if !containsInt(counts, p.GPUs) {
			counts = append(counts, p.GPUs)
		}
	}
	for _, n := range counts {
		ref := GritPoint{Name: st.Reference, GPUs: n}
		var series []Series
		for _, p := range st.Points {
			if p.GPUs != n || p.Name == st.Reference {
				continue
			}
			v := make([]float64, len(workloads))
			for i, wl := range workloads {
				if st.Faults {
					v[i] = Ratio(gritValue(recs, p, wl, true), gritValue(recs, ref, wl, true))
				} else {
					v[i] = Ratio(gritValue(recs, ref, wl, false), gritValue(recs, p, wl, false))
				}
			}
			series = append(series, Series{Name: p.Name, Values: v})
		}
		if len(series) > 0 {
			fig.Panels = append(fig.Panels, withGeomean(fig, fmt.Sprintf("%d GPUs", n), workloads, series))
		}
	}
	return fig
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// gritFigure is the paper's figure of a study.
func gritFigure(name string) string {
	return map[string]string{GritName: "Fig. 17", GritFaultsName: "Fig. 18", GritAblationName: "Fig. 20",
		GritThresholdName: "Fig. 21", GritGPUsName: "Figs. 22-24", GritFirstTouchName: "Fig. 29", GritValidateName: "Section VI"}[name]
}

// GritValidation is one validation row with the model's figure.
type GritValidation struct {
	grit.Row
	// Model is the model's figure as a fraction, NaN when a run is
	// missing; Within is whether it is within grit.Tolerance.
	Model  float64 `json:"model"`
	Within bool    `json:"within"`
	// Workloads is the number of workloads it is computed over.
	Workloads int `json:"workloads"`
	// Explanation, for a row outside grit.Tolerance, is computed from its
	// runs (explainGritRow).
	Explanation string `json:"explanation,omitempty"`
}

// MarshalJSON writes a missing model figure (NaN) as null.
func (v GritValidation) MarshalJSON() ([]byte, error) {
	type plain GritValidation
	out := struct {
		plain
		Model *float64 `json:"model"`
	}{plain: plain(v)}
	if !math.IsNaN(v.Model) {
		out.Model = &v.Model
	}
	return json.Marshal(out)
}

// GritValidations computes the study's rows from the records: each over
// the workloads both points completed. gpus4 is the GPU count the
// 4-GPU rows were run at.
func GritValidations(st GritStudy, recs []GritPointRecord, workloads []string, gpus4 int) []GritValidation {
	var out []GritValidation
	for _, r := range st.Rows {
		n := r.GPUs
		if n == grit.ValidationRows[0].GPUs {
			n = gpus4
		}
		s, b := GritPoint{Name: r.Scheme, GPUs: n}, GritPoint{Name: r.Baseline, GPUs: n}
		faults := r.Metric == grit.FaultReduction
		var sv, bv []float64
		for _, wl := range workloads {
			x, y := gritValue(recs, s, wl, faults), gritValue(recs, b, wl, faults)
			if x > 0 && y > 0 {
				sv, bv = append(sv, float64(x)), append(bv, float64(y))
			}
		}
		v := GritValidation{Row: r, Model: math.NaN(), Workloads: len(sv)}
		if len(sv) > 0 {
			var err error
			if faults {
				v.Model, err = grit.Reduction(bv, sv)
			} else {
				v.Model, err = grit.Improvement(bv, sv)
			}
			if err != nil {
				v.Model = math.NaN()
			}
		}
		v.Within = !math.IsNaN(v.Model) && r.Within(v.Model)
		if !math.IsNaN(v.Model) && !v.Within {
			v.Explanation = explainGritRow(v, recs, s, b, workloads)
		}
		out = append(out, v)
	}
	return out
}

// GritOrdering is GRIT Section VI-B1's threshold ordering 4 ~ 8 > 2 > 16
// as the runs give it, with the comparisons that break explained from the
// runs.
type GritOrdering struct {
	Holds       bool   `json:"holds"`
	Explanation string `json:"explanation,omitempty"`
}

// GritThresholdOrdering checks the ordering over the rows of the four
// thresholds; nil when the rows do not hold all four.
func GritThresholdOrdering(rows []GritValidation, recs []GritPointRecord, workloads []string, gpus4 int) *GritOrdering {
	byThreshold := map[int]float64{}
	for _, r := range rows {
		for _, t := range grit.ThresholdStudy {
			if r.Scheme == grit.ThresholdScheme(t) && !math.IsNaN(r.Model) {
				byThreshold[t] = r.Model
			}
		}
	}
	if len(byThreshold) != len(grit.ThresholdStudy) {
		return nil
	}
	o := &GritOrdering{Holds: grit.ThresholdOrderingHolds(byThreshold)}
	if !o.Holds {
		o.Explanation = explainThresholdOrdering(recs, workloads, gpus4, byThreshold)
	}
	return o
}

// gritModel formats a row's model figure and whether it is within the
// tolerance.
func gritModel(r GritValidation) (model, within string) {
	if math.IsNaN(r.Model) {
		return "n/a", "-"
	}
	if r.Within {
		return fmt.Sprintf("%+.1f%%", 100*r.Model), "yes"
	}
	return fmt.Sprintf("%+.1f%%", 100*r.Model), "no"
}

// gritCells are a row's columns as the tables print them.
func gritCells(r GritValidation) []string {
	model, ok := gritModel(r)
	return []string{r.Figure, string(r.Metric), r.Scheme, r.Baseline, strconv.Itoa(r.GPUs), fmt.Sprintf("%+.0f%%", 100*r.Paper), model, ok, strconv.Itoa(r.Workloads)}
}

// gritValidationHeading says how the rows are computed.
var gritValidationHeading = fmt.Sprintf("GRIT validation (X%% better = geomean speedup - 1; fewer faults = 1 - geomean fault ratio; tolerance +-%.0f%% of the paper's figure)", 100*grit.Tolerance)

// WriteGritValidation prints the rows: paper, model, within tolerance;
// the threshold ordering when ord is not nil; then the explanation of
// every row outside the tolerance and of a broken ordering.
func WriteGritValidation(w io.Writer, rows []GritValidation, ord *GritOrdering) error {
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\n%s\n", gritValidationHeading)
	fmt.Fprintln(tw, "figure\tmetric\tscheme\tbaseline\tgpus\tpaper\tmodel\twithin\tworkloads")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(gritCells(r), "\t"))
	}
	if ord != nil {
		fmt.Fprintf(tw, "threshold ordering 4 ~ 8 > 2 > 16 holds: %v\n", ord.Holds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Explanation != "" {
			fmt.Fprintf(w, "%s %s %s vs %s, %d GPUs: %s\n", r.Figure, r.Metric, r.Scheme, r.Baseline, r.GPUs, r.Explanation)
		}
	}
	if ord != nil && ord.Explanation != "" {
		fmt.Fprintf(w, "Fig. 21 ordering: %s\n", ord.Explanation)
	}
	return nil
}

// WriteGritValidationMarkdown writes the rows as docs/grit.md and the
// README show them (docs/results/grit-validation.md): where they were
// measured (scale and SMs per GPU) and from how many of the study's runs,
// the table, the ordering and the explanations.
func WriteGritValidationMarkdown(w io.Writer, rows []GritValidation, ord *GritOrdering, scale float64, sms, runs, ofRuns int) error {
	fmt.Fprintf(w, "%s; workloads at `--scale %g`, %d SMs per GPU; from %d of the %d runs.\n\n", gritValidationHeading, scale, sms, runs, ofRuns)
	fmt.Fprintln(w, "| figure | metric | scheme | baseline | GPUs | paper | model | within | workloads |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(gritCells(r), " | "))
	}
	if ord != nil {
		fmt.Fprintf(w, "\nThreshold ordering 4 ~ 8 > 2 > 16 holds: %v.\n", ord.Holds)
	}
	var lines []string
	for _, r := range rows {
		if r.Explanation != "" {
			lines = append(lines, fmt.Sprintf("- %s, %s of %s over %s, %d GPUs (model %+.1f%%, paper %+.0f%%): %s.", r.Figure, r.Metric, r.Scheme, r.Baseline, r.GPUs, 100*r.Model, 100*r.Paper, r.Explanation))
		}
	}
	if ord != nil && ord.Explanation != "" {
		lines = append(lines, "- Fig. 21, the ordering: "+ord.Explanation+".")
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nOutside +-%.0f%%, from the runs:\n\n%s\n", 100*grit.Tolerance, strings.Join(lines, "\n"))
	}
	return nil
}

// WriteGritStudyCSV writes one row per run: the point, its GPU count and
// the run's totals, with GRIT's own counts for the grit points.
func WriteGritStudyCSV(w io.Writer, recs []GritPointRecord) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"workload", "point", "policy", "gpus", "cycles", "wall_seconds",
		"local_accesses", "remote_accesses", "local_faults", "protection_faults", "promotions", "migrations",
		"replicas_made", "replicas_collapsed", "invalidations", "evictions", "nvlink_bytes",
		"grit_interrupts", "grit_decided_ac", "grit_decided_dup", "grit_adopted", "grit_pa_table_reads", "grit_pa_table_writes", "grit_walk_stall_cycles"})
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, rec := range recs {
		r, t := rec.Result, rec.Result.Total
		row := []string{r.Workload, rec.Point.Name, r.Policy, strconv.Itoa(r.GPUs), u(r.Cycles),
			strconv.FormatFloat(r.WallSeconds, 'f', 2, 64),
			u(t.LocalAccesses), u(t.RemoteAccesses), u(t.LocalFaults), u(t.ProtectionFaults), u(t.Promotions), u(t.Migrations),
			u(t.ReplicasMade), u(t.ReplicasCollapse), u(t.Invalidations), u(t.Evictions), u(t.NVLinkBytes)}
		if g := r.Grit; g != nil {
			row = append(row, u(g.Interrupts), u(g.ToAccessCounter), u(g.ToDuplication), u(g.Adoptions), u(g.TableReads), u(g.TableWrites), u(g.StallCycles))
		} else {
			row = append(row, "", "", "", "", "", "", "")
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
