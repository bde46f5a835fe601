package mu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
)

// The testbench drives the unit's ports with fakes of the blocks around
// it: a router (remote walks in, replies out), a DA (destinations from a
// list, map and PROTECT always taken), the IPgT memory (reads answered a
// fixed latency later), a PME (a command's page events spaced evenly
// after a set-up delay, its victim event after the last page), the GMMU
// (page-table writes always taken, kept in a page table) and L1 TLBs
// (invalidations always taken). It records every handshake with its
// cycle.

// dest is a destination the fake DA hands out.
type dest struct {
	pfgn uint64
	swap bool
}

// remoteWalk is a walk the fake router offers on Remote.
type remoteWalk struct {
	walk ptw.Walk
	pte  pte.PTE
}

type pending struct {
	due uint64
	ev  pme.Event
}

// bench is the unit between its fakes.
type bench struct {
	t     *testing.T
	s     *rtl.Sim
	u     *Unit
	p     Ports
	probe *LatencyProbe

	remote   []remoteWalk                  // the router's queue toward Remote
	migReady func() bool                   // the router takes a reply this cycle
	dests    []dest                        // the DA's destination queue
	dstReady func() bool                   // the DA offers its head this cycle
	ipgt     map[uint64]ipgt.Entry         // IPgT entries by frame-group
	memLat   uint64                        // IPgT read latency
	memResp  []pending                     // reads in flight (ev.Tag unused)
	memData  []uint64                      // their data
	pmeDelay func() (setup, period uint64) // per command
	events   []pending                     // PME events not yet taken
	table    map[uint64]pte.PTE            // the page table the GMMU writes
	local    map[uint64]pte.PTE            // the last local PTE written per page

	trace []string
}

func newBench(t *testing.T, skip bool, cfg Config, tlbs int) *bench {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	walkPort := func(name string) ptw.PTEPort[ptw.Walk] {
		return ptw.PTEPort[ptw.Walk]{Decoupled: rtl.NewDecoupledOf[ptw.Walk](s, name, ptw.WalkBits), PTE: rtl.NewWire[pte.PTE](s, name+".pte", 64)}
	}
	p := Ports{
		Remote:   walkPort("router.remote"),
		Migrated: walkPort("router.migrated"),
		Dst:      da.NewPorts(s, "da", da.DefaultConfig()),
		Mem:      ipgt.NewMemPorts(s, "unit", ipgt.DefaultAddrBits),
		Cmd:      rtl.NewDecoupledOf[pme.Command](s, "pme.cmd", pme.CommandBits),
		Events:   rtl.NewDecoupledOf[pme.Event](s, "pme.events", pme.EventBits),
		Update:   ptw.PTEPort[uint64]{Decoupled: rtl.NewDecoupled[uint64](s, "gmmu.update", pte.VPNBits), PTE: rtl.NewWire[pte.PTE](s, "gmmu.update.pte", 64)},
		Host:     rtl.NewDecoupled[uint16](s, "host", 16),
		HostDone: rtl.NewDecoupled[uint16](s, "host_done", 16),
	}
	for i := range tlbs {
		p.Inval = append(p.Inval, rtl.NewDecoupledOf[tlb.Invalidate](s, fmt.Sprintf("tlb%d.inval", i), tlb.InvalidateBits))
		p.InvalAck = append(p.InvalAck, rtl.NewDecoupledOf[tlb.Invalidate](s, fmt.Sprintf("tlb%d.inval_ack", i), tlb.InvalidateBits))
	}
	u, err := New(s, "unit", cfg, p)
	require.NoError(t, err)
	b := &bench{
		t: t, s: s, u: u, p: p, probe: NewLatencyProbe(u),
		migReady: func() bool { return true },
		dstReady: func() bool { return true },
		ipgt:     map[uint64]ipgt.Entry{},
		memLat:   5,
		pmeDelay: func() (uint64, uint64) { return 10, 4 },
		table:    map[uint64]pte.PTE{},
		local:    map[uint64]pte.PTE{},
	}
	s.Reset()
	return b
}

func (b *bench) log(format string, args ...any) {
	b.trace = append(b.trace, fmt.Sprintf("%d: ", b.s.Cycle())+fmt.Sprintf(format, args...))
}

// pte is the page table's entry for vpn: remote in the host frame equal
// to the page number until the unit writes it.
func (b *bench) pte(vpn uint64) pte.PTE {
	if e, ok := b.table[vpn]; ok {
		return e
	}
	return pte.Remote(vpn)
}

// offer queues a walk of vpn toward Remote with the page table's PTE.
func (b *bench) offer(vpn uint64) {
	b.remote = append(b.remote, remoteWalk{ptw.Walk{VPN: vpn, Requester: uint16(vpn)}, b.pte(vpn)})
}

// step sets the fakes' outputs for this cycle, records the handshakes,
// steps the simulator, and updates the fakes.
func (b *bench) step() {
	p := b.p
	c := b.s.Cycle()
	p.Remote.Valid.Set(len(b.remote) > 0)
	if len(b.remote) > 0 {
		p.Remote.Bits.Set(b.remote[0].walk)
		p.Remote.PTE.Set(b.remote[0].pte)
	}
	p.Migrated.Ready.Set(b.migReady())
	p.Dst.InitDone.Set(true)
	p.Dst.DstValid.Set(len(b.dests) > 0 && b.dstReady())
	if len(b.dests) > 0 {
		p.Dst.DstPFgN.Set(b.dests[0].pfgn)
		p.Dst.DstSwap.Set(b.dests[0].swap)
	}
	p.Dst.Map.Ready.Set(true)
	p.Dst.SW.Ready.Set(true)
	p.Mem.ReqReady.Set(true)
	p.Mem.RespValid.Set(len(b.memResp) > 0 && b.memResp[0].due == c)
	if len(b.memResp) > 0 {
		p.Mem.RespData.Set(b.memData[0])
	}
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
	p.Update.Ready.Set(true)
	for i := range p.Inval {
		p.Inval[i].Ready.Set(true)
		p.InvalAck[i].Valid.Set(false)
	}
	p.Host.Valid.Set(false)
	p.HostDone.Ready.Set(true)

	var cmd *pme.Command
	if p.Remote.Fire() {
		b.log("remote %#x", b.remote[0].walk.VPN)
		b.remote = b.remote[1:]
	}
	if p.Dst.DstFire() {
		b.log("dst %d swap=%t", b.dests[0].pfgn, b.dests[0].swap)
		b.dests = b.dests[1:]
	}
	if p.Mem.ReqValid.Get() && p.Mem.ReqReady.Get() {
		fg := (p.Mem.ReqAddr.Get() - b.u.cfg.IPGTBase) / ipgt.EntryBytes
		b.log("ipgt read %d", fg)
		b.memResp = append(b.memResp, pending{due: c + b.memLat})
		b.memData = append(b.memData, b.ipgt[fg].Pack())
	}
	if p.Mem.RespValid.Get() {
		b.memResp, b.memData = b.memResp[1:], b.memData[1:]
	}
	if p.Cmd.Fire() {
		v := p.Cmd.Bits.Get()
		cmd = &v
		b.log("cmd %v tag=%d pages=%d first=%d", v.Op, v.Tag, v.Pages, v.First)
	}
	if next >= 0 && p.Events.Fire() {
		b.events = slices.Delete(b.events, next, next+1)
	}
	if p.Update.Fire() {
		vpn, e := p.Update.Bits.Get(), p.Update.PTE.Get()
		b.table[vpn] = e
		if !e.IsRemote() {
			b.local[vpn] = e
		}
		b.log("pte %#x remote=%t frame=%#x", vpn, e.IsRemote(), e.Frame())
	}
	for i, in := range p.Inval {
		if in.Fire() {
			b.log("inval tlb%d %#x", i, in.Bits.Get().VPN)
		}
	}
	if p.Dst.Map.Valid.Get() && p.Dst.Map.Ready.Get() {
		fg, g := p.Dst.Map.PFgN.Get(), p.Dst.Map.VPgN.Get()
		b.ipgt[fg] = ipgt.Entry{M: true, VPgN: g}
		b.log("map %d <- %#x", fg, g)
	}
	if p.Migrated.Fire() {
		w, e := p.Migrated.Bits.Get(), p.Migrated.PTE.Get()
		// A reply carries the local PTE the unit has written for the
		// page. (It may be taken after the page's group was chosen as a
		// victim and unmapped: the router drops such a fill, watching the
		// update port.)
		require.Equal(b.t, b.local[w.VPN], e, "cycle %d: reply for %#x is not its written local PTE", c, w.VPN)
		require.False(b.t, e.IsRemote(), "cycle %d: reply for %#x is remote", c, w.VPN)
		b.log("reply %#x frame=%#x", w.VPN, e.Frame())
	}
	if p.HostDone.Fire() {
		b.log("host done %d", p.HostDone.Bits.Get())
	}
	active := b.u.Active()
	require.NoError(b.t, b.s.Step())
	b.checkParked()
	if cmd != nil {
		setup, period := b.pmeDelay()
		due := c + setup
		if cmd.Op == pme.Evict {
			b.events = append(b.events, pending{due, pme.Event{Tag: cmd.Tag, Victim: true}})
		} else {
			for i := range cmd.Pages {
				page := (cmd.First + i) % cmd.Pages
				b.events = append(b.events, pending{due + uint64(i)*period, pme.Event{Tag: cmd.Tag, Page: page, Critical: i == 0, Last: i == cmd.Pages-1}})
			}
			if cmd.Op == pme.Swap {
				b.events = append(b.events, pending{due + uint64(cmd.Pages)*period, pme.Event{Tag: cmd.Tag, Victim: true}})
			}
		}
	}
	if b.u.Active() < active {
		b.logAt(c, "slot free")
	}
}

func (b *bench) logAt(c uint64, what string) {
	b.trace = append(b.trace, fmt.Sprintf("%d: %s", c, what))
}

// run steps n cycles.
func (b *bench) run(n int) {
	for range n {
		b.step()
	}
}

// idle reports the unit with nothing in flight and the fakes drained.
func (b *bench) idle() bool {
	return b.u.Active() == 0 && b.u.Waiting() == 0 && len(b.remote) == 0 && len(b.events) == 0 && len(b.memResp) == 0
}

// directedConfig is a unit for page-groups 0x100..0x10f with two L1 TLBs.
func directedConfig() Config {
	return Config{Slots: 16, Requests: 8, IPGTBase: 0, FirstGroup: 0x100, Groups: 16, HostPages: []int{0}}
}

// checkParked verifies the unit's parked requests against its registers
// after a cycle: every valid request the reply search passes by waits for
// a page that the slot migrating its page-group has not landed, and each
// slot's list holds exactly its parked requests.
func (b *bench) checkParked() {
	u := b.u
	p := &u.parked
	for i := range u.cfg.Requests {
		if !p.Parked(i) {
			continue
		}
		listed := false
		for j := p.First(p.Group(i)); j >= 0; j = p.Next(j) {
			listed = listed || j == i
		}
		require.True(b.t, listed, "cycle %d: parked request %d is not on slot %d's list", b.s.Cycle(), i, p.Group(i))
		if !u.reqValid.Has(i) {
			continue
		}
		vpn := u.reqWalk.At(i).Q().VPN
		l := u.lookGroup(vpn / PagesPerGroup)
		require.Equal(b.t, p.Group(i), l.slot, "cycle %d: parked request %d (vpn %#x) on the wrong slot", b.s.Cycle(), i, vpn)
		require.Zero(b.t, l.landed&(1<<(vpn%PagesPerGroup)), "cycle %d: parked request %d (vpn %#x) has landed", b.s.Cycle(), i, vpn)
	}
}
