package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
)

// RunsDir is the folder of an output directory that holds one record per
// finished simulation.
const RunsDir = "runs"

// runKeys are the configuration keys system.Result already reports as its
// own fields, so a record's Config leaves them out.
var runKeys = []string{"run.workload", "run.policy", "run.oversub_pct", "run.scale", "run.seed"}

// Record is one finished simulation as stored on disk: the measured fields
// of system.Result, the configuration that produced them and, when the spec
// asked, the migration latency samples. results.json is an array of records
// without the samples.
type Record struct {
	system.Result
	// ConfigID is the stable hash of the full configuration (ConfigID).
	ConfigID string `json:"config_id"`
	// Config holds every configuration key whose value differs from
	// config.Default(), the five run keys of Result aside, as key=value
	// strings that --set accepts; empty for the default configuration.
	Config    map[string]string `json:"config"`
	Latencies *Latencies        `json:"latencies,omitempty"`
}

// Overrides lists the keys of cfg that differ from the defaults, the run
// keys Result reports aside, as a map of key to the value --set accepts.
func Overrides(cfg *config.Config) map[string]string {
	def := config.Default()
	m := map[string]string{}
	for _, k := range config.Keys() {
		if slices.Contains(runKeys, k.Name) {
			continue
		}
		if v := k.Value(cfg); v != k.Value(&def) {
			m[k.Name] = setValue(&k, v)
		}
	}
	return m
}

// setValue is a key's formatted value in the form Config.Set takes:
// strings unquoted.
func setValue(k *config.Key, v string) string {
	if k.Kind == "string" {
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	}
	return v
}

// ConfigID is the stable name of a full configuration: the first 16 hex
// digits of the SHA-256 of its canonical text, one "key=value" line per
// run key and per key that differs from the defaults, in config.Keys
// order. Two configurations that simulate the same thing get the same ID on
// every machine and every run.
func ConfigID(cfg *config.Config) string {
	def := config.Default()
	h := sha256.New()
	for _, k := range config.Keys() {
		v := k.Value(cfg)
		if slices.Contains(runKeys, k.Name) || v != k.Value(&def) {
			fmt.Fprintf(h, "%s=%s\n", k.Name, v)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// RecordName is the file name of a configuration's record inside RunsDir:
// workload, policy and ratio for people, the ConfigID for uniqueness. A
// trace workload's name (trace:PATH) keeps only the characters a file
// name can hold, at most maxNameWorkload of them.
func RecordName(cfg *config.Config) string {
	wl := []rune(strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_') {
			return r
		}
		return '_'
	}, cfg.Run.Workload))
	if len(wl) > maxNameWorkload {
		wl = wl[len(wl)-maxNameWorkload:]
	}
	return fmt.Sprintf("%s-%s-%d-%s.json", string(wl), cfg.Run.Policy, cfg.Run.OversubPct, ConfigID(cfg))
}

// maxNameWorkload bounds the workload part of a record's file name.
const maxNameWorkload = 40

// RecordPath is where dir keeps the record of cfg.
func RecordPath(dir string, cfg *config.Config) string {
	return filepath.Join(dir, RunsDir, RecordName(cfg))
}

// NewRecord stores the outcome of a completed run of cfg.
func NewRecord(cfg *config.Config, res system.Result, lat *Latencies) Record {
	return Record{Result: res, ConfigID: ConfigID(cfg), Config: Overrides(cfg), Latencies: lat}
}

// FullConfig rebuilds the configuration a record names: the defaults, its
// Config overrides, then its run fields.
func (r *Record) FullConfig() (config.Config, error) {
	cfg := config.Default()
	for k := range r.Config {
		if slices.Contains(runKeys, k) {
			return cfg, fmt.Errorf("config: %s belongs in the result's own field, not in config", k)
		}
	}
	if err := applyOverrides(&cfg, r.Config); err != nil {
		return cfg, err
	}
	cfg.Run.Workload, cfg.Run.Policy = r.Workload, r.Policy
	cfg.Run.OversubPct, cfg.Run.Scale, cfg.Run.Seed = r.OversubPct, r.Scale, r.Seed
	return cfg, nil
}

// applyOverrides sets the keys of m (as Overrides gives them) in cfg:
// run.preset first, since applying it sets the preset's keys and m's own
// values of those keys must win over them, then the others in key order.
func applyOverrides(cfg *config.Config, m map[string]string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if pi, pj := keys[i] == presetKey, keys[j] == presetKey; pi != pj {
			return pi
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		if err := cfg.Set(k + "=" + m[k]); err != nil {
			return err
		}
	}
	return nil
}

// presetKey is the key that applies a platform preset's assignments.
const presetKey = "run.preset"

// Check rejects a record that is not a complete result of the
// configuration it names: an unknown key or value, a config_id that is not
// the hash of its configuration, or no simulated cycles.
func (r *Record) Check() error {
	if r.Workload == "" || r.Policy == "" {
		return errors.New("workload or policy missing")
	}
	if r.ConfigID == "" {
		return errors.New("config_id missing: the result does not record the configuration that produced it (uvmsim run --json, sweep and experiment record it)")
	}
	cfg, err := r.FullConfig()
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if id := ConfigID(&cfg); r.ConfigID != id {
		return fmt.Errorf("config_id %q is not the hash of its configuration (%s)", r.ConfigID, id)
	}
	if r.Cycles == 0 {
		return errors.New("cycles = 0: not a completed run")
	}
	return nil
}

// DecodeRecords reads one record (a run's file) or an array of them
// (results.json); a field no record has is an error.
func DecodeRecords(data []byte) ([]Record, error) {
	trimmed := bytes.TrimSpace(data)
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var rs []Record
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := dec.Decode(&rs); err != nil {
			return nil, err
		}
	} else {
		var r Record
		if err := dec.Decode(&r); err != nil {
			return nil, err
		}
		rs = []Record{r}
	}
	if dec.More() {
		return nil, errors.New("data after the end of the JSON value")
	}
	return rs, nil
}

// ReadRecord reads the record of cfg from dir. It reports fs.ErrNotExist
// when there is none, and an error when the file is not a valid record of
// exactly cfg.
func ReadRecord(dir string, cfg *config.Config) (Record, error) {
	path := RecordPath(dir, cfg)
	data, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	rs, err := DecodeRecords(data)
	if err == nil && len(rs) != 1 {
		err = errors.New("not one record")
	}
	if err == nil {
		err = rs[0].Check()
	}
	if err == nil && rs[0].ConfigID != ConfigID(cfg) {
		err = fmt.Errorf("holds configuration %s", rs[0].ConfigID)
	}
	if err != nil {
		return Record{}, fmt.Errorf("%s: %w", path, err)
	}
	return rs[0], nil
}

// WriteRecord stores rec as dir/runs/NAME atomically: a reader, or a
// resumed run after a crash, sees the whole record or none.
func WriteRecord(dir string, cfg *config.Config, rec *Record) error {
	return WriteFileAtomic(RecordPath(dir, cfg), func(w io.Writer) error {
		data, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	})
}

// WriteFileAtomic writes path through a temporary file in the same folder,
// synced and then renamed over path, so path is never seen half written
// (a full disk leaves the old file, or none, and an error).
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// CreateTemp makes the file private; results are for everyone who can
	// read the folder, as os.Create would have made them.
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}

// PrepareDir makes dir and dir/runs and proves they are writable by
// creating and removing a file in each, so a bad output directory is
// reported before any simulation. fresh removes the records and assembled
// files a previous run left there.
func PrepareDir(dir string, fresh bool) error {
	runs := filepath.Join(dir, RunsDir)
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return err
	}
	for _, d := range []string{dir, runs} {
		f, err := os.CreateTemp(d, ".write-check*")
		if err != nil {
			return err
		}
		f.Close()
		if err := os.Remove(f.Name()); err != nil {
			return err
		}
	}
	if !fresh {
		return nil
	}
	old, err := filepath.Glob(filepath.Join(runs, "*.json"))
	if err != nil {
		return err
	}
	old = append(old, filepath.Join(dir, ResultsCSV), filepath.Join(dir, ResultsJSON), filepath.Join(dir, ManifestFile))
	for _, f := range old {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ConfigText formats a record's overrides as one CSV cell:
// "key=value;key=value" in key order, empty for the defaults.
func ConfigText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ";")
}
