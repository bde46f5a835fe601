package experiment

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// GeomeanGroup names the geometric-mean group every panel ends with.
const GeomeanGroup = "geomean"

// Figure is one of the paper's figures as numbers: panels (one per
// oversubscription ratio or per policy) of grouped values.
type Figure struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	YLabel string `json:"y_label"`
	XLabel string `json:"x_label,omitempty"` // the series axis of a line figure
	Lines  bool   `json:"lines,omitempty"`   // drawn as lines over the panels' geomeans (fig6) instead of bars
	// Reference names what a normalised figure's values are relative to
	// (its values are 1 there): the plot draws a dashed "Reference = 1"
	// line. Empty for absolute values.
	Reference string   `json:"reference,omitempty"`
	Panels    []Panel  `json:"panels"`
	Notes     []string `json:"notes,omitempty"`
}

// Panel is one chart: a value per (group, series); groups are the x-axis
// categories (workloads, then the geomean), series the bars in a group.
type Panel struct {
	Title  string   `json:"title"`
	YLabel string   `json:"y_label,omitempty"` // overrides the figure's`
	Groups []string `json:"groups"`
	Series []Series `json:"series"`
}

// Series is one bar colour (or line): a value per group, NaN where the run
// did not complete.
type Series struct {
	Name   string    `json:"name"`
	Values []float64 `json:"-"`
}

// MarshalJSON writes missing values (NaN) as null.
func (s Series) MarshalJSON() ([]byte, error) {
	vals := make([]*float64, len(s.Values))
	for i := range s.Values {
		if !math.IsNaN(s.Values[i]) {
			vals[i] = &s.Values[i]
		}
	}
	return json.Marshal(struct {
		Name   string     `json:"name"`
		Values []*float64 `json:"values"`
	}{s.Name, vals})
}

// Value is the series' value for group, or NaN.
func (p *Panel) Value(series, group string) float64 {
	for _, s := range p.Series {
		if s.Name != series {
			continue
		}
		for i, g := range p.Groups {
			if g == group {
				return s.Values[i]
			}
		}
	}
	return math.NaN()
}

// HasSeries reports whether the panel has a series of that name.
func (p *Panel) HasSeries(name string) bool {
	for _, s := range p.Series {
		if s.Name == name {
			return true
		}
	}
	return false
}

// Geomean is the geometric mean of the finite positive values, and how
// many there were; NaN when there are none.
func Geomean(values []float64) (float64, int) {
	sum, n := 0.0, 0
	for _, v := range values {
		if v > 0 && !math.IsInf(v, 0) {
			sum += math.Log(v)
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return math.Exp(sum / float64(n)), n
}

// Ratio is num/den as float64, NaN when either is missing (zero cycles
// mark a run that did not complete).
func Ratio(num, den uint64) float64 {
	if num == 0 || den == 0 {
		return math.NaN()
	}
	return float64(num) / float64(den)
}

// withGeomean appends the geomean group to a panel whose series hold one
// value per workload, noting series whose geomean leaves workloads out.
func withGeomean(fig *Figure, title string, workloads []string, series []Series) Panel {
	p := Panel{Title: title, Groups: append(append([]string(nil), workloads...), GeomeanGroup)}
	for _, s := range series {
		g, n := Geomean(s.Values)
		if n < len(s.Values) && n > 0 {
			fig.Notes = append(fig.Notes, fmt.Sprintf("%s, %s: geomean over the %d of %d workloads that completed", title, s.Name, n, len(s.Values)))
		}
		p.Series = append(p.Series, Series{Name: s.Name, Values: append(append([]float64(nil), s.Values...), g)})
	}
	return p
}

func formatValue(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// WriteTable prints the figure as one text table per panel.
func (f *Figure) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s: %s (%s)\n", f.ID, f.Title, f.YLabel)
	for _, p := range f.Panels {
		fmt.Fprintf(tw, "\n%s\n", p.Title)
		head := []string{"workload"}
		for _, s := range p.Series {
			head = append(head, s.Name)
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for gi, g := range p.Groups {
			cells := []string{g}
			for _, s := range p.Series {
				cells = append(cells, formatValue(s.Values[gi]))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range f.Notes {
		if _, err := fmt.Fprintln(w, "note:", n); err != nil {
			return err
		}
	}
	return nil
}

// FigureCSVColumns are the columns of a figure's CSV, one row per value.
var FigureCSVColumns = []string{"figure", "panel", "group", "series", "value"}

// WriteCSV writes one row per (panel, group, series); missing values are
// empty cells.
func (f *Figure) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(FigureCSVColumns); err != nil {
		return err
	}
	for _, p := range f.Panels {
		for gi, g := range p.Groups {
			for _, s := range p.Series {
				v := ""
				if !math.IsNaN(s.Values[gi]) {
					v = strconv.FormatFloat(s.Values[gi], 'g', -1, 64)
				}
				if err := cw.Write([]string{f.ID, p.Title, g, s.Name, v}); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the figure as indented JSON.
func (f *Figure) WriteJSON(w io.Writer) error {
	out := *f
	if out.Panels == nil {
		out.Panels = []Panel{}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
