package umdriver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// withSteps gives host phase 0 the steps.
func withSteps(steps ...Step) func(*Config) {
	return func(c *Config) { c.Steps = [][]Step{steps} }
}

// Pin on GPU: a place step of 20 cycles (the call) pins pages 2-4, then a
// fetch step of no cost moves them; the PME's first event comes 10 cycles
// after a command, the next every 4.
//
//	 0  host phase 0 taken
//	 1  place: pages 2-4 advised to the GPU and pinned; call until 21
//	21  the call is over: the next step
//	22  fetch: no cost, until 22
//	23  the menu plans pages 2-4 (one run, page 2 first)
//	24  the PME takes the fetch; events at 34, 38, 42
//	35, 39, 43  the PTEs are written
//	43  after the last page: the fetch's range is done, the next step
//	44  no step left: the phase is over
//	45  host done offered and taken
func TestCycleTableStepPinOnGPU(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteOff), benchPages, 100, withSteps(
		Step{Kind: StepPlace, First: 2, Pages: 3, Placement: uvm.PlaceGPU, Cycles: 20},
		Step{Kind: StepFetch, First: 2, Pages: 3},
	))
	b.host = 0
	b.run(60)
	want := []string{
		"0: host phase 0",
		"24: cmd fetch tag=0 pages=3 first=0",
		"35: pte 0x1002 remote=false frame=0x2",
		"39: pte 0x1003 remote=false frame=0x3",
		"43: pte 0x1004 remote=false frame=0x4",
		"45: host done 0",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
	m := b.d.Menu()
	for p := 2; p <= 4; p++ {
		assert.True(t, m.Space().Pinned(p), "page %d pinned", p)
		assert.Equal(t, uvm.PlaceGPU, m.Placement(p))
	}
	assert.Equal(t, uint64(0), b.d.Faults())
	assert.Equal(t, uint64(3), b.d.Migrations())
	b.check()
}

// Pin on host and access counters cost their call and change no
// residency; an access to a host-pinned page is served remotely with a
// writable mapping, reads and writes alike, and raises no fault.
//
//	 0  host phase 0; 1: page 7 advised to host, call until 31
//	31  the step is over: no step left; host done at 33
//	40  a write to page 7 enters the fault buffer as a zero-copy access
//	41  the remote PTE is offered, writable; taken at 42
func TestCycleTableStepPinOnHost(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteOff), benchPages, 100, withSteps(
		Step{Kind: StepPlace, First: 7, Pages: 1, Placement: uvm.PlaceHost, Cycles: 30},
	))
	b.host = 0
	b.run(40)
	b.remote = append(b.remote, b.writeWalk(7, 0))
	b.run(20)
	want := []string{
		"0: host phase 0",
		"33: host done 0",
		"40: fault buffer <- 0x1007",
		"42: reply 0x1007 remote=true read-only=false frame=0x1007",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
	assert.Equal(t, uint64(0), b.d.Faults())
	assert.Equal(t, uint64(1), b.d.ZeroCopy())
}

// Release writes back the resident, unpinned pages of its range: pages
// 2-4 are fetched and pinned by one phase; a second phase unpins them
// (place on demand, 5 cycles) and releases 2-3 (5 cycles).
//
//	100  host phase 1; 101: place, until 106
//	106  the call is over; 107: release, until 112
//	112  the menu drops pages 2 and 3: unmapping from 113
//	113/114  page 2's PTE remote, shootdown; 115/116 page 3's
//	117  no victim left: the write-back of 2 pages is next
//	118  the PME takes it; its event at 128
//	129  the range is done; 130: no step left; 131: host done
func TestCycleTableStepRelease(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteOff), benchPages, 100, func(c *Config) {
		c.HostPages = []int{0, 0}
		c.Steps = [][]Step{
			{{Kind: StepPlace, First: 2, Pages: 3, Placement: uvm.PlaceGPU}, {Kind: StepFetch, First: 2, Pages: 3}},
			{{Kind: StepPlace, First: 2, Pages: 3, Placement: uvm.PlaceFault, Cycles: 5}, {Kind: StepRelease, First: 2, Pages: 2, Cycles: 5}},
		}
	})
	b.host = 0
	b.run(100)
	b.trace = nil
	b.host = 1
	b.run(40)
	want := []string{
		"100: host phase 1",
		"113: pte 0x1002 remote=true frame=0x1002",
		"114: inval tlb0 0x1002",
		"114: inval tlb1 0x1002",
		"115: pte 0x1003 remote=true frame=0x1003",
		"116: inval tlb0 0x1003",
		"116: inval tlb1 0x1003",
		"118: cmd evict tag=65534 pages=2 first=0",
		"131: host done 1",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
	assert.Equal(t, uint64(2), b.d.Evictions())
	assert.True(t, b.d.Menu().Space().IsResident(4))
	assert.False(t, b.d.Menu().Space().Pinned(4))
	b.check()
}

// Access counters: a page under counters is read remotely until its
// block's count reaches uvm.ACThreshold; the walk that finds the count at
// the threshold migrates it.
func TestStepCountersMigrateAtThreshold(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteOff), benchPages, 100, withSteps(
		Step{Kind: StepPlace, First: 0, Pages: 16, Placement: uvm.PlaceCounters},
	))
	b.host = 0
	b.run(10)
	m := b.d.Menu()
	for range uvm.ACThreshold - 1 {
		assert.NoError(t, m.Count(3, false))
	}
	b.trace = nil
	b.walk(3, 0)
	b.run(150)
	assert.Equal(t, uint64(1), b.d.Faults())
	assert.Equal(t, pte.Local(3), b.table[benchBase+3])
}

// writeWalk is a store's walk of page by SM sm.
func (b *bench) writeWalk(page int, sm int) ptw.Walk {
	return ptw.Walk{VPN: benchBase + uint64(page), Requester: uint16(sm) << gpu.WarpBits, Write: true}
}
