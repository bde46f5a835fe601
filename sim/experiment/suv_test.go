package experiment

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// The SUV experiments run SUV Table I's workloads by default: Fig. 5 needs
// UVM without oversubscription and UVM and SUV at 115, 130, 150%.
func TestSUVSpecs(t *testing.T) {
	p := DefaultParams(false)
	require.Equal(t, workload.Names(), p.Workloads)
	assert.Len(t, suvSpecs(p), len(SUVWorkloads)*(1+2*len(SUVLevels)))
	assert.Len(t, suvBaselinesSpecs(p), len(SUVWorkloads)*3)
	p.Workloads = []string{"hotspot"}
	assert.Len(t, suvNoOversubSpecs(p), 2)
}

// With UVM at 100 cycles without oversubscription and 300 at every level,
// SUV at 120, SC at 200 and AC at 240 cycles, the rows are computed by
// hand: SUV's reduction over UVM is 1 - 120/300 = 0.6 at every level (at
// 30% it equals the paper's 0.60 and passes; as the largest, 0.6 against
// 0.74 is 19% off, inside the 25% tolerance; as the smallest, 0.6 against
// 0.44 is 36% off and fails); over SC 1 - 120/200 = 0.4, over AC
// 1 - 120/240 = 0.5.
func TestSUVChecks(t *testing.T) {
	p := DefaultParams(false)
	p.Workloads = []string{"mvt", "fdtd"}
	var outs []Outcome
	add := func(w, pol string, r int, cycles uint64) {
		outs = append(outs, Outcome{Spec: p.spec(w, pol, r), Result: system.Result{Cycles: cycles, PCIeH2DBytes: cycles}})
	}
	for _, w := range p.Workloads {
		add(w, PolicyUM, SUVNoOversub, 100)
		for _, r := range SUVLevels {
			add(w, PolicyUM, r, 300)
			add(w, PolicySUV, r, 120)
		}
		add(w, PolicySC, SUVBaselineLevel, 200)
		add(w, PolicyAC, SUVBaselineLevel, 240)
	}
	l := NewLookup(outs)
	got := map[string]float64{}
	status := map[string]string{}
	for _, exp := range []string{"suv", "suv-baselines", "suv-nooversub"} {
		for _, c := range SUVChecks(p, l, exp) {
			got[c.ID], status[c.ID] = c.Models[0].Value, c.Status(0)
		}
	}
	assert.InDelta(t, 0.6, got["suv-30"], 1e-9)
	assert.InDelta(t, 0.6, got["suv-max"], 1e-9)
	assert.Equal(t, "pass", status["suv-30"])
	assert.Equal(t, "fail", status["suv-min"])
	assert.InDelta(t, 0.4, got["suv-sc"], 1e-9)
	assert.InDelta(t, 0.5, got["suv-ac"], 1e-9)
	assert.InDelta(t, 0.4, got["suv-sc-pcie"], 1e-9)
	assert.Equal(t, 1.0, got["suv-thrash-mvt"], "300/100 >= 2 at every level")
	assert.True(t, math.IsNaN(got["suv-0"]), "no SUV run without oversubscription")
}

// suv-all runs each of the four experiments' runs once: per workload UVM
// at 0, 15, 30, 50%, SUV at the same four, SC and AC at 50%.
func TestSUVAllSpecs(t *testing.T) {
	p := DefaultParams(false)
	specs := suvAllSpecs(p)
	assert.Len(t, specs, len(SUVWorkloads)*10)
	seen := map[string]bool{}
	for _, s := range specs {
		assert.False(t, seen[s.Key()], s.Key())
		seen[s.Key()] = true
	}
	fig := suvAllBuild(p, NewLookup(nil))
	assert.Len(t, fig.Panels, 3+1+2+1, "Fig. 5's three levels, Fig. 6, Figs. 7 and 8, Fig. 9")
	assert.Equal(t, "Fig. 5, 15% oversubscription", fig.Panels[0].Title)
	assert.Equal(t, "runtime / UVM without oversubscription", fig.Panels[0].YLabel)
}

// The command line names what differs from the defaults.
func TestSUVCommand(t *testing.T) {
	p := DefaultParams(false)
	assert.Equal(t, "uvmsim experiment suv-all", suvCommand(p, nil))
	p.Workloads, p.Scale, p.Seed = []string{"mvt", "fdtd"}, 0.25, 3
	assert.Equal(t, "uvmsim experiment suv-all --workloads mvt,fdtd --scale 0.25 --seed 3 --preset rtx3090 --set gpu.sms=4",
		suvCommand(p, map[string]string{"run.preset": "rtx3090", "gpu.sms": "4"}))
	text, cfg := suvPlatform(map[string]string{"run.preset": "rtx3090", "gpu.sms": "4"})
	assert.Equal(t, 4, cfg.GPU.SMs)
	assert.Equal(t, 1695, cfg.GPU.ClockMHz)
	assert.Contains(t, text, "preset `rtx3090` (SUV paper Section VI")
	assert.Contains(t, text, "with `gpu.sms = 4`")
}

// The Markdown of hand-made runs on mvt and fdtd. UVM: 100 cycles at 0%
// and 300 at every level, except mvt at 15% (150, under 2x: the thrash row
// fails); SUV: 120 at every level and 110 at 0%; SC 200 and AC 240 at 50%,
// except mvt's AC at 100 (AC ahead of SUV). Fig. 5's fdtd row is
// 300/100 = 3 and 120/100 = 1.2 at each level. SUV's reduction over UVM at
// 15% is 1 - sqrt(120/150 x 120/300) = 1 - sqrt(0.32) = 0.434 (the
// smallest, against 0.44: passes) and 1 - 120/300 = 0.60 at 30 and 50%
// (the largest, against 0.74: 19% off, passes). fdtd's AC is 240/120 = 2
// SUV's runtime, mvt's 100/120 = 0.833: SUV's reduction over AC is
// 1 - sqrt(120/100 x 120/240) = 1 - sqrt(0.6) = 0.23 against 0.43, a fail
// explained by mvt's runs. Without oversubscription SUV is
// 110/100 = 1.1 UVM's time on both: suv-0 is 1 - 1.1 = -0.10 against
// 0.20, a fail, explained with the runs' counters. fdtd's SC run has no
// record: n/a, and the SC rows are not measured.
func TestWriteSUVDoc(t *testing.T) {
	p := DefaultParams(false)
	p.Workloads = []string{"mvt", "fdtd"}
	var outs []Outcome
	add := func(w, pol string, r int, cycles uint64) {
		outs = append(outs, Outcome{Spec: p.spec(w, pol, r), Result: system.Result{Cycles: cycles, FarFaults: cycles / 10, FaultCycles: cycles / 2,
			Migrations: 3, PCIeH2DBytes: cycles << 20, GPUMemoryBytes: 1 << 20, FootprintBytes: 2 << 20}, Config: map[string]string{}})
	}
	for _, w := range p.Workloads {
		add(w, PolicyUM, SUVNoOversub, 100)
		add(w, PolicySUV, SUVNoOversub, 110)
		for _, r := range SUVLevels {
			um := uint64(300)
			if w == "mvt" && r == 115 {
				um = 150
			}
			add(w, PolicyUM, r, um)
			add(w, PolicySUV, r, 120)
		}
		if w != "fdtd" {
			add(w, PolicySC, SUVBaselineLevel, 200)
		}
		ac := uint64(240)
		if w == "mvt" {
			ac = 100
		}
		add(w, PolicyAC, SUVBaselineLevel, ac)
	}
	var b strings.Builder
	require.NoError(t, WriteSUVDoc(&b, p, NewLookup(outs)))
	doc := b.String()
	assert.Contains(t, doc, "Generated by `uvmsim experiment suv-all --workloads mvt,fdtd` from 19 of its 20 runs")
	assert.Contains(t, doc, "on preset `gtx1080ti` (UVMMU paper Table I")
	assert.Contains(t, doc, "Not run (n/a below, and left out of the geomeans): fdtd sc 150%.")
	assert.Contains(t, doc, "| fdtd | 3.000 | 1.200 | 3.000 | 1.200 | 3.000 | 1.200 |")
	assert.Contains(t, doc, "| fdtd | n/a | 2.000 | n/a | 2.000 |")
	assert.Contains(t, doc, "| suv-sc | SUV's geomean runtime reduction over SC at 50% | 0.40 | — | ±25% | not measured |")
	assert.Contains(t, doc, "| suv-min | smallest of SUV's geomean runtime reductions over UVM at 15, 30, 50% | 0.44 | 0.43 | ±25% | pass |")
	assert.Contains(t, doc, "| suv-thrash-mvt | fraction of levels at which UVM runs mvt at least 2x slower than without oversubscription | 1.00 | 0.67 | ±0% | fail |")
	assert.Contains(t, doc, "| suv-0 | SUV's geomean runtime reduction over UVM without oversubscription | 0.20 | -0.10 | ±25% | fail |")
	assert.Contains(t, doc, "SUV's geomean runtime reductions over UVM: 0.43 at 15%, 0.60 at 30%, 0.60 at 50%.")
	// mvt at 15%: 150 cycles, 15 far faults whose 75 cycles are 50% of it,
	// 3 pages migrated, 150 MB over PCIe.
	assert.Contains(t, doc, "- **suv-thrash-mvt.** UVM runs mvt less than 2x slower than without oversubscription at\n"+
		"  - 15% (1.50x): UVM at 0% (1.00 MB of GPU memory for 2.00 MB): 100 cycles, 10 far faults (their handling 50% of the time), 3 pages migrated, 100.00 MB over PCIe; "+
		"UVM at 15% (1.00 MB of GPU memory for 2.00 MB): 150 cycles, 15 far faults (their handling 50% of the time), 3 pages migrated, 150.00 MB over PCIe\n")
	assert.Contains(t, doc, "| suv-ac | SUV's geomean runtime reduction over AC at 50% | 0.43 | 0.23 | ±25% | fail |")
	assert.Contains(t, doc, "- **suv-ac (AC's runtime at 50% at most SUV's)** on 1 of 2 workloads; on the other 1 it is 2.00x SUV's (geomean):\n  - mvt (0.833x): SUV at 50%")
	assert.Contains(t, doc, "- **suv-0 (SUV at least as slow as UVM at 0%)** on 2 workloads:\n  - mvt (1.100x): UVM at 0%")
	assert.NotContains(t, doc, "suv-min (", "the row passes")
}

// The generated section of docs/suv.md is what suv-all writes from the
// runs stored in docs/results/suv, byte for byte.
func TestSUVDocIsGenerated(t *testing.T) {
	const dir = "../../docs/results/suv"
	pl, err := ReadPlan(dir)
	require.NoError(t, err)
	require.Equal(t, SUVAllName, pl.Command)
	base, err := pl.BaseConfig()
	require.NoError(t, err)
	out, err := Run(pl.Specs, Options{Base: base, Dir: dir, StoredOnly: true})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, WriteSUVDoc(&b, *pl.Params, NewLookup(out)))
	page, err := os.ReadFile("../../docs/suv.md")
	require.NoError(t, err)
	section, err := DocSection(page, SUVAllName)
	require.NoError(t, err)
	assert.Equal(t, b.String(), section, "docs/suv.md differs from the runs stored in docs/results/suv; regenerate it with "+
		suvCommand(*pl.Params, Overrides(&base))+" --out docs/results/suv --doc docs/suv.md")
}

// SUV's placement of floydwarshall at --scale 0.25 (N = 128: two matrices
// of 128 x 128 x 4 B = 64 KB) in 84 KB of managed memory: one 64 KB
// block, kept back for on-demand migration, so Algorithm 1 has nothing to
// pin on the GPU and pins both on host; with 2 blocks one is available and
// Algorithm 2's window of the distance matrix takes it. The um policy
// places nothing.
func TestSUVPlacement(t *testing.T) {
	r := suvRuns{p: DefaultParams(false), cfg: config.Default()}
	res := system.Result{Scale: 0.25, Seed: 1, ManagedCapacity: 84 << 10}
	assert.Equal(t, "SUV's placement in 1 block: pathDistanceBuffer (D) 64 KB on host; pathBuffer (D) 64 KB on host", r.placement("floydwarshall", PolicySUV, &res))
	assert.Equal(t, "SC's placement in 1 block: pathDistanceBuffer (D) 64 KB on host; pathBuffer (D) 64 KB on host", r.placement("floydwarshall", PolicySC, &res))
	res.ManagedCapacity = 128 << 10
	assert.Equal(t, "SUV's placement in 2 blocks: pathDistanceBuffer (D) 64 KB window; pathBuffer (D) 64 KB on host", r.placement("floydwarshall", PolicySUV, &res))
	assert.Empty(t, r.placement("floydwarshall", PolicyUM, &res))
}
