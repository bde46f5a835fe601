package pme

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzCommands holds that any command, well-formed or not, leaves the
// engine in a defined state: a malformed one is dropped and reported, a
// well-formed one completes with the events its operation promises.
func FuzzCommands(f *testing.F) {
	f.Add(uint8(0), uint16(16), uint16(3))
	f.Add(uint8(1), uint16(1), uint16(0))
	f.Add(uint8(2), uint16(2), uint16(1))
	f.Add(uint8(3), uint16(0), uint16(9))
	f.Add(uint8(0), uint16(600), uint16(0))
	f.Fuzz(func(t *testing.T, op uint8, pages, first uint16) {
		cfg := DefaultConfig()
		c := Command{Tag: 0, Op: Op(op & 3), Pages: pages & 1023, First: first & 511}
		b := newBench(t, cfg, true, []timedCommand{{0, c}})
		if c.Op > Evict || c.Pages < 1 || int(c.Pages) > cfg.MaxPages || c.First >= c.Pages {
			require.NoError(t, b.sim.Run(100))
			require.Error(t, b.engine.Err())
			require.Empty(t, b.tb.got)
			return
		}
		want := 0
		if c.Op.fetches() {
			want += int(c.Pages)
		}
		if c.Op.evicts() {
			want++
		}
		b.runUntilEvents(t, want)
		checkCommandEvents(t, []timedCommand{{0, c}}, b.tb.got)
	})
}
