package rtl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpreadTrialsAndHolds follows the caller's choice between spreading
// and evaluating alone window by window (a pool without helpers, the
// trials' timings forced): a trial alternates spread and alone windows,
// starting spread; the winner holds parHold windows; each further trial
// that spreading loses doubles the hold of the caller alone, up to
// parHoldMax; a trial that spreading wins holds spreading for parHold
// windows again. Helpers are wanted while phases are spread, and from an
// eighth of a window ahead.
func TestSpreadTrialsAndHolds(t *testing.T) {
	// The spread windows of each trial take this much longer per block
	// than the alone ones; after the list, spreading loses.
	slowdowns := []float64{1, 1, 1, -1, 1}
	type hold struct {
		spread  bool
		windows int
	}
	want := []hold{{false, parHold}, {false, 2 * parHold}, {false, 4 * parHold}, {true, parHold}, {false, parHold}}
	for h := 2 * parHold; h < parHoldMax; h *= 2 {
		want = append(want, hold{false, h})
	}
	want = append(want, hold{false, parHoldMax}, hold{false, parHoldMax})

	p := &evalPool{trialsLeft: parTrials}
	var holds []hold
	trials, inTrial := 0, 0
windows:
	for {
		spread := p.plan(parMinBlocks)
		require.Equal(t, spread, p.wanted.Load())
		same := true
		for range parWindow - 1 {
			got := p.plan(parMinBlocks)
			same = same && got == spread
		}
		require.True(t, same, "a window is spread or alone throughout")
		// Napping helpers are called an eighth of a window ahead of a
		// spread one.
		require.Equal(t, spread || p.nextSpread(), p.wanted.Load())
		switch {
		case p.trialsLeft > 0:
			if inTrial == 0 {
				if len(holds) == len(want) {
					break windows
				}
				trials++
			}
			require.Equal(t, inTrial%2 == 0, spread, "trial %d window %d", trials, inTrial)
			inTrial++
			slowdown := 1.0
			if trials <= len(slowdowns) {
				slowdown = slowdowns[trials-1]
			}
			p.with += slowdown * 1e9
		case inTrial > 0:
			require.Equal(t, parTrials, inTrial)
			inTrial = 0
			holds = append(holds, hold{spread, 1})
		default:
			last := &holds[len(holds)-1]
			require.Equal(t, last.spread, spread)
			last.windows++
		}
	}
	assert.Equal(t, want, holds)
}
