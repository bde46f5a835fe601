package experiment

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/blocks/evict"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// Policy registry names the experiments compare (SPEC 6.4).
const (
	PolicyUM       = "um"
	PolicyUVMSmart = "uvmsmart"
	PolicyAdaptive = "adaptive"
	PolicyUVMMU    = "uvmmu"
)

// Oversubscription ratios in percent of each figure.
var (
	// UVMMU Fig. 1 and Fig. 4: none, 125% and 150%.
	MainRatios = []int{100, 125, 150}
	// UVMMU Fig. 5: the eviction study at 125% and 150%.
	EvictionRatios = []int{125, 150}
	// UVMMU Fig. 6: 100% to 200% in steps of 25%.
	ScalingRatios = []int{100, 125, 150, 175, 200}
	// The migration-latency study: free destinations without
	// oversubscription, swaps at 150%.
	LatencyRatios = []int{100, 150}
)

// FaultLatenciesUs are the UM far-fault handling latencies of UVMMU Fig. 1,
// normalised to the first (50 us).
var FaultLatenciesUs = []float64{50, 40, 30, 20, 10, 0}

// FaultLatencyKey is the configuration key Fig. 1 sweeps.
const FaultLatencyKey = "um.fault_latency_us"

// EvictionKey is the configuration key that selects the UVMMU eviction
// policy for Fig. 5.
const EvictionKey = "uvmmu.eviction"

// EvictionVariants are EvictionKey's values in the figure's order (UVMMU
// Section V-C1), the paper's default first: the others are normalised to it.
// They are the eviction blocks' own names: random is the paper's
// linear-random (the DA's LFSR), seqlocal its sequential-local, tree its
// tree-based.
var EvictionVariants = evict.Names

// Params are what an experiment runs: its workloads and sizes, and the
// policies and eviction variants the build offers (experiments leave out,
// with a note, what is not offered).
type Params struct {
	Workloads []string `json:"workloads"`
	Scale     float64  `json:"scale"`
	Seed      uint64   `json:"seed"`
	Policies  []string `json:"policies"`  // registered policy names (policy.Names)
	Evictions []string `json:"evictions"` // EvictionVariants the configuration accepts
}

func (p Params) has(policy string) bool { return slices.Contains(p.Policies, policy) }

// QuickWorkloads are the workloads of a --quick run: one regular and one
// irregular benchmark (SPEC 7) that finish in seconds at QuickScale.
var QuickWorkloads = []string{"hotspot", "ra"}

// QuickScale is the workload scale of a --quick run: at half the shipped
// sizes hotspot and ra (SPEC 7) have three 2 MB arrays each, so 125% and
// 150% leave 4.8 and 4 MB of GPU memory in 4 KB pages (SPEC 2) and evict.
const QuickScale = 0.5

// DefaultParams are the full-size runs over every built-in workload, or the
// quick smoke-test sizes.
func DefaultParams(quick bool) Params {
	p := Params{Workloads: workload.Names(), Scale: 1, Seed: 1, Policies: policy.Names(), Evictions: EvictionVariantsAvailable()}
	if quick {
		p.Workloads, p.Scale = QuickWorkloads, QuickScale
	}
	return p
}

// Lookup finds the outcome of a spec, or nil when it was not run.
type Lookup func(Spec) *Outcome

// NewLookup indexes outcomes by spec key.
func NewLookup(outcomes []Outcome) Lookup {
	m := make(map[string]*Outcome, len(outcomes))
	for i := range outcomes {
		m[outcomes[i].Spec.Key()] = &outcomes[i]
	}
	return func(s Spec) *Outcome { return m[s.Key()] }
}

// cycles is the run's simulated time, 0 when it was not run or failed.
func (l Lookup) cycles(s Spec) uint64 {
	if o := l(s); o != nil && o.Err == nil {
		return o.Result.Cycles
	}
	return 0
}

// Experiment is one of the paper's studies: the runs it needs and how
// their outcomes become a figure.
type Experiment struct {
	Name  string
	Title string
	Specs func(Params) []Spec
	Build func(Params, Lookup) Figure
	// Doc, when set, writes the experiment as Markdown (<Name>.md beside
	// the figure's CSV), the source of its page's generated section.
	Doc func(io.Writer, Params, Lookup) error
}

// Experiments lists the figure experiments in the paper's order.
func Experiments() []Experiment {
	return []Experiment{
		{Name: "fig1", Title: "UM execution time versus far-fault handling latency (UVMMU Fig. 1)", Specs: fig1Specs, Build: fig1Build},
		{Name: "fig4", Title: "Speedup of UVMSmart and UVMMU over UM (UVMMU Fig. 4)", Specs: fig4Specs, Build: fig4Build},
		{Name: "fig5", Title: "UVMMU execution time under each eviction policy (UVMMU Fig. 5)", Specs: fig5Specs, Build: fig5Build},
		{Name: "fig6", Title: "Execution time versus oversubscription ratio (UVMMU Fig. 6)", Specs: fig6Specs, Build: fig6Build},
		{Name: "migration-latency", Title: "UVMMU migration latency, free destination versus swap (UVMMU Section V-A)", Specs: latencySpecs, Build: latencyBuild},
		{Name: IncompleteName, Title: "Incomplete pages versus complete 2 MB pages, normalised to copy+execute (incomplete-pages Fig. 2)", Specs: incompleteSpecs, Build: incompleteBuild, Doc: WriteIncompleteDoc},
	}
}

// Names lists the experiment names uvmsim experiment accepts: the figure
// experiments, validate, then SUV's (which validate does not run).
func Names() []string {
	var n []string
	for _, e := range Experiments() {
		n = append(n, e.Name)
	}
	n = append(n, ValidateName)
	for _, e := range SUVExperiments() {
		n = append(n, e.Name)
	}
	return n
}

// Find returns the named figure experiment.
func Find(name string) (Experiment, error) {
	for _, e := range append(Experiments(), SUVExperiments()...) {
		if e.Name == name {
			return e, nil
		}
	}
	return Experiment{}, fmt.Errorf("experiment %q unknown; allowed: %s", name, strings.Join(Names(), ", "))
}

func (p Params) spec(wl, pol string, ratio int, sets ...string) Spec {
	return Spec{Workload: wl, Policy: pol, OversubPct: ratio, Scale: p.Scale, Seed: p.Seed, Sets: sets}
}

func pct(r int) string { return strconv.Itoa(r) + "%" }

func ratioTitle(r int) string {
	if r == 100 {
		return "no oversubscription"
	}
	return pct(r) + " oversubscription"
}

func notRegistered(p Params, name string) string {
	return fmt.Sprintf("policy %s is not registered (registered: %s), so it was not run", name, strings.Join(p.Policies, ", "))
}

func faultSet(us float64) string {
	return FaultLatencyKey + "=" + strconv.FormatFloat(us, 'g', -1, 64)
}

func fig1Specs(p Params) []Spec {
	if !p.has(PolicyUM) {
		return nil
	}
	var specs []Spec
	for _, w := range p.Workloads {
		for _, r := range MainRatios {
			for _, us := range FaultLatenciesUs {
				specs = append(specs, p.spec(w, PolicyUM, r, faultSet(us)))
			}
		}
	}
	return specs
}

func fig1Build(p Params, l Lookup) Figure {
	fig := Figure{ID: "fig1", Title: "UM execution time with varying far-fault handling latency",
		YLabel: "execution time normalised to 50 us", Reference: "50 us"}
	if !p.has(PolicyUM) {
		fig.Notes = append(fig.Notes, notRegistered(p, PolicyUM))
		return fig
	}
	for _, r := range MainRatios {
		var series []Series
		for _, us := range FaultLatenciesUs {
			s := Series{Name: strconv.FormatFloat(us, 'g', -1, 64) + " us"}
			for _, w := range p.Workloads {
				s.Values = append(s.Values, Ratio(l.cycles(p.spec(w, PolicyUM, r, faultSet(us))), l.cycles(p.spec(w, PolicyUM, r, faultSet(FaultLatenciesUs[0])))))
			}
			series = append(series, s)
		}
		fig.Panels = append(fig.Panels, withGeomean(&fig, ratioTitle(r), p.Workloads, series))
	}
	return fig
}

// fig4Policies are the policies of Fig. 4 that are registered; UM is the
// baseline and must be.
func fig4Policies(p Params) []string {
	var ps []string
	for _, n := range []string{PolicyUM, PolicyUVMSmart, PolicyUVMMU} {
		if p.has(n) {
			ps = append(ps, n)
		}
	}
	return ps
}

func fig4Specs(p Params) []Spec {
	if !p.has(PolicyUM) {
		return nil
	}
	return Grid(p.Workloads, fig4Policies(p), MainRatios, p.Scale, p.Seed, nil)
}

// displayName is a policy's name as the paper writes it.
func displayName(pol string) string {
	switch pol {
	case PolicyUM:
		return "UM"
	case PolicyUVMSmart:
		return "UVMSmart"
	case PolicyUVMMU:
		return "UVMMU"
	}
	return pol
}

func fig4Build(p Params, l Lookup) Figure {
	fig := Figure{ID: "fig4", Title: "Speedup over NVIDIA UM", YLabel: "speedup over UM", Reference: displayName(PolicyUM)}
	for _, n := range []string{PolicyUM, PolicyUVMSmart, PolicyUVMMU} {
		if !p.has(n) {
			fig.Notes = append(fig.Notes, notRegistered(p, n))
		}
	}
	if !p.has(PolicyUM) {
		return fig
	}
	for _, r := range MainRatios {
		var series []Series
		for _, pol := range fig4Policies(p) {
			s := Series{Name: displayName(pol)}
			for _, w := range p.Workloads {
				s.Values = append(s.Values, Ratio(l.cycles(p.spec(w, PolicyUM, r)), l.cycles(p.spec(w, pol, r))))
			}
			series = append(series, s)
		}
		fig.Panels = append(fig.Panels, withGeomean(&fig, ratioTitle(r), p.Workloads, series))
	}
	return fig
}

// EvictionVariantsAvailable are the EvictionVariants the configuration
// accepts as EvictionKey values.
func EvictionVariantsAvailable() []string {
	var vs []string
	for _, v := range EvictionVariants {
		cfg := config.Default()
		if cfg.Set(EvictionKey+"="+v) == nil && cfg.Validate() == nil {
			vs = append(vs, v)
		}
	}
	return vs
}

// fig5Ready reports whether Fig. 5 can run, and why not.
func fig5Ready(p Params) (bool, string) {
	if !p.has(PolicyUVMMU) {
		return false, notRegistered(p, PolicyUVMMU)
	}
	if !slices.Contains(p.Evictions, EvictionVariants[0]) || len(p.Evictions) < 2 {
		return false, fmt.Sprintf("the configuration key %s does not offer %s and at least one other of %s, so the eviction study was not run",
			EvictionKey, EvictionVariants[0], strings.Join(EvictionVariants[1:], ", "))
	}
	return true, ""
}

func fig5Specs(p Params) []Spec {
	if ok, _ := fig5Ready(p); !ok {
		return nil
	}
	var specs []Spec
	for _, w := range p.Workloads {
		for _, r := range EvictionRatios {
			for _, v := range p.Evictions {
				specs = append(specs, p.spec(w, PolicyUVMMU, r, EvictionKey+"="+v))
			}
		}
	}
	return specs
}

func fig5Build(p Params, l Lookup) Figure {
	fig := Figure{ID: "fig5", Title: "UVMMU execution time with different eviction policies",
		YLabel: "execution time normalised to " + EvictionVariants[0], Reference: EvictionVariants[0]}
	if ok, why := fig5Ready(p); !ok {
		fig.Notes = append(fig.Notes, why)
		return fig
	}
	vs := p.Evictions
	for _, v := range EvictionVariants {
		if !slices.Contains(vs, v) {
			fig.Notes = append(fig.Notes, fmt.Sprintf("%s=%s is not offered by the configuration, so it was not run", EvictionKey, v))
		}
	}
	for _, r := range EvictionRatios {
		var series []Series
		for _, v := range vs {
			s := Series{Name: v}
			for _, w := range p.Workloads {
				s.Values = append(s.Values, Ratio(l.cycles(p.spec(w, PolicyUVMMU, r, EvictionKey+"="+v)), l.cycles(p.spec(w, PolicyUVMMU, r, EvictionKey+"="+vs[0]))))
			}
			series = append(series, s)
		}
		fig.Panels = append(fig.Panels, withGeomean(&fig, ratioTitle(r), p.Workloads, series))
	}
	return fig
}

// fig6Policies are the registered policies of Fig. 6: UVMMU, and UVMSmart
// for the ratios where it completes.
func fig6Policies(p Params) []string {
	var ps []string
	for _, n := range []string{PolicyUVMMU, PolicyUVMSmart} {
		if p.has(n) {
			ps = append(ps, n)
		}
	}
	return ps
}

func fig6Specs(p Params) []Spec {
	return Grid(p.Workloads, fig6Policies(p), ScalingRatios, p.Scale, p.Seed, nil)
}

func fig6Build(p Params, l Lookup) Figure {
	fig := Figure{ID: "fig6", Title: "Execution time with different oversubscription ratios",
		YLabel: "execution time / no oversubscription", XLabel: "oversubscription ratio", Lines: true, Reference: pct(ScalingRatios[0])}
	for _, n := range []string{PolicyUVMMU, PolicyUVMSmart} {
		if !p.has(n) {
			fig.Notes = append(fig.Notes, notRegistered(p, n))
		}
	}
	for _, pol := range fig6Policies(p) {
		var series []Series
		for _, r := range ScalingRatios {
			s := Series{Name: pct(r)}
			for _, w := range p.Workloads {
				s.Values = append(s.Values, Ratio(l.cycles(p.spec(w, pol, r)), l.cycles(p.spec(w, pol, ScalingRatios[0]))))
			}
			series = append(series, s)
		}
		fig.Panels = append(fig.Panels, withGeomean(&fig, displayName(pol), p.Workloads, series))
	}
	return fig
}

func latencySpecs(p Params) []Spec {
	if !p.has(PolicyUVMMU) {
		return nil
	}
	specs := Grid(p.Workloads, []string{PolicyUVMMU}, LatencyRatios, p.Scale, p.Seed, nil)
	for i := range specs {
		specs[i].Latencies = true
	}
	return specs
}

// Latency panel names and the pooled group.
const (
	LatencyFree   = "free destination"
	LatencySwap   = "swap"
	LatencyPooled = "all"
	LatencyCounts = "migrations measured"
	// LatencyBins is the number of histogram bins of the distribution
	// panel, spread from 0 to the pooled 99th percentile.
	LatencyBins = 20
)

func latencyBuild(p Params, l Lookup) Figure {
	fig := Figure{ID: "migration-latency", Title: "UVMMU migration latency", YLabel: "us"}
	if !p.has(PolicyUVMMU) {
		fig.Notes = append(fig.Notes, notRegistered(p, PolicyUVMMU))
		return fig
	}
	clock := 0
	perWorkload := map[string][2][]uint64{}
	var pooled [2][]uint64
	for _, w := range p.Workloads {
		var mine [2][]uint64
		for _, r := range LatencyRatios {
			o := l(p.spec(w, PolicyUVMMU, r))
			if o == nil || o.Err != nil || o.Latencies == nil {
				continue
			}
			clock = o.Latencies.ClockMHz
			mine[0] = append(mine[0], o.Latencies.Free...)
			mine[1] = append(mine[1], o.Latencies.Swap...)
		}
		perWorkload[w] = mine
		pooled[0] = append(pooled[0], mine[0]...)
		pooled[1] = append(pooled[1], mine[1]...)
	}
	if clock == 0 {
		fig.Notes = append(fig.Notes, fmt.Sprintf("no run reported migration latencies: the %s policy must implement experiment.MigrationLatencyRecorder (MigrationLatencies() (free, swap []uint64), cycles per migration)", PolicyUVMMU))
		return fig
	}
	groups := append(append([]string(nil), p.Workloads...), LatencyPooled)
	stats := []struct {
		name string
		get  func(Summary) float64
	}{
		{"min", func(s Summary) float64 { return s.Min }},
		{"p10", func(s Summary) float64 { return s.P10 }},
		{"median", func(s Summary) float64 { return s.P50 }},
		{"mean", func(s Summary) float64 { return s.Mean }},
		{"p90", func(s Summary) float64 { return s.P90 }},
		{"p99", func(s Summary) float64 { return s.P99 }},
	}
	for kind, title := range []string{LatencyFree, LatencySwap} {
		panel := Panel{Title: title + " (us)", Groups: groups}
		sums := make([]Summary, 0, len(groups))
		for _, w := range p.Workloads {
			sums = append(sums, Summarize(perWorkload[w][kind], clock))
		}
		sums = append(sums, Summarize(pooled[kind], clock))
		for _, st := range stats {
			s := Series{Name: st.name}
			for _, sum := range sums {
				s.Values = append(s.Values, st.get(sum))
			}
			panel.Series = append(panel.Series, s)
		}
		fig.Panels = append(fig.Panels, panel)
	}
	counts := Panel{Title: LatencyCounts, YLabel: "migrations", Groups: groups}
	for kind, name := range []string{LatencyFree, LatencySwap} {
		s := Series{Name: name}
		for _, w := range p.Workloads {
			s.Values = append(s.Values, float64(len(perWorkload[w][kind])))
		}
		counts.Series = append(counts.Series, Series{Name: s.Name, Values: append(s.Values, float64(len(pooled[kind])))})
	}
	fig.Panels = append(fig.Panels, counts)
	fig.Panels = append(fig.Panels, latencyDistribution(pooled, clock))
	return fig
}

// latencyDistribution is the pooled histogram of free and swap latencies,
// each as the fraction of its migrations per bin.
func latencyDistribution(pooled [2][]uint64, clock int) Panel {
	top := math.Max(Summarize(pooled[0], clock).P99, Summarize(pooled[1], clock).P99)
	if math.IsNaN(top) || top <= 0 {
		top = math.Max(Summarize(pooled[0], clock).Max, Summarize(pooled[1], clock).Max)
	}
	if math.IsNaN(top) || top <= 0 {
		top = 1
	}
	bin := top / LatencyBins
	panel := Panel{Title: "distribution over all workloads", YLabel: "fraction of migrations"}
	for i := range LatencyBins {
		label := fmt.Sprintf("%.2f-%.2f us", float64(i)*bin, float64(i+1)*bin)
		if i == LatencyBins-1 {
			label = fmt.Sprintf(">%.2f us", float64(i)*bin)
		}
		panel.Groups = append(panel.Groups, label)
	}
	for kind, name := range []string{LatencyFree, LatencySwap} {
		h := Histogram(pooled[kind], clock, bin, top)
		for i := range h {
			if n := len(pooled[kind]); n > 0 {
				h[i] /= float64(n)
			}
		}
		panel.Series = append(panel.Series, Series{Name: name, Values: h})
	}
	return panel
}
