package rtl_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// A bus follows random drives of its wires from one block, in fast and
// checked mode, and is zero again after a reset.
func TestBitBusFollowsItsWires(t *testing.T) {
	for _, opts := range []rtl.Options{{SkipIdle: true}, {Checked: true, SkipIdle: true}} {
		s := rtl.New(opts)
		ws := make([]*rtl.Wire[bool], 40)
		for i := range ws {
			ws[i] = rtl.NewBit(s, "w"+string(rune('a'+i%26))+string(rune('0'+i/26)))
		}
		bus := rtl.NewBitBus(s, "bus", ws)
		rng := rand.New(rand.NewPCG(1, 2))
		var drive uint64 // the value the driver shows next
		var seen []uint64
		f := newFaulty(s, "driver")
		f.drive = func() {
			for i, w := range ws {
				w.Set(drive>>i&1 != 0)
			}
		}
		f.eval = func() {
			seen = append(seen, bus.Get())
			f.r.Set((f.r.Q() + 1) % 16) // stays awake
		}
		s.Reset()
		var want []uint64
		for range 200 {
			want = append(want, drive)
			drive = rng.Uint64() & (1<<len(ws) - 1)
			require.NoError(t, s.Step())
		}
		require.Equal(t, want, seen)
		s.Reset()
		seen = seen[:0]
		require.NoError(t, s.Step())
		require.Equal(t, []uint64{drive}, seen, "after reset the bus holds what Drive set, not the old value")
	}
}

func TestBitBusReadDuringDriveIsReported(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true})
	in, out := rtl.NewBit(s, "in"), rtl.NewBit(s, "out")
	bus := rtl.NewBitBus(s, "in_bus", []*rtl.Wire[bool]{in})
	a := newFaulty(s, "a")
	a.drive = func() { out.Set(bus.Get() != 0) }
	s.Reset()
	require.ErrorContains(t, s.Err(), "wire in_bus read by block a during Drive")
}
