package experiment

import (
	"fmt"
	"math"
	"strings"

	"github.com/uvmmu/uvmmu/sim/system"
)

// The explanations of the validation table are computed from the same runs
// as its figures, so that every number a sentence quotes is one the command
// measured; the sentence says which mechanism of the model the number
// points at. A row within ExplainThreshold carries no explanation.

// evidence reads the validation runs.
type evidence struct {
	p Params
	l Lookup
}

// result is a completed run of the validation, or nil.
func (e evidence) result(w, pol string, ratio int, sets ...string) *system.Result {
	o := e.l(e.p.spec(w, pol, ratio, sets...))
	if o == nil || o.Err != nil {
		return nil
	}
	return &o.Result
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
func (e evidence) over(f func(w string) float64) spread {
	s := spread{lo: math.Inf(1), hi: math.Inf(-1)}
	var vs []float64
	for _, w := range e.p.Workloads {
		v := f(w)
		if math.IsNaN(v) || v <= 0 {
			continue
		}
		vs = append(vs, v)
		if v < s.lo {
			s.lo, s.loW = v, w
		}
		if v > s.hi {
			s.hi, s.hiW = v, w
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
	f := func(v float64) string { return fmt.Sprintf("%.*f%s", digits, v, unit) }
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
func (e evidence) pairs(a, b run, f func(x, y *system.Result) float64) spread {
	return e.over(func(w string) float64 {
		x, y := e.result(w, a.pol, a.ratio, a.sets...), e.result(w, b.pol, b.ratio, b.sets...)
		if x == nil || y == nil {
			return math.NaN()
		}
		return f(x, y)
	})
}

// faultUs is the UM far-fault latency of Fig. 1's normalising run.
var faultUs = FaultLatenciesUs[0]

// workPerFault is the UM run time without fault handling (the 0 us run)
// divided by the far faults of the 50 us run, in microseconds: the GPU
// time (execution and transfers) each far fault's handling is set against.
func (e evidence) workPerFault(ratio int) spread {
	return e.pairs(run{PolicyUM, ratio, []string{faultSet(0)}}, run{PolicyUM, ratio, []string{faultSet(faultUs)}},
		func(free, slow *system.Result) float64 {
			return Ratio(free.Cycles, slow.FarFaults) / float64(free.ClockMHz)
		})
}

// impliedWorkPerFault is the GPU time per far fault that a speedup R from
// fault latency a to b (in us) implies when faults are handled serially:
// (W + aF) / (W + bF) = R gives W/F = (a - R b) / (R - 1).
func impliedWorkPerFault(r, a, b float64) float64 { return (a - r*b) / (r - 1) }

// faultShare is the fraction of UM's run time (at its configured fault
// latency) that fault handling adds: 1 - T(0 us) / T.
func (e evidence) faultShare(ratio int) spread {
	return e.pairs(run{PolicyUM, ratio, []string{faultSet(0)}}, run{PolicyUM, ratio, nil},
		func(free, um *system.Result) float64 { return 100 * (1 - Ratio(free.Cycles, um.Cycles)) })
}

// ratioOf is a per-workload ratio of two runs' fields.
func (e evidence) ratioOf(ratio int, num, den string, field func(*system.Result) uint64) spread {
	return e.pairs(run{num, ratio, nil}, run{den, ratio, nil},
		func(a, b *system.Result) float64 { return Ratio(field(a), field(b)) })
}

// umWithoutFaultsOverUVMMU is UM's run time with no fault latency over
// UVMMU's: what is left of UVMMU's lead once UM's faults cost nothing.
func (e evidence) umWithoutFaultsOverUVMMU(ratio int) spread {
	return e.pairs(run{PolicyUM, ratio, []string{faultSet(0)}}, run{PolicyUVMMU, ratio, nil},
		func(free, u *system.Result) float64 { return Ratio(free.Cycles, u.Cycles) })
}

// growth is a field of a policy's runs at ratio over the same at 100%.
func (e evidence) growth(pol string, ratio int, field func(*system.Result) uint64) spread {
	return e.pairs(run{pol, ratio, nil}, run{pol, 100, nil},
		func(at, base *system.Result) float64 { return Ratio(field(at), field(base)) })
}

// perWorkload is a field of a policy's runs.
func (e evidence) perWorkload(pol string, ratio int, field func(*system.Result) uint64) spread {
	return e.over(func(w string) float64 {
		if x := e.result(w, pol, ratio); x != nil {
			return float64(field(x))
		}
		return math.NaN()
	})
}

func migrations(r *system.Result) uint64 { return r.Migrations }
func evictions(r *system.Result) uint64  { return r.Evictions }
func remote(r *system.Result) uint64     { return r.RemoteAccesses }
func cycles(r *system.Result) uint64     { return r.Cycles }

// sameMemory lists the workloads whose GPU memory is the same at both
// ratios (whole 2 MB frame-regions, SPEC 2).
func (e evidence) sameMemory(a, b int) []string {
	var same []string
	for _, w := range e.p.Workloads {
		x, y := e.result(w, PolicyUVMMU, a), e.result(w, PolicyUVMMU, b)
		if x != nil && y != nil && x.GPUMemoryBytes == y.GPUMemoryBytes {
			same = append(same, w)
		}
	}
	return same
}

// freeLatencies pools the free-destination migration latencies of the
// migration-latency runs, in cycles at the returned clock.
func (e evidence) freeLatencies() ([]uint64, int) {
	var free []uint64
	clock := 0
	for _, w := range e.p.Workloads {
		for _, r := range LatencyRatios {
			if o := e.l(e.p.spec(w, PolicyUVMMU, r)); o != nil && o.Err == nil && o.Latencies != nil {
				free = append(free, o.Latencies.Free...)
				clock = o.Latencies.ClockMHz
			}
		}
	}
	return free, clock
}

// ratioOfRow reads the oversubscription ratio a row's quantity names.
func ratioOfRow(c *Check) int {
	for _, r := range ScalingRatios {
		if strings.Contains(c.Quantity, pct(r)) && r != 100 {
			return r
		}
	}
	return 100
}

// workloadOfRow is the single workload a row is about (its quantity ends
// with the workload's name), or "".
func (e evidence) workloadOfRow(c *Check) string {
	i := strings.LastIndex(c.Quantity, ", ")
	if i < 0 {
		return ""
	}
	for _, w := range e.p.Workloads {
		if c.Quantity[i+2:] == w {
			return w
		}
	}
	return ""
}

// explain is the measured reason for a row's difference from the paper. A
// row about one workload is explained from that workload's runs, with the
// size of its GPU memory.
func (e evidence) explain(c *Check) string {
	if w := e.workloadOfRow(c); w != "" {
		one := e
		one.p.Workloads = []string{w}
		why := one.explainOver(c)
		if x := e.result(w, PolicyUVMMU, ratioOfRow(c)); x != nil && why != "" {
			why += fmt.Sprintf("; %s's GPU memory is %d 2 MB regions for a %.1f MB footprint",
				w, x.GPUMemoryBytes>>21, float64(x.FootprintBytes)/(1<<20))
		}
		return why
	}
	return e.explainOver(c)
}

// explainOver explains a row from the runs of e's workloads.
func (e evidence) explainOver(c *Check) string {
	r := ratioOfRow(c)
	switch {
	case c.ID == "F1":
		to := 0.0
		if strings.Contains(c.Quantity, "-> 20 us") {
			to = 20
		}
		return fmt.Sprintf("GPU time per far fault (UM cycles at 0 us over the far faults at %g us) is %s here against %.0f us implied by the paper's %.2fx: "+
			"the model's kernels do less work per fault (no data caches, one warp instruction per SM per cycle, SPEC 6.1), so the serial fault time weighs more",
			faultUs, e.workPerFault(r).format(" us", 1), impliedWorkPerFault(c.Paper, faultUs, to), c.Paper)
	case c.ID == "F4a" && strings.Contains(c.Quantity, "UVMMU"):
		return fmt.Sprintf("UM without fault time (0 us) runs %s of UVMMU's time, so the speedup is UM's fault share: %s of UM's time, against %.0f%% implied by the paper's %.2fx; "+
			"GPU time per far fault is %s against the paper's %.0f us (see F1)",
			e.umWithoutFaultsOverUVMMU(100).format("x", 2), e.faultShare(100).format("%", 0), 100*(1-1/c.Paper), c.Paper,
			e.workPerFault(100).format(" us", 1), impliedWorkPerFault(c.Paper, 45, 0))
	case (c.ID == "F4b" || c.ID == "F4c") && strings.HasPrefix(c.Quantity, "UVMMU"):
		s := fmt.Sprintf("UM migrates %s the 4 KB pages UVMMU does and, without fault time (0 us), still takes %s of UVMMU's time: "+
			"2 MB LRU eviction with the tree prefetcher re-fetches whole large pages where UVMMU swaps 64 KB page-groups; fault handling is %s of UM's time",
			e.ratioOf(r, PolicyUM, PolicyUVMMU, migrations).format("x", 1), e.umWithoutFaultsOverUVMMU(r).format("x", 2), e.faultShare(r).format("%", 0))
		if strings.Contains(c.Quantity, "UVMSmart") {
			s += fmt.Sprintf("; UVMSmart takes %s of UM's time (its rows)", e.ratioOf(r, PolicyUVMSmart, PolicyUM, cycles).format("x", 2))
		}
		return s
	case strings.HasPrefix(c.ID, "F4"):
		return fmt.Sprintf("UVMSmart serves %s loads zero-copy, migrates %s the 4 KB pages UM does and evicts %s as many; "+
			"its run time is %s of UM's (docs/uvmsmart.md: what its runtime switches to, by workload)",
			e.perWorkload(PolicyUVMSmart, r, remote).format("", 0), e.ratioOf(r, PolicyUVMSmart, PolicyUM, migrations).format("x", 2),
			e.ratioOf(r, PolicyUVMSmart, PolicyUM, evictions).format("x", 2), e.ratioOf(r, PolicyUVMSmart, PolicyUM, cycles).format("x", 2))
	case c.ID == "U1":
		return fmt.Sprintf("adaptive serves %s loads zero-copy, migrates %s the 4 KB pages UM does and evicts %s as many; "+
			"its run time is %s of UM's: LFU 2 MB evicts the region with the fewest counted accesses, often the one just fetched "+
			"(docs/uvmsmart.md compares it with LRU 2 MB)",
			e.perWorkload(PolicyAdaptive, u1Ratio, remote).format("", 0), e.ratioOf(u1Ratio, PolicyAdaptive, PolicyUM, migrations).format("x", 2),
			e.ratioOf(u1Ratio, PolicyAdaptive, PolicyUM, evictions).format("x", 2), e.ratioOf(u1Ratio, PolicyAdaptive, PolicyUM, cycles).format("x", 2))
	case c.ID == "F5":
		best := e.over(func(w string) float64 {
			rnd := e.result(w, PolicyUVMMU, r, EvictionKey+"="+EvictionVariants[0])
			if rnd == nil {
				return math.NaN()
			}
			b := math.NaN()
			for _, v := range e.p.Evictions {
				if o := e.result(w, PolicyUVMMU, r, EvictionKey+"="+v); v != EvictionVariants[0] && o != nil && (math.IsNaN(b) || float64(o.Cycles) < b) {
					b = float64(o.Cycles)
				}
			}
			return float64(rnd.Cycles) / b
		})
		return fmt.Sprintf("linear-random's time over the best other eviction policy is %s per workload", best.format("x", 2))
	case c.ID == "M1":
		free, clock := e.freeLatencies()
		sum := Summarize(free, clock)
		return fmt.Sprintf("the paper's figure is one migration on an idle link, %.2f us here (the shortest of %d); the rest is the wait for the PCIe link: "+
			"the migration engine serves its command slots oldest first and every 64 KB page-group ahead holds the link for 16 page transfers, "+
			"so a burst of first touches queues critical pages (p10 %.2f, median %.2f, p90 %.2f us)",
			sum.Min, sum.Count, sum.P10, sum.P50, sum.P90)
	case c.ID == "F6" && strings.HasPrefix(c.Quantity, "UVMMU"):
		return fmt.Sprintf("UVMMU migrates %s the pages at %s that it does at 100%%: the random victims of a small GPU memory are fetched again; "+
			"GPU memory is whole 2 MB regions, identical at 125%% and 150%% for %s",
			e.growth(PolicyUVMMU, r, migrations).format("x", 2), pct(r), orNone(e.sameMemory(125, 150)))
	case c.ID == "F6":
		return fmt.Sprintf("UVMSmart migrates %s the pages at %s that it does at 100%% and serves %s accesses zero-copy there",
			e.growth(PolicyUVMSmart, r, migrations).format("x", 2), pct(r), e.perWorkload(PolicyUVMSmart, r, remote).format("", 0))
	}
	return ""
}

func orNone(ws []string) string {
	if len(ws) == 0 {
		return "no workload"
	}
	return strings.Join(ws, ", ")
}
