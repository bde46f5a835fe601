package experiment

import (
	"errors"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot geometry, in points.
const (
	barWidth     = vg.Length(7)   // one bar
	groupGap     = vg.Length(10)  // between bar groups
	minPlotWidth = vg.Length(480) // narrowest figure
	panelHeight  = vg.Length(230) // one panel
	stripHeight  = vg.Length(18)  // the title line, and each legend line
	swatchSize   = vg.Length(9)   // a legend colour square
	legendGap    = vg.Length(14)  // between legend entries
	// yTicks is about how many labelled steps the y axis is divided into.
	yTicks = 5
	// headroom keeps the tallest bar or point off the top of its panel.
	headroom = 1.04
)

// ErrNothingToPlot is returned for a figure with no panels (its runs were
// not possible; the notes say why).
var ErrNothingToPlot = errors.New("figure has no panels to plot")

// PanelLabel is the letter the paper's figures give their panels: (a),
// (b), (c), ...
func PanelLabel(i int) string { return "(" + string(rune('a'+i)) + ")" }

// WriteSVG draws the figure as the paper lays its figures out: the title,
// one legend for the whole figure above the panels (never over a bar),
// then the panels (a), (b), ... stacked, each a grouped bar chart (bars per
// workload, then the geomean group) with round-number y ticks and, for a
// normalised figure, a dashed line at the reference (for example UM = 1).
// A line figure (fig6) is one chart of each panel's geomean over the
// series.
func (f *Figure) WriteSVG(w io.Writer) error {
	return f.render(func(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) }, w)
}

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
}

// legendEntry is one item of the figure's legend.
type legendEntry struct {
	name  string
	color color.Color
	line  bool
}

// render draws the figure on a canvas of the size it needs and writes it.
func (f *Figure) render(newCanvas func(w, h vg.Length) vg.CanvasWriterTo, w io.Writer) error {
	if len(f.Panels) == 0 {
		return ErrNothingToPlot
	}
	var plots []*plot.Plot
	var legend []legendEntry
	width := minPlotWidth
	if f.Lines {
		p, err := f.linePlot()
		if err != nil {
			return err
		}
		plots = append(plots, p)
		for i, panel := range f.Panels {
			legend = append(legend, legendEntry{panel.Title, seriesColor(i), true})
		}
	} else {
		colors := f.seriesColors()
		for i := range f.Panels {
			p, pw, err := f.barPlot(i, colors)
			if err != nil {
				return err
			}
			width = max(width, pw)
			plots = append(plots, p)
		}
		for _, name := range colors.names {
			legend = append(legend, legendEntry{name, colors.of[name], false})
		}
	}
	if f.Reference != "" {
		legend = append(legend, legendEntry{f.Reference + " = 1", referenceColor, true})
	}
	label := textStyle(11)
	lines := legendLines(legend, label, width)
	header := stripHeight * vg.Length(1+len(lines))
	c := newCanvas(width, header+panelHeight*vg.Length(len(plots)))
	dc := draw.New(c)

	title := textStyle(12)
	title.XAlign, title.YAlign = draw.XCenter, draw.YTop
	dc.FillText(title, vg.Point{X: width / 2, Y: dc.Max.Y - 3}, f.ID+": "+f.Title)
	for li, line := range lines {
		y := dc.Max.Y - stripHeight*vg.Length(li+1) - stripHeight/2
		x := (width - lineWidth(line, label)) / 2
		for _, e := range line {
			if e.line {
				dc.StrokeLine2(draw.LineStyle{Color: e.color, Width: vg.Points(1.5), Dashes: e.dashes()}, x, y, x+2*swatchSize, y)
				x += 2*swatchSize + 4
			} else {
				dc.FillPolygon(e.color, []vg.Point{{X: x, Y: y - swatchSize/2}, {X: x + swatchSize, Y: y - swatchSize/2},
					{X: x + swatchSize, Y: y + swatchSize/2}, {X: x, Y: y + swatchSize/2}})
				x += swatchSize + 4
			}
			st := label
			st.YAlign = draw.YCenter
			dc.FillText(st, vg.Point{X: x, Y: y}, e.name)
			x += label.Width(e.name) + legendGap
		}
	}
	body := draw.Crop(dc, 0, 0, 0, -header)
	rows := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
	}
	tiles := plot.Align(rows, draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(6), PadX: vg.Points(4), PadTop: vg.Points(2)}, body)
	for i, p := range plots {
		p.Draw(tiles[i][0])
	}
	_, err := c.WriteTo(w)
	return err
}

// palette is the series colours: the soft colours, then the dark ones,
// so up to 14 series are told apart (the latency figure has 8).
var palette = append(append([]color.Color(nil), plotutil.SoftColors...), plotutil.DarkColors...)

// seriesColor is the i-th series colour.
func seriesColor(i int) color.Color { return palette[i%len(palette)] }

// seriesPalette gives each series name one colour across the panels, in
// order of first appearance, so one legend serves every panel.
type seriesPalette struct {
	names []string
	of    map[string]color.Color
}

func (f *Figure) seriesColors() seriesPalette {
	p := seriesPalette{of: map[string]color.Color{}}
	for _, panel := range f.Panels {
		for _, s := range panel.Series {
			if _, ok := p.of[s.Name]; !ok {
				p.of[s.Name] = seriesColor(len(p.names))
				p.names = append(p.names, s.Name)
			}
		}
	}
	return p
}

// referenceColor draws the reference line.
var referenceColor = color.Gray{Y: 90}

func (e legendEntry) dashes() []vg.Length {
	if e.color == referenceColor {
		return []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return nil
}

func entryWidth(e legendEntry, st text.Style) vg.Length {
	sw := swatchSize
	if e.line {
		sw = 2 * swatchSize
	}
	return sw + 4 + st.Width(e.name) + legendGap
}

func lineWidth(line []legendEntry, st text.Style) vg.Length {
	var w vg.Length
	for _, e := range line {
		w += entryWidth(e, st)
	}
	return w - legendGap
}

// legendLines wraps the legend entries into lines that fit the width.
func legendLines(entries []legendEntry, st text.Style, width vg.Length) [][]legendEntry {
	var lines [][]legendEntry
	var line []legendEntry
	var used vg.Length
	for _, e := range entries {
		ew := entryWidth(e, st)
		if len(line) > 0 && used+ew > width-20 {
			lines, line, used = append(lines, line), nil, 0
		}
		line, used = append(line, e), used+ew
	}
	return append(lines, line)
}

// niceTicks labels the y axis at round steps (1, 2, 2.5 or 5 times a
// power of ten, about yTicks of them from zero) with a minor tick between, and
// labels each with as many decimals as its step has.
type niceTicks struct{}

// niceStep is the round step that divides [0, top] into about yTicks.
func niceStep(top float64) float64 {
	raw := top / yTicks
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// niceTop is the first step at or above top: the y axis ends on a label.
func niceTop(top float64) float64 {
	step := niceStep(top)
	return math.Ceil(top/step-1e-9) * step
}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	step := niceStep(hi - lo)
	decimals := 0
	for scaled := step; decimals < 6 && math.Abs(scaled-math.Round(scaled)) > 1e-9*scaled; scaled *= 10 {
		decimals++
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		if mid := v + step/2; mid < hi {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	return ticks
}

// yAxis sets a panel's y axis from zero to a round number over top.
func yAxis(p *plot.Plot, top float64) {
	p.Y.Min = 0
	p.Y.Max = 1
	if top > 0 {
		p.Y.Max = niceTop(top * headroom)
	}
	p.Y.Tick.Marker = niceTicks{}
}

// referenceLine is the dashed y = 1 line across n categories.
func referenceLine(n int) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(n) - 0.5, Y: 1}})
	if err != nil {
		return nil, err
	}
	l.Color = referenceColor
	l.Width = vg.Points(1)
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	return l, nil
}

func (f *Figure) barPlot(i int, colors seriesPalette) (*plot.Plot, vg.Length, error) {
	panel := &f.Panels[i]
	p := plot.New()
	p.Title.Text = PanelLabel(i) + " " + panel.Title
	p.Title.TextStyle.Font.Size = 11
	p.Y.Label.Text = f.YLabel
	if panel.YLabel != "" {
		p.Y.Label.Text = panel.YLabel
	}
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
		bars.Color = colors.of[s.Name]
		bars.LineStyle.Width = 0
		bars.Offset = barWidth * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(bars)
	}
	if f.Reference != "" {
		l, err := referenceLine(len(panel.Groups))
		if err != nil {
			return nil, 0, err
		}
		p.Add(l)
		top = math.Max(top, 1)
	}
	yAxis(p, top)
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
	p.Title.Text = PanelLabel(0) + " " + GeomeanGroup + " over the workloads"
	p.Title.TextStyle.Font.Size = 11
	p.Y.Label.Text = f.YLabel
	p.X.Label.Text = f.XLabel
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
		line.Color = seriesColor(i)
		points.Color = seriesColor(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
	}
	if f.Reference != "" {
		l, err := referenceLine(len(xs))
		if err != nil {
			return nil, err
		}
		p.Add(l)
		top = math.Max(top, 1)
	}
	p.NominalX(xs...)
	yAxis(p, top)
	return p, nil
}
