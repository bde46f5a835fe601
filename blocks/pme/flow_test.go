package pme_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
)

// control is a minimal UVMMU control for one migration, as docs/platform.md
// draws it: every hand-off between blocks is one register stage, and the
// Destination Allocator is two (request, grant from the DCQ head).
type control struct {
	rtl.Base
	tl   *tlb.TLB
	gmmu *ptw.GMMU
	pme  *pme.Engine
	log  map[string]uint64 // cycle of each step, for the test

	walkValid *rtl.Reg[bool]
	walk      *rtl.Reg[ptw.Walk]
	cmdAt     *rtl.Reg[uint64] // cycle the PME command is offered; 0 if none
	cmd       *rtl.Reg[pme.Command]
	updValid  *rtl.Reg[bool]
	fillValid *rtl.Reg[bool]
	vpn       *rtl.Reg[uint64]
	local     *rtl.Reg[pte.PTE]
}

const frameGroup = 7 // the free frame-group the allocator hands out

func newControl(s *rtl.Sim, tl *tlb.TLB, g *ptw.GMMU, e *pme.Engine) *control {
	c := &control{tl: tl, gmmu: g, pme: e, log: map[string]uint64{}}
	s.Add(c, "uvmmu")
	b := &c.Base
	c.walkValid = rtl.NewFlag(b, "walk_valid", false)
	c.walk = rtl.NewRegOf(b, "walk", ptw.WalkBits, ptw.Walk{})
	c.cmdAt = rtl.NewReg[uint64](b, "cmd_at", 64, 0)
	c.cmd = rtl.NewRegOf(b, "cmd", pme.CommandBits, pme.Command{})
	c.updValid = rtl.NewFlag(b, "upd_valid", false)
	c.fillValid = rtl.NewFlag(b, "fill_valid", false)
	c.vpn = rtl.NewReg[uint64](b, "vpn", pte.VPNBits, 0)
	c.local = rtl.NewReg[pte.PTE](b, "local", 64, 0)
	tl.Resp.Consumer(b)
	g.Resp.Consumer(b)
	e.Events.Consumer(b)
	g.Req.Producer(b)
	e.Cmd.Producer(b)
	return c
}

func (c *control) Drive() {
	c.tl.Resp.Ready.Set(true)
	c.gmmu.Resp.Ready.Set(true)
	c.pme.Events.Ready.Set(true)
	c.gmmu.Req.Valid.Set(c.walkValid.Q())
	c.gmmu.Req.Bits.Set(c.walk.Q())
	c.pme.Cmd.Valid.Set(c.cmdAt.Q() != 0 && c.cmdAt.Q() <= c.Now())
	c.pme.Cmd.Bits.Set(c.cmd.Q())
	c.gmmu.Update.Valid.Set(c.updValid.Q())
	c.gmmu.Update.Bits.Set(c.vpn.Q())
	c.gmmu.Update.PTE.Set(c.local.Q())
	c.tl.Fill.Valid.Set(c.fillValid.Q())
	c.tl.Fill.Bits.Set(c.vpn.Q())
	c.tl.Fill.PTE.Set(c.local.Q())
}

func (c *control) Eval() {
	now := c.Now()
	if c.tl.Resp.Fire() && c.tl.Resp.Bits.Get().Status == tlb.Miss {
		r := c.tl.Resp.Bits.Get()
		c.log["tlb miss"] = now
		c.walkValid.Set(true)
		c.walk.Set(ptw.Walk{VPN: r.VPN, Requester: r.Requester})
	}
	if c.gmmu.Req.Fire() {
		c.log["walk accepted"] = now
		c.walkValid.Set(false)
	}
	if c.gmmu.Resp.Fire() && c.gmmu.Resp.PTE.Get().IsRemote() {
		w := c.gmmu.Resp.Bits.Get()
		c.log["walk result"] = now
		c.vpn.Set(w.VPN)
		c.local.Set(pte.Local(frameGroup*16 + w.VPN%16))
		c.cmd.Set(pme.Command{Tag: 1, Op: pme.Fetch, Pages: 16, First: uint16(w.VPN % 16)})
		c.cmdAt.Set(now + 3) // DA request in +1, grant in +2, command in +3
	}
	if c.pme.Cmd.Fire() {
		c.log["command accepted"] = now
		c.cmdAt.Set(0)
	}
	if c.pme.Events.Fire() {
		switch ev := c.pme.Events.Bits.Get(); {
		case ev.Critical:
			c.log["critical page"] = now
			c.updValid.Set(true)
		case ev.Last:
			c.log["page-group in"] = now
		}
	}
	if c.gmmu.Update.Fire() {
		c.log["pte updated"] = now
		c.updValid.Set(false)
		c.fillValid.Set(true)
	}
	if c.tl.Fill.Fire() {
		c.log["l1 filled"] = now
		c.fillValid.Set(false)
	}
}

// TestMigrationTimeline replays the cycle-by-cycle UVMMU migration of
// docs/platform.md with the real link, TLB, GMMU and engine.
func TestMigrationTimeline(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	tl, err := tlb.New(s, "sm0.l1tlb", tlb.DefaultL1Config(), tlb.NewPorts(s, "sm0.l1tlb"))
	require.NoError(t, err)
	gcfg := ptw.DefaultConfig()
	gcfg.Pages = 1024
	g, err := ptw.New(s, "gmmu", gcfg, ptw.NewPorts(s, "gmmu"))
	require.NoError(t, err)
	link, err := pcie.New(s, "pcie", pcie.DefaultConfig(), pcie.NewPorts(s, "pcie", pcie.DefaultConfig()))
	require.NoError(t, err)
	e, err := pme.New(s, "pme", pme.DefaultConfig(), pme.NewPorts(s, "pme", link.D2H.In[0], link.H2D.Out[0]))
	require.NoError(t, err)
	_, err = pme.NewHostDMA(s, "host.dma", pme.DefaultConfig(), pme.HostPorts{In: link.D2H.Out[0], Out: link.H2D.In[0]})
	require.NoError(t, err)
	c := newControl(s, tl, g, e)
	const vpn = 0x123
	for v := range uint64(1024) {
		require.NoError(t, g.Load(v, pte.Remote(0x8000+v)))
	}
	s.Reset()

	tl.Req.Valid.Set(true)
	tl.Req.Bits.Set(tlb.Lookup{VPN: vpn, Requester: 5})
	require.NoError(t, s.Step())
	tl.Req.Valid.Set(false)
	ok, err := s.RunUntil(func() bool { _, in := c.log["page-group in"]; return in }, 20000)
	require.NoError(t, err)
	require.True(t, ok)

	assert.Equal(t, map[string]uint64{
		"tlb miss":         1,
		"walk accepted":    2,
		"walk result":      103,
		"command accepted": 106,
		"critical page":    1981,
		"pte updated":      1982,
		"l1 filled":        1983,
		"page-group in":    7668,
	}, c.log)
	e2, found := tl.Probe(vpn)
	require.True(t, found)
	assert.Equal(t, pte.Local(frameGroup*16+vpn%16), e2)
	assert.Equal(t, e2, g.Read(vpn))
	// From the command to the critical page: 1875 cycles, 1.27 us.
	assert.InDelta(t, 1.27, float64(1981-106)/1481, 0.005)
}
