package system

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// timer re-arms itself every period cycles, forever, as the NRU evictor's
// clear timer does; until, when set, is one long scheduled wait instead.
type timer struct {
	rtl.Base
	period, until uint64
}

func (*timer) Drive() {}
func (t *timer) Eval() {
	now := t.Now()
	if t.until > 0 {
		if now < t.until {
			t.SleepUntil(t.until)
		} else {
			t.Sleep()
		}
		return
	}
	t.SleepUntil(now + t.period)
}

// runWatchdog steps sim in chunks of 250 cycles with no progress and
// returns the cycle at which the watchdog (window 1000) fires, or 0.
func runWatchdog(t *testing.T, sim *rtl.Sim, limit uint64) uint64 {
	t.Helper()
	w := watchdog{window: 1000}
	sim.Reset()
	for sim.Cycle() < limit {
		_, err := sim.RunUntil(func() bool { return false }, 250)
		require.NoError(t, err)
		if w.stalled(sim, 0) {
			return sim.Cycle()
		}
	}
	return 0
}

// A timer that keeps re-arming without progress holds the watchdog off
// for one period only: it fires one window after the first credited wake
// (at cycle 100 the wake at 200 is credited; from 250 on every wake is a
// new one; 1000 cycles later, at the check at 1250, it fires).
func TestWatchdogTimerCountsOnce(t *testing.T) {
	sim := rtl.New(rtl.Options{SkipIdle: true})
	sim.Add(&timer{period: 100}, "nru")
	assert.Equal(t, uint64(1250), runWatchdog(t, sim, 1e6))
}

// One long scheduled wait holds the watchdog off until it ends: the wake
// at cycle 100,000 is credited at every check before it, and the watchdog
// fires a window after the last of them: 99,750 + 1,000 = 100,750, itself a
// check.
func TestWatchdogLongWaitCounts(t *testing.T) {
	sim := rtl.New(rtl.Options{SkipIdle: true})
	sim.Add(&timer{until: 100_000}, "driver")
	assert.Equal(t, uint64(100_750), runWatchdog(t, sim, 1e6))
}
