package experiment

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// svgContent is what a figure's SVG shows: its texts, and how many filled
// shapes of each fill colour and dashed lines it draws.
type svgContent struct {
	texts  []string
	fills  map[string]int
	dashed int
}

func parseSVG(t *testing.T, data []byte) svgContent {
	t.Helper()
	c := svgContent{fills: map[string]int{}}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var text *strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG parses as XML")
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "text":
				text = &strings.Builder{}
			case "path":
				for _, a := range tok.Attr {
					if a.Name.Local != "style" {
						continue
					}
					for _, decl := range strings.Split(a.Value, ";") {
						k, v, _ := strings.Cut(decl, ":")
						switch {
						case k == "fill" && v != "none":
							c.fills[v]++
						case k == "stroke-dasharray":
							c.dashed++
						}
					}
				}
			}
		case xml.CharData:
			if text != nil {
				text.Write(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" && text != nil {
				c.texts = append(c.texts, strings.TrimSpace(text.String()))
				text = nil
			}
		}
	}
	return c
}

func hexColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// fig4Like is Fig. 4's shape: three ratios, two workloads and the
// geomean, UM, UVMSmart and UVMMU, speedups up to 17.5.
func fig4Like() Figure {
	panel := func(title string, top float64) Panel {
		return Panel{Title: title, Groups: []string{"bfs", "ra", GeomeanGroup}, Series: []Series{
			{Name: "UM", Values: []float64{1, 1, 1}},
			{Name: "UVMSmart", Values: []float64{1.25, 0.66, 0.9}},
			{Name: "UVMMU", Values: []float64{top, top * 0.4, top * 0.6}},
		}}
	}
	return Figure{ID: "fig4", Title: "Speedup over NVIDIA UM", YLabel: "speedup over UM", Reference: "UM", Panels: []Panel{
		panel("no oversubscription", 4.4), panel("125% oversubscription", 17.5), panel("150% oversubscription", 17.5),
	}}
}

func TestFig4SVGReadsLikeThePaper(t *testing.T) {
	fig := fig4Like()
	var b bytes.Buffer
	require.NoError(t, fig.WriteSVG(&b))
	svg := parseSVG(t, b.Bytes())
	for _, want := range []string{
		"fig4: Speedup over NVIDIA UM",
		"(a) no oversubscription", "(b) 125% oversubscription", "(c) 150% oversubscription",
		"speedup over UM", "bfs", "ra", GeomeanGroup,
		"UM", "UVMSmart", "UVMMU", "UM = 1",
		// Round ticks: 0 to 5 in ones for 4.4, 0 to 20 in fives for 17.5
		// (the old axes showed only "0.00" and "25.00").
		"0", "1", "2", "3", "4", "5", "10", "15", "20",
	} {
		assert.Contains(t, svg.texts, want)
	}
	for _, s := range svg.texts {
		assert.NotRegexp(t, `^-?\d+\.00$`, s, "a tick label with needless decimals")
	}
	// One bar per workload, geomean and policy in each of the 3 panels,
	// and one legend swatch per policy.
	for i, s := range fig.Panels[0].Series {
		assert.Equal(t, 3*3+1, svg.fills[hexColor(seriesColor(i))], s.Name)
	}
	// The UM = 1 line in each panel and in the legend.
	assert.Equal(t, 3+1, svg.dashed)
	// The legend is drawn once, above the panels, not in each.
	assert.Equal(t, 1, count(svg.texts, "UVMSmart"))
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func TestEveryExperimentFigureDrawsItsPanelsAndBars(t *testing.T) {
	p := testParams()
	p.Policies = append(p.Policies, PolicyIncomplete, PolicyComplete, PolicyCopyExecute)
	// Hand-made cycles that differ per run, and latency samples for the
	// runs that keep them.
	out := outcomes(ValidationSpecs(p), func(s Spec) uint64 { return uint64(1000 + 37*len(s.Key())*s.OversubPct) })
	for i := range out {
		if out[i].Spec.Latencies {
			out[i].Latencies = &Latencies{ClockMHz: 1000, Free: []uint64{1000, 2000, 3500}, Swap: []uint64{4000, 9000}}
		}
	}
	figs := BuildFigures(p, NewLookup(out))
	require.Len(t, figs, len(Experiments()))
	for _, fig := range figs {
		var b bytes.Buffer
		require.NoError(t, fig.WriteSVG(&b), fig.ID)
		svg := parseSVG(t, b.Bytes())
		require.NotEmpty(t, fig.Panels, fig.ID)
		assert.Contains(t, svg.texts, fig.ID+": "+fig.Title, fig.ID)
		assert.Contains(t, svg.texts, fig.YLabel, fig.ID)
		if fig.Reference != "" {
			assert.Contains(t, svg.texts, fig.Reference+" = 1", fig.ID)
		}
		if fig.Lines {
			assert.Contains(t, svg.texts, PanelLabel(0)+" "+GeomeanGroup+" over the workloads", fig.ID)
			assert.Contains(t, svg.texts, fig.XLabel, fig.ID)
			for _, panel := range fig.Panels {
				assert.Contains(t, svg.texts, panel.Title, fig.ID)
			}
			continue
		}
		palette := fig.seriesColors()
		bars := map[string]int{}
		for i, panel := range fig.Panels {
			assert.Contains(t, svg.texts, PanelLabel(i)+" "+panel.Title, fig.ID)
			for _, g := range panel.Groups {
				assert.Contains(t, svg.texts, g, fig.ID)
			}
			for _, s := range panel.Series {
				bars[hexColor(palette.of[s.Name])] += len(panel.Groups)
			}
		}
		for _, name := range palette.names {
			c := hexColor(palette.of[name])
			assert.Equal(t, bars[c]+1, svg.fills[c], "%s: %s: one bar per group and panel, one legend swatch", fig.ID, name)
			assert.Equal(t, 1, count(svg.texts, name), "%s: %s named once, in the legend", fig.ID, name)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var l []string
		for _, tk := range (niceTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		return l
	}
	assert.Equal(t, []string{"0", "5", "10", "15", "20"}, labels(0, niceTop(17.5*headroom)))
	assert.Equal(t, []string{"0", "1", "2", "3", "4", "5"}, labels(0, niceTop(4.4*headroom)))
	assert.Equal(t, []string{"0.00", "0.25", "0.50", "0.75", "1.00", "1.25"}, labels(0, niceTop(1.04)))
	assert.Equal(t, []string{"0.0", "0.1", "0.2", "0.3", "0.4"}, labels(0, niceTop(0.32*headroom)))
	assert.Equal(t, 500.0, niceTop(404*headroom))
}

func TestLineFigureRendersSVG(t *testing.T) {
	fig := Figure{ID: "fig6", Title: "Execution time with different oversubscription ratios", YLabel: "normalised", XLabel: "ratio", Lines: true, Reference: "100%", Panels: []Panel{
		{Title: "UVMMU", Groups: []string{"ra", GeomeanGroup}, Series: []Series{
			{Name: "100%", Values: []float64{1, 1}}, {Name: "150%", Values: []float64{1.5, 1.5}}, {Name: "200%", Values: []float64{1.9, 1.9}},
		}},
		{Title: "UVMSmart", Groups: []string{"ra", GeomeanGroup}, Series: []Series{
			{Name: "100%", Values: []float64{1, 1}}, {Name: "150%", Values: []float64{2.3, 2.3}}, {Name: "200%", Values: []float64{math.NaN(), math.NaN()}},
		}},
	}}
	var b bytes.Buffer
	require.NoError(t, fig.WriteSVG(&b))
	svg := parseSVG(t, b.Bytes())
	for _, want := range []string{"UVMMU", "UVMSmart", "100% = 1", "100%", "150%", "200%", "ratio", "normalised"} {
		assert.Contains(t, svg.texts, want)
	}
}

func TestEmptyFigureHasNothingToPlot(t *testing.T) {
	fig := Figure{ID: "fig5", Notes: []string{"not run"}}
	assert.ErrorIs(t, fig.WriteSVG(&bytes.Buffer{}), ErrNothingToPlot)
}
