package pme

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/rtl"
)

// rival floods one device-to-host port with pages and drains its output,
// taking half the device-to-host bandwidth from the engine.
type rival struct {
	rtl.Base
	in, out *rtl.Decoupled[pcie.Packet]
}

func (r *rival) Drive() {
	r.in.Valid.Set(true)
	r.in.Bits.Set(pcie.Packet{Tag: 1, Bytes: 4096})
	r.out.Ready.Set(true)
}

func (r *rival) Eval() { r.Sleep() }

// writeMonitor logs the cycle each victim page leaves the engine.
type writeMonitor struct {
	rtl.Base
	port *rtl.Decoupled[pcie.Packet]
	left []uint64
}

func (m *writeMonitor) Drive() {}

func (m *writeMonitor) Eval() {
	if m.port.Fire() {
		if kind, _, _ := splitTag(m.port.Bits.Get().Tag); kind == kindWrite {
			m.left = append(m.left, m.Now())
		}
		return
	}
	m.Sleep()
}

func TestSwapPageWaitsForItsVictimPage(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	l, err := pcie.New(s, "pcie", pcie.DefaultConfig(), pcie.NewPorts(s, "pcie", pcie.DefaultConfig()))
	require.NoError(t, err)
	cfg := DefaultConfig()
	e, err := New(s, "pme", cfg, NewPorts(s, "pme", l.D2H.In[0], l.H2D.Out[0]))
	require.NoError(t, err)
	_, err = NewHostDMA(s, "host.dma", cfg, HostPorts{In: l.D2H.Out[0], Out: l.H2D.In[0]})
	require.NoError(t, err)
	r := &rival{in: l.D2H.In[1], out: l.D2H.Out[1]}
	s.Add(r, "tb.rival")
	m := &writeMonitor{port: l.D2H.In[0]}
	s.Add(m, "tb.monitor")
	m.Base.Listen(m.port.Valid, m.port.Ready)
	tb := newIssuer(s, e, []timedCommand{{0, Command{Tag: 0, Op: Swap, Pages: 16, First: 3}}})
	s.Reset()
	ok, err := s.RunUntil(func() bool { return len(tb.got) == 17 }, 100_000)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, m.left, 16)
	delayed := 0
	for n, ev := range tb.got[:16] {
		require.False(t, ev.Event.Victim)
		// Page n of the fetch overwrites victim page n: it is reported only
		// after that page has left the engine.
		require.Greater(t, ev.Cycle, m.left[n], "page %d reported before its victim page left", n)
		if n > 0 && ev.Cycle > pageEvent(n)+400 {
			delayed++
		}
	}
	require.Positive(t, delayed, "the rival should slow the victim below the fetch")
	require.True(t, tb.got[16].Event.Victim)
}
