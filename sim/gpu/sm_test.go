package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/workload"
)

func compute(k uint32) workload.Op { return workload.Op{Kind: workload.OpCompute, Cycles: k} }

func access(kind workload.OpKind, addrs ...uint64) workload.Op {
	op := workload.Op{Kind: kind, Size: 4, Lanes: uint8(len(addrs))}
	copy(op.Addr[:], addrs)
	return op
}

// walker stands in for the GMMU: every miss is resolved after a fixed
// latency with a local PTE (frame = VPN), which it installs in the SM's L1
// TLB and sends back on the SM's replay port in the same cycle. It logs the
// walk requests it takes and the L1 TLB's responses it sees.
type walker struct {
	rtl.Base
	sm      *SM
	fill    tlb.FillPort
	latency uint64
	owners  map[uint64]uint8 // VPNs mapped remotely, with their owners
	walks   []ptw.Walk
	resps   []tlb.Response

	walk  *rtl.Vec[ptw.Walk] // FIFO of misses being walked
	due   *rtl.Vec[uint64]   // cycle each one is resolved
	head  *rtl.Reg[uint32]
	count *rtl.Reg[uint32]
}

const walkerDepth = 64

func newWalker(s *rtl.Sim, sm *SM, t *tlb.TLB, latency uint64) *walker {
	w := &walker{sm: sm, fill: t.Fill, latency: latency}
	s.Add(w, sm.Path()+".walker")
	w.walk = rtl.NewVecOf(&w.Base, "walk", walkerDepth, ptw.WalkBits, ptw.Walk{})
	w.due = rtl.NewVec[uint64](&w.Base, "due", walkerDepth, 64, 0)
	w.head = rtl.NewReg[uint32](&w.Base, "head", 7, 0)
	w.count = rtl.NewReg[uint32](&w.Base, "count", 7, 0)
	sm.WalkReq.Consumer(&w.Base)
	sm.Replay.Producer(&w.Base)
	w.fill.Producer(&w.Base)
	w.Base.Listen(t.Resp.Valid, t.Resp.Ready, t.Resp.Bits)
	return w
}

func (w *walker) Drive() {
	h := int(w.head.Q())
	ok := w.count.Q() > 0 && w.due.At(h).Q() <= w.Now()
	l := w.walk.At(h).Q()
	w.sm.WalkReq.Ready.Set(w.count.Q() < walkerDepth)
	w.sm.Replay.Valid.Set(ok)
	w.sm.Replay.Bits.Set(l)
	w.fill.Valid.Set(ok)
	w.fill.Bits.Set(l.VPN)
	e := pte.Local(l.VPN)
	if o, ok := w.owners[l.VPN]; ok {
		e = pte.Remote(uint64(o)<<RemoteOwnerShift | l.VPN)
	}
	w.fill.PTE.Set(e)
}

func (w *walker) Eval() {
	now := w.Now()
	head, count := w.head.Q(), w.count.Q()
	if w.sm.Replay.Fire() {
		head = (head + 1) % walkerDepth
		count--
		w.head.Set(head)
	}
	if w.sm.TLBResp.Fire() {
		w.resps = append(w.resps, w.sm.TLBResp.Bits.Get())
	}
	if w.sm.WalkReq.Fire() {
		w.walks = append(w.walks, w.sm.WalkReq.Bits.Get())
		t := int((head + count) % walkerDepth)
		w.walk.At(t).Set(w.sm.WalkReq.Bits.Get())
		w.due.At(t).Set(now + w.latency)
		count++
	}
	if count != w.count.Q() {
		w.count.Set(count)
	}
	if w.count.Q() > 0 {
		if due := w.due.At(int(w.head.Q())).Q(); due > now+1 && !w.sm.Replay.Fire() && !w.sm.WalkReq.Fire() {
			w.SleepUntil(due)
		}
	}
}

// bench is SMs with their L1 TLBs, the dispatcher, GPU DRAM and a
// fixed-latency walker per SM standing in for the GMMU.
type bench struct {
	sim     *rtl.Sim
	sms     []*SM
	tlbs    []*tlb.TLB
	walkers []*walker
	disp    *Dispatcher
	mem     *Memory
}

func newBench(t *testing.T, nSM, warps int, sched Scheduler, walkLatency uint64, phases []workload.Phase, skip bool) *bench {
	t.Helper()
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	kernels := Kernels(phases)
	b := &bench{sim: s}
	for i := 0; i < nSM; i++ {
		path := "sm" + string(rune('0'+i))
		l1, err := tlb.New(s, path+".l1tlb", tlb.DefaultL1Config(), tlb.NewPorts(s, path+".l1tlb"))
		require.NoError(t, err)
		m, err := NewSM(s, path, i, SMConfig{Warps: warps, Scheduler: sched, LineBytes: 128, TranslateQueue: 2080}, kernels, NewSMPorts(s, path, l1.Ports))
		require.NoError(t, err)
		b.walkers = append(b.walkers, newWalker(s, m, l1, walkLatency))
		b.sms = append(b.sms, m)
		b.tlbs = append(b.tlbs, l1)
	}
	b.disp = NewDispatcher(s, "dispatcher", phases, NewDispatcherPorts(s, "dispatcher", b.sms), 0)
	// 484 GB/s at 1481 MHz: 326.8 B/cycle (UVMMU Table I).
	mem, err := NewMemory(s, "dram", MemoryConfig{SMs: nSM, Warps: warps, LineBytes: 128, Latency: 100, ByteTime: 200}, b.sms)
	require.NoError(t, err)
	b.mem = mem
	s.Reset()
	return b
}

func (b *bench) run(t *testing.T) uint64 {
	t.Helper()
	ok, err := b.sim.RunUntil(b.disp.Done.Get, 10_000_000)
	require.NoError(t, err)
	require.True(t, ok, "workload did not finish")
	return b.sim.Cycle()
}

func oneWarpKernel(ops ...workload.Op) []workload.Phase {
	return []workload.Phase{{Kernel: &workload.Kernel{Name: "k", Blocks: 1, ThreadsPerBlock: 32,
		NewWarp: func(b, w int) workload.WarpStream { return workload.Replay(ops) }}}}
}

// One warp: compute 10, a one-lane load, a one-lane store to another page,
// with a 1-cycle L1 TLB, a walk latency L = 5 and DRAM latency 100:
//
//	cycle 0        dispatcher hands block 0 to the SM
//	cycle 1        compute issues, busy until 11
//	cycle 11       load issues; its page enters the translation queue
//	cycle 12       lookup; the miss comes back in 13, walk request in 14
//	cycle 19       walk done (14 + L): TLB fill and replay
//	cycle 20       replayed lookup hits; response in 21
//	cycle 22       data request: one 128 B line at 200/65536 cycles per
//	               byte ends within cycle 22, data due at 23 + 100 = 123
//	cycle 124      store issues; lookup 125, miss 126, walk 127..132,
//	               replay 132, hit at 133 answered in 134
//	cycle 135      the warp finds no instruction and retires
//	cycle 136      Resident = 0; the dispatcher ends the kernel
//	cycle 137      Done
func TestSMOneWarpExactCycles(t *testing.T) {
	for _, skip := range []bool{false, true} {
		b := newBench(t, 1, 64, GTO, 5, oneWarpKernel(compute(10), access(workload.OpLoad, 1<<32), access(workload.OpStore, 1<<32+4096)), skip)
		assert.Equal(t, uint64(137), b.run(t), "skip idle %v", skip)
		assert.Equal(t, Stats{Issued: 3, MemIssued: 2, Lookups: 4, Misses: 2}, b.sms[0].Stats())
		assert.Equal(t, uint64(128), b.mem.Bytes())
		// The store's lookups, its walk and its replayed lookup carry the
		// write bit; the load's do not.
		load, store := uint64(1<<32)>>PageShift, uint64(1<<32+4096)>>PageShift
		assert.Equal(t, []ptw.Walk{{VPN: load}, {VPN: store, Write: true}}, b.walkers[0].walks)
		assert.Equal(t, []tlb.Response{
			{VPN: load, Status: tlb.Miss}, {VPN: load, Status: tlb.Hit},
			{VPN: store, Write: true, Status: tlb.Miss}, {VPN: store, Write: true, Status: tlb.Hit},
		}, b.walkers[0].resps)
	}
}

// Coalescing: 32 lanes of 4 B consecutive floats are one line of one page;
// a stride of 4 KB is 32 pages and 32 lines; lanes straddling a line count
// both lines.
func TestCoalescing(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true})
	m, err := NewSM(s, "sm", 0, SMConfig{Warps: 64, LineBytes: 128, TranslateQueue: 64}, nil, testPorts(s, "sm"))
	require.NoError(t, err)
	var addrs [32]uint64
	for i := range addrs {
		addrs[i] = 1<<32 + 4*uint64(i)
	}
	p, l := m.coalesce(ptr(access(workload.OpLoad, addrs[:]...)))
	assert.Equal(t, [2]int{1, 1}, [2]int{p, l})
	for i := range addrs {
		addrs[i] = 1<<32 + 4096*uint64(i)
	}
	p, l = m.coalesce(ptr(access(workload.OpLoad, addrs[:]...)))
	assert.Equal(t, [2]int{32, 32}, [2]int{p, l})
	op := access(workload.OpLoad, 1<<32+126)
	p, l = m.coalesce(&op)
	assert.Equal(t, [2]int{1, 2}, [2]int{p, l})
}

func ptr(op workload.Op) *workload.Op { return &op }

// Many blocks of many warps over several SMs: every instruction issues
// exactly once, the SM never holds more warps than its limit, results are
// the same with idle skipping on and off and under both schedulers the
// total instruction count is the program's.
func TestRandomKernelsInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var phases []workload.Phase
	want := uint64(0)
	for k := 0; k < 3; k++ {
		blocks := 5 + rng.IntN(20)
		threads := 32 * (1 + rng.IntN(8))
		progs := make([][]workload.Op, blocks*threads/32)
		for i := range progs {
			n := 1 + rng.IntN(12)
			for j := 0; j < n; j++ {
				switch rng.IntN(3) {
				case 0:
					progs[i] = append(progs[i], compute(uint32(1+rng.IntN(20))))
				case 1:
					progs[i] = append(progs[i], access(workload.OpLoad, 1<<32+uint64(rng.IntN(1<<20))*4, 1<<32+uint64(rng.IntN(1<<20))*4))
				default:
					progs[i] = append(progs[i], access(workload.OpStore, 1<<32+uint64(rng.IntN(1<<20))*4))
				}
			}
			want += uint64(n)
		}
		wpb := threads / 32
		phases = append(phases, workload.Phase{Kernel: &workload.Kernel{Name: "k", Blocks: blocks, ThreadsPerBlock: threads,
			NewWarp: func(b, w int) workload.WarpStream { return workload.Replay(progs[b*wpb+w]) }}})
	}
	var cycles []uint64
	for _, sched := range []Scheduler{GTO, LRR} {
		for _, skip := range []bool{false, true} {
			b := newBench(t, 3, 16, sched, 7, phases, skip)
			c := b.run(t)
			total := uint64(0)
			for _, m := range b.sms {
				total += m.Stats().Issued
			}
			assert.Equal(t, want, total)
			cycles = append(cycles, c)
		}
	}
	assert.Equal(t, cycles[0], cycles[1], "GTO: idle skipping must not change the result")
	assert.Equal(t, cycles[2], cycles[3], "LRR: idle skipping must not change the result")
}

func TestSMConfigErrors(t *testing.T) {
	s := rtl.New(rtl.Options{})
	_, err := NewSM(s, "a", 0, SMConfig{Warps: 65, LineBytes: 128, TranslateQueue: 64}, nil, testPorts(s, "a"))
	assert.ErrorContains(t, err, "warps 65 outside 1..64")
	_, err = NewSM(s, "b", 0, SMConfig{Warps: 8, LineBytes: 128, TranslateQueue: 64}, []*workload.Kernel{{Name: "k", Blocks: 1, ThreadsPerBlock: 512}}, testPorts(s, "b"))
	assert.ErrorContains(t, err, "gpu.warps_per_sm")
	_, err = ParseScheduler("fifo")
	assert.ErrorContains(t, err, "allowed: gto, lrr")
}

func testPorts(s *rtl.Sim, path string) SMPorts {
	t, err := tlb.New(s, path+".l1tlb", tlb.DefaultL1Config(), tlb.NewPorts(s, path+".l1tlb"))
	if err != nil {
		panic(err)
	}
	return NewSMPorts(s, path, t.Ports)
}
