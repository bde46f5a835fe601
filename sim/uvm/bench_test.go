package uvm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The benchmarks run a 256 MB space (128 regions) in 64 MB of GPU memory
// so that every fault batch evicts.
const (
	benchPages    = 128 * PagesPerRegion
	benchCapacity = 32 * PagesPerRegion
)

func benchDriver(tb testing.TB, evictor string) *Driver {
	return newDriver(tb, benchPages, benchCapacity, func(c *Config) {
		c.Evictor, c.Remote = evictor, RemoteAdaptive
	})
}

// faultLoop faults one page per call, striding through the space in 64 KB
// steps with a prime stride so that regions and blocks mix, after a
// warm-up that fills memory.
type faultLoop struct {
	d     *Driver
	next  int
	batch [1]int
}

func (f *faultLoop) fault() {
	f.batch[0] = f.next
	f.next = (f.next + 37*PagesPerBlock + 1) % benchPages
	if _, err := f.d.HandleFaults(f.batch[:]); err != nil {
		panic(err)
	}
}

func newFaultLoop(tb testing.TB, evictor string) *faultLoop {
	f := &faultLoop{d: benchDriver(tb, evictor)}
	for range 4 * benchPages / PagesPerBlock {
		f.fault()
	}
	return f
}

// accessLoop counts an access and asks for a decision, cycling through
// the space.
type accessLoop struct {
	d *Driver
	p int
}

func (a *accessLoop) access() {
	a.p = (a.p + 4099) % benchPages
	if err := a.d.Count(a.p, a.p&7 == 0); err != nil {
		panic(err)
	}
	if _, err := a.d.ShouldMigrate(a.p, false); err != nil {
		panic(err)
	}
}

func BenchmarkHandleFaults(b *testing.B) {
	for _, ev := range EvictorNames() {
		b.Run(ev, func(b *testing.B) {
			f := newFaultLoop(b, ev)
			b.ReportAllocs()
			for b.Loop() {
				f.fault()
			}
		})
	}
}

func BenchmarkAccess(b *testing.B) {
	for _, ev := range EvictorNames() {
		b.Run(ev, func(b *testing.B) {
			a := &accessLoop{d: newFaultLoop(b, ev).d}
			b.ReportAllocs()
			for b.Loop() {
				a.access()
			}
		})
	}
}

// TestSteadyStateAllocatesNothing: once the scratch slices have grown, a
// fault batch (with its evictions) and an access allocate nothing, for
// every evictor.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	for _, ev := range EvictorNames() {
		f := newFaultLoop(t, ev)
		require.NotZero(t, f.d.Space().Resident())
		assert.Zero(t, testing.AllocsPerRun(200, f.fault), "%s: HandleFaults", ev)
		a := &accessLoop{d: f.d}
		assert.Zero(t, testing.AllocsPerRun(1000, a.access), "%s: Count and ShouldMigrate", ev)
	}
}
