package experiment

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/uvmmu/uvmmu/sim/workload"
)

// The SUV paper's evaluation (seed 004, Section VI): UVM is the um policy
// (the fault-based driver with the tree prefetcher), SUV the suv policy,
// and the alternatives ac and sc.
const (
	PolicySUV = "suv"
	PolicyAC  = "ac"
	PolicySC  = "sc"
)

// SUVLevels are SUV's oversubscription levels as run.oversub_pct: the
// paper's footprint = (1 + x) x available memory at x = 15, 30, 50% is
// managed memory = footprint / R with R = 100 + x (SPEC 2's ratio).
var SUVLevels = []int{115, 130, 150}

// SUVNoOversub is x = 0: the footprint fits.
const SUVNoOversub = 100

// SUVBaselineLevel is the level of Figs. 6-8: 50%.
const SUVBaselineLevel = 150

// SUVWorkloads are SUV Table I's applications the simulator models
// (workload.SUVTableNames), in the table's order. The SUV experiments run
// these when --workloads is the default (every built-in workload).
var SUVWorkloads = []string{"2dconv", "bfs", "bicg", "btree", "doitgen", "fdtd", "floydwarshall", "gemm", "gramschmidt", "mm", "mvt", "xsbench"}

// suvSet is the SUV experiments' workloads: SUVWorkloads unless the
// workloads were chosen.
func suvSet(p Params) []string {
	if slices.Equal(p.Workloads, workload.Names()) {
		return SUVWorkloads
	}
	return p.Workloads
}

// suvReady reports whether the named policies are registered.
func suvReady(p Params, fig *Figure, pols ...string) bool {
	ok := true
	for _, n := range pols {
		if !p.has(n) {
			fig.Notes = append(fig.Notes, notRegistered(p, n))
			ok = false
		}
	}
	return ok
}

// SUVExperiments are the SUV paper's figures, in its order, then suv-all,
// which runs them together and writes their Markdown.
func SUVExperiments() []Experiment {
	return []Experiment{
		{Name: "suv", Title: "Runtime of UVM and SUV normalised to UVM without oversubscription (SUV Fig. 5)", Specs: suvSpecs, Build: suvBuild},
		{Name: "suv-faults", Title: "Page faults of SUV normalised to UVM at 50% oversubscription (SUV Fig. 6)", Specs: suvFaultsSpecs, Build: suvFaultsBuild},
		{Name: "suv-baselines", Title: "Runtime and PCIe traffic of SC and AC normalised to SUV at 50% oversubscription (SUV Figs. 7 and 8)", Specs: suvBaselinesSpecs, Build: suvBaselinesBuild},
		{Name: "suv-nooversub", Title: "SUV and UVM without oversubscription (SUV Fig. 9)", Specs: suvNoOversubSpecs, Build: suvNoOversubBuild},
		{Name: SUVAllName, Title: "every run of the four above, their figures, tables and validation rows as Markdown (suv-all.md)", Specs: suvAllSpecs, Build: suvAllBuild, Doc: WriteSUVDoc},
	}
}

func suvSpecs(p Params) []Spec {
	if !p.has(PolicyUM) || !p.has(PolicySUV) {
		return nil
	}
	specs := Grid(suvSet(p), []string{PolicyUM}, []int{SUVNoOversub}, p.Scale, p.Seed, nil)
	return append(specs, Grid(suvSet(p), []string{PolicyUM, PolicySUV}, SUVLevels, p.Scale, p.Seed, nil)...)
}

// suvLevelTitle names a level as the paper does.
func suvLevelTitle(r int) string { return fmt.Sprintf("%d%% oversubscription", r-100) }

func suvBuild(p Params, l Lookup) Figure {
	fig := Figure{ID: "suv", Title: "Normalised runtime (SUV Fig. 5)", YLabel: "runtime / UVM without oversubscription", Reference: "UVM, 0%"}
	if !suvReady(p, &fig, PolicyUM, PolicySUV) {
		return fig
	}
	ws := suvSet(p)
	for _, r := range SUVLevels {
		var series []Series
		for _, pol := range []string{PolicyUM, PolicySUV} {
			s := Series{Name: suvDisplay(pol)}
			for _, w := range ws {
				s.Values = append(s.Values, Ratio(l.cycles(p.spec(w, pol, r)), l.cycles(p.spec(w, PolicyUM, SUVNoOversub))))
			}
			series = append(series, s)
		}
		fig.Panels = append(fig.Panels, withGeomean(&fig, suvLevelTitle(r), ws, series))
	}
	fig.Notes = append(fig.Notes, suvCheckNotes(SUVChecks(p, l, "suv"))...)
	return fig
}

func suvFaultsSpecs(p Params) []Spec {
	if !p.has(PolicyUM) || !p.has(PolicySUV) {
		return nil
	}
	return Grid(suvSet(p), []string{PolicyUM, PolicySUV}, []int{SUVBaselineLevel}, p.Scale, p.Seed, nil)
}

// faults is a run's far faults, NaN when it did not complete; a count of
// zero is kept (Ratio would read it as missing).
func (l Lookup) faults(s Spec) float64 {
	if o := l(s); o != nil && o.Err == nil {
		return float64(o.Result.FarFaults)
	}
	return math.NaN()
}

// pcie is a run's bytes over the link, both directions.
func (l Lookup) pcie(s Spec) float64 {
	if o := l(s); o != nil && o.Err == nil {
		return float64(o.Result.PCIeH2DBytes + o.Result.PCIeD2HBytes)
	}
	return math.NaN()
}

// share is num/den, NaN when den is 0 or either is missing.
func share(num, den float64) float64 {
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

func suvFaultsBuild(p Params, l Lookup) Figure {
	fig := Figure{ID: "suv-faults", Title: "Normalised page faults at 50% oversubscription (SUV Fig. 6)", YLabel: "far faults / UVM's", Reference: "UVM"}
	if !suvReady(p, &fig, PolicyUM, PolicySUV) {
		return fig
	}
	ws := suvSet(p)
	s := Series{Name: suvDisplay(PolicySUV)}
	var zero []string
	for _, w := range ws {
		v := share(l.faults(p.spec(w, PolicySUV, SUVBaselineLevel)), l.faults(p.spec(w, PolicyUM, SUVBaselineLevel)))
		if v == 0 {
			zero = append(zero, w)
		}
		s.Values = append(s.Values, v)
	}
	// A geomean over zeros is zero; the panel has none, the arithmetic
	// mean is in the notes.
	p0 := Panel{Title: suvLevelTitle(SUVBaselineLevel), Groups: ws, Series: []Series{s}}
	fig.Panels = append(fig.Panels, p0)
	if m, n := mean(s.Values); n > 0 {
		fig.Notes = append(fig.Notes, fmt.Sprintf("SUV's faults are %.0f%% fewer than UVM's on average over %d workloads (arithmetic mean of the ratios)", 100*(1-m), n))
	}
	if len(zero) > 0 {
		fig.Notes = append(fig.Notes, "no far fault under SUV: "+strings.Join(zero, ", "))
	}
	return fig
}

// mean is the arithmetic mean of the values that are not NaN, and how
// many there are.
func mean(vs []float64) (float64, int) {
	sum, n := 0.0, 0
	for _, v := range vs {
		if !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return sum / float64(n), n
}

func suvBaselinesSpecs(p Params) []Spec {
	if !p.has(PolicySUV) {
		return nil
	}
	var pols []string
	for _, n := range []string{PolicySUV, PolicySC, PolicyAC} {
		if p.has(n) {
			pols = append(pols, n)
		}
	}
	return Grid(suvSet(p), pols, []int{SUVBaselineLevel}, p.Scale, p.Seed, nil)
}

func suvBaselinesBuild(p Params, l Lookup) Figure {
	fig := Figure{ID: "suv-baselines", Title: "Alternatives at 50% oversubscription (SUV Figs. 7 and 8)", YLabel: "normalised to SUV", Reference: "SUV"}
	if !suvReady(p, &fig, PolicySUV, PolicySC, PolicyAC) {
		return fig
	}
	ws := suvSet(p)
	var runtime, traffic []Series
	for _, pol := range []string{PolicySC, PolicyAC} {
		rs, ts := Series{Name: suvDisplay(pol)}, Series{Name: suvDisplay(pol)}
		for _, w := range ws {
			rs.Values = append(rs.Values, Ratio(l.cycles(p.spec(w, pol, SUVBaselineLevel)), l.cycles(p.spec(w, PolicySUV, SUVBaselineLevel))))
			ts.Values = append(ts.Values, share(l.pcie(p.spec(w, pol, SUVBaselineLevel)), l.pcie(p.spec(w, PolicySUV, SUVBaselineLevel))))
		}
		runtime, traffic = append(runtime, rs), append(traffic, ts)
	}
	rp := withGeomean(&fig, "runtime (Fig. 7)", ws, runtime)
	rp.YLabel = "runtime / SUV's"
	tp := withGeomean(&fig, "PCIe traffic (Fig. 8)", ws, traffic)
	tp.YLabel = "PCIe bytes / SUV's"
	fig.Panels = append(fig.Panels, rp, tp)
	fig.Notes = append(fig.Notes, suvCheckNotes(SUVChecks(p, l, "suv-baselines"))...)
	return fig
}

func suvNoOversubSpecs(p Params) []Spec {
	if !p.has(PolicyUM) || !p.has(PolicySUV) {
		return nil
	}
	return Grid(suvSet(p), []string{PolicyUM, PolicySUV}, []int{SUVNoOversub}, p.Scale, p.Seed, nil)
}

func suvNoOversubBuild(p Params, l Lookup) Figure {
	fig := Figure{ID: "suv-nooversub", Title: "SUV and UVM under zero oversubscription (SUV Fig. 9)", YLabel: "runtime / UVM's", Reference: "UVM"}
	if !suvReady(p, &fig, PolicyUM, PolicySUV) {
		return fig
	}
	ws := suvSet(p)
	s := Series{Name: suvDisplay(PolicySUV)}
	for _, w := range ws {
		s.Values = append(s.Values, Ratio(l.cycles(p.spec(w, PolicySUV, SUVNoOversub)), l.cycles(p.spec(w, PolicyUM, SUVNoOversub))))
	}
	fig.Panels = append(fig.Panels, withGeomean(&fig, suvLevelTitle(SUVNoOversub), ws, []Series{s}))
	fig.Notes = append(fig.Notes, suvCheckNotes(SUVChecks(p, l, "suv-nooversub"))...)
	return fig
}

// suvDisplay is a policy's name as SUV writes it.
func suvDisplay(pol string) string {
	switch pol {
	case PolicyUM:
		return "UVM"
	case PolicySUV:
		return "SUV"
	case PolicySC:
		return "SC"
	case PolicyAC:
		return "AC"
	}
	return pol
}

// SUVChecks are the SUV paper's validation rows (Section VI) that
// experiment exp measures, with the model's figures from l.
func SUVChecks(p Params, l Lookup, exp string) []Check {
	ws := suvSet(p)
	// reduction is 1 - geomean over the workloads of num/den runtime.
	reduction := func(num, den string, nr, dr int, metric func(Spec) float64) float64 {
		var vs []float64
		for _, w := range ws {
			vs = append(vs, share(metric(p.spec(w, num, nr)), metric(p.spec(w, den, dr))))
		}
		g, n := Geomean(vs)
		if n < len(vs) {
			return math.NaN()
		}
		return 1 - g
	}
	cycles := func(s Spec) float64 {
		if c := l.cycles(s); c > 0 {
			return float64(c)
		}
		return math.NaN()
	}
	var checks []Check
	switch exp {
	case "suv":
		var levels []float64
		for _, r := range SUVLevels {
			levels = append(levels, reduction(PolicySUV, PolicyUM, r, r, cycles))
		}
		lo, hi := minMax(levels)
		checks = append(checks,
			Check{ID: "suv-30", Quantity: "SUV's geomean runtime reduction over UVM at 30% oversubscription", Paper: 0.60, Tolerance: ratioTolerance, Models: []Measured{{Value: levels[1]}}},
			Check{ID: "suv-min", Quantity: "smallest of SUV's geomean runtime reductions over UVM at 15, 30, 50%", Paper: 0.44, Tolerance: ratioTolerance, Models: []Measured{{Value: lo}}},
			Check{ID: "suv-max", Quantity: "largest of SUV's geomean runtime reductions over UVM at 15, 30, 50%", Paper: 0.74, Tolerance: ratioTolerance, Models: []Measured{{Value: hi}}})
		// UVM thrashes on FW, MVT and FDT at every level: a manifold
		// slowdown over zero oversubscription (Section VI-A).
		for _, w := range []string{"floydwarshall", "mvt", "fdtd"} {
			if !slices.Contains(ws, w) {
				continue
			}
			thrash, n := 0.0, 0
			for _, r := range SUVLevels {
				if v := share(cycles(p.spec(w, PolicyUM, r)), cycles(p.spec(w, PolicyUM, SUVNoOversub))); !math.IsNaN(v) {
					n++
					if v >= 2 {
						thrash++
					}
				}
			}
			m := math.NaN()
			if n == len(SUVLevels) {
				m = thrash / float64(n)
			}
			checks = append(checks, Check{ID: "suv-thrash-" + w, Quantity: "fraction of levels at which UVM runs " + w + " at least 2x slower than without oversubscription", Paper: 1, Tolerance: 0, Models: []Measured{{Value: m}}})
		}
	case "suv-baselines":
		r := SUVBaselineLevel
		checks = append(checks,
			Check{ID: "suv-sc", Quantity: "SUV's geomean runtime reduction over SC at 50%", Paper: 0.40, Tolerance: ratioTolerance, Models: []Measured{{Value: reduction(PolicySUV, PolicySC, r, r, cycles)}}},
			Check{ID: "suv-ac", Quantity: "SUV's geomean runtime reduction over AC at 50%", Paper: 0.43, Tolerance: ratioTolerance, Models: []Measured{{Value: reduction(PolicySUV, PolicyAC, r, r, cycles)}}},
			Check{ID: "suv-sc-pcie", Quantity: "SUV's geomean PCIe traffic reduction over SC at 50%", Paper: 0.81, Tolerance: ratioTolerance, Models: []Measured{{Value: reduction(PolicySUV, PolicySC, r, r, l.pcie)}}},
			Check{ID: "suv-ac-pcie", Quantity: "SUV's geomean PCIe traffic reduction over AC at 50%", Paper: 0.77, Tolerance: ratioTolerance, Models: []Measured{{Value: reduction(PolicySUV, PolicyAC, r, r, l.pcie)}}})
	case "suv-nooversub":
		checks = append(checks, Check{ID: "suv-0", Quantity: "SUV's geomean runtime reduction over UVM without oversubscription", Paper: 0.20, Tolerance: ratioTolerance,
			Models: []Measured{{Value: reduction(PolicySUV, PolicyUM, SUVNoOversub, SUVNoOversub, cycles)}}})
	}
	return checks
}

// suvCheckNotes are the validation rows as figure notes.
func suvCheckNotes(checks []Check) []string {
	var notes []string
	for i := range checks {
		c := &checks[i]
		model := "not measured"
		if v := c.Models[0].Value; !math.IsNaN(v) {
			model = formatCheck(v)
		}
		notes = append(notes, fmt.Sprintf("validation %s: %s: model %s, paper %s (%s)", c.ID, c.Quantity, model, formatCheck(c.Paper), c.Status(0)))
	}
	return notes
}
