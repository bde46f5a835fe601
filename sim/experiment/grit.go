package experiment

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/multigpu"
	"github.com/uvmmu/uvmmu/sim/workload"
	"github.com/uvmmu/uvmmu/sim/workload/characterize"
)

// GRIT's experiments on the multi-GPU system (sim/multigpu, docs/grit.md).
const (
	// GritSchemesName compares the uniform placement schemes on GRIT's
	// eight workloads (GRIT Fig. 1: performance relative to on-touch).
	GritSchemesName = "grit-schemes"
	// GritCharacterizeName classifies the pages of GRIT's workloads as
	// private, shared read-only and shared read-write (GRIT Fig. 4).
	GritCharacterizeName = "grit-characterize"
)

// GritSchemes are the schemes the comparison runs, the reference first.
var GritSchemes = []string{"ot", "ac", "dup"}

// GritRecord is one stored multi-GPU run: the overrides of its
// configuration and its result.
type GritRecord struct {
	ConfigID string            `json:"config_id"`
	Config   map[string]string `json:"config"`
	Result   multigpu.Result   `json:"result"`
}

// GritOptions are a scheme comparison's runs and where they go.
type GritOptions struct {
	Base      config.Config // the grit preset and any overrides
	Workloads []string
	Schemes   []string
	// LatenciesUs runs every workload and scheme at each of these
	// fault-handling latencies (multigpu.fault_latency_us); none: Base's.
	LatenciesUs []float64
	Jobs        int
	// Dir keeps a record per run in Dir/runs, written when the run ends;
	// a run whose record is there is read, not simulated (resume).
	Dir string
	// StoredOnly reads the records in Dir and simulates nothing: a run
	// not stored is left out.
	StoredOnly bool
	Progress   io.Writer // one line per finished run, or nil
}

// gritRecordPath is where dir keeps the record of cfg.
func gritRecordPath(dir string, cfg *config.Config) string {
	return filepath.Join(dir, RunsDir, fmt.Sprintf("%s-%s-%dgpu-%s.json", cfg.Run.Workload, cfg.MultiGPU.Policy, cfg.MultiGPU.GPUs, ConfigID(cfg)))
}

// RunGritSchemes runs (or reads back) every workload under every scheme,
// at each of o.LatenciesUs if given, and returns the records in that
// order: workload, then latency, then scheme.
func RunGritSchemes(o GritOptions) ([]GritRecord, error) {
	cfgs, labels, err := GritSchemeConfigs(o)
	if err != nil {
		return nil, err
	}
	if !o.StoredOnly {
		if err := PrepareDir(o.Dir, false); err != nil {
			return nil, err
		}
	}
	ptrs := make([]*config.Config, len(cfgs))
	for i := range cfgs {
		ptrs[i] = &cfgs[i]
	}
	return runGritRuns(o.Dir, ptrs, labels, o.Jobs, o.StoredOnly, o.Progress)
}

// GritSchemeConfigs are RunGritSchemes' configurations in order, each
// checked, with a label naming each run.
func GritSchemeConfigs(o GritOptions) ([]config.Config, []string, error) {
	lats := o.LatenciesUs
	if len(lats) == 0 {
		lats = []float64{o.Base.MultiGPU.FaultLatencyUs}
	}
	var cfgs []config.Config
	var labels []string
	for _, wl := range o.Workloads {
		for _, lat := range lats {
			for _, s := range o.Schemes {
				cfg := o.Base
				cfg.Run.Workload, cfg.MultiGPU.Policy, cfg.MultiGPU.FaultLatencyUs = wl, s, lat
				label := wl + "/" + s
				if len(o.LatenciesUs) > 0 {
					label += fmt.Sprintf("/%gus", lat)
				}
				if err := cfg.Validate(); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", label, err)
				}
				if cfg.MultiGPU.GPUs < 2 {
					return nil, nil, fmt.Errorf("multigpu.gpus = %d: the scheme comparison needs 2..16 GPUs", cfg.MultiGPU.GPUs)
				}
				cfgs, labels = append(cfgs, cfg), append(labels, label)
			}
		}
	}
	return cfgs, labels, nil
}

// runGritRuns runs (or reads back from dir) every configuration on jobs
// workers and returns their records in order; each finished run prints
// "[done/total] label: how it ended" to progress (nil: nothing).
func runGritRuns(dir string, cfgs []*config.Config, labels []string, jobs int, storedOnly bool, progress io.Writer) ([]GritRecord, error) {
	recs := make([]GritRecord, len(cfgs))
	errs := make([]error, len(cfgs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rec, stored, err := runGrit(dir, cfgs[i], storedOnly)
				recs[i], errs[i] = rec, err
				mu.Lock()
				done++
				if progress != nil {
					how := fmt.Sprintf("%.1f s", rec.Result.WallSeconds)
					switch {
					case err != nil:
						how = "failed: " + err.Error()
					case stored:
						how = "stored"
					case storedOnly:
						how = "not stored"
					}
					fmt.Fprintf(progress, "[%d/%d] %s: %s\n", done, len(cfgs), labels[i], how)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range cfgs {
		next <- i
	}
	close(next)
	wg.Wait()
	return recs, errors.Join(errs...)
}

// runGrit reads cfg's record from dir, or (unless storedOnly, which
// returns an empty record) simulates it and stores it.
func runGrit(dir string, cfg *config.Config, storedOnly bool) (GritRecord, bool, error) {
	path := gritRecordPath(dir, cfg)
	if data, err := os.ReadFile(path); err == nil {
		var rec GritRecord
		if err := json.Unmarshal(data, &rec); err == nil && rec.ConfigID == ConfigID(cfg) && rec.Result.Cycles > 0 {
			return rec, true, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return GritRecord{}, false, err
	}
	if storedOnly {
		return GritRecord{}, false, nil
	}
	s, err := multigpu.New(cfg)
	if err != nil {
		return GritRecord{}, false, err
	}
	r, err := s.Run()
	if err != nil {
		return GritRecord{}, false, fmt.Errorf("%s/%s: %w", cfg.Run.Workload, cfg.MultiGPU.Policy, err)
	}
	rec := GritRecord{ConfigID: ConfigID(cfg), Config: Overrides(cfg), Result: r}
	return rec, false, WriteFileAtomic(path, func(w io.Writer) error {
		data, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	})
}

// GritSchemesFigure is GRIT Fig. 1 from the records: each scheme's
// performance (on-touch cycles over the scheme's) per workload, and the
// geomean.
func GritSchemesFigure(recs []GritRecord, workloads, schemes []string, gpus int) *Figure {
	fig := &Figure{ID: GritSchemesName, Title: fmt.Sprintf("Uniform placement schemes on %d GPUs (GRIT Fig. 1)", gpus),
		YLabel: "performance relative to ot", Reference: schemes[0]}
	cycles := func(wl, s string) uint64 {
		for _, r := range recs {
			if r.Result.Workload == wl && r.Result.Policy == s {
				return r.Result.Cycles
			}
		}
		return 0
	}
	var series []Series
	for _, s := range schemes {
		v := make([]float64, len(workloads))
		for i, wl := range workloads {
			v[i] = Ratio(cycles(wl, schemes[0]), cycles(wl, s))
		}
		series = append(series, Series{Name: s, Values: v})
	}
	fig.Panels = []Panel{withGeomean(fig, "", workloads, series)}
	return fig
}

// WriteGritCSV writes one row per run with the totals of its counts and
// its configuration's overrides (config, as in results.csv).
func WriteGritCSV(w io.Writer, recs []GritRecord) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"workload", "policy", "gpus", "cycles", "wall_seconds", "sim_cycles_per_second",
		"local_accesses", "remote_accesses", "local_faults", "protection_faults", "promotions", "migrations",
		"replicas_made", "replicas_collapsed", "invalidations", "evictions", "nvlink_bytes", "pcie_h2d_bytes", "pcie_d2h_bytes", "config"})
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, rec := range recs {
		r, t := rec.Result, rec.Result.Total
		_ = cw.Write([]string{r.Workload, r.Policy, strconv.Itoa(r.GPUs), u(r.Cycles),
			strconv.FormatFloat(r.WallSeconds, 'f', 2, 64), strconv.FormatFloat(r.SimCyclesPerSecond, 'f', 0, 64),
			u(t.LocalAccesses), u(t.RemoteAccesses), u(t.LocalFaults), u(t.ProtectionFaults), u(t.Promotions), u(t.Migrations),
			u(t.ReplicasMade), u(t.ReplicasCollapse), u(t.Invalidations), u(t.Evictions), u(t.NVLinkBytes), u(t.PCIeH2DBytes), u(t.PCIeD2HBytes), ConfigText(rec.Config)})
	}
	cw.Flush()
	return cw.Error()
}

// GritCharacterization is GRIT Fig. 4 for the workloads: the share of
// private, shared read-only and shared read-write pages, and of the
// accesses to shared pages, with the thread blocks placed as the
// multi-GPU system places them (characterize.GRIT).
func GritCharacterization(workloads []string, p characterize.Placement, scale float64, seed uint64) (*Figure, []characterize.Result, error) {
	fig := &Figure{ID: GritCharacterizeName, Title: fmt.Sprintf("Page sharing on %d GPUs (GRIT Fig. 4)", p.GPUs), YLabel: "percent"}
	names := []string{"private pages", "shared read-only pages", "shared read-write pages", "accesses to shared pages"}
	series := make([]Series, len(names))
	for i := range series {
		series[i] = Series{Name: names[i], Values: make([]float64, len(workloads))}
	}
	var results []characterize.Result
	for i, name := range workloads {
		wl, err := workload.New(name, workload.Params{Scale: scale, Seed: seed})
		if err != nil {
			return nil, nil, err
		}
		r, err := characterize.Run(wl, p)
		if err != nil {
			return nil, nil, err
		}
		results = append(results, r)
		c := r.Counts
		for k, v := range []float64{characterize.Pct(c.Private, c.Pages), characterize.Pct(c.SharedRO, c.Pages),
			characterize.Pct(c.SharedRW, c.Pages), characterize.Pct(c.SharedAccesses(), c.Accesses)} {
			series[k].Values[i] = v
		}
	}
	fig.Panels = []Panel{{Groups: append([]string(nil), workloads...), Series: series}}
	return fig, results, nil
}
