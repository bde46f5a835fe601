package experiment

import (
	"errors"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot geometry.
const (
	barWidth     = vg.Length(7)   // points per bar
	groupGap     = vg.Length(10)  // points between bar groups
	minPlotWidth = vg.Length(480) // points
	panelHeight  = vg.Length(260) // points per panel
	legendEntry  = 16.0           // points per legend line
	legendMargin = 60.0           // points of title and axis around the data area
)

// headroom is the y-axis top over the tallest value that keeps n legend
// entries clear of the bars.
func headroom(n int) float64 {
	legend := legendEntry * float64(n+1) / (float64(panelHeight) - legendMargin)
	return 1 / (1 - min(legend, 0.6))
}

// ErrNothingToPlot is returned for a figure with no panels (its runs were
// not possible; the notes say why).
var ErrNothingToPlot = errors.New("figure has no panels to plot")

// WriteSVG draws the figure: one grouped bar chart per panel stacked
// vertically (bars per workload, then the geomean group), or, for a line
// figure, one line per panel through its geomean over the series (the
// x-axis).
func (f *Figure) WriteSVG(w io.Writer) error {
	return f.render(func(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) }, w)
}

// render draws the figure on a canvas of the size it needs and writes it.
func (f *Figure) render(newCanvas func(w, h vg.Length) vg.CanvasWriterTo, w io.Writer) error {
	if len(f.Panels) == 0 {
		return ErrNothingToPlot
	}
	var plots []*plot.Plot
	var err error
	width := minPlotWidth
	if f.Lines {
		var p *plot.Plot
		if p, err = f.linePlot(); err != nil {
			return err
		}
		plots = append(plots, p)
	} else {
		for i := range f.Panels {
			p, pw, err := f.barPlot(&f.Panels[i])
			if err != nil {
				return err
			}
			width = max(width, pw)
			plots = append(plots, p)
		}
	}
	c := newCanvas(width, panelHeight*vg.Length(len(plots)))
	dc := draw.New(c)
	rows := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
	}
	tiles := plot.Align(rows, draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(8)}, dc)
	for i, p := range plots {
		p.Draw(tiles[i][0])
	}
	_, err = c.WriteTo(w)
	return err
}

func (f *Figure) barPlot(panel *Panel) (*plot.Plot, vg.Length, error) {
	p := plot.New()
	p.Title.Text = f.ID + ": " + panel.Title
	p.Y.Label.Text = f.YLabel
	if panel.YLabel != "" {
		p.Y.Label.Text = panel.YLabel
	}
	p.Legend.Top = true
	n := len(panel.Series)
	top := 0.0
	for i, s := range panel.Series {
		vals := make(plotter.Values, len(s.Values))
		for j, v := range s.Values {
			if !math.IsNaN(v) {
				vals[j] = v
				top = math.Max(top, v)
			}
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return nil, 0, err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = barWidth * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(bars)
		p.Legend.Add(s.Name, bars)
	}
	p.Y.Min = 0
	if top > 0 {
		p.Y.Max = top * headroom(n)
	}
	p.NominalX(panel.Groups...)
	if len(panel.Groups) > 10 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
	}
	width := vg.Length(len(panel.Groups))*(barWidth*vg.Length(n)+groupGap) + vg.Points(80)
	return p, width, nil
}

func (f *Figure) linePlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = f.ID + ": " + f.Title + " (" + GeomeanGroup + ")"
	p.Y.Label.Text = f.YLabel
	p.X.Label.Text = f.XLabel
	p.Legend.Top = true
	var xs []string
	top := 0.0
	for i, panel := range f.Panels {
		var pts plotter.XYs
		for j, s := range panel.Series {
			if len(xs) < len(panel.Series) {
				xs = append(xs, s.Name)
			}
			if v := s.Values[len(s.Values)-1]; !math.IsNaN(v) {
				pts = append(pts, plotter.XY{X: float64(j), Y: v})
				top = math.Max(top, v)
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(i)
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(panel.Title, line, points)
	}
	p.NominalX(xs...)
	p.Y.Min = 0
	if top > 0 {
		p.Y.Max = top * headroom(len(f.Panels))
	}
	return p, nil
}
