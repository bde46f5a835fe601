package experiment

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBarFigureRendersSVG(t *testing.T) {
	fig := Figure{ID: "fig4", Title: "Speedup over NVIDIA UM", YLabel: "speedup over UM", Panels: []Panel{
		{Title: "no oversubscription", Groups: []string{"hotspot", "ra", GeomeanGroup}, Series: []Series{
			{Name: "UM", Values: []float64{1, 1, 1}},
			{Name: "UVMMU", Values: []float64{2, math.NaN(), 2}},
		}},
		{Title: "125% oversubscription", Groups: []string{"hotspot", "ra", GeomeanGroup}, Series: []Series{
			{Name: "UM", Values: []float64{1, 1, 1}},
			{Name: "UVMMU", Values: []float64{3, 9, 5.2}},
		}},
	}}
	var b bytes.Buffer
	require.NoError(t, fig.WriteSVG(&b))
	svg := b.String()
	assert.Contains(t, svg, "<svg")
	assert.Contains(t, svg, "UVMMU")
	assert.Contains(t, svg, "125% oversubscription")
	assert.Greater(t, b.Len(), 1000)
}

func TestLineFigureRendersSVG(t *testing.T) {
	fig := Figure{ID: "fig6", Title: "Execution time with different oversubscription ratios", YLabel: "normalised", Lines: true, Panels: []Panel{
		{Title: "UVMMU", Groups: []string{"ra", GeomeanGroup}, Series: []Series{
			{Name: "100%", Values: []float64{1, 1}}, {Name: "150%", Values: []float64{1.5, 1.5}}, {Name: "200%", Values: []float64{1.9, 1.9}},
		}},
		{Title: "UVMSmart", Groups: []string{"ra", GeomeanGroup}, Series: []Series{
			{Name: "100%", Values: []float64{1, 1}}, {Name: "150%", Values: []float64{2.3, 2.3}}, {Name: "200%", Values: []float64{math.NaN(), math.NaN()}},
		}},
	}}
	var b bytes.Buffer
	require.NoError(t, fig.WriteSVG(&b))
	assert.Contains(t, b.String(), "<svg")
	assert.Contains(t, b.String(), "UVMSmart")
}

func TestEmptyFigureHasNothingToPlot(t *testing.T) {
	fig := Figure{ID: "fig5", Notes: []string{"not run"}}
	assert.ErrorIs(t, fig.WriteSVG(&bytes.Buffer{}), ErrNothingToPlot)
}
