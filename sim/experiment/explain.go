package experiment

import (
	"fmt"
	"math"
	"strings"

	"github.com/uvmmu/uvmmu/sim/system"
)

// The explanations of the validation table are computed from the same runs
// as its figures, in the same methodology, so that every number a sentence
// quotes is one the command measured; the sentence says which mechanism
// of the model the number points at. A row within ExplainThreshold carries
// no explanation.

// result is a completed run of the view's methodology, or nil.
func (v *View) result(w, pol string, ratio int, sets ...string) *system.Result {
	o := v.l(v.p.spec(w, pol, ratio, sets...))
	if o == nil || o.Err != nil {
		return nil
	}
	return &o.Result
}

// only is the view restricted to the workloads a row is about: one
// workload for a row on one workload, every workload for a geomean row.
func (v *View) only(group string) *View {
	if group == GeomeanGroup {
		return v
	}
	one := *v
	one.p.Workloads = []string{group}
	return &one
}

// spread is a per-workload quantity summarised: its geometric mean over
// the workloads where it is defined and the workloads with the smallest
// and largest values.
type spread struct {
	geo, lo, hi float64
	loW, hiW    string
	n           int
}

// over evaluates f per workload; f returns NaN where it is undefined.
func (v *View) over(f func(w string) float64) spread {
	s := spread{lo: math.Inf(1), hi: math.Inf(-1)}
	var vs []float64
	for _, w := range v.p.Workloads {
		x := f(w)
		if math.IsNaN(x) || x <= 0 {
			continue
		}
		vs = append(vs, x)
		if x < s.lo {
			s.lo, s.loW = x, w
		}
		if x > s.hi {
			s.hi, s.hiW = x, w
		}
	}
	s.geo, s.n = Geomean(vs)
	return s
}

// format writes the geomean and the range with the workloads at its ends.
func (s spread) format(unit string, digits int) string {
	if s.n == 0 {
		return "—"
	}
	f := func(x float64) string { return fmt.Sprintf("%.*f%s", digits, x, unit) }
	if s.n == 1 {
		return fmt.Sprintf("%s (%s)", f(s.geo), s.loW)
	}
	return fmt.Sprintf("%s geomean, %s (%s) to %s (%s)", f(s.geo), f(s.lo), s.loW, f(s.hi), s.hiW)
}

// run names one run of a workload: policy, ratio and settings.
type run struct {
	pol   string
	ratio int
	sets  []string
}

// pairs evaluates f per workload on the workload's runs a and b; the
// value is undefined where either run is missing.
func (v *View) pairs(a, b run, f func(x, y *system.Result) float64) spread {
	return v.over(func(w string) float64 {
		x, y := v.result(w, a.pol, a.ratio, a.sets...), v.result(w, b.pol, b.ratio, b.sets...)
		if x == nil || y == nil {
			return math.NaN()
		}
		return f(x, y)
	})
}

// faultUs is the UM far-fault latency of Fig. 1's normalising run.
var faultUs = FaultLatenciesUs[0]

// umFree is UM's run with no fault latency, umAt its run at Fig. 1's
// normalising latency (the configured 45 us runs are Fig. 4's).
func umFree(ratio int) run { return run{PolicyUM, ratio, []string{faultSet(0)}} }
func umAt(ratio int) run   { return run{PolicyUM, ratio, []string{faultSet(faultUs)}} }

// workPerFault is UM's run time without fault handling (the 0 us run)
// divided by the far faults of the 50 us run, in microseconds: the GPU
// time (execution and transfers) each far fault's handling is set
// against. Under the reference timing it is exact: a run's time is its
// timeline plus faults x latency.
func (v *View) workPerFault(ratio int) spread {
	return v.pairs(umFree(ratio), umAt(ratio), func(free, slow *system.Result) float64 {
		return Ratio(free.Cycles, slow.FarFaults) / float64(free.ClockMHz)
	})
}

// impliedWorkPerFault is the GPU time per far fault that a speedup R from
// fault latency a to b (in us) implies when faults are handled serially:
// (W + aF) / (W + bF) = R gives W/F = (a - R b) / (R - 1).
func impliedWorkPerFault(r, a, b float64) float64 { return (a - r*b) / (r - 1) }

// umFreeCycles is UM's run time on workload w at ratio without fault
// handling: its 0 us run, or, under the reference timing, where a run's
// time is its timeline plus faults x latency and the latency never
// reaches the timeline, the timeline of its run at the configured latency;
// 0 when neither is there.
func (v *View) umFreeCycles(w string, ratio int) uint64 {
	if free := v.result(w, PolicyUM, ratio, faultSet(0)); free != nil {
		return free.Cycles
	}
	if um := v.result(w, PolicyUM, ratio); um != nil && um.FaultCycles > 0 && um.TimelineCycles+um.FaultCycles == um.Cycles {
		return um.TimelineCycles
	}
	return 0
}

// faultShare is the percentage of UM's run time (at its configured fault
// latency) that fault handling adds: 1 - T(0 us) / T.
func (v *View) faultShare(ratio int) spread {
	return v.over(func(w string) float64 {
		free, um := v.umFreeCycles(w, ratio), v.result(w, PolicyUM, ratio)
		if free == 0 || um == nil {
			return math.NaN()
		}
		return 100 * (1 - Ratio(free, um.Cycles))
	})
}

// ratioOf is a per-workload ratio of two policies' runs' fields.
func (v *View) ratioOf(ratio int, num, den string, field func(*system.Result) uint64) spread {
	return v.pairs(run{num, ratio, nil}, run{den, ratio, nil},
		func(a, b *system.Result) float64 { return Ratio(field(a), field(b)) })
}

// umWithoutFaultsOverUVMMU is UM's run time with no fault latency over
// UVMMU's: what is left of UVMMU's lead once UM's faults cost nothing.
func (v *View) umWithoutFaultsOverUVMMU(ratio int) spread {
	return v.over(func(w string) float64 {
		free, u := v.umFreeCycles(w, ratio), v.result(w, PolicyUVMMU, ratio)
		if free == 0 || u == nil {
			return math.NaN()
		}
		return Ratio(free, u.Cycles)
	})
}

// growth is a field of a policy's runs at ratio over the same at 100%.
func (v *View) growth(pol string, ratio int, field func(*system.Result) uint64) spread {
	return v.pairs(run{pol, ratio, nil}, run{pol, 100, nil},
		func(at, base *system.Result) float64 { return Ratio(field(at), field(base)) })
}

// of evaluates f on one run of every workload.
func (v *View) of(a run, f func(*system.Result) float64) spread {
	return v.over(func(w string) float64 {
		if x := v.result(w, a.pol, a.ratio, a.sets...); x != nil {
			return f(x)
		}
		return math.NaN()
	})
}

// perWorkload is a field of a policy's runs.
func (v *View) perWorkload(pol string, ratio int, field func(*system.Result) uint64) spread {
	return v.of(run{pol, ratio, nil}, func(x *system.Result) float64 { return float64(field(x)) })
}

func migrations(r *system.Result) uint64  { return r.Migrations }
func evictions(r *system.Result) uint64   { return r.Evictions }
func remote(r *system.Result) uint64      { return r.RemoteAccesses }
func cycles(r *system.Result) uint64      { return r.Cycles }
func farFaults(r *system.Result) uint64   { return r.FarFaults }
func faultCycles(r *system.Result) uint64 { return r.FaultCycles }

// memory is the GPU memory of a policy's runs at ratio in MB, and the
// footprint it is set against.
func (v *View) memory(pol string, ratio int) (gpu, footprint spread) {
	gpu = v.of(run{pol, ratio, nil}, func(x *system.Result) float64 { return float64(x.GPUMemoryBytes) / (1 << 20) })
	footprint = v.of(run{pol, ratio, nil}, func(x *system.Result) float64 { return float64(x.FootprintBytes) / (1 << 20) })
	return gpu, footprint
}

// weighs says whether the model sets more or less GPU time against each
// fault than the paper's figure implies.
func weighs(model, paper float64) string {
	if model < paper {
		return "less GPU time per fault here, so the serial fault time weighs more than in the paper"
	}
	return "more GPU time per fault here, so the fault time weighs less than in the paper"
}

// explainFaultLatency explains an F1 row: the speedup from 50 us to us is
// (W + 50 F) / (W + us F), so it is set by the GPU time per fault W/F.
func (v *View) explainFaultLatency(ratio int, us, paper float64) string {
	w := v.workPerFault(ratio)
	implied := impliedWorkPerFault(paper, faultUs, us)
	return fmt.Sprintf("GPU time per far fault (UM's time at 0 us over its far faults at %g us) is %s against %.0f us implied by the paper's %.2fx "+
		"(far faults %s; UM at 0 us %s): %s",
		faultUs, w.format(" us", 1), implied, paper,
		v.of(umAt(ratio), func(x *system.Result) float64 { return float64(x.FarFaults) }).format("", 0), v.of(umFree(ratio), func(x *system.Result) float64 {
			return float64(x.Cycles) / float64(x.ClockMHz)
		}).format(" us", 0), weighs(w.geo, implied))
}

// explainFig4 explains an F4 row of series (UVMMU, UVMSmart or "UVMMU
// over UVMSmart") at ratio on group (geomean or one workload).
func (v *View) explainFig4(ratio int, series, group string, paper float64) string {
	e := v.only(group)
	var s string
	switch series {
	case "UVMSmart":
		s = fmt.Sprintf("UVMSmart serves %s loads zero-copy, migrates %s the 4 KB pages UM does and evicts %s as many; "+
			"its far faults are %s UM's and its run time %s of UM's (docs/uvmsmart.md: what its runtime switches to, by workload)",
			e.perWorkload(PolicyUVMSmart, ratio, remote).format("", 0), e.ratioOf(ratio, PolicyUVMSmart, PolicyUM, migrations).format("x", 2),
			e.ratioOf(ratio, PolicyUVMSmart, PolicyUM, evictions).format("x", 2), e.ratioOf(ratio, PolicyUVMSmart, PolicyUM, farFaults).format("x", 2),
			e.ratioOf(ratio, PolicyUVMSmart, PolicyUM, cycles).format("x", 2))
	default:
		k := e.umWithoutFaultsOverUVMMU(ratio)
		share := e.faultShare(ratio)
		s = fmt.Sprintf("UVMMU's speedup over UM is (UM at 0 us over UVMMU: %s) / (1 - UM's fault share: %s)",
			k.format("x", 2), share.format("%", 0))
		switch {
		case series != "UVMMU" || k.n == 0:
		case k.geo >= paper:
			s += fmt.Sprintf("; the first factor alone exceeds the paper's %.2fx", paper)
		default:
			s += fmt.Sprintf("; with the first factor as measured, the paper's %.2fx needs a fault share of %.0f%%", paper, 100*(1-k.geo/paper))
		}
		if ratio > 100 {
			s += fmt.Sprintf("; UM migrates %s the 4 KB pages UVMMU does and evicts %s pages (2 MB LRU with the tree prefetcher re-fetches whole large pages, UVMMU swaps 64 KB page-groups)",
				e.ratioOf(ratio, PolicyUM, PolicyUVMMU, migrations).format("x", 1), e.perWorkload(PolicyUM, ratio, evictions).format("", 0))
		}
		if series != "UVMMU" {
			s += fmt.Sprintf("; UVMSmart takes %s of UM's time (its rows)", e.ratioOf(ratio, PolicyUVMSmart, PolicyUM, cycles).format("x", 2))
		}
	}
	if group != GeomeanGroup {
		if gpu, fp := e.memory(PolicyUVMMU, ratio); gpu.n > 0 && fp.n > 0 {
			s += fmt.Sprintf("; %s's GPU memory is %.2f MB for a %.2f MB footprint", group, gpu.geo, fp.geo)
		}
	}
	return s
}

// explainScaling explains an F6 row: the policy's slowdown at ratio over
// 100%.
func (v *View) explainScaling(series string, ratio int, paper, x float64) string {
	gpu, _ := v.memory(PolicyUVMMU, ratio)
	if series == "UVMMU" {
		return fmt.Sprintf("UVMMU migrates %s the pages at %s that it does at 100%% (evictions there %s): with %s of GPU memory the random victims "+
			"are soon fetched again; the slowdown per workload is %s",
			v.growth(PolicyUVMMU, ratio, migrations).format("x", 2), pct(ratio), v.perWorkload(PolicyUVMMU, ratio, evictions).format("", 0),
			gpu.format(" MB", 2), v.growth(PolicyUVMMU, ratio, cycles).format("x", 2))
	}
	return fmt.Sprintf("UVMSmart migrates %s the pages at %s that it does at 100%%, its far faults grow %s and its fault time %s, "+
		"and it serves %s accesses zero-copy there; the slowdown per workload is %s",
		v.growth(PolicyUVMSmart, ratio, migrations).format("x", 2), pct(ratio), v.growth(PolicyUVMSmart, ratio, farFaults).format("x", 2),
		v.growth(PolicyUVMSmart, ratio, faultCycles).format("x", 2), v.perWorkload(PolicyUVMSmart, ratio, remote).format("", 0),
		v.growth(PolicyUVMSmart, ratio, cycles).format("x", 2))
}

// explainEviction explains an F5 row: linear-random's time over the best
// other eviction policy, per workload.
func (v *View) explainEviction(ratio int) string {
	best := v.over(func(w string) float64 {
		rnd := v.result(w, PolicyUVMMU, ratio, EvictionKey+"="+EvictionVariants[0])
		if rnd == nil {
			return math.NaN()
		}
		b := math.NaN()
		for _, ev := range v.p.Evictions {
			if o := v.result(w, PolicyUVMMU, ratio, EvictionKey+"="+ev); ev != EvictionVariants[0] && o != nil && (math.IsNaN(b) || float64(o.Cycles) < b) {
				b = float64(o.Cycles)
			}
		}
		return float64(rnd.Cycles) / b
	})
	return fmt.Sprintf("linear-random's time over the best other eviction policy is %s per workload", best.format("x", 2))
}

// freeLatencies pools the free-destination migration latencies of the
// migration-latency runs, in cycles at the returned clock.
func (v *View) freeLatencies() ([]uint64, int) {
	var free []uint64
	clock := 0
	for _, w := range v.p.Workloads {
		for _, r := range LatencyRatios {
			if o := v.l(v.p.spec(w, PolicyUVMMU, r)); o != nil && o.Err == nil && o.Latencies != nil {
				free = append(free, o.Latencies.Free...)
				clock = o.Latencies.ClockMHz
			}
		}
	}
	return free, clock
}

// explainMigrationLatency explains an M1 row from the pooled samples.
func (v *View) explainMigrationLatency() string {
	free, clock := v.freeLatencies()
	sum := Summarize(free, clock)
	return fmt.Sprintf("the paper's figure is one migration on an idle link, %.2f us here (the shortest of %d); the rest is the wait for the PCIe link: "+
		"the migration engine serves its command slots oldest first and every 64 KB page-group ahead holds the link for 16 page transfers, "+
		"so a burst of first touches queues critical pages (p10 %.2f, median %.2f, p90 %.2f us)",
		sum.Min, sum.Count, sum.P10, sum.P50, sum.P90)
}

// explainAdaptive explains a U1 row from the adaptive and UM runs.
func (v *View) explainAdaptive() string {
	r := adaptiveRatio
	return fmt.Sprintf("adaptive serves %s loads zero-copy, migrates %s the 4 KB pages UM does and evicts %s as many; "+
		"its run time is %s of UM's: LFU 2 MB evicts the region with the fewest counted accesses, often the one just fetched "+
		"(docs/uvmsmart.md compares it with LRU 2 MB)",
		v.perWorkload(PolicyAdaptive, r, remote).format("", 0), v.ratioOf(r, PolicyAdaptive, PolicyUM, migrations).format("x", 2),
		v.ratioOf(r, PolicyAdaptive, PolicyUM, evictions).format("x", 2), v.ratioOf(r, PolicyAdaptive, PolicyUM, cycles).format("x", 2))
}

// Findings are the table's conclusions drawn from the same runs: how
// many rows pass in each methodology, and Fig. 4's orderings per workload
// (UVMMU wins everywhere, UVMSmart = UM at 100%, UVMSmart gains most on the
// irregular workloads).
func Findings(p Params, checks []Check, views []*View) []string {
	var out []string
	for i, m := range Methodologies {
		pass, n, within, headline := 0, 0, 0, 0
		var outside []string
		for j := range checks {
			c := &checks[j]
			if c.Status(i) == "not measured" {
				continue
			}
			n++
			if c.Status(i) == "pass" {
				pass++
			}
			if strings.Contains(c.Quantity, GeomeanGroup) && (c.ID == "F1" || strings.HasPrefix(c.ID, "F4") || c.ID == "F6") {
				headline++
				if c.Difference(i) <= ExplainThreshold {
					within++
				} else {
					outside = append(outside, fmt.Sprintf("%s %s", c.ID, c.Quantity))
				}
			}
		}
		s := fmt.Sprintf("**%s**: %d of %d measured rows pass their tolerance; %d of %d F1/F4/F6 geomean rows are within ±%.0f%% of the paper",
			m.Name, pass, n, within, headline, ExplainThreshold*100)
		if len(outside) > 0 {
			s += " (outside: " + strings.Join(outside, "; ") + ")"
		}
		out = append(out, s+".")
	}
	for _, v := range views {
		out = append(out, v.orderings())
	}
	return out
}

// orderings states Fig. 4's orderings per workload in the view's runs.
func (v *View) orderings() string {
	var lost []string
	pairs := 0
	for _, r := range MainRatios {
		for _, w := range v.p.Workloads {
			um, u := v.result(w, PolicyUM, r), v.result(w, PolicyUVMMU, r)
			if um == nil || u == nil {
				continue
			}
			pairs++
			if u.Cycles >= um.Cycles {
				lost = append(lost, fmt.Sprintf("%s at %s", w, pct(r)))
			}
		}
	}
	s := fmt.Sprintf("**Fig. 4, %s**: UVMMU is faster than UM on %d of %d workload-ratio pairs", v.m.Name, pairs-len(lost), pairs)
	if len(lost) > 0 {
		s += " (not on " + strings.Join(lost, ", ") + ")"
	}
	s += fmt.Sprintf("; UVMSmart's time over UM's at 100%% is %s", v.ratioOf(100, PolicyUVMSmart, PolicyUM, cycles).format("x", 2))
	for _, r := range MainRatios[1:] {
		irr, reg := v.classSpeedup(r)
		s += fmt.Sprintf("; UVMSmart's speedup over UM at %s is %s on the irregular workloads and %s on the regular ones", pct(r), irr.format("x", 2), reg.format("x", 2))
	}
	return s + "."
}

// classSpeedup is UVMSmart's speedup over UM at ratio over the irregular
// and over the regular workloads.
func (v *View) classSpeedup(ratio int) (irregular, regular spread) {
	for _, cls := range []bool{true, false} {
		e := *v
		e.p.Workloads = nil
		for _, w := range v.p.Workloads {
			if isIrregular(w, v.p) == cls {
				e.p.Workloads = append(e.p.Workloads, w)
			}
		}
		s := e.ratioOf(ratio, PolicyUM, PolicyUVMSmart, cycles)
		if cls {
			irregular = s
		} else {
			regular = s
		}
	}
	return irregular, regular
}
