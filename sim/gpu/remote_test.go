package gpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// owner stands in for the remote line unit: it takes one request at a
// time, logs it and, for a load, answers all its lines latency cycles
// later.
type owner struct {
	rtl.Base
	req     *rtl.Decoupled[RemoteReq]
	resp    *rtl.Decoupled[RemoteResp]
	latency uint64
	got     []RemoteReq

	busy *rtl.Reg[bool]
	ans  *rtl.Reg[uint64] // RemoteResp.Pack()
	due  *rtl.Reg[uint64]
}

func newOwner(s *rtl.Sim, m *SM, latency uint64) *owner {
	o := &owner{req: m.RemoteReq, resp: m.RemoteResp, latency: latency}
	s.Add(o, m.Path()+".owner")
	o.busy = rtl.NewFlag(&o.Base, "busy", false)
	o.ans = rtl.NewReg[uint64](&o.Base, "ans", RemoteRespWidth, 0)
	o.due = rtl.NewReg[uint64](&o.Base, "due", 64, 0)
	o.req.Consumer(&o.Base)
	o.resp.Producer(&o.Base)
	return o
}

func (o *owner) Drive() {
	o.req.Ready.Set(!o.busy.Q())
	ok := o.busy.Q() && o.due.Q() <= o.Now()
	o.resp.Valid.Set(ok)
	a := o.ans.Q()
	o.resp.Bits.Set(RemoteResp{Warp: uint8(a & (MaxWarps - 1)), Lines: uint8(a >> WarpBits)})
}

func (o *owner) Eval() {
	switch {
	case o.req.Fire():
		r := o.req.Bits.Get()
		o.got = append(o.got, r)
		if !r.Write {
			o.busy.Set(true)
			o.ans.Set(RemoteResp{Warp: r.Warp, Lines: r.Lines}.Pack())
			o.due.Set(o.Now() + o.latency)
		}
	case o.resp.Fire():
		o.busy.Set(false)
	case o.busy.Q() && o.due.Q() > o.Now():
		o.SleepUntil(o.due.Q())
	}
}

// remoteBench is one SM with RemoteLines, its L1 TLB, a walker that maps
// the pages in owners remotely, DRAM, and an owner answering after
// latency cycles.
func remoteBench(t *testing.T, latency uint64, owners map[uint64]uint8, ops ...workload.Op) (*bench, *owner) {
	t.Helper()
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	phases := oneWarpKernel(ops...)
	kernels := Kernels(phases)
	l1, err := tlb.New(s, "sm0.l1tlb", tlb.DefaultL1Config(), tlb.NewPorts(s, "sm0.l1tlb"))
	require.NoError(t, err)
	m, err := NewSM(s, "sm0", 0, SMConfig{Warps: 64, LineBytes: 128, TranslateQueue: 2080, RemoteLines: true}, kernels, NewSMPorts(s, "sm0", l1.Ports))
	require.NoError(t, err)
	w := newWalker(s, m, l1, 5)
	w.owners = owners
	b := &bench{sim: s, sms: []*SM{m}, tlbs: []*tlb.TLB{l1}, walkers: []*walker{w}}
	b.disp = NewDispatcher(s, "dispatcher", phases, NewDispatcherPorts(s, "dispatcher", b.sms), 0)
	b.mem, err = NewMemory(s, "dram", MemoryConfig{SMs: 1, Warps: 64, LineBytes: 128, Latency: 100, ByteTime: 200}, b.sms)
	require.NoError(t, err)
	o := newOwner(s, m, latency)
	s.Reset()
	return b, o
}

// A load with lanes on a local page, two lines of a page at GPU 3 and a
// line of a page at GPU 2 sends one request per remote page with its
// owner and lines, reads its local line from DRAM alone, and finishes only
// when the remote lines are back: a slower owner delays it by exactly the
// difference, once per request. A store's remote lines are posted: the owner's latency does
// not delay it.
func TestSMRemoteLinesSplitByOwner(t *testing.T) {
	local, at3, at2 := uint64(1<<32), uint64(1<<32+4096), uint64(1<<32+8192)
	owners := map[uint64]uint8{at3 >> PageShift: 3, at2 >> PageShift: 2}
	load := access(workload.OpLoad, local, at3, at3+128, at2)
	var cycles []uint64
	for _, latency := range []uint64{300, 800} {
		b, o := remoteBench(t, latency, owners, load)
		cycles = append(cycles, b.run(t))
		assert.ElementsMatch(t, []RemoteReq{{Warp: 0, Owner: 3, Lines: 2}, {Warp: 0, Owner: 2, Lines: 1}}, o.got)
		assert.Equal(t, uint64(128), b.mem.Bytes(), "the local line alone from DRAM")
	}
	// The stand-in owner answers one request at a time, so the two
	// requests' latencies add up.
	assert.Equal(t, uint64(2*(800-300)), cycles[1]-cycles[0])

	store := access(workload.OpStore, at3, at3+4)
	cycles = cycles[:0]
	for _, latency := range []uint64{300, 800} {
		b, o := remoteBench(t, latency, owners, store)
		cycles = append(cycles, b.run(t))
		assert.Equal(t, []RemoteReq{{Warp: 0, Owner: 3, Lines: 1, Write: true}}, o.got)
	}
	assert.Equal(t, cycles[0], cycles[1])
}
