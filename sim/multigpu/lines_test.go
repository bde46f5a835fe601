package multigpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
)

// The line testbench's links: 32 GB/s at 1 GHz is exactly 32 B a cycle,
// so a 16 B read request takes 1 cycle of wire, a 128 B line 4 and a
// 4 KB page copy 128, with no fractions; 200 cycles each way.
const (
	benchLatency = 200
	benchLine    = 128
)

func benchLink() pcie.Config {
	return pcie.Config{BandwidthMBps: 32000, ClockMHz: 1000, RoundTripCycles: 2 * benchLatency, MaxPacketBytes: 1 << gpu.PageShift, Ports: LinePort + 1}
}

// lineOffer is a request a test SM sends, not before cycle At.
type lineOffer struct {
	At  uint64
	Req gpu.RemoteReq
}

// lineArrival is a response as a test SM took it.
type lineArrival struct {
	Cycle uint64
	Resp  gpu.RemoteResp
}

// lineSM stands for an SM's load/store unit: it offers its requests in
// order and takes every response at once.
type lineSM struct {
	rtl.Base
	req    *rtl.Decoupled[gpu.RemoteReq]
	resp   *rtl.Decoupled[gpu.RemoteResp]
	offers []lineOffer
	idx    *rtl.Reg[uint32]
	got    []lineArrival
	loop   bool // offer the requests again and again, logging nothing
}

func (m *lineSM) Drive() {
	i := int(m.idx.Q())
	ok := i < len(m.offers) && m.offers[i].At <= m.Now()
	m.req.Valid.Set(ok)
	if ok {
		m.req.Bits.Set(m.offers[i].Req)
	}
	m.resp.Ready.Set(true)
}

func (m *lineSM) Eval() {
	if m.resp.Fire() && !m.loop {
		m.got = append(m.got, lineArrival{m.Now(), m.resp.Bits.Get()})
	}
	i := int(m.idx.Q())
	switch {
	case m.req.Fire() && m.loop:
		m.idx.Set(uint32((i + 1) % len(m.offers)))
	case m.req.Fire():
		m.idx.Set(uint32(i + 1))
	case i < len(m.offers) && m.offers[i].At > m.Now():
		m.SleepUntil(m.offers[i].At)
	}
}

// copyPort stands for the driver on port 0 of one link direction: it
// offers its page copies, each not before its cycle, and logs the
// packets that arrive on the direction's port 0.
type copyPort struct {
	rtl.Base
	in, out *rtl.Decoupled[pcie.Packet]
	at      []uint64 // offer cycles of 4 KB copies
	idx     *rtl.Reg[uint32]
	got     []uint64 // arrival cycles at the far end
}

func (c *copyPort) Drive() {
	i := int(c.idx.Q())
	ok := i < len(c.at) && c.at[i] <= c.Now()
	c.in.Valid.Set(ok)
	if ok {
		c.in.Bits.Set(pcie.Packet{Tag: uint64(i), Bytes: 1 << gpu.PageShift})
	}
	c.out.Ready.Set(true)
}

func (c *copyPort) Eval() {
	if c.out.Fire() {
		c.got = append(c.got, c.Now())
	}
	i := int(c.idx.Q())
	switch {
	case c.in.Fire():
		c.idx.Set(uint32(i + 1))
	case i < len(c.at) && c.at[i] > c.Now():
		c.SleepUntil(c.at[i])
	}
}

// lineBench is n GPUs' remote line units, one NVLink per pair, the
// test SMs (sms[g][i]) and a copy port on every direction
// (copies[ChannelIndex(n, src, dst)]).
type lineBench struct {
	sim    *rtl.Sim
	units  []*RemoteLines
	sms    [][]*lineSM
	copies []*copyPort
}

// newLineBench builds the bench; offers[g][i] are SM i of GPU g's
// requests, copies maps a direction {src, dst} to its copies' offer
// cycles.
func newLineBench(t testing.TB, opts rtl.Options, offers [][][]lineOffer, copies map[[2]int][]uint64) *lineBench {
	n := len(offers)
	s := rtl.New(opts)
	b := &lineBench{sim: s, copies: make([]*copyPort, 2*n+n*n)}
	ports := make([]LinePorts, n)
	for g := range n {
		ports[g] = LinePorts{Out: make([]*rtl.Decoupled[pcie.Packet], n), In: make([]*rtl.Decoupled[pcie.Packet], n)}
	}
	dir := func(src, dst int, d pcie.DirectionPorts) {
		ports[src].Out[dst], ports[dst].In[src] = d.In[LinePort], d.Out[LinePort]
		c := &copyPort{in: d.In[0], out: d.Out[0], at: copies[[2]int{src, dst}]}
		s.Add(c, fmt.Sprintf("copy%d_%d", src, dst))
		c.idx = rtl.NewReg[uint32](&c.Base, "idx", 32, 0)
		d.In[0].Producer(&c.Base)
		d.Out[0].Consumer(&c.Base)
		b.copies[ChannelIndex(n, src, dst)] = c
	}
	for a := range n {
		for o := a + 1; o < n; o++ {
			path := fmt.Sprintf("nvlink%d_%d", a, o)
			p := pcie.NewPorts(s, path, benchLink())
			_, err := pcie.New(s, path, benchLink(), p)
			require.NoError(t, err)
			dir(a, o, p.H2D)
			dir(o, a, p.D2H)
		}
	}
	for g := range n {
		var sms []*lineSM
		if len(offers[g]) == 0 {
			offers[g] = [][]lineOffer{nil} // an idle SM
		}
		for i, o := range offers[g] {
			path := fmt.Sprintf("gpu%d.sm%d", g, i)
			m := &lineSM{offers: o,
				req:  rtl.NewDecoupledOf[gpu.RemoteReq](s, path+".remote_req", gpu.RemoteReqWidth),
				resp: rtl.NewDecoupledOf[gpu.RemoteResp](s, path+".remote_resp", gpu.RemoteRespWidth)}
			s.Add(m, path)
			m.idx = rtl.NewReg[uint32](&m.Base, "idx", 32, 0)
			m.req.Producer(&m.Base)
			m.resp.Consumer(&m.Base)
			ports[g].Req = append(ports[g].Req, m.req)
			ports[g].Resp = append(ports[g].Resp, m.resp)
			sms = append(sms, m)
		}
		u, err := NewRemoteLines(s, fmt.Sprintf("gpu%d.lines", g), g, 64, benchLine, LineCredits(benchLatency), ports[g])
		require.NoError(t, err)
		b.units = append(b.units, u)
		b.sms = append(b.sms, sms)
	}
	s.Reset()
	return b
}

// checked is the tests' simulator: checked mode, idle skipping on or off.
func checked(skip bool) rtl.Options { return rtl.Options{Checked: true, SkipIdle: skip} }

// run steps the bench to cycle end.
func (b *lineBench) run(t *testing.T, end uint64) {
	require.NoError(t, b.sim.Run(end-b.sim.Cycle()))
}

func read(warp, owner, lines uint8) gpu.RemoteReq {
	return gpu.RemoteReq{Warp: warp, Owner: owner, Lines: lines}
}

func TestRemoteLineAlone(t *testing.T) {
	for _, skip := range []bool{false, true} {
		b := newLineBench(t, checked(skip), [][][]lineOffer{{{{0, read(5, 1, 1)}}}, {}}, nil)
		b.run(t, 1000)
		// Cycle 0 the request enters GPU 0's input register, cycle 1 the
		// sender for GPU 1 takes it, cycle 2 it offers the 16 B read
		// request: latched 2, granted 3, 1 cycle of wire (16 B at 32 B a
		// cycle) ending in 4, at GPU 1 in 4 + 200 = 204. GPU 1 queues the
		// answer and offers the 128 B line in 205: granted 206, 4 cycles
		// of wire ending in 210, at GPU 0 in 210 + 200 = 410, and the SM
		// takes it in 411 = 2 + (1+1+200) + 1 + (1+4+200) + 1.
		assert.Equal(t, []lineArrival{{411, gpu.RemoteResp{Warp: 5, Lines: 1}}}, b.sms[0][0].got)
		read, written := b.units[0].Lines()
		assert.Equal(t, [2]uint64{1, 0}, [2]uint64{read, written})
		// GPU 0 received the line, GPU 1 the request.
		assert.Equal(t, uint64(benchLine), b.units[0].ReceivedBytes())
		assert.Equal(t, uint64(LineRequestBytes), b.units[1].ReceivedBytes())
	}
}

func TestRemoteLineWaitsForACopy(t *testing.T) {
	for _, skip := range []bool{false, true} {
		// GPU 1's driver side copies a page to GPU 0 from cycle 200, on
		// the direction the line comes back on.
		b := newLineBench(t, checked(skip), [][][]lineOffer{{{{0, read(5, 1, 1)}}}, {}}, map[[2]int][]uint64{{1, 0}: {200}})
		b.run(t, 1000)
		// The copy: latched 200, granted 201, 128 cycles of wire ending in
		// 329, at GPU 0 in 329 + 200 = 529. The read request reaches GPU 1
		// in 204 (TestRemoteLineAlone) and its answer is latched in 205
		// behind the copy on the wire; it is granted as the copy leaves,
		// in 329, and its 4 cycles end in 333: at GPU 0 in 333 + 200 =
		// 533 = the copy's serialization end 329 + the line's 4 + the
		// latency 200, and the SM takes it in 534.
		assert.Equal(t, []uint64{529}, b.copies[ChannelIndex(2, 1, 0)].got)
		assert.Equal(t, []lineArrival{{534, gpu.RemoteResp{Warp: 5, Lines: 1}}}, b.sms[0][0].got)
	}
}

func TestCopyWaitsForRemoteLines(t *testing.T) {
	for _, skip := range []bool{false, true} {
		// A store writes three lines to GPU 1 (posted) from cycle 0, and a
		// page copy from GPU 0 to GPU 1 is offered in cycle 3.
		store := gpu.RemoteReq{Warp: 7, Owner: 1, Lines: 3, Write: true}
		b := newLineBench(t, checked(skip), [][][]lineOffer{{{{0, store}}}, {}}, map[[2]int][]uint64{{0, 1}: {3}})
		b.run(t, 1000)
		// Line 1: offered 2 (TestRemoteLineAlone), granted 3, 4 cycles of
		// wire ending in 7. Line 2 is latched in 3, as line 1 leaves the
		// input register, and the copy in 3 too. When line 1 leaves the
		// wire in 7 the arbiter, which granted the line port last, grants
		// the copy: 128 cycles ending in 135, at GPU 1 in 335 (alone it
		// would be granted in 4 and arrive in 332). Line 2 goes next, 135
		// to 139, then line 3 (latched in 135), 139 to 143.
		assert.Equal(t, []uint64{335}, b.copies[ChannelIndex(2, 0, 1)].got)
		assert.Empty(t, b.sms[0][0].got, "stores are posted")
		_, written := b.units[1].Lines()
		assert.Equal(t, uint64(3), written)
		assert.Equal(t, uint64(3*benchLine), b.units[1].ReceivedBytes())
	}
}

func TestRemoteLinesFromTwoOwners(t *testing.T) {
	for _, skip := range []bool{false, true} {
		// GPU 0's SM 0 reads a line from GPU 1 and its SM 1 a line from
		// GPU 2, both in cycle 0, while GPU 1 copies a page to GPU 0 from
		// cycle 200.
		b := newLineBench(t, checked(skip), [][][]lineOffer{{{{0, read(3, 1, 1)}}, {{0, read(4, 2, 1)}}}, {}, {}},
			map[[2]int][]uint64{{1, 0}: {200}})
		b.run(t, 1000)
		// The line from GPU 1 waits for the copy on the 1 -> 0 direction
		// (TestRemoteLineWaitsForACopy: 534); the line from GPU 2 crosses
		// the 2 -> 0 link alone (TestRemoteLineAlone: 411).
		assert.Equal(t, []lineArrival{{534, gpu.RemoteResp{Warp: 3, Lines: 1}}}, b.sms[0][0].got)
		assert.Equal(t, []lineArrival{{411, gpu.RemoteResp{Warp: 4, Lines: 1}}}, b.sms[0][1].got)
	}
}

func TestRemoteLinesOfOneWarpMerge(t *testing.T) {
	// One warp reads two lines from GPU 1 and one from GPU 2 in one
	// request each (cycles 0 and 2: the SM's input register takes one
	// request every other cycle). GPU 1's lines: requests offered 2 and
	// 3, answers at GPU 0 in 410 and, a cycle of request later and 4
	// cycles of wire behind the first answer (latched 206, granted 210,
	// ending 214), 414. GPU 2's: offered 4, at GPU 0 in 412. The SM sees
	// each arrival the cycle after it.
	b := newLineBench(t, checked(true), [][][]lineOffer{{{{0, read(9, 1, 2)}, {0, read(9, 2, 1)}}}, {}, {}}, nil)
	b.run(t, 1000)
	assert.Equal(t, []lineArrival{{411, gpu.RemoteResp{Warp: 9, Lines: 1}}, {413, gpu.RemoteResp{Warp: 9, Lines: 1}}, {415, gpu.RemoteResp{Warp: 9, Lines: 1}}}, b.sms[0][0].got)
}

// BenchmarkRemoteLines keeps four GPUs' SMs reading and writing lines at
// each other without a pause (go test -bench RemoteLines -benchmem: no
// allocation per cycle).
func BenchmarkRemoteLines(b *testing.B) {
	const n = 4
	offers := make([][][]lineOffer, n)
	for g := range n {
		for range 4 {
			var o []lineOffer
			for k := range 8 {
				o = append(o, lineOffer{Req: gpu.RemoteReq{Warp: uint8(k), Owner: uint8((g + 1 + k%(n-1)) % n), Lines: uint8(1 + k%3), Write: k%4 == 3}})
			}
			offers[g] = append(offers[g], o)
		}
	}
	lb := newLineBench(b, rtl.Options{SkipIdle: true}, offers, nil)
	for _, sms := range lb.sms {
		for _, m := range sms {
			m.loop = true
		}
	}
	const cycles = 10_000
	if err := lb.sim.Run(cycles); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := lb.sim.Run(cycles); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cycles)*float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}
