package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/system"
)

var approx = cmp.Options{cmpopts.EquateNaNs(), cmpopts.EquateApprox(1e-12, 0)}

// testParams are two workloads with every paper policy and eviction
// variant offered, independent of what the registry holds today.
func testParams() Params {
	return Params{
		Workloads: []string{"hotspot", "ra"}, Scale: 1, Seed: 1,
		Policies:  []string{PolicyUM, PolicyUVMSmart, PolicyAdaptive, PolicyUVMMU},
		Evictions: EvictionVariants,
	}
}

// outcomes makes hand-made results: cycles(spec) for each spec, a failed
// run where it returns 0.
func outcomes(specs []Spec, cycles func(Spec) uint64) []Outcome {
	var out []Outcome
	for _, s := range specs {
		o := Outcome{Spec: s}
		if c := cycles(s); c > 0 {
			o.Result = system.Result{Workload: s.Workload, Policy: s.Policy, OversubPct: s.OversubPct, Cycles: c}
		} else {
			o.Err = errors.New("did not complete")
		}
		out = append(out, o)
	}
	return out
}

func series(panel Panel) map[string][]float64 {
	m := map[string][]float64{}
	for _, s := range panel.Series {
		m[s.Name] = s.Values
	}
	return m
}

func TestGeomean(t *testing.T) {
	g, n := Geomean([]float64{2, 8})
	assert.InDelta(t, 4, g, 1e-12)
	assert.Equal(t, 2, n)
	g, n = Geomean([]float64{2, math.NaN(), 8})
	assert.InDelta(t, 4, g, 1e-12)
	assert.Equal(t, 2, n)
	g, n = Geomean(nil)
	assert.True(t, math.IsNaN(g))
	assert.Zero(t, n)
}

func TestRatioMissing(t *testing.T) {
	assert.InDelta(t, 0.5, Ratio(1, 2), 1e-12)
	assert.True(t, math.IsNaN(Ratio(0, 2)))
	assert.True(t, math.IsNaN(Ratio(2, 0)))
}

func TestFig4SpeedupsOverUMWithGeomean(t *testing.T) {
	p := testParams()
	cyc := map[string]uint64{"hotspot/um": 1000, "hotspot/uvmsmart": 800, "hotspot/uvmmu": 250, "ra/um": 3000, "ra/uvmmu": 300}
	out := outcomes(fig4Specs(p), func(s Spec) uint64 { return cyc[s.Workload+"/"+s.Policy] })
	fig := fig4Build(p, NewLookup(out))
	require.Len(t, fig.Panels, len(MainRatios))
	panel := fig.Panels[1]
	assert.Equal(t, "125% oversubscription", panel.Title)
	assert.Equal(t, []string{"hotspot", "ra", GeomeanGroup}, panel.Groups)
	want := map[string][]float64{
		"UM":       {1, 1, 1},
		"UVMSmart": {1.25, math.NaN(), 1.25},
		"UVMMU":    {4, 10, math.Sqrt(40)},
	}
	if d := cmp.Diff(want, series(panel), approx); d != "" {
		t.Errorf("fig4 125%% panel (-want +got):\n%s", d)
	}
	assert.Contains(t, strings.Join(fig.Notes, "\n"), "UVMSmart: geomean over the 1 of 2 workloads")
}

func TestFig4WithoutUVMSmartSaysSo(t *testing.T) {
	p := testParams()
	p.Policies = []string{PolicyUM, PolicyUVMMU}
	for _, s := range fig4Specs(p) {
		assert.NotEqual(t, PolicyUVMSmart, s.Policy)
	}
	fig := fig4Build(p, NewLookup(outcomes(fig4Specs(p), func(Spec) uint64 { return 100 })))
	require.NotEmpty(t, fig.Panels)
	assert.False(t, fig.Panels[0].HasSeries("UVMSmart"))
	assert.Contains(t, strings.Join(fig.Notes, "\n"), "policy uvmsmart is not registered")
}

func TestFig1NormalisedTo50us(t *testing.T) {
	p := testParams()
	specs := fig1Specs(p)
	require.Len(t, specs, len(p.Workloads)*len(MainRatios)*len(FaultLatenciesUs))
	// Time = 1000 cycles of work + 100 cycles per us of fault latency.
	cycles := func(s Spec) uint64 {
		var us float64
		for _, set := range s.Sets {
			if v, ok := strings.CutPrefix(set, FaultLatencyKey+"="); ok {
				require.NoError(t, json.Unmarshal([]byte(v), &us))
			}
		}
		return 1000 + uint64(100*us)
	}
	fig := fig1Build(p, NewLookup(outcomes(specs, cycles)))
	require.Len(t, fig.Panels, len(MainRatios))
	got := series(fig.Panels[0])
	assert.InDelta(t, 1.0, got["50 us"][2], 1e-12)
	assert.InDelta(t, 3000.0/6000, got["20 us"][0], 1e-12)
	assert.InDelta(t, 1000.0/6000, got["0 us"][2], 1e-12)
}

func TestFig5NeedsTheEvictionKey(t *testing.T) {
	p := testParams()
	p.Evictions = nil
	assert.Empty(t, fig5Specs(p))
	fig := fig5Build(p, NewLookup(nil))
	assert.Empty(t, fig.Panels)
	assert.Contains(t, strings.Join(fig.Notes, "\n"), EvictionKey)
}

func TestFig5NormalisedToLinearRandom(t *testing.T) {
	p := testParams()
	p.Evictions = []string{"random", "nru"}
	cycles := func(s Spec) uint64 {
		if s.Sets[0] == EvictionKey+"=nru" {
			return 110
		}
		return 100
	}
	fig := fig5Build(p, NewLookup(outcomes(fig5Specs(p), cycles)))
	require.Len(t, fig.Panels, len(EvictionRatios))
	want := map[string][]float64{"random": {1, 1, 1}, "nru": {1.1, 1.1, 1.1}}
	if d := cmp.Diff(want, series(fig.Panels[0]), approx); d != "" {
		t.Errorf("fig5 (-want +got):\n%s", d)
	}
	assert.Contains(t, strings.Join(fig.Notes, "\n"), "uvmmu.eviction=tree is not offered")
}

func TestFig6NormalisedToNoOversubscription(t *testing.T) {
	p := testParams()
	cycles := func(s Spec) uint64 {
		if s.Policy == PolicyUVMSmart && s.OversubPct > 150 {
			return 0 // UVMSmart did not complete past 150% (UVMMU Section V-C2)
		}
		return uint64(10 * s.OversubPct)
	}
	fig := fig6Build(p, NewLookup(outcomes(fig6Specs(p), cycles)))
	require.Len(t, fig.Panels, 2)
	assert.True(t, fig.Lines)
	uvmmu, smart := series(fig.Panels[0]), series(fig.Panels[1])
	assert.Equal(t, "UVMMU", fig.Panels[0].Title)
	assert.InDelta(t, 2.0, uvmmu["200%"][2], 1e-12)
	assert.InDelta(t, 1.5, smart["150%"][2], 1e-12)
	assert.True(t, math.IsNaN(smart["175%"][2]))
}

func TestFigureTableCSVAndJSON(t *testing.T) {
	fig := Figure{ID: "figx", Title: "t", YLabel: "y", Panels: []Panel{{
		Title: "p", Groups: []string{"a", GeomeanGroup},
		Series: []Series{{Name: "s", Values: []float64{2, math.NaN()}}},
	}}, Notes: []string{"a note"}}
	var table bytes.Buffer
	require.NoError(t, fig.WriteTable(&table))
	assert.Contains(t, table.String(), "2.000")
	assert.Contains(t, table.String(), "n/a")
	assert.Contains(t, table.String(), "note: a note")

	var csvOut bytes.Buffer
	require.NoError(t, fig.WriteCSV(&csvOut))
	assert.Equal(t, "figure,panel,group,series,value\nfigx,p,a,s,2\nfigx,p,geomean,s,\n", csvOut.String())

	var js bytes.Buffer
	require.NoError(t, fig.WriteJSON(&js))
	var back struct {
		Panels []struct {
			Series []struct {
				Name   string     `json:"name"`
				Values []*float64 `json:"values"`
			} `json:"series"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	vals := back.Panels[0].Series[0].Values
	require.Len(t, vals, 2)
	assert.InDelta(t, 2.0, *vals[0], 0)
	assert.Nil(t, vals[1])
}
