package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/system"
)

func sampleResults() []system.Result {
	return []system.Result{
		{Workload: "hotspot", Policy: "uvmmu", OversubPct: 125, Scale: 0.5, Seed: 3, Cycles: 12345, WallSeconds: 1.5, Migrations: 7},
		{Workload: "ra", Policy: "ideal", OversubPct: 100, Scale: 1, Seed: 1, Cycles: 99, FootprintBytes: 1 << 20},
	}
}

// sampleRecords are sampleResults as records, the second with an override.
func sampleRecords() []Record {
	rs := sampleResults()
	return []Record{
		{Result: rs[0], ConfigID: "00112233aabbccdd", Config: map[string]string{}},
		{Result: rs[1], ConfigID: "ffeeddcc00112233", Config: map[string]string{"uvmmu.eviction": "tree", "um.fault_latency_us": "10"}},
	}
}

func TestColumnsAreTheRunJSONKeys(t *testing.T) {
	data, err := json.Marshal(sampleResults()[0])
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, json.Unmarshal(data, &obj))
	cols := Columns()
	assert.Len(t, cols, len(obj))
	for _, c := range cols {
		assert.Contains(t, obj, c)
	}
	assert.Equal(t, []string{"workload", "policy", "oversub_pct", "scale", "seed"}, cols[:5], "the run's identity leads")
	assert.Contains(t, cols, "cycles")
	for _, w := range system.WallFields {
		assert.True(t, IsWallColumn(w), w)
		assert.Contains(t, cols, w)
	}
	assert.False(t, IsWallColumn("cycles"))
}

func TestResultsCSVSchema(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, sampleRecords()))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, RecordColumns(), rows[0])
	assert.Equal(t, []string{"ffeeddcc00112233", "um.fault_latency_us=10;uvmmu.eviction=tree"}, rows[2][len(rows[2])-2:])
	row := map[string]string{}
	for i, c := range rows[0] {
		row[c] = rows[1][i]
	}
	want := map[string]string{"workload": "hotspot", "policy": "uvmmu", "oversub_pct": "125", "scale": "0.5", "seed": "3", "cycles": "12345", "wall_seconds": "1.5", "migrations": "7"}
	for k, v := range want {
		assert.Equal(t, v, row[k], k)
	}
}

func TestResultsJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, sampleRecords()))
	back, err := DecodeRecords(b.Bytes())
	require.NoError(t, err)
	if d := cmp.Diff(sampleRecords(), back); d != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", d)
	}
	b.Reset()
	require.NoError(t, WriteJSON(&b, nil))
	assert.Equal(t, "[]\n", b.String())
	b.Reset()
	require.NoError(t, WriteJSON(&b, []Record{}))
	assert.Equal(t, "[]\n", b.String())
}

func TestWriteResultsKeepsCompletedRunsInOrder(t *testing.T) {
	rs := sampleResults()
	out := []Outcome{
		{Spec: Spec{Workload: "hotspot"}, Result: rs[0]},
		{Spec: Spec{Workload: "bfs"}, Err: errors.New("watchdog")},
		{Spec: Spec{Workload: "ra"}, Result: rs[1]},
	}
	dir := filepath.Join(t.TempDir(), "out")
	require.NoError(t, WriteResults(dir, out))
	data, err := os.ReadFile(filepath.Join(dir, ResultsJSON))
	require.NoError(t, err)
	var back []system.Result
	require.NoError(t, json.Unmarshal(data, &back))
	if d := cmp.Diff(rs, back); d != "" {
		t.Errorf("results.json (-want +got):\n%s", d)
	}
	f, err := os.Open(filepath.Join(dir, ResultsCSV))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, 3)
	err = Failures(out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run 2 (bfs")
	assert.Contains(t, err.Error(), "watchdog")
}
