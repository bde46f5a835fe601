package experiment

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// The incomplete experiment runs the six ISPASS-2009 benchmarks before the
// nine, three policies at two bandwidths each, and its sweeps on the
// ISPASS benchmarks only; every spec is a valid 2 MB page configuration
// of the gtx480 preset.
func TestIncompleteSpecs(t *testing.T) {
	p := DefaultParams(false)
	specs := incompleteSpecs(p)
	ws := incompleteWorkloads(p)
	assert.Equal(t, append(workload.ISPASSNames(), workload.Names()...), ws)
	sweeps := len(IncompleteHandlingUs) + len(IncompleteGapBytes)
	assert.Len(t, specs, len(ws)*2*3+len(workload.ISPASSNames())*sweeps)
	for _, s := range specs[:3] {
		cfg, err := s.Config(config.Default())
		require.NoError(t, err, s)
		assert.True(t, cfg.Pages2M())
		assert.Equal(t, "gtx480", cfg.Run.Preset)
		assert.Equal(t, 15, cfg.GPU.SMs)
	}
	assert.Equal(t, []string{"ispass-cp"}, incompleteWorkloads(Params{Workloads: []string{"ispass-cp"}}))
	assert.Equal(t, QuickWorkloads, incompleteWorkloads(DefaultParams(true)), "--quick stays small")
	assert.Empty(t, sweepWorkloads(DefaultParams(true)))
}

// The figure normalises to copy+execute, and the I1 rows read its 16 GB/s
// geomeans: complete 80x copy+execute's time, incomplete 0.8x (1.25x
// faster).
func TestIncompleteFigureAndI1(t *testing.T) {
	p := Params{Workloads: []string{"ispass-cp", "ispass-ray"}, Scale: 1, Seed: 1, Policies: []string{PolicyIncomplete, PolicyComplete, PolicyCopyExecute}}
	specs := incompleteSpecs(p)
	cycles := func(s Spec) uint64 {
		switch {
		case s.Policy == PolicyCopyExecute:
			return 1000
		case s.Policy == PolicyComplete:
			return 80_000
		case slices.Contains(s.Sets, handlingSet(45)):
			return 3000
		}
		return 800
	}
	l := NewLookup(outcomes(specs, cycles))
	fig := incompleteBuild(p, l)
	require.Len(t, fig.Panels, 4)
	assert.Equal(t, "16 GB/s", fig.Panels[0].Title)
	assert.Equal(t, []string{"ispass-cp", "ispass-ray", GeomeanGroup}, fig.Panels[0].Groups)
	assert.InDeltaSlice(t, []float64{80, 80, 80}, series(fig.Panels[0])[PolicyComplete], 1e-9)
	assert.InDeltaSlice(t, []float64{0.8, 0.8, 0.8}, series(fig.Panels[0])[PolicyIncomplete], 1e-9)
	assert.Equal(t, handlingPanel, fig.Panels[2].Title)
	assert.InDelta(t, 3.0, series(fig.Panels[2])["45 us"][2], 1e-9)
	checks := validateViews(p, []*View{{p: p, figs: []Figure{fig}, l: l}})
	var i1 []Check
	for _, c := range checks {
		if c.ID == "I1" {
			i1 = append(i1, c)
		}
	}
	require.Len(t, i1, 2)
	assert.InDelta(t, 80, i1[0].Models[0].Value, 1e-9)
	assert.Equal(t, "pass", i1[0].Status(0))
	assert.InDelta(t, 1.25, i1[1].Models[0].Value, 1e-9)
	assert.Equal(t, "pass", i1[1].Status(0))
}

// The Markdown names the runs it lacks and computes every figure of its
// text from the runs: on two workloads whose copy+execute is bound by its
// copy (kernels 50,000 of its 100,000 cycles) complete takes 80x and
// incomplete 1.4x, so the paper's ordering holds on neither, and the
// reason reads the runs: incomplete migrates the 1 MB copy+execute copies.
func TestIncompleteDoc(t *testing.T) {
	p := Params{Workloads: []string{"ispass-cp", "ispass-ray"}, Scale: 1, Seed: 1, Policies: []string{PolicyIncomplete, PolicyComplete, PolicyCopyExecute}}
	specs := incompleteSpecs(p)
	var out []Outcome
	for _, s := range specs {
		o := Outcome{Spec: s}
		r := &o.Result
		r.ClockMHz = 1400
		switch s.Policy {
		case PolicyCopyExecute:
			r.Cycles, r.TimelineCycles, r.PCIeH2DBytes = 100_000, 50_000, 1<<20
		case PolicyComplete:
			r.Cycles, r.MigrationRequests, r.MigratedBytes = 8_000_000, 2, 4<<20
		default:
			r.Cycles, r.MigrationRequests, r.MigratedBytes = 140_000, 1, 1<<20
		}
		if s.Workload == "ispass-ray" && slices.Contains(s.Sets, gapSet(65536)) {
			o.Err = ErrNotStored
		}
		out = append(out, o)
	}
	var b strings.Builder
	require.NoError(t, WriteIncompleteDoc(&b, p, NewLookup(out)))
	doc := b.String()
	assert.Contains(t, doc, "from 27 of its 28 runs. Not run (n/a below, and left out of the geomeans): ispass-ray incomplete 16 GB/s merge_gap_bytes=65536.")
	assert.Contains(t, doc, "| ispass-cp | 80.00 | 1.40 | 80.00 | 1.40 | complete > incomplete > copy-execute | complete > incomplete > copy-execute |")
	assert.Contains(t, doc, "holds at 16 GB/s on 0 of 2 workloads (none) and at 32 GB/s on 0 (none)")
	// complete: 2 faults x 45 us x 1,400 cycles/us / 8,000,000 = 1.6%;
	// incomplete: 1 x 1 us x 1,400 / 140,000 = 1%, and 1 MB at 16 GB/s,
	// 65.536 us = 91,750 cycles, 66% of 140,000.
	assert.Contains(t, doc, "| ispass-cp | 1.00 | 50% | 4.00 | 2 | 2% | 1.00 | 1 (0) | 1% | 66% |")
	assert.Contains(t, doc, "On 2 of them (ispass-cp, ispass-ray) copy+execute is bound by its copy")
	assert.Contains(t, doc, "| ispass-ray | 1.40 | 1.40 | 1.40 | 1.40 | n/a |")
	assert.Contains(t, doc, "| 1.36 | 0.71 | ±25% | fail |", "I1: 1 / 1.4 = 0.71x the speed of copy+execute")
}

// The generated section of docs/incomplete.md is what the experiment
// writes from the runs stored in docs/results/incomplete, byte for byte.
func TestIncompleteDocIsGenerated(t *testing.T) {
	const dir = "../../docs/results/incomplete"
	pl, err := ReadPlan(dir)
	require.NoError(t, err)
	require.Equal(t, IncompleteName, pl.Command)
	base, err := pl.BaseConfig()
	require.NoError(t, err)
	out, err := Run(pl.Specs, Options{Base: base, Dir: dir, StoredOnly: true})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, WriteIncompleteDoc(&b, *pl.Params, NewLookup(out)))
	page, err := os.ReadFile("../../docs/incomplete.md")
	require.NoError(t, err)
	section, err := DocSection(page, IncompleteName)
	require.NoError(t, err)
	assert.Equal(t, b.String(), section, "docs/incomplete.md differs from the runs stored in docs/results/incomplete; regenerate it with "+
		"uvmsim experiment incomplete --workloads all --out docs/results/incomplete --doc docs/incomplete.md")
}

func TestDocSection(t *testing.T) {
	page := []byte("head\n<!-- generated by uvmsim experiment incomplete -->\nold\n<!-- end of uvmsim experiment incomplete -->\ntail\n")
	s, err := DocSection(page, IncompleteName)
	require.NoError(t, err)
	assert.Equal(t, "old\n", s)
	out, err := ReplaceDocSection(page, IncompleteName, []byte("new\ntext\n"))
	require.NoError(t, err)
	assert.Equal(t, "head\n<!-- generated by uvmsim experiment incomplete -->\nnew\ntext\n<!-- end of uvmsim experiment incomplete -->\ntail\n", string(out))
	_, err = DocSection([]byte("no markers\n"), IncompleteName)
	assert.ErrorContains(t, err, "no \"<!-- generated by uvmsim experiment incomplete -->\"")
}
