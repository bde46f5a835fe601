package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
	"github.com/uvmmu/uvmmu/sim/system"
)

// record is a synthetic stored result of ra under pol at 125% with the
// given overrides and cycles.
func record(t *testing.T, pol string, cycles uint64, sets ...string) experiment.Record {
	t.Helper()
	cfg := config.Default()
	for _, s := range sets {
		require.NoError(t, cfg.Set(s))
	}
	cfg.Run.Workload, cfg.Run.Policy, cfg.Run.OversubPct = "ra", pol, 125
	res := system.Result{Workload: "ra", Policy: pol, OversubPct: 125, Scale: 1, Seed: 1, Cycles: cycles}
	return experiment.NewRecord(&cfg, res, nil)
}

func writeRecords(t *testing.T, rs ...experiment.Record) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, experiment.WriteJSON(&b, rs))
	path := filepath.Join(t.TempDir(), "results.json")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path
}

func TestReportRefusesMixedVariantsNamingTheKey(t *testing.T) {
	// fig4's UM run (the default fault latency, 45 us) and one of fig1's
	// (10 us) next to the UVMMU run, as validate's results.json holds
	// them: the same workload, policy and ratio twice, told apart only by
	// the key.
	mixed := writeRecords(t,
		record(t, "um", 7470),
		record(t, "um", 3170, "um.fault_latency_us=10"),
		record(t, "uvmmu", 1000))
	code, stdout, stderr := run("report", mixed)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "report: the results differ in more than workload, policy and oversubscription ratio")
	assert.Contains(t, stderr, "um.fault_latency_us has 2 values (10, 45)")
	assert.Contains(t, stderr, "--where")
	t.Logf("uvmsim report %s:\n%s", filepath.Base(mixed), stderr)

	code, stdout, stderr = run("report", "--where", "um.fault_latency_us=45", mixed)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "7.47", "UM cycles 7470 / UVMMU cycles 1000")
}

func TestReportWarnsOnDuplicates(t *testing.T) {
	dup := writeRecords(t, record(t, "um", 2000), record(t, "uvmmu", 1000), record(t, "uvmmu", 500))
	code, stdout, stderr := run("report", dup)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "warning: "+dup+": result 3 (ra/uvmmu/125%) repeats the configuration of "+dup+": result 2 (ra/uvmmu/125%)")
	assert.Contains(t, stderr, "keeping the first")
	assert.Contains(t, stdout, "2.00", "the first uvmmu result, 2000/1000")
}

func TestReportRejectsMalformedEntries(t *testing.T) {
	good := record(t, "um", 2000)
	noCycles := record(t, "uvmmu", 0)
	tampered := record(t, "uvmmu", 1000, "uvmmu.eviction=tree")
	tampered.Config["uvmmu.eviction"] = "seqlocal"
	legacy := record(t, "uvmmu", 1000)
	legacy.ConfigID, legacy.Config = "", nil
	cases := []struct {
		name string
		file string
		want string
	}{
		{"no cycles", writeRecords(t, good, noCycles), "result 2 (ra/uvmmu/125%): cycles = 0"},
		{"config changed after the run", writeRecords(t, good, tampered), "result 2 (ra/uvmmu/125%): config_id"},
		{"no configuration recorded", writeRecords(t, good, legacy), "config_id missing"},
	}
	for _, c := range cases {
		code, _, stderr := run("report", c.file)
		assert.Equal(t, exitUsage, code, c.name)
		assert.Contains(t, stderr, c.want, c.name)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`[{"workload": "ra", "colour": 3}]`), 0o644))
	code, _, stderr := run("report", bad)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `not a result file: json: unknown field "colour"`)
	code, _, stderr = run("report", "--where", "pcie.nosuch=1", bad)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `"pcie.nosuch"`)
}
