package experiment

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
)

// Options control a batch of runs. None of them changes a result.
type Options struct {
	// Jobs is the number of simulations run at once; 0 means one per CPU.
	Jobs int
	// Base is the configuration every spec is layered over.
	Base config.Config
	// Dir, when set, is the output directory: each run's Record is written
	// to Dir/runs the moment it finishes, and a spec whose valid record is
	// already there is taken from it instead of simulated (resume).
	Dir string
	// StoredOnly takes every outcome from Dir and simulates nothing: a
	// spec without a valid record is an outcome with ErrNotStored.
	StoredOnly bool
	// Progress receives the progress report (the first line before the
	// first simulation finishes), or nil for none.
	Progress io.Writer
	// Bar draws the report as a progress bar (a terminal) instead of one
	// line per finished run (a log).
	Bar bool
	// Stop, when closed, lets the running simulations finish and starts
	// no more; Abandon, when closed, returns at once without waiting for
	// them. The specs not finished get ErrInterrupted.
	Stop, Abandon <-chan struct{}
}

// Outcome is one spec's run: its result, or the error that ended it.
type Outcome struct {
	Spec      Spec
	Result    system.Result
	Latencies *Latencies // nil unless the spec asked and the policy records them
	Err       error
	// ConfigID and Config name the full configuration (Record).
	ConfigID string
	Config   map[string]string
	// Stored is set when the result was read from the output directory
	// rather than simulated by this call.
	Stored bool
}

// Record is the outcome as stored: its result, configuration and samples.
func (o *Outcome) Record() Record {
	return Record{Result: o.Result, ConfigID: o.ConfigID, Config: o.Config, Latencies: o.Latencies}
}

// ErrInterrupted marks the specs a stopped batch did not finish.
var ErrInterrupted = errors.New("interrupted before it finished")

// ErrNotStored marks a spec with no valid record when only stored results
// are read.
var ErrNotStored = errors.New("no stored result")

// SpecError is a spec that cannot be configured; no run starts when one
// spec is bad.
type SpecError struct {
	Index int
	Spec  Spec
	Err   error
}

func (e *SpecError) Error() string { return fmt.Sprintf("run %d (%s): %v", e.Index+1, e.Spec, e.Err) }
func (e *SpecError) Unwrap() error { return e.Err }

// MaxJobs bounds Options.Jobs.
const MaxJobs = 1024

// CheckJobs validates a worker count; 0 selects one per CPU.
func CheckJobs(jobs int) (int, error) {
	if jobs < 0 || jobs > MaxJobs {
		return 0, fmt.Errorf("jobs = %d out of range; allowed: 0 (one per CPU) to %d", jobs, MaxJobs)
	}
	if jobs == 0 {
		jobs = runtime.NumCPU()
	}
	return jobs, nil
}

// Configure layers every spec over base, failing with a SpecError naming
// the first bad one.
func Configure(specs []Spec, base config.Config) ([]config.Config, error) {
	cfgs := make([]config.Config, len(specs))
	for i, s := range specs {
		var err error
		if cfgs[i], err = s.Config(base); err != nil {
			return nil, &SpecError{Index: i, Spec: s, Err: err}
		}
	}
	return cfgs, nil
}

// distinct groups the specs by configuration: specs that configure the
// same simulation (fig5's default eviction variant and fig4's UVMMU run,
// say) share one run and one record. same[i] is the first spec with spec
// i's configuration, want[same[i]] that spec asking for the latency
// samples if any spec of its group does, ids[i] the ConfigID.
func distinct(specs []Spec, cfgs []config.Config) (same []int, want []Spec, ids []string) {
	first := map[string]int{}
	same, want, ids = make([]int, len(specs)), make([]Spec, len(specs)), make([]string, len(specs))
	for i := range specs {
		ids[i] = ConfigID(&cfgs[i])
		j, seen := first[ids[i]]
		if !seen {
			first[ids[i]], j = i, i
			want[i] = specs[i]
		}
		same[i] = j
		want[j].Latencies = want[j].Latencies || specs[i].Latencies
	}
	return same, want, ids
}

// Pending lists the first spec of each configuration that has no valid
// record in dir (all of them when dir is empty), with the indices of the
// specs that share it.
func Pending(specs []Spec, cfgs []config.Config, dir string) (todo []int, shared map[int][]int) {
	same, want, _ := distinct(specs, cfgs)
	shared = map[int][]int{}
	for i := range specs {
		shared[same[i]] = append(shared[same[i]], i)
	}
	for i := range specs {
		if same[i] != i {
			continue
		}
		if dir == "" {
			todo = append(todo, i)
			continue
		}
		if _, err := stored(dir, &want[i], &cfgs[i]); err != nil {
			todo = append(todo, i)
		}
	}
	return todo, shared
}

// stored reads a spec's record; one without the latency samples the spec
// asks for does not count.
func stored(dir string, s *Spec, cfg *config.Config) (Record, error) {
	rec, err := ReadRecord(dir, cfg)
	if err == nil && s.Latencies && rec.Latencies == nil {
		err = fmt.Errorf("%s: %w: no latency samples", RecordPath(dir, cfg), fs.ErrNotExist)
	}
	return rec, err
}

// Run configures every spec (failing with a SpecError before any run when
// one is bad), takes the specs already stored in opts.Dir from there, and
// simulates the others on opts.Jobs workers, storing each result as it
// finishes. Outcomes are in spec order whatever the number of workers:
// each run is an independent system and fills only its own slot. When
// opts.Stop or opts.Abandon ends the batch early, the unfinished specs get
// ErrInterrupted and the error is ErrInterrupted.
func Run(specs []Spec, opts Options) ([]Outcome, error) {
	jobs, err := CheckJobs(opts.Jobs)
	if err != nil {
		return nil, err
	}
	cfgs, err := Configure(specs, opts.Base)
	if err != nil {
		return nil, err
	}
	same, want, ids := distinct(specs, cfgs)
	out := make([]Outcome, len(specs))
	for i := range specs {
		out[i] = Outcome{Spec: specs[i], ConfigID: ids[i], Config: Overrides(&cfgs[i]), Err: ErrInterrupted}
	}
	var todo []int
	for i := range specs {
		if same[i] != i {
			continue
		}
		if opts.Dir == "" {
			todo = append(todo, i)
			continue
		}
		rec, err := stored(opts.Dir, &want[i], &cfgs[i])
		if err != nil && opts.StoredOnly && want[i].Latencies {
			// Rebuilding from stored runs: a record without the latency
			// samples still holds the run's results; only the latency
			// figure goes without its samples.
			if r, e := ReadRecord(opts.Dir, &cfgs[i]); e == nil {
				rec, err = r, nil
			}
		}
		switch {
		case err == nil:
			out[i].Result, out[i].Latencies, out[i].Err, out[i].Stored = rec.Result, rec.Latencies, nil, true
		case opts.StoredOnly:
			out[i].Err = ErrNotStored
		default:
			if !errors.Is(err, fs.ErrNotExist) && opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "uvmsim: %v; simulating it again\n", err)
			}
			todo = append(todo, i)
		}
	}
	// shareOutcomes copies each run's outcome to the specs that share it.
	shareOutcomes := func() {
		for i := range out {
			if j := same[i]; j != i {
				spec := out[i].Spec
				out[i] = out[j]
				out[i].Spec = spec
			}
		}
	}
	if opts.StoredOnly {
		shareOutcomes()
		return out, nil
	}
	runs := 0
	for i := range same {
		if same[i] == i {
			runs++
		}
	}
	prog := newProgress(opts.Progress, opts.Bar, runs, runs-len(todo), opts.Dir, min(jobs, len(todo)))
	type finished struct {
		i    int
		o    Outcome
		took time.Duration
	}
	done := make(chan finished, len(todo))
	next := make(chan int)
	var storeErr error
	var storeMu sync.Mutex
	var wg sync.WaitGroup
	for range min(jobs, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				o := out[i]
				o.Result, o.Latencies, o.Err = Simulate(&cfgs[i], want[i].Latencies)
				if o.Err == nil && opts.Dir != "" {
					rec := o.Record()
					if err := WriteRecord(opts.Dir, &cfgs[i], &rec); err != nil {
						storeMu.Lock()
						storeErr = errors.Join(storeErr, err)
						storeMu.Unlock()
					}
				}
				done <- finished{i, o, time.Since(start)}
			}
		}()
	}
	go func() {
		defer close(next)
		for _, i := range todo {
			select {
			case next <- i:
			case <-opts.Stop:
				return
			case <-opts.Abandon:
				return
			}
		}
	}()
	workersDone := make(chan struct{})
	go func() { wg.Wait(); close(workersDone) }()
	interrupted := false
collect:
	for {
		select {
		case f := <-done:
			out[f.i] = f.o
			prog.finished(&out[f.i], f.took)
		case <-workersDone:
			// Drain what finished between the last receive and the close.
			for {
				select {
				case f := <-done:
					out[f.i] = f.o
					prog.finished(&out[f.i], f.took)
				default:
					break collect
				}
			}
		case <-opts.Abandon:
			interrupted = true
			break collect
		}
	}
	prog.close()
	shareOutcomes()
	for i := range out {
		if errors.Is(out[i].Err, ErrInterrupted) {
			interrupted = true
		}
	}
	storeMu.Lock()
	defer storeMu.Unlock()
	if storeErr != nil {
		return out, fmt.Errorf("storing results: %w", storeErr)
	}
	if interrupted {
		return out, ErrInterrupted
	}
	return out, nil
}

// Simulate builds and runs one system for cfg, and returns the policy's
// migration latency samples when asked for and recorded.
func Simulate(cfg *config.Config, wantLatencies bool) (system.Result, *Latencies, error) {
	p, err := policy.New(cfg.Run.Policy, cfg)
	if err != nil {
		return system.Result{}, nil, err
	}
	sys, err := system.New(cfg, p)
	if err != nil {
		return system.Result{}, nil, err
	}
	res, err := sys.Run(p, system.Options{})
	if err != nil {
		return system.Result{}, nil, err
	}
	if !wantLatencies {
		return res, nil, nil
	}
	rec, ok := p.(MigrationLatencyRecorder)
	if !ok {
		return res, nil, nil
	}
	free, swap := rec.MigrationLatencies()
	return res, &Latencies{ClockMHz: cfg.GPU.ClockMHz, Free: free, Swap: swap}, nil
}

// Failures joins the errors of the runs that failed, each naming its spec.
func Failures(outcomes []Outcome) error {
	var errs []error
	for i, o := range outcomes {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("run %d (%s): %w", i+1, o.Spec, o.Err))
		}
	}
	return errors.Join(errs...)
}

// Succeeded returns the results of the runs that completed, in spec order.
func Succeeded(outcomes []Outcome) []system.Result {
	var rs []system.Result
	for _, o := range outcomes {
		if o.Err == nil {
			rs = append(rs, o.Result)
		}
	}
	return rs
}

// IsTerminal reports whether f is a terminal, where a progress bar is drawn
// for people watching; a redirected log gets one line per run instead.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
