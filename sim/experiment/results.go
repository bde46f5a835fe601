package experiment

import (
	"bytes"
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

// ConfigColumns are the columns results.csv adds after Columns: the
// configuration's hash and its overrides (ConfigText).
var ConfigColumns = []string{"config_id", "config"}

// RecordColumns are the columns of results.csv.
func RecordColumns() []string { return append(Columns(), ConfigColumns...) }

// WriteCSV writes a header of RecordColumns and one row per record.
func WriteCSV(w io.Writer, records []Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(RecordColumns()); err != nil {
		return err
	}
	for i := range records {
		if err := cw.Write(append(row(&records[i].Result), records[i].ConfigID, ConfigText(records[i].Config))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the records, without their latency samples, as an
// indented JSON array.
func WriteJSON(w io.Writer, records []Record) error {
	rs := make([]Record, len(records))
	for i, r := range records {
		r.Latencies = nil
		rs[i] = r
	}
	data, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// Records returns the records of the runs that completed, in spec order,
// each configuration once (specs that share a configuration share its run).
func Records(outcomes []Outcome) []Record {
	var rs []Record
	seen := map[string]bool{}
	for i := range outcomes {
		if o := &outcomes[i]; o.Err == nil && (o.ConfigID == "" || !seen[o.ConfigID]) {
			seen[o.ConfigID] = true
			rs = append(rs, o.Record())
		}
	}
	return rs
}

// WriteResults assembles the completed runs of outcomes, in spec order,
// into dir/results.csv and dir/results.json, creating dir if needed. Both
// are written to temporary files first and renamed only when both are
// complete.
func WriteResults(dir string, outcomes []Outcome) error {
	rs := Records(outcomes)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var csvData, jsonData bytes.Buffer
	if err := WriteCSV(&csvData, rs); err != nil {
		return err
	}
	if err := WriteJSON(&jsonData, rs); err != nil {
		return err
	}
	// Both files are complete in temporary files before either is renamed,
	// so a full disk leaves the previous pair (or none), never half of one.
	var tmps []string
	defer func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}()
	for _, data := range [][]byte{csvData.Bytes(), jsonData.Bytes()} {
		tmp, err := os.CreateTemp(dir, ".results.tmp*")
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp.Name())
		_, err = tmp.Write(data)
		if err == nil {
			err = tmp.Chmod(0o644)
		}
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
	}
	for i, name := range []string{ResultsCSV, ResultsJSON} {
		if err := os.Rename(tmps[i], filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	tmps = nil
	return nil
}
