package experiment

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/uvmmu/uvmmu/sim/grit"
	"github.com/uvmmu/uvmmu/sim/multigpu"
)

// A GRIT validation row outside grit.Tolerance, or a threshold ordering
// that breaks, is explained from its runs: which workloads carry the
// geometric mean, and what their counts (GPU page faults, remote accesses,
// NVLink bytes, migrations, replicas, GRIT's decisions) are under the
// scheme and the baseline. The cycles per fault say whether the runs are
// bound by the driver's fault handling: equal cycles per fault in scheme
// and baseline make the speedup the fault ratio.

// gritResult is point p's run on wl, or nil.
func gritResult(recs []GritPointRecord, p GritPoint, wl string) *multigpu.Result {
	for i := range recs {
		if recs[i].Point == p && recs[i].Result.Workload == wl {
			return &recs[i].Result
		}
	}
	return nil
}

// gritPair is one workload's runs of a row's scheme and baseline.
type gritPair struct {
	workload         string
	scheme, baseline *multigpu.Result
	ratio            float64 // speedup, or scheme faults / baseline faults
}

// gritPairs are the workloads both points completed, by ratio ascending.
func gritPairs(recs []GritPointRecord, s, b GritPoint, workloads []string, faults bool) []gritPair {
	var ps []gritPair
	for _, wl := range workloads {
		x, y := gritResult(recs, s, wl), gritResult(recs, b, wl)
		if x == nil || y == nil || x.Cycles == 0 || y.Cycles == 0 {
			continue
		}
		p := gritPair{workload: wl, scheme: x, baseline: y, ratio: float64(y.Cycles) / float64(x.Cycles)}
		if faults {
			p.ratio = float64(gritFaults(*x)) / math.Max(1, float64(gritFaults(*y)))
		}
		ps = append(ps, p)
	}
	slices.SortStableFunc(ps, func(a, c gritPair) int {
		switch {
		case a.ratio < c.ratio:
			return -1
		case a.ratio > c.ratio:
			return 1
		}
		return 0
	})
	return ps
}

// geoMean is the geometric mean of f over ps.
func geoMean(ps []gritPair, f func(gritPair) float64) float64 {
	var s float64
	for _, p := range ps {
		s += math.Log(f(p))
	}
	return math.Exp(s / float64(len(ps)))
}

// remoteShare is the share of a run's accesses that went to remote pages.
func remoteShare(r *multigpu.Result) float64 {
	return float64(r.Total.RemoteAccesses) / math.Max(1, float64(r.Total.LocalAccesses+r.Total.RemoteAccesses))
}

// cyclesPerFault is a run's cycles over its GPU page faults.
func cyclesPerFault(r *multigpu.Result) float64 {
	return float64(r.Cycles) / math.Max(1, float64(gritFaults(*r)))
}

// describePair names one workload's figure and its counts, baseline ->
// scheme.
func describePair(p gritPair, faults bool) string {
	s, b := p.scheme, p.baseline
	fig := fmt.Sprintf("%.2fx", p.ratio)
	if faults {
		fig = fmt.Sprintf("faults x%.2f", p.ratio)
	}
	mb := func(v uint64) string { return fmt.Sprintf("%.1f", float64(v)/(1<<20)) }
	pages := math.Max(1, float64(b.FootprintBytes)/4096)
	out := fmt.Sprintf("%s %s (faults %s -> %s, %.1f -> %.1f per page of the %s-page footprint, protection %s -> %s; remote accesses %.0f%% -> %.0f%%; NVLink MB %s -> %s; migrations %s -> %s; replicas %s -> %s",
		p.workload, fig, thousands(gritFaults(*b)), thousands(gritFaults(*s)),
		float64(gritFaults(*b))/pages, float64(gritFaults(*s))/pages, thousands(uint64(pages)),
		thousands(b.Total.ProtectionFaults), thousands(s.Total.ProtectionFaults),
		100*remoteShare(b), 100*remoteShare(s), mb(b.Total.NVLinkBytes), mb(s.Total.NVLinkBytes),
		thousands(b.Total.Migrations), thousands(s.Total.Migrations), thousands(b.Total.ReplicasMade), thousands(s.Total.ReplicasMade))
	if g := s.Grit; g != nil {
		out += fmt.Sprintf("; GRIT decided %s dup, %s ac, final pages ot/ac/dup %s/%s/%s",
			thousands(g.ToDuplication), thousands(g.ToAccessCounter), thousands(uint64(g.SchemeOnTouch)), thousands(uint64(g.SchemeAccessCntr)), thousands(uint64(g.SchemeDup)))
	}
	return out + ")"
}

// explainGritRow computes why row v's model figure differs from the
// paper's: the geomeans of the fault ratio and of the cycles per fault, the
// two workloads that pull the geomean furthest towards the model's side,
// and the figure without them.
func explainGritRow(v GritValidation, recs []GritPointRecord, s, b GritPoint, workloads []string) string {
	faults := v.Metric == grit.FaultReduction
	ps := gritPairs(recs, s, b, workloads, faults)
	if len(ps) == 0 {
		return ""
	}
	var parts []string
	faultRatio := geoMean(ps, func(p gritPair) float64 {
		return math.Max(1, float64(gritFaults(*p.scheme))) / math.Max(1, float64(gritFaults(*p.baseline)))
	})
	parts = append(parts, fmt.Sprintf("%s has x%.2f the GPU page faults of %s and runs %s cycles per fault against %s's %s (geomeans)",
		v.Scheme, faultRatio, v.Baseline,
		thousands(uint64(geoMean(ps, func(p gritPair) float64 { return cyclesPerFault(p.scheme) }))), v.Baseline,
		thousands(uint64(geoMean(ps, func(p gritPair) float64 { return cyclesPerFault(p.baseline) })))))
	// The model's side: above the paper, the largest speedups (or, for
	// faults, the smallest fault ratios) carry it; below, the others.
	higher := v.Model > v.Paper
	ends := ps
	if higher != faults {
		ends = slices.Clone(ps)
		slices.Reverse(ends)
	}
	n := min(2, len(ends)-1)
	var described, names []string
	for _, p := range ends[:max(n, 1)] {
		described, names = append(described, describePair(p, faults)), append(names, p.workload)
	}
	parts = append(parts, "furthest: "+strings.Join(described, "; "))
	if n > 0 {
		rest := ends[n:]
		g := geoMean(rest, func(p gritPair) float64 { return p.ratio })
		fig := g - 1
		if faults {
			fig = 1 - g
		}
		parts = append(parts, fmt.Sprintf("without %s, %+.0f%% over the remaining %d", strings.Join(names, " and "), 100*fig, len(rest)))
	}
	return strings.Join(parts, "; ")
}

// explainThresholdOrdering computes, for each of GRIT's threshold
// comparisons (4 > 2, 8 > 2, 2 > 16) the runs break, the workload where
// the wrong side gains most, with both thresholds' counts.
func explainThresholdOrdering(recs []GritPointRecord, workloads []string, gpus int, byThreshold map[int]float64) string {
	var parts []string
	for _, c := range [][2]int{{4, 2}, {8, 2}, {2, 16}} {
		hi, lo := c[0], c[1]
		if byThreshold[hi] > byThreshold[lo] {
			continue
		}
		// The points compared as a speedup of hi over lo: ratio < 1 where
		// lo is faster.
		ps := gritPairs(recs, GritPoint{grit.ThresholdScheme(hi), gpus}, GritPoint{grit.ThresholdScheme(lo), gpus}, workloads, false)
		if len(ps) == 0 {
			continue
		}
		worst := ps[0]
		parts = append(parts, fmt.Sprintf("threshold %d (%+.1f%%) is not above %d (%+.1f%%): speedup of %d over %d geomean %.3fx, lowest %s",
			hi, 100*byThreshold[hi], lo, 100*byThreshold[lo], hi, lo, geoMean(ps, func(p gritPair) float64 { return p.ratio }), describeThresholdPair(worst, hi, lo)))
	}
	return strings.Join(parts, "; ")
}

// describeThresholdPair is one workload's cycles, faults and GRIT counts at
// the two thresholds.
func describeThresholdPair(p gritPair, hi, lo int) string {
	s, b := p.scheme, p.baseline
	out := fmt.Sprintf("%s %.3fx (cycles %s at %d, %s at %d; faults %s, %s", p.workload, p.ratio,
		thousands(s.Cycles), hi, thousands(b.Cycles), lo, thousands(gritFaults(*s)), thousands(gritFaults(*b)))
	if s.Grit != nil && b.Grit != nil {
		out += fmt.Sprintf("; interrupts %s, %s; decided dup %s, %s; decided ac %s, %s",
			thousands(s.Grit.Interrupts), thousands(b.Grit.Interrupts), thousands(s.Grit.ToDuplication), thousands(b.Grit.ToDuplication),
			thousands(s.Grit.ToAccessCounter), thousands(b.Grit.ToAccessCounter))
	}
	return out + ")"
}

// thousands formats v with a comma every three digits.
func thousands(v uint64) string {
	s := fmt.Sprint(v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
