package umdriver

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// The testbench drives the driver's ports with fakes: a router (remote
// walks into the fault buffer, replies out), a PME (a command's page
// events spaced evenly after a set-up delay; a write-back's one event
// after it), the GMMU (page-table writes always taken, kept in a page
// table) and L1 TLBs (invalidations always taken, response taps idle).
// It records every handshake and freeze change with its cycle.

type pending struct {
	due uint64
	ev  pme.Event
}

type bench struct {
	t      *testing.T
	s      *rtl.Sim
	d      *Driver
	p      Ports
	remote []ptw.Walk
	events []pending
	setup  uint64 // PME: command to first event
	period uint64 // PME: between page events
	table  map[uint64]pte.PTE
	frozen []bool
	trace  []string
	// host is the host phase the bench offers on the Host port, -1 for
	// none.
	host int
}

const (
	benchBase  = 0x100 * system.PagesPerGroup // first page: page-group 0x100
	benchPages = 2 * system.PagesPerRegion
	benchSMs   = 2
)

func newBench(t *testing.T, menu uvm.Config, capacity int, latency uint64, options ...func(*Config)) *bench {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	walkPort := func(name string) ptw.PTEPort[ptw.Walk] {
		return ptw.PTEPort[ptw.Walk]{Decoupled: rtl.NewDecoupledOf[ptw.Walk](s, name, ptw.WalkBits), PTE: rtl.NewWire[pte.PTE](s, name+".pte", 64)}
	}
	p := Ports{
		Remote:   walkPort("router.remote"),
		Migrated: walkPort("router.migrated"),
		Update:   ptw.PTEPort[uint64]{Decoupled: rtl.NewDecoupled[uint64](s, "gmmu.update", pte.VPNBits), PTE: rtl.NewWire[pte.PTE](s, "gmmu.update.pte", 64)},
		Cmd:      rtl.NewDecoupledOf[pme.Command](s, "pme.cmd", pme.CommandBits),
		Events:   rtl.NewDecoupledOf[pme.Event](s, "pme.events", pme.EventBits),
		Host:     rtl.NewDecoupled[uint16](s, "host", 16),
		HostDone: rtl.NewDecoupled[uint16](s, "host_done", 16),
	}
	for i := range benchSMs {
		n := fmt.Sprintf("tlb%d", i)
		p.Responses = append(p.Responses, tlb.ResponsePort{Decoupled: rtl.NewDecoupledOf[tlb.Response](s, n+".resp", tlb.ResponseBits), PTE: rtl.NewWire[pte.PTE](s, n+".resp.pte", 64)})
		p.Frozen = append(p.Frozen, rtl.NewBit(s, n+".frozen"))
		p.Inval = append(p.Inval, rtl.NewDecoupledOf[tlb.Invalidate](s, n+".inval", tlb.InvalidateBits))
		p.InvalAck = append(p.InvalAck, rtl.NewDecoupledOf[tlb.Invalidate](s, n+".inval_ack", tlb.InvalidateBits))
	}
	m, err := uvm.New(menu, benchPages, capacity)
	require.NoError(t, err)
	cfg := Config{
		BaseVPN: benchBase, Pages: benchPages,
		Managed:  []system.Range{{Name: "a", First: benchBase / system.PagesPerGroup, Count: benchPages / system.PagesPerGroup}},
		Capacity: capacity, LatencyCycles: latency, FaultBuffer: 8, HostPages: []int{0},
	}
	for _, o := range options {
		o(&cfg)
	}
	d, err := New(s, "driver", cfg, p, m)
	require.NoError(t, err)
	s.Reset()
	return &bench{t: t, s: s, d: d, p: p, setup: 10, period: 4, table: map[uint64]pte.PTE{}, frozen: make([]bool, benchSMs), host: -1}
}

// menu is the driver's menu for the tests: no prefetching, 4 KB LRU
// eviction, remote access as given.
func menu(remote string) uvm.Config {
	m := uvm.DefaultConfig()
	m.Prefetcher, m.OversubPrefetcher, m.Evictor, m.Remote = uvm.PrefetchNone, uvm.PrefetchNone, uvm.EvictLRU4K, remote
	return m
}

func (b *bench) log(c uint64, format string, args ...any) {
	b.trace = append(b.trace, fmt.Sprintf("%d: ", c)+fmt.Sprintf(format, args...))
}

// walk queues a read of page (from the layout's start) by SM sm.
func (b *bench) walk(page int, sm int) {
	b.remote = append(b.remote, ptw.Walk{VPN: benchBase + uint64(page), Requester: uint16(sm) << gpu.WarpBits})
}

func (b *bench) step() {
	p := b.p
	c := b.s.Cycle()
	for i, f := range p.Frozen {
		if f.Get() != b.frozen[i] {
			b.frozen[i] = f.Get()
			b.log(c, "sm%d frozen=%t", i, b.frozen[i])
		}
	}
	p.Remote.Valid.Set(len(b.remote) > 0)
	if len(b.remote) > 0 {
		vpn := b.remote[0].VPN
		p.Remote.Bits.Set(b.remote[0])
		p.Remote.PTE.Set(pte.Remote(vpn))
	}
	p.Migrated.Ready.Set(true)
	p.Update.Ready.Set(true)
	p.Cmd.Ready.Set(true)
	next := -1
	for i, e := range b.events {
		if e.due <= c && (next < 0 || e.due < b.events[next].due) {
			next = i
		}
	}
	p.Events.Valid.Set(next >= 0)
	if next >= 0 {
		p.Events.Bits.Set(b.events[next].ev)
	}
	for i := range p.Inval {
		p.Inval[i].Ready.Set(true)
		p.InvalAck[i].Valid.Set(false)
		p.Responses[i].Valid.Set(false)
		p.Responses[i].Ready.Set(true)
	}
	p.Host.Valid.Set(b.host >= 0)
	p.Host.Bits.Set(uint16(max(b.host, 0)))
	p.HostDone.Ready.Set(true)
	if p.Host.Fire() {
		b.log(c, "host phase %d", b.host)
		b.host = -1
	}
	if p.HostDone.Fire() {
		b.log(c, "host done %d", p.HostDone.Bits.Get())
	}

	if p.Remote.Fire() {
		b.log(c, "fault buffer <- %#x", b.remote[0].VPN)
		b.remote = b.remote[1:]
	}
	var cmd *pme.Command
	if p.Cmd.Fire() {
		v := p.Cmd.Bits.Get()
		cmd = &v
		b.log(c, "cmd %v tag=%d pages=%d first=%d", v.Op, v.Tag, v.Pages, v.First)
	}
	if next >= 0 && p.Events.Fire() {
		b.events = slices.Delete(b.events, next, next+1)
	}
	if p.Update.Fire() {
		vpn, e := p.Update.Bits.Get(), p.Update.PTE.Get()
		b.table[vpn] = e
		b.log(c, "pte %#x remote=%t frame=%#x", vpn, e.IsRemote(), e.Frame())
	}
	for i, in := range p.Inval {
		if in.Fire() {
			b.log(c, "inval tlb%d %#x", i, in.Bits.Get().VPN)
		}
	}
	if p.Migrated.Fire() {
		w, e := p.Migrated.Bits.Get(), p.Migrated.PTE.Get()
		b.log(c, "reply %#x remote=%t read-only=%t frame=%#x", w.VPN, e.IsRemote(), e.ReadOnly(), e.Frame())
	}
	require.NoError(b.t, b.s.Step())
	b.check()
	if cmd != nil {
		due := c + b.setup
		if cmd.Op == pme.Evict {
			b.events = append(b.events, pending{due, pme.Event{Tag: cmd.Tag, Victim: true}})
		} else {
			for i := range cmd.Pages {
				page := (cmd.First + i) % cmd.Pages
				b.events = append(b.events, pending{due + uint64(i)*b.period, pme.Event{Tag: cmd.Tag, Page: page, Critical: i == 0, Last: i == cmd.Pages-1}})
			}
		}
	}
}

func (b *bench) run(n int) {
	for range n {
		b.step()
	}
}

// check runs the driver's own consistency check against the bench's page
// table.
func (b *bench) check() {
	require.NoError(b.t, b.d.Check(func(vpn uint64) pte.PTE {
		if e, ok := b.table[vpn]; ok {
			return e
		}
		return pte.Remote(vpn)
	}))
}

func TestConfigValidate(t *testing.T) {
	ok := Config{BaseVPN: 0x1000, Pages: 32, Managed: []system.Range{{Name: "a", First: 0x100, Count: 2}}, Capacity: 16, FaultBuffer: 1, HostPages: []int{0}}
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Pages = 0 }, "umdriver: Pages 0 must be at least 1"},
		{func(c *Config) { c.FaultBuffer = 0 }, "umdriver: FaultBuffer 0 outside 1..65536"},
		{func(c *Config) { c.FaultBuffer = 1<<16 + 1 }, "umdriver: FaultBuffer 65537 outside 1..65536"},
		{func(c *Config) { c.Managed[0].Count = 3 }, "umdriver: managed allocation a (page-groups 0x100+3) outside the layout"},
		{func(c *Config) { c.HostPages = []int{-2} }, "umdriver: HostPages[0] = -2 is negative"},
	} {
		c := ok
		c.Managed = slices.Clone(ok.Managed)
		tc.change(&c)
		assert.EqualError(t, c.Validate(), tc.want)
	}
}

// One far fault: SM 1 reads page 5, in host memory; the fault latency is
// 100 cycles, the PME's event comes 10 cycles after its command.
//
//	  0  the walk enters the fault buffer; SM 1's fault count is 1
//	  1  SM 1's L1 TLB is frozen; the driver takes the oldest fault:
//	     its latency ends at 1+100 = 101
//	101  the menu's plan: fetch page 5, no victim (one run)
//	102  the PME takes the fetch command
//	112  the page's event (102+10); its PTE is written at 113
//	114  the fault buffer search finds the page valid and offers the
//	     reply, taken at 115; SM 1 has no fault left
//	116  SM 1's TLB thaws
func TestCycleTableFault(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteOff), benchPages, 100)
	b.walk(5, 1)
	b.run(130)
	want := []string{
		"0: fault buffer <- 0x1005",
		"1: sm1 frozen=true",
		"102: cmd fetch tag=0 pages=1 first=0",
		"113: pte 0x1005 remote=false frame=0x5",
		"115: reply 0x1005 remote=false read-only=false frame=0x5",
		"116: sm1 frozen=false",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
	assert.Equal(t, uint64(1), b.d.Faults())
	assert.Equal(t, uint64(1), b.d.Migrations())
	b.check()
}

// One eviction: GPU memory holds one page; page 5 is in (the fault
// above, replied at 115), then SM 0 reads page 9.
//
//	200  the walk enters the fault buffer; SM 0 frozen from 201
//	201  the fault's latency starts, ends at 301
//	301  the plan: fetch page 9, evict page 5 (LRU 4 KB)
//	302  page 5's PTE is pointed at its host frame
//	303  both TLBs take page 5's shootdown
//	304  no victim left: a write-back of the one unmapped page is next
//	305  the PME takes the write-back; its event comes at 315
//	316  the PME takes the fetch of page 9; its event at 326
//	327  page 9's PTE written; reply offered at 328, taken at 329
//	330  SM 0 thaws
func TestCycleTableEviction(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteOff), 1, 100)
	b.walk(5, 1)
	b.run(200)
	b.trace = nil
	b.walk(9, 0)
	b.run(150)
	want := []string{
		"200: fault buffer <- 0x1009",
		"201: sm0 frozen=true",
		"302: pte 0x1005 remote=true frame=0x1005",
		"303: inval tlb0 0x1005",
		"303: inval tlb1 0x1005",
		"305: cmd evict tag=65534 pages=1 first=0",
		"316: cmd fetch tag=0 pages=1 first=0",
		"327: pte 0x1009 remote=false frame=0x9",
		"329: reply 0x1009 remote=false read-only=false frame=0x9",
		"330: sm0 frozen=false",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
	assert.Equal(t, uint64(2), b.d.Faults())
	assert.Equal(t, uint64(1), b.d.Evictions())
	b.check()
}

// One zero-copy access: with remote access always on (t_s = 8), the first
// read of page 7 is served from host memory.
//
//	0  the walk enters the fault buffer as a zero-copy access (its
//	   block's count, this access included, is 1 < 8); no SM freezes
//	1  the search offers the remote PTE, read-only
//	2  the router takes it
func TestCycleTableZeroCopy(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteAlways), benchPages, 100)
	b.walk(7, 0)
	b.run(20)
	want := []string{
		"0: fault buffer <- 0x1007",
		"2: reply 0x1007 remote=true read-only=true frame=0x1007",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
	assert.Equal(t, uint64(1), b.d.ZeroCopy())
	assert.Equal(t, uint64(0), b.d.Faults())
	b.check()
}

// Reference fault timing: the fault of TestCycleTableFault with no latency
// on the timeline and no freeze.
//
//	 0  the walk enters the fault buffer; no SM freezes
//	 1  the driver takes the oldest fault: its latency ends at 1+0 = 1
//	 2  the menu's plan: fetch page 5 (the state change costs a cycle)
//	 3  the PME takes the fetch command; the page's event at 13
//	14  its PTE is written; the reply is offered at 15, taken at 16
//
// One fault counted, its 100 cycles kept off the timeline (FaultCycles).
func TestCycleTableReferenceTiming(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteOff), benchPages, 100, func(c *Config) { c.ReferenceTiming, c.FaultUnit = true, 1 })
	b.walk(5, 1)
	b.run(30)
	want := []string{
		"0: fault buffer <- 0x1005",
		"3: cmd fetch tag=0 pages=1 first=0",
		"14: pte 0x1005 remote=false frame=0x5",
		"16: reply 0x1005 remote=false read-only=false frame=0x5",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
	assert.Equal(t, uint64(1), b.d.Faults())
	assert.Equal(t, uint64(100), b.d.FaultCycles())
	b.check()
}

// Concurrent eviction: the eviction of TestCycleTableEviction with the
// write-back on its own lane.
//
//	305  the PME takes the write-back of page 5 (counted evicted now);
//	     its event at 315 changes nothing
//	306  the PME takes the fetch of page 9 at once (not at 316); its
//	     event at 316
//	317  page 9's PTE written; reply offered at 318, taken at 319
//	320  SM 0 thaws, ten cycles before the serial driver's 330
func TestCycleTableConcurrentEviction(t *testing.T) {
	b := newBench(t, menu(uvm.RemoteOff), 1, 100, func(c *Config) { c.ConcurrentEviction = true })
	b.walk(5, 1)
	b.run(200)
	b.trace = nil
	b.walk(9, 0)
	b.run(150)
	want := []string{
		"200: fault buffer <- 0x1009",
		"201: sm0 frozen=true",
		"302: pte 0x1005 remote=true frame=0x1005",
		"303: inval tlb0 0x1005",
		"303: inval tlb1 0x1005",
		"305: cmd evict tag=65534 pages=1 first=0",
		"306: cmd fetch tag=0 pages=1 first=0",
		"317: pte 0x1009 remote=false frame=0x9",
		"319: reply 0x1009 remote=false read-only=false frame=0x9",
		"320: sm0 frozen=false",
	}
	assert.Empty(t, cmp.Diff(want, b.trace))
	assert.Equal(t, uint64(1), b.d.Evictions())
	b.check()
}

// The managed mask survives the reset every run starts with: the
// managed allocation covers blocks 0-2 (48 pages) of the layout's first
// region. With the tree prefetcher, faults on pages 0, 16 and 32 (one
// after another) bring blocks 0, 1 and 2; after the third, node{0-3}
// holds 48 of 64 pages, more than half, so the menu plans block 3 too,
// which lies outside the allocation and does not move: 48 pages migrate,
// not 64.
func TestManagedMaskSurvivesReset(t *testing.T) {
	m := menu(uvm.RemoteOff)
	m.Prefetcher = uvm.PrefetchTree
	b := newBench(t, m, benchPages, 10, func(c *Config) { c.Managed[0].Count = 3 })
	for _, page := range []int{0, 16, 32} {
		b.walk(page, 0)
		b.run(200)
	}
	assert.Equal(t, uint64(3), b.d.Faults())
	assert.Equal(t, uint64(48), b.d.Migrations())
	assert.Equal(t, pageFixed, b.d.pageState(48))
	b.check()
}
