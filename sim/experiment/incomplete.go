package experiment

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// The incomplete-pages study (Shen et al., NPC 2018, Figure 2): on the
// paper's GTX 480 (preset gtx480) with 2 MB pages and no oversubscription,
// each workload's execution time under complete (paged memory, whole 2 MB
// pages) and incomplete (range migration) normalised to the ideal
// copy+execute reference, at 16 and 32 GB/s; and, at 16 GB/s on the
// ISPASS-2009 workloads, incomplete under a sweep of the host handling
// latency and of the merge gap threshold.
const (
	IncompleteName = "incomplete"

	PolicyIncomplete  = "incomplete"
	PolicyComplete    = "complete"
	PolicyCopyExecute = "copy-execute"
)

// Sweep points: the handling latency (the paper gives none; 45 us is the
// UM fault latency) and the merge gap (0: only touching ranges merge).
var (
	IncompleteBandwidths = []float64{16, 32}
	IncompleteHandlingUs = []float64{0, 1, 5, 20, 45}
	IncompleteGapBytes   = []int{0, 1024, 4096, 16384, 65536}
)

// incompleteWorkloads are the study's workloads: the six ISPASS-2009
// benchmarks the paper ran, then the run's list (the nine by default);
// a list that names an ISPASS-2009 benchmark itself is run as given.
func incompleteWorkloads(p Params) []string {
	ispass := workload.ISPASSNames()
	for _, w := range p.Workloads {
		if slices.Contains(ispass, w) {
			return p.Workloads
		}
	}
	if slices.Equal(p.Workloads, QuickWorkloads) {
		return p.Workloads
	}
	return append(ispass, p.Workloads...)
}

// sweepWorkloads are the ISPASS-2009 workloads of the study's list.
func sweepWorkloads(p Params) []string {
	var ws []string
	for _, w := range incompleteWorkloads(p) {
		if slices.Contains(workload.ISPASSNames(), w) {
			ws = append(ws, w)
		}
	}
	return ws
}

func (p Params) incompleteSpec(w, pol string, gbs float64, sets ...string) Spec {
	return p.spec(w, pol, 100, append([]string{"run.preset=gtx480", "run.page_size=2MB",
		"pcie.bandwidth_gbs=" + strconv.FormatFloat(gbs, 'g', -1, 64)}, sets...)...)
}

func handlingSet(us float64) string {
	return "incomplete.handling_us=" + strconv.FormatFloat(us, 'g', -1, 64)
}

func gapSet(b int) string { return "incomplete.merge_gap_bytes=" + strconv.Itoa(b) }

func incompleteRegistered(p Params) bool {
	return p.has(PolicyIncomplete) && p.has(PolicyComplete) && p.has(PolicyCopyExecute)
}

func incompleteSpecs(p Params) []Spec {
	if !incompleteRegistered(p) {
		return nil
	}
	var specs []Spec
	for _, w := range incompleteWorkloads(p) {
		for _, gbs := range IncompleteBandwidths {
			for _, pol := range []string{PolicyCopyExecute, PolicyComplete, PolicyIncomplete} {
				specs = append(specs, p.incompleteSpec(w, pol, gbs))
			}
		}
	}
	for _, w := range sweepWorkloads(p) {
		for _, us := range IncompleteHandlingUs {
			specs = append(specs, p.incompleteSpec(w, PolicyIncomplete, 16, handlingSet(us)))
		}
		for _, b := range IncompleteGapBytes {
			specs = append(specs, p.incompleteSpec(w, PolicyIncomplete, 16, gapSet(b)))
		}
	}
	return specs
}

func bandwidthTitle(gbs float64) string { return strconv.FormatFloat(gbs, 'g', -1, 64) + " GB/s" }

// Panel titles of the sweeps.
const (
	handlingPanel = "incomplete, host handling latency (16 GB/s)"
	gapPanel      = "incomplete, merge gap threshold (16 GB/s)"
)

func incompleteBuild(p Params, l Lookup) Figure {
	fig := Figure{ID: IncompleteName, Title: "Execution time normalised to ideal copy+execute (incomplete-pages Fig. 2)",
		YLabel: "execution time / copy+execute (lower is better)", Reference: "copy+execute"}
	if !incompleteRegistered(p) {
		fig.Notes = append(fig.Notes, notRegistered(p, PolicyIncomplete))
		return fig
	}
	ws := incompleteWorkloads(p)
	for _, gbs := range IncompleteBandwidths {
		var series []Series
		for _, pol := range []string{PolicyComplete, PolicyIncomplete} {
			s := Series{Name: pol}
			for _, w := range ws {
				s.Values = append(s.Values, Ratio(l.cycles(p.incompleteSpec(w, pol, gbs)), l.cycles(p.incompleteSpec(w, PolicyCopyExecute, gbs))))
			}
			series = append(series, s)
		}
		fig.Panels = append(fig.Panels, withGeomean(&fig, bandwidthTitle(gbs), ws, series))
	}
	sw := sweepWorkloads(p)
	if len(sw) == 0 {
		return fig
	}
	sweep := func(title string, names []string, sets []string) {
		var series []Series
		for i, set := range sets {
			s := Series{Name: names[i]}
			for _, w := range sw {
				s.Values = append(s.Values, Ratio(l.cycles(p.incompleteSpec(w, PolicyIncomplete, 16, set)), l.cycles(p.incompleteSpec(w, PolicyCopyExecute, 16))))
			}
			series = append(series, s)
		}
		fig.Panels = append(fig.Panels, withGeomean(&fig, title, sw, series))
	}
	var names, sets []string
	for _, us := range IncompleteHandlingUs {
		names, sets = append(names, strconv.FormatFloat(us, 'g', -1, 64)+" us"), append(sets, handlingSet(us))
	}
	sweep(handlingPanel, names, sets)
	names, sets = nil, nil
	for _, b := range IncompleteGapBytes {
		names, sets = append(names, strconv.Itoa(b/1024)+" KB"), append(sets, gapSet(b))
	}
	sweep(gapPanel, names, sets)
	return fig
}

// I1's tolerances: the incomplete-pages paper is a different simulator
// (GPGPU-Sim 3.x) whose absolute slowdown of complete depends on its fault
// latency and input sizes; what must hold is the ordering (complete >>
// copy+execute > incomplete) and the order of magnitude, so complete's
// slowdown passes within a factor of ten below to two above (|m/p - 1| <=
// 0.9 reads as 8.2x..157x), incomplete's speedup within ratioTolerance.
const i1MagnitudeTolerance = 0.9

// incompleteRows are the I1 rows, read from the incomplete figure's 16
// GB/s geomeans (copy+execute = 1).
func incompleteRows(Params) []Row {
	const panel = "16 GB/s"
	return []Row{
		{ID: "I1", Quantity: "complete (2 MB pages, whole page on first touch) slowdown versus ideal copy+execute, 16 GB/s, geomean", Paper: 82.43, Tolerance: i1MagnitudeTolerance,
			Measure: func(v *View) (float64, string) { return v.value(IncompleteName, panel, GeomeanGroup, PolicyComplete) },
			Explain: func(v *View, _ float64) string { return incompleteWhy(v.p, v.l, true) }},
		{ID: "I1", Quantity: "incomplete pages speedup versus ideal copy+execute, 16 GB/s, geomean", Paper: 1.36, Tolerance: ratioTolerance,
			Measure: func(v *View) (float64, string) {
				x, why := v.value(IncompleteName, panel, GeomeanGroup, PolicyIncomplete)
				return 1 / x, why
			},
			Explain: func(v *View, _ float64) string { return incompleteWhy(v.p, v.l, false) }},
	}
}

// incompleteWhy explains an I1 difference from the 16 GB/s runs: the
// bytes the scheme migrates against those copy+execute copies, its
// latencies taken one after another as a share of its time, and the share
// of copy+execute's time its kernels take (the rest is copy they do not
// cover).
func incompleteWhy(p Params, l Lookup, complete bool) string {
	var moved, latency, reqs, kernel []float64
	var us float64
	for _, r := range p.incompleteRuns(l, 16) {
		if !r.ok() {
			continue
		}
		o, lat := &r.inc.Result, r.handlUs
		if complete {
			o, lat = &r.comp.Result, r.faultUs
		}
		us = lat
		ce := &r.ce.Result
		moved = append(moved, float64(o.MigratedBytes)/math.Max(float64(ce.PCIeH2DBytes), 1))
		reqs = append(reqs, float64(o.MigrationRequests))
		latency = append(latency, latencyShare(o.MigrationRequests, lat, o))
		kernel = append(kernel, float64(ce.TimelineCycles)/float64(ce.Cycles))
	}
	if len(moved) == 0 {
		return "difference not explained: the 16 GB/s runs are missing"
	}
	if complete {
		return fmt.Sprintf("complete migrates %.2fx the bytes copy+execute copies (geomean: whole 2 MB pages, each allocation on pages of its own) in %.0f faults per workload on average; "+
			"their %g us latencies, one after another, are %s of its time (geomean); copy+execute's kernels take %s of its time (geomean)",
			geomeanOf(moved), average(reqs), us, mdPercent(geomeanOf(latency)), mdPercent(geomeanOf(kernel)))
	}
	saves := "so range migration saves little transfer"
	if m := geomeanOf(moved); m < 0.9 {
		saves = fmt.Sprintf("so range migration saves %s of the transfer", mdPercent(1-m))
	}
	return fmt.Sprintf("incomplete migrates %s of the bytes copy+execute copies (geomean), %s, in %.0f requests per workload on average; "+
		"their %g us handling latencies, one after another, are %s of its time (geomean); copy+execute's kernels take %s of its time (geomean), "+
		"the rest is copy no kernel waits for under ideal overlap, where incomplete's kernels wait for each range they miss",
		mdPercent(geomeanOf(moved)), saves, average(reqs), us, mdPercent(geomeanOf(latency)), mdPercent(geomeanOf(kernel)))
}

// The paper's ordering at 16 GB/s, slowest first.
var incompletePaperOrder = []string{PolicyComplete, PolicyCopyExecute, PolicyIncomplete}

// incompleteRun is one workload's three runs at one bandwidth.
type incompleteRun struct {
	workload         string
	ce, comp, inc    *Outcome
	faultUs, handlUs float64 // complete's fault latency, incomplete's handling latency
}

func completed(o *Outcome) bool { return o != nil && o.Err == nil && o.Result.Cycles > 0 }

func (r *incompleteRun) ok() bool { return completed(r.ce) && completed(r.comp) && completed(r.inc) }

func (p Params) incompleteRuns(l Lookup, gbs float64) []incompleteRun {
	var runs []incompleteRun
	for _, w := range incompleteWorkloads(p) {
		r := incompleteRun{workload: w, ce: l(p.incompleteSpec(w, PolicyCopyExecute, gbs)),
			comp: l(p.incompleteSpec(w, PolicyComplete, gbs)), inc: l(p.incompleteSpec(w, PolicyIncomplete, gbs))}
		if cfg, err := p.incompleteSpec(w, PolicyIncomplete, gbs).Config(config.Default()); err == nil {
			r.faultUs, r.handlUs = cfg.UM.FaultLatencyUs, cfg.Incomplete.HandlingUs
		}
		runs = append(runs, r)
	}
	return runs
}

// latencyShare is us microseconds n times over the run's cycles.
func latencyShare(n uint64, us float64, r *system.Result) float64 {
	return float64(n) * us * float64(r.ClockMHz) / float64(r.Cycles)
}

// ordering names the three schemes slowest first from their times over
// copy+execute.
func ordering(complete, incomplete float64) []string {
	o := []string{PolicyComplete, PolicyCopyExecute, PolicyIncomplete}
	t := map[string]float64{PolicyComplete: complete, PolicyCopyExecute: 1, PolicyIncomplete: incomplete}
	slices.SortStableFunc(o, func(a, b string) int { return cmp.Compare(t[b], t[a]) })
	return o
}

func mdValue(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func mdPercent(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(100*v, 'f', 0, 64) + "%"
}

func average(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func geomeanOf(v []float64) float64 { g, _ := Geomean(v); return g }

// listOrNone joins names, or says none.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// specLabel names a spec of the study briefly: policy, bandwidth and the
// swept key.
func specLabel(s Spec) string {
	label := []string{s.Policy}
	for _, set := range s.Sets[2:] {
		k, v, _ := strings.Cut(set, "=")
		switch k {
		case "pcie.bandwidth_gbs":
			label = append(label, v+" GB/s")
		default:
			label = append(label, strings.TrimPrefix(k, "incomplete.")+"="+v)
		}
	}
	return strings.Join(label, " ")
}

// WriteIncompleteDoc writes the incomplete experiment as Markdown from the
// outcomes l holds: which runs it has, the Fig. 2 table with each
// workload's ordering, the I1 rows, the measured quantities behind the
// ordering, and the sweeps.
func WriteIncompleteDoc(w io.Writer, p Params, l Lookup) error {
	var b strings.Builder
	fig := incompleteBuild(p, l)
	specs := incompleteSpecs(p)
	seen, stored := map[string]bool{}, 0
	var missing []string
	for _, s := range specs {
		id := s.Key()
		if cfg, err := s.Config(config.Default()); err == nil {
			id = ConfigID(&cfg)
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		if completed(l(s)) {
			stored++
		} else {
			missing = append(missing, s.Workload+" "+specLabel(s))
		}
	}
	fmt.Fprintf(&b, "Generated by `uvmsim experiment incomplete` over %s at scale %g, seed %d (preset gtx480, `run.page_size = \"2MB\"`) from %d of its %d runs.",
		strings.Join(incompleteWorkloads(p), ", "), p.Scale, p.Seed, stored, len(seen))
	if len(missing) > 0 {
		fmt.Fprintf(&b, " Not run (n/a below, and left out of the geomeans): %s.", strings.Join(missing, "; "))
	}
	b.WriteString("\n\n")
	if !incompleteRegistered(p) || len(fig.Panels) < 2 {
		b.WriteString(strings.Join(fig.Notes, "\n") + "\n")
		_, err := io.WriteString(w, b.String())
		return err
	}

	// Fig. 2 with the ordering of each workload at both bandwidths.
	b.WriteString("Execution time over copy+execute (Fig. 2; lower is better, copy+execute = 1), and the schemes slowest first:\n\n")
	b.WriteString("| workload | complete 16 GB/s | incomplete 16 GB/s | complete 32 GB/s | incomplete 32 GB/s | slowest first, 16 GB/s | slowest first, 32 GB/s |\n|---|---:|---:|---:|---:|---|---|\n")
	holds := map[float64][]string{}
	for _, g := range fig.Panels[0].Groups {
		fmt.Fprintf(&b, "| %s |", g)
		var orders []string
		for _, pan := range fig.Panels[:2] {
			c, i := pan.Value(PolicyComplete, g), pan.Value(PolicyIncomplete, g)
			fmt.Fprintf(&b, " %s | %s |", mdValue(c), mdValue(i))
			if math.IsNaN(c) || math.IsNaN(i) {
				orders = append(orders, "n/a")
				continue
			}
			o := ordering(c, i)
			orders = append(orders, strings.Join(o, " > "))
			if g != GeomeanGroup && slices.Equal(o, incompletePaperOrder) {
				gbs, _ := strconv.ParseFloat(strings.TrimSuffix(pan.Title, " GB/s"), 64)
				holds[gbs] = append(holds[gbs], g)
			}
		}
		fmt.Fprintf(&b, " %s |\n", strings.Join(orders, " | "))
	}
	for _, n := range fig.Notes {
		fmt.Fprintf(&b, "\nNote: %s.\n", n)
	}

	// I1, as the validation table measures it.
	v := &View{p: p, figs: []Figure{fig}, l: l}
	b.WriteString("\nI1 (the validation table's rows, read from the 16 GB/s geomeans; the paper's figures are on its six ISPASS benchmarks):\n\n")
	b.WriteString("| result | paper | model | tolerance | status |\n|---|---:|---:|---:|---|\n")
	var whys []string
	for _, r := range incompleteRows(p) {
		x, why := r.Measure(v)
		c := Check{ID: r.ID, Quantity: r.Quantity, Paper: r.Paper, Tolerance: r.Tolerance, Models: []Measured{{Value: x, Missing: why}}}
		if c.needsWhy(0) && r.Explain != nil {
			c.Models[0].Why = r.Explain(v, x)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | ±%.0f%% | %s |\n", c.Quantity, formatCheck(c.Paper), formatCheck(x), c.Tolerance*100, c.Status(0))
		if e := c.Explanation(0); e != "" {
			whys = append(whys, e)
		}
	}
	for _, e := range whys {
		fmt.Fprintf(&b, "\n- %s\n", e)
	}

	// What the 16 GB/s runs measure.
	const gbs = 16.0
	runs := p.incompleteRuns(l, gbs)
	b.WriteString("\nWhat the 16 GB/s runs measure: the managed bytes copy+execute copies; the share of copy+execute's time its kernels take (T_exec / T; " +
		"the rest is copy the kernels do not cover); the bytes each scheme migrates over the bytes copied; complete's faults and the share of its time " +
		"their latencies take one after another; incomplete's migration requests (and the misses merged into a pending one) and the share of its time their handling " +
		"latencies and their transfers at the link's bandwidth take, each counted one after another:\n\n")
	b.WriteString("| workload | copied MB | kernel share of copy+execute | complete moved / copied | complete faults | complete fault share | incomplete moved / copied | incomplete requests (misses merged) | incomplete handling share | incomplete transfer share |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var kernel, compMoved, compShare, faults, incMoved, incHandling, incTransfer, reqs []float64
	var slower, slowerKernel, slowerMoved, slowerHandling []float64
	var slowerNames, fasterNames, copyBound []string
	// complete's slowdown per workload, and the workloads where incomplete
	// is slower than complete with their latencies one after another.
	type slowdown struct {
		workload    string
		time, moved float64
	}
	var compSlow []slowdown
	var behind []string
	var behindMoved, behindFaultUs, behindHandlingUs []float64
	for i := range runs {
		r := &runs[i]
		if !r.ok() {
			fmt.Fprintf(&b, "| %s | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |\n", r.workload)
			continue
		}
		ce, comp, inc := &r.ce.Result, &r.comp.Result, &r.inc.Result
		copied := math.Max(float64(ce.PCIeH2DBytes), 1)
		k := float64(ce.TimelineCycles) / float64(ce.Cycles)
		cm, cs := float64(comp.MigratedBytes)/copied, latencyShare(comp.MigrationRequests, r.faultUs, comp)
		im, ih := float64(inc.MigratedBytes)/copied, latencyShare(inc.MigrationRequests, r.handlUs, inc)
		it := float64(inc.MigratedBytes) / (gbs * 1e3 / float64(inc.ClockMHz)) / float64(inc.Cycles)
		kernel, compMoved, compShare = append(kernel, k), append(compMoved, cm), append(compShare, cs)
		incMoved, incHandling, incTransfer = append(incMoved, im), append(incHandling, ih), append(incTransfer, it)
		reqs, faults = append(reqs, float64(inc.MigrationRequests)), append(faults, float64(comp.MigrationRequests))
		fmt.Fprintf(&b, "| %s | %.2f | %s | %s | %d | %s | %s | %d (%d) | %s | %s |\n", r.workload, float64(ce.PCIeH2DBytes)/(1<<20), mdPercent(k),
			mdValue(cm), comp.MigrationRequests, mdPercent(cs), mdValue(im), inc.MigrationRequests, inc.MergedRequests, mdPercent(ih), mdPercent(it))
		compSlow = append(compSlow, slowdown{r.workload, float64(comp.Cycles) / float64(ce.Cycles), cm})
		if inc.Cycles > comp.Cycles {
			behind, behindMoved = append(behind, r.workload), append(behindMoved, cm)
			behindFaultUs = append(behindFaultUs, float64(comp.MigrationRequests)*r.faultUs)
			behindHandlingUs = append(behindHandlingUs, float64(inc.MigrationRequests)*r.handlUs)
		}
		if x := float64(inc.Cycles) / float64(ce.Cycles); x > 1 {
			slower, slowerKernel, slowerMoved, slowerHandling = append(slower, x), append(slowerKernel, k), append(slowerMoved, im), append(slowerHandling, ih)
			slowerNames = append(slowerNames, r.workload)
			if k < 1 && im >= 0.95 {
				copyBound = append(copyBound, r.workload)
			}
		} else {
			fasterNames = append(fasterNames, r.workload)
		}
	}
	if len(kernel) > 0 {
		b.WriteString("\nWhat the runs say:\n\n")
		n := len(kernel)
		fmt.Fprintf(&b, "- The paper's ordering, complete > copy+execute > incomplete, holds at 16 GB/s on %d of %d workloads (%s) and at 32 GB/s on %d (%s).\n",
			len(holds[16]), n, listOrNone(holds[16]), len(holds[32]), listOrNone(holds[32]))
		fmt.Fprintf(&b, "- complete migrates %.2fx the bytes copy+execute copies (geomean: whole 2 MB pages, each allocation on pages of its own) in %.0f faults per workload on average; "+
			"their latencies, one after another, are %s of its time (geomean).\n", geomeanOf(compMoved), average(faults), mdPercent(geomeanOf(compShare)))
		slices.SortStableFunc(compSlow, func(a, c slowdown) int { return cmp.Compare(c.time, a.time) })
		var most, least []string
		for i, s := range compSlow {
			d := fmt.Sprintf("%s (%.2fx the bytes, %.2fx the time)", s.workload, s.moved, s.time)
			if i < 2 {
				most = append(most, d)
			} else if i >= len(compSlow)-2 {
				least = append(least, d)
			}
		}
		fmt.Fprintf(&b, "- complete's slowdown follows the bytes it migrates per byte copied: it is largest on %s and smallest on %s.\n",
			strings.Join(most, " and "), strings.Join(least, " and "))
		if len(behind) > 0 {
			fmt.Fprintf(&b, "- incomplete is slower than complete on %d of %d workloads (%s): there complete migrates %.2fx the bytes copied (geomean), "+
				"so whole pages cost little extra, and its faults' latencies add up to %.0f us (geomean) where incomplete's requests' handling latencies add up to %.0f us.\n",
				len(behind), n, strings.Join(behind, ", "), geomeanOf(behindMoved), geomeanOf(behindFaultUs), geomeanOf(behindHandlingUs))
		}
		fmt.Fprintf(&b, "- incomplete migrates %s of the bytes copy+execute copies (geomean) in %.0f requests per workload on average; "+
			"their handling latencies are %s of its time and their transfers %s (geomean); the kernels take %s of copy+execute's time (geomean).\n",
			mdPercent(geomeanOf(incMoved)), average(reqs), mdPercent(geomeanOf(incHandling)), mdPercent(geomeanOf(incTransfer)), mdPercent(geomeanOf(kernel)))
		if len(slower) > 0 {
			fmt.Fprintf(&b, "- incomplete is slower than copy+execute on %d of %d workloads (%s; %.2fx geomean) and faster on %s. "+
				"On the slower ones it migrates %s of the bytes copy+execute copies (geomean), copy+execute's kernels take %s of its time (geomean), "+
				"and incomplete's handling latencies alone are %s of its time (geomean). "+
				"On %d of them (%s) copy+execute is bound by its copy (its kernels take less than all its time) and incomplete migrates at least 95%% of its bytes: "+
				"the same bytes over the same link, sent on demand after a handling latency each, cannot arrive sooner than one ideal stream overlapped with the kernels.\n",
				len(slower), n, strings.Join(slowerNames, ", "), geomeanOf(slower), listOrNone(fasterNames),
				mdPercent(geomeanOf(slowerMoved)), mdPercent(geomeanOf(slowerKernel)), mdPercent(geomeanOf(slowerHandling)),
				len(copyBound), listOrNone(copyBound))
		}
	}

	// The sweeps.
	for _, pan := range fig.Panels[2:] {
		fmt.Fprintf(&b, "\n%s, over copy+execute at 16 GB/s:\n\n| workload |", strings.ToUpper(pan.Title[:1])+pan.Title[1:])
		for _, s := range pan.Series {
			fmt.Fprintf(&b, " %s |", s.Name)
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", len(pan.Series)) + "\n")
		for gi, g := range pan.Groups {
			fmt.Fprintf(&b, "| %s |", g)
			for _, s := range pan.Series {
				fmt.Fprintf(&b, " %s |", mdValue(s.Values[gi]))
			}
			b.WriteString("\n")
		}
	}
	if sw := sweepWorkloads(p); len(sw) > 0 {
		b.WriteString("\n")
		b.WriteString(sweepFindings(p, l, fig, sw))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sweepFindings reads the sweeps: how the geomean moves with the handling
// latency, where incomplete beats copy+execute without any, and what the
// merge gap changes in requests and time.
func sweepFindings(p Params, l Lookup, fig Figure, sw []string) string {
	var b strings.Builder
	hp, gp := fig.Panels[2], fig.Panels[3]
	first, last := hp.Series[0], hp.Series[len(hp.Series)-1]
	g := len(hp.Groups) - 1
	var beats, loses []string
	for i, w := range sw {
		switch v := first.Values[i]; {
		case math.IsNaN(v):
		case v < 1:
			beats = append(beats, w)
		default:
			loses = append(loses, w)
		}
	}
	fmt.Fprintf(&b, "- Handling latency: the geomean goes from %s at %s to %s at %s; with no handling latency at all incomplete beats copy+execute on %s and does not on %s.\n",
		mdValue(first.Values[g]), first.Name, mdValue(last.Values[g]), last.Name, listOrNone(beats), listOrNone(loses))
	requests := func(set string) (reqs, merged []float64) {
		for _, w := range sw {
			if o := l(p.incompleteSpec(w, PolicyIncomplete, 16, set)); completed(o) {
				reqs, merged = append(reqs, float64(o.Result.MigrationRequests)), append(merged, float64(o.Result.MergedRequests))
			}
		}
		return reqs, merged
	}
	lo, hi := IncompleteGapBytes[0], IncompleteGapBytes[len(IncompleteGapBytes)-1]
	r0, m0 := requests(gapSet(lo))
	r1, m1 := requests(gapSet(hi))
	fmt.Fprintf(&b, "- Merge gap: the geomean goes from %s at %s to %s at %s; requests per workload from %.0f (%.0f merged) to %.0f (%.0f merged) on average.\n",
		mdValue(gp.Series[0].Values[g]), gp.Series[0].Name, mdValue(gp.Series[len(gp.Series)-1].Values[g]), gp.Series[len(gp.Series)-1].Name,
		average(r0), average(m0), average(r1), average(m1))
	return b.String()
}
