package experiment

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress reports a batch to a person or a log: a first line as the batch
// starts (before any simulation finishes), then a bar on a terminal or one
// line per finished run, each with runs done/total, failures and an ETA.
type progress struct {
	w              io.Writer
	bar            *progressbar.ProgressBar
	total, skipped int
	done, failed   int
	start          time.Time
}

func newProgress(w io.Writer, bar bool, total, skipped int, dir string, jobs int) *progress {
	p := &progress{w: w, total: total, skipped: skipped, done: skipped, start: time.Now()}
	if w == nil {
		return p
	}
	if skipped > 0 {
		fmt.Fprintf(w, "uvmsim: %d of %d runs already have a result in %s, skipped (--fresh starts over)\n", skipped, total, dir)
	}
	if total > skipped {
		fmt.Fprintf(w, "uvmsim: simulating %d of %d runs, %d at a time\n", total-skipped, total, jobs)
	}
	if bar && total > skipped {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("simulating"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish())
		_ = p.bar.Set(skipped)
	}
	return p
}

// eta is the remaining time at the mean pace of the runs simulated so far.
func (p *progress) eta() time.Duration {
	simulated := p.done - p.skipped
	if simulated == 0 {
		return 0
	}
	per := time.Since(p.start) / time.Duration(simulated)
	return (per * time.Duration(p.total-p.done)).Round(time.Second)
}

func (p *progress) finished(o *Outcome, took time.Duration) {
	p.done++
	status := "done"
	if o.Err != nil {
		p.failed++
		status = "FAILED: " + o.Err.Error()
	}
	switch {
	case p.bar != nil:
		p.bar.Describe(fmt.Sprintf("simulating, %d failed", p.failed))
		_ = p.bar.Set(p.done)
	case p.w != nil:
		fmt.Fprintf(p.w, "uvmsim: [%d/%d] %s %s in %.1f s; %d failed, ETA %s\n",
			p.done, p.total, o.Spec, status, took.Seconds(), p.failed, p.eta())
	}
}

func (p *progress) close() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
