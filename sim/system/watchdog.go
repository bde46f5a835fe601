package system

import "github.com/uvmmu/uvmmu/rtl"

// watchdog decides, between chunks of cycles, whether a run is stuck. A
// run progresses while instructions retire or pages move, and also while
// a unit waits on an event already scheduled (the UM driver in its fault
// latency, an SM in a long compute record, a link transferring): such a
// unit sleeps until a set cycle (rtl.Sim.Scheduled). The watchdog fires
// only when for window cycles nothing progressed and nothing was
// scheduled.
//
// A block counts as scheduled for one event per stall: its wake time seen
// first after the last progress, for as long as it still waits for that
// cycle. A timer that keeps re-arming without anything progressing (the
// NRU clear period) thus holds the watchdog off once, not forever.
type watchdog struct {
	window   uint64
	progress uint64            // the last progress count seen
	since    uint64            // the cycle since which nothing moved or was scheduled
	credited map[string]uint64 // per block, the wake credited in this stall
}

// stalled takes the progress count at the end of a chunk and reports
// whether the window has passed with nothing moving or scheduled.
func (w *watchdog) stalled(sim *rtl.Sim, progress uint64) bool {
	now := sim.Cycle()
	if progress != w.progress {
		w.progress, w.since = progress, now
		clear(w.credited)
		return false
	}
	waiting := false
	sim.Scheduled(func(path string, at uint64) {
		if w.credited == nil {
			w.credited = map[string]uint64{}
		}
		if prev, ok := w.credited[path]; !ok || prev == at {
			w.credited[path] = at
			waiting = true
		}
	})
	if waiting {
		w.since = now
		return false
	}
	return now-w.since >= w.window
}
