package experiment

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/sim/system"
)

// Result file names inside an output directory.
const (
	ResultsCSV  = "results.csv"
	ResultsJSON = "results.json"
)

// Columns are the CSV columns of a result file: the JSON tags of
// system.Result in its field order, so the CSV, the JSON and
// `uvmsim run --json` share one set of names.
func Columns() []string {
	t := reflect.TypeOf(system.Result{})
	cols := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		cols = append(cols, name)
	}
	return cols
}

// IsWallColumn reports whether a result column depends on the host machine
// (wall time and rates derived from it), which determinism comparisons
// leave out.
func IsWallColumn(name string) bool { return slices.Contains(system.WallFields, name) }

func row(r *system.Result) []string {
	v := reflect.ValueOf(r).Elem()
	out := make([]string, v.NumField())
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			out[i] = f.String()
		case reflect.Int, reflect.Int64:
			out[i] = strconv.FormatInt(f.Int(), 10)
		case reflect.Uint64:
			out[i] = strconv.FormatUint(f.Uint(), 10)
		case reflect.Float64:
			out[i] = strconv.FormatFloat(f.Float(), 'g', -1, 64)
		default:
			out[i] = fmt.Sprint(f.Interface())
		}
	}
	return out
}

// WriteCSV writes a header of Columns and one row per result.
func WriteCSV(w io.Writer, results []system.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns()); err != nil {
		return err
	}
	for i := range results {
		if err := cw.Write(row(&results[i])); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the results as an indented JSON array.
func WriteJSON(w io.Writer, results []system.Result) error {
	if results == nil {
		results = []system.Result{}
	}
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteResults writes the completed runs of outcomes, in spec order, to
// dir/results.csv and dir/results.json, creating dir if needed.
func WriteResults(dir string, outcomes []Outcome) error {
	rs := Succeeded(outcomes)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, ResultsCSV), func(w io.Writer) error { return WriteCSV(w, rs) }); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, ResultsJSON), func(w io.Writer) error { return WriteJSON(w, rs) })
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
