package experiment

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/schollz/progressbar/v3"

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
	// Progress receives a progress bar, or nil for none.
	Progress io.Writer
}

// Outcome is one spec's run: its result, or the error that ended it.
type Outcome struct {
	Spec      Spec
	Result    system.Result
	Latencies *Latencies // nil unless the spec asked and the policy records them
	Err       error
}

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

// Run configures every spec (failing with a SpecError before any run when
// one is bad), then simulates them on opts.Jobs workers. Outcomes are in
// spec order whatever the number of workers: each run is an independent
// system and writes only its own slot.
func Run(specs []Spec, opts Options) ([]Outcome, error) {
	jobs, err := CheckJobs(opts.Jobs)
	if err != nil {
		return nil, err
	}
	cfgs := make([]config.Config, len(specs))
	for i, s := range specs {
		if cfgs[i], err = s.Config(opts.Base); err != nil {
			return nil, &SpecError{Index: i, Spec: s, Err: err}
		}
	}
	out := make([]Outcome, len(specs))
	var bar *progressbar.ProgressBar
	if opts.Progress != nil && len(specs) > 0 {
		bar = progressbar.NewOptions(len(specs),
			progressbar.OptionSetWriter(opts.Progress),
			progressbar.OptionSetDescription("simulating"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish())
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, max(len(specs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res, lat, err := Simulate(&cfgs[i], specs[i].Latencies)
				out[i] = Outcome{Spec: specs[i], Result: res, Latencies: lat, Err: err}
				if bar != nil {
					_ = bar.Add(1)
				}
			}
		}()
	}
	for i := range specs {
		next <- i
	}
	close(next)
	wg.Wait()
	if bar != nil {
		_ = bar.Finish()
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

// TerminalProgress returns f when it is a terminal, so a progress bar is
// drawn for people watching and never written into a redirected log.
func TerminalProgress(f *os.File) io.Writer {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return f
}
