package experiment

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
)

func TestConfigIDNamesTheFullConfiguration(t *testing.T) {
	def := config.Default()
	// The default configuration's canonical text is its five run keys:
	//   printf 'run.workload="hotspot"\nrun.policy="uvmmu"\nrun.oversub_pct=100\nrun.scale=1\nrun.seed=1\n' | sha256sum
	// It changes only when a key's name or the canonical text changes.
	assert.Equal(t, "0dc6791d8f5af3a9", ConfigID(&def))
	assert.Empty(t, Overrides(&def))

	other := config.Default()
	require.NoError(t, other.Set(FaultLatencyKey+"=10"))
	assert.NotEqual(t, ConfigID(&def), ConfigID(&other))
	assert.Equal(t, map[string]string{FaultLatencyKey: "10"}, Overrides(&other))
	seed := config.Default()
	seed.Run.Seed = 2
	assert.NotEqual(t, ConfigID(&def), ConfigID(&seed))
	evict := config.Default()
	require.NoError(t, evict.Set(EvictionKey+"=tree"))
	assert.Equal(t, map[string]string{EvictionKey: "tree"}, Overrides(&evict), "strings unquoted, as --set takes them")
	assert.Equal(t, "hotspot-uvmmu-100-"+ConfigID(&evict)+".json", RecordName(&evict))
	trace := config.Default()
	trace.Run.Workload = "trace:/data/runs/bfs-1M.trace.gz"
	assert.Equal(t, "trace__data_runs_bfs_1M.trace.gz-uvmmu-100-"+ConfigID(&trace)+".json", RecordName(&trace))
}

func TestRecordRoundTripAndChecks(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, PrepareDir(dir, false))
	cfg := config.Default()
	require.NoError(t, cfg.Set(EvictionKey+"=tree"))
	cfg.Run.Workload, cfg.Run.Policy, cfg.Run.OversubPct, cfg.Run.Scale = "ra", "uvmmu", 150, 0.5
	_, err := ReadRecord(dir, &cfg)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	res := system.Result{Workload: "ra", Policy: "uvmmu", OversubPct: 150, Scale: 0.5, Seed: 1, Cycles: 1234, Migrations: 5}
	rec := NewRecord(&cfg, res, &Latencies{ClockMHz: 1481, Free: []uint64{3, 4}})
	require.NoError(t, WriteRecord(dir, &cfg, &rec))
	back, err := ReadRecord(dir, &cfg)
	require.NoError(t, err)
	assert.Equal(t, rec, back)
	tmps, _ := filepath.Glob(filepath.Join(dir, RunsDir, ".*"))
	assert.Empty(t, tmps, "no temporary file left behind")

	path := RecordPath(dir, &cfg)
	for name, content := range map[string]string{
		"truncated":     `{"workload": "ra", "policy"`,
		"unknown field": `{"workload": "ra", "policy": "uvmmu", "oversub_pct": 150, "scale": 0.5, "seed": 1, "cycles": 1234, "config_id": "` + rec.ConfigID + `", "config": {"uvmmu.eviction": "tree"}, "colour": 1}`,
		"wrong config":  `{"workload": "ra", "policy": "uvmmu", "oversub_pct": 150, "scale": 0.5, "seed": 1, "cycles": 1234, "config_id": "` + rec.ConfigID + `", "config": {"uvmmu.eviction": "seqlocal"}}`,
		"no cycles":     `{"workload": "ra", "policy": "uvmmu", "oversub_pct": 150, "scale": 0.5, "seed": 1, "cycles": 0, "config_id": "` + rec.ConfigID + `", "config": {"uvmmu.eviction": "tree"}}`,
		"bad key":       `{"workload": "ra", "policy": "uvmmu", "oversub_pct": 150, "scale": 0.5, "seed": 1, "cycles": 9, "config_id": "` + rec.ConfigID + `", "config": {"uvmmu.nosuch": "1"}}`,
	} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		_, err := ReadRecord(dir, &cfg)
		require.Error(t, err, name)
		assert.False(t, errors.Is(err, fs.ErrNotExist), name)
		assert.Contains(t, err.Error(), path, name)
	}
}

func TestPrepareDirRejectsUnwritable(t *testing.T) {
	for _, dir := range []string{"/etc/passwd/x", "/proc/x"} {
		assert.Error(t, PrepareDir(dir, false), dir)
	}
}

// A record's preset is applied before its other keys, so a key the preset
// sets keeps the record's value (pcie.bandwidth_gbs sorts before
// run.preset).
func TestFullConfigAppliesThePresetFirst(t *testing.T) {
	r := Record{Config: map[string]string{"run.preset": "gtx480", "pcie.bandwidth_gbs": "32"}}
	r.Workload, r.Policy, r.OversubPct, r.Scale, r.Seed = "ra", "uvmmu", 100, 1, 1
	cfg, err := r.FullConfig()
	require.NoError(t, err)
	assert.Equal(t, 32.0, cfg.PCIe.BandwidthGBs)
	assert.Equal(t, 15, cfg.GPU.SMs)
}

// TestStoredOnlyTakesARecordWithoutSamples: a stored run whose spec asks
// for latency samples the record does not hold is simulated again by a
// batch, but a rebuild from stored runs (StoredOnly, uvmsim plot) takes its
// results and leaves the samples out.
func TestStoredOnlyTakesARecordWithoutSamples(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, PrepareDir(dir, false))
	spec := Spec{Workload: "ra", Policy: "uvmmu", OversubPct: 150, Scale: 0.5, Seed: 1, Latencies: true}
	cfg, err := spec.Config(config.Default())
	require.NoError(t, err)
	res := system.Result{Workload: "ra", Policy: "uvmmu", OversubPct: 150, Scale: 0.5, Seed: 1, Cycles: 1234}
	rec := NewRecord(&cfg, res, nil)
	require.NoError(t, WriteRecord(dir, &cfg, &rec))

	_, err = stored(dir, &spec, &cfg)
	assert.ErrorIs(t, err, fs.ErrNotExist, "a batch simulates it again")
	out, err := Run([]Spec{spec}, Options{Jobs: 1, Base: config.Default(), Dir: dir, StoredOnly: true})
	require.NoError(t, err)
	require.NoError(t, out[0].Err)
	assert.True(t, out[0].Stored)
	assert.Equal(t, uint64(1234), out[0].Result.Cycles)
	assert.Nil(t, out[0].Latencies)
}
