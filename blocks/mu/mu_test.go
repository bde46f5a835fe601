package mu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/pme"
)

func TestConfigValidate(t *testing.T) {
	ok := directedConfig()
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Slots = 0 }, "mu: Slots 0 outside 1..64"},
		{func(c *Config) { c.Slots = 65 }, "mu: Slots 65 outside 1..64"},
		{func(c *Config) { c.Requests = 0 }, "mu: Requests 0 outside 1..4096"},
		{func(c *Config) { c.Requests = 4097 }, "mu: Requests 4097 outside 1..4096"},
		{func(c *Config) { c.Groups = 0 }, "mu: Groups 0 must be at least 1"},
		{func(c *Config) { c.HostPages = []int{3, -1} }, "mu: HostPages[1] = -1 is negative"},
	} {
		c := directedConfig()
		tc.change(&c)
		assert.EqualError(t, c.Validate(), tc.want)
	}
}

// pageRows are the rows of a page-group's landing: the PME's event for
// the i-th page moved (the critical page first, then wrapping) comes
// setup+i*period cycles after the command; the page's local PTE is
// written the next cycle.
func pageRows(cmd, setup, period, g, pfgn uint64, first int) map[uint64]string {
	rows := map[uint64]string{}
	for i := range PagesPerGroup {
		k := uint64((first + i) % PagesPerGroup)
		rows[cmd+setup+uint64(i)*period+1] = fmt.Sprintf("pte %#x remote=false frame=%#x", g*PagesPerGroup+k, pfgn*PagesPerGroup+k)
	}
	return rows
}

// merge lays rows out by cycle, in the order given within a cycle.
func merge(tables ...map[uint64][]string) []string {
	all := map[uint64][]string{}
	var cycles []uint64
	for _, t := range tables {
		for c, rs := range t {
			if _, seen := all[c]; !seen {
				cycles = append(cycles, c)
			}
			all[c] = append(all[c], rs...)
		}
	}
	var out []string
	slices.Sort(cycles)
	for _, c := range cycles {
		for _, r := range all[c] {
			out = append(out, fmt.Sprintf("%d: %s", c, r))
		}
	}
	return out
}

func single(m map[uint64]string) map[uint64][]string {
	out := map[uint64][]string{}
	for c, r := range m {
		out[c] = []string{r}
	}
	return out
}

// One migration to a free destination: page 5 of page-group 0x103, the
// DA's head frame-group 7, the PME's first event 10 cycles after its
// command and one every 4 cycles.
//
//	 0  the router's remote walk is taken; slot 0 opens and is queued
//	 1  the set-up engine takes slot 0 from its queue
//	 2  the DA's destination is taken (S=0: no IPgT read)
//	 3  the PME takes the command: fetch, 16 pages, page 5 first
//	13  first event (3+10): page 5 landed; its PTE is written at 14
//	15  the landing register is free: the waiting request is answerable;
//	    the reply is offered at 16 and taken: latency 16 - 0 = 16 cycles
//	73  last event (13 + 15*4), PTE written at 74, when the slot is
//	    complete: the IPgT map is offered from 75 and taken
//	76  mapped, no request waits: the slot is free
func TestCycleTableFreeMigration(t *testing.T) {
	b := newBench(t, true, directedConfig(), 2)
	b.dests = []dest{{pfgn: 7}}
	b.offer(0x103*PagesPerGroup + 5)
	b.run(90)
	want := merge(
		map[uint64][]string{
			0:  {"remote 0x1035"},
			2:  {"dst 7 swap=false"},
			3:  {"cmd fetch tag=0 pages=16 first=5"},
			16: {"reply 0x1035 frame=0x75"},
			75: {"map 7 <- 0x103"},
			76: {"slot free"},
		},
		single(pageRows(3, 10, 4, 0x103, 7, 5)),
	)
	assert.Empty(t, cmp.Diff(want, b.trace))
	free, swap := b.probe.Samples()
	assert.Equal(t, []uint64{16}, free)
	assert.Empty(t, swap)
	assert.True(t, b.idle())
	assert.Equal(t, uint64(16), b.u.Migrations())
}

// One swap: the same request, but the DA's head is frame-group 9 with
// S=1, whose IPgT entry maps page-group 0x10a; the IPgT answers a read 5
// cycles after taking it.
//
//	 0  remote walk taken, slot 0 opened
//	 2  destination 9, S=1: the entry is read next
//	 3  IPgT read of frame-group 9; the entry arrives at 3+5 = 8: mapped
//	    to 0x10a, the victim
//	 9  victim page 0: its PTE is pointed at host frame-group 0x103 (the
//	    requested page-group's) and both TLBs take its shootdown in the
//	    same cycle; one page per cycle, page 15 at 9+15 = 24
//	25  the PME takes the swap command
//	35  first event (25+10), PTE at 36, reply at 38: latency 38 cycles
//	95  last event (35 + 15*4), PTE at 96, IPgT map at 97
//	99  the victim event (25 + 10 + 16*4): the victim is home
//	100 the slot is free
func TestCycleTableSwapMigration(t *testing.T) {
	b := newBench(t, true, directedConfig(), 2)
	b.dests = []dest{{pfgn: 9, swap: true}}
	b.ipgt[9] = ipgt.Entry{M: true, VPgN: 0x10a}
	b.offer(0x103*PagesPerGroup + 5)
	b.run(110)
	unmap := map[uint64][]string{}
	for k := range uint64(PagesPerGroup) {
		vpn := 0x10a*PagesPerGroup + k
		unmap[9+k] = []string{
			fmt.Sprintf("pte %#x remote=true frame=%#x", vpn, 0x103*PagesPerGroup+k),
			fmt.Sprintf("inval tlb0 %#x", vpn),
			fmt.Sprintf("inval tlb1 %#x", vpn),
		}
	}
	want := merge(
		map[uint64][]string{
			0:   {"remote 0x1035"},
			2:   {"dst 9 swap=true"},
			3:   {"ipgt read 9"},
			25:  {"cmd swap tag=0 pages=16 first=5"},
			38:  {"reply 0x1035 frame=0x95"},
			97:  {"map 9 <- 0x103"},
			100: {"slot free"},
		},
		unmap,
		single(pageRows(25, 10, 4, 0x103, 9, 5)),
	)
	assert.Empty(t, cmp.Diff(want, b.trace))
	free, swap := b.probe.Samples()
	assert.Empty(t, free)
	assert.Equal(t, []uint64{38}, swap)
	assert.True(t, b.idle())
	assert.Equal(t, uint64(16), b.u.Evictions())
}

// randomRun drives the unit with random remote walks over 24 page-groups
// into 6 frame-groups (so most destinations hold a victim), random DA,
// PME and router timing, and returns its trace and latency samples.
// Every reply is checked against the page table in the bench; at the end
// every walk has been answered and the unit is idle.
func randomRun(t *testing.T, seed uint64, skip bool) ([]string, [2][]uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	cfg := Config{Slots: 4, Requests: 16, IPGTBase: 0, FirstGroup: 0x200, Groups: 24, HostPages: []int{0}}
	b := newBench(t, skip, cfg, 3)
	b.migReady = func() bool { return rng.IntN(4) != 0 }
	b.dstReady = func() bool { return rng.IntN(3) != 0 }
	b.memLat = 3
	b.pmeDelay = func() (uint64, uint64) { return 2 + rng.Uint64N(20), 1 + rng.Uint64N(5) }
	const frames = 6
	reserved := map[uint64]bool{} // handed out, not yet mapped
	next := uint64(0)
	for cycle := 0; cycle < 20000; cycle++ {
		if cycle < 8000 && rng.IntN(20) == 0 {
			vpn := (cfg.FirstGroup+rng.Uint64N(uint64(cfg.Groups)))*PagesPerGroup + rng.Uint64N(PagesPerGroup)
			if b.pte(vpn).IsRemote() {
				b.offer(vpn)
			}
		}
		// The DA hands out each frame-group once until it is mapped; one
		// holding a mapped page-group comes with S=1.
		for f := range uint64(frames) {
			if len(b.dests) > 0 {
				break
			}
			fg := (next + f) % frames
			if !reserved[fg] {
				b.dests = append(b.dests, dest{pfgn: fg, swap: b.ipgt[fg].M})
				reserved[fg] = true
				next = fg + 1
			}
		}
		mapped := len(b.trace)
		b.step()
		for _, line := range b.trace[mapped:] {
			var c, fg, g uint64
			if n, _ := fmt.Sscanf(line, "%d: map %d <- %x", &c, &fg, &g); n == 3 {
				reserved[fg] = false
			}
		}
		if cycle >= 8000 && b.idle() {
			break
		}
	}
	require.True(t, b.idle(), "the unit did not drain: %d active, %d waiting", b.u.Active(), b.u.Waiting())
	remote, replies := 0, 0
	for _, line := range b.trace {
		var c uint64
		var what string
		fmt.Sscanf(line, "%d: %s", &c, &what)
		switch what {
		case "remote":
			remote++
		case "reply":
			replies++
		}
	}
	require.Equal(t, remote, replies, "every remote walk gets one reply")
	require.Greater(t, replies, 200)
	free, swap := b.probe.Samples()
	require.NotEmpty(t, swap)
	return b.trace, [2][]uint64{free, swap}
}

// The same seeded random stimulus gives the same handshakes, cycle for
// cycle, and the same latency samples with idle skipping on and off.
func TestRandomIdleSkippingIsExact(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			on, latOn := randomRun(t, seed, true)
			off, latOff := randomRun(t, seed, false)
			assert.Empty(t, cmp.Diff(off, on))
			assert.Equal(t, latOff, latOn)
		})
	}
}

// A host phase reads its pages back in chunks of at most MaxPagesLimit
// pages and then answers on HostDone: phase 1 touches 2*512+3 pages.
//
//	 0  the dispatcher's phase 1 is taken
//	 1  first chunk's command; its event comes 10 cycles later, at 11
//	12  second chunk (512 pages), event at 22
//	23  last chunk (3 pages), event at 33
//	34  HostDone answers phase 1
func TestHostReadBack(t *testing.T) {
	cfg := directedConfig()
	cfg.HostPages = []int{0, 2*pme.MaxPagesLimit + 3}
	b := newBench(t, true, cfg, 1)
	b.p.Host.Bits.Set(1)
	b.p.Host.Valid.Set(true)
	// The bench's step lowers Host.Valid; the first cycle takes the phase.
	require.True(t, b.p.Host.Ready.Get())
	require.NoError(t, b.s.Step())
	b.run(200)
	want := []string{
		"1: cmd evict tag=65535 pages=512 first=0",
		"12: cmd evict tag=65535 pages=512 first=0",
		"23: cmd evict tag=65535 pages=3 first=0",
		"34: host done 1",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
}
