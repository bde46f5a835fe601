package multigpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// perBlock is a workload of one-warp thread blocks over one managed 64 KB
// allocation; block b replays ops[b]. With one SM of one warp per GPU, the
// GPU-first dispatcher puts block b on GPU b.
type perBlock struct {
	allocs []workload.Alloc
	ops    [][]workload.Op
}

func newPerBlock() *perBlock {
	m := &perBlock{allocs: []workload.Alloc{{Name: "data", Bytes: 64 << 10, Kind: workload.Managed}}}
	workload.Layout(m.allocs)
	return m
}

func (m *perBlock) Name() string             { return "per-block" }
func (m *perBlock) Class() string            { return workload.Regular }
func (m *perBlock) Allocs() []workload.Alloc { return m.allocs }
func (m *perBlock) Footprint() uint64        { return m.allocs[0].Bytes }
func (m *perBlock) Phases() []workload.Phase {
	return []workload.Phase{{Kernel: &workload.Kernel{Name: "k", Blocks: len(m.ops), ThreadsPerBlock: 32,
		NewWarp: func(b, w int) workload.WarpStream { return workload.Replay(m.ops[b]) }}}}
}

// access is a one-lane access to the allocation's first page.
func (m *perBlock) access(kind workload.OpKind) workload.Op { return m.accessPage(kind, 0) }

// accessPage is a one-lane access to the allocation's 4 KB page k.
func (m *perBlock) accessPage(kind workload.OpKind, k int) workload.Op {
	op := workload.Op{Kind: kind, Size: 4, Lanes: 1}
	op.Addr[0] = m.allocs[0].Base + uint64(k)<<12
	return op
}

func compute(cycles uint32) workload.Op { return workload.Op{Kind: workload.OpCompute, Cycles: cycles} }

// directedConfig is the grit preset cut to two GPUs of one one-warp SM,
// without data caches, with a 1 us (1,000-cycle) fault latency.
func directedConfig(t *testing.T, policy string) *config.Config {
	cfg := config.Default()
	require.NoError(t, cfg.ApplyPreset("grit"))
	cfg.MultiGPU.GPUs = 2
	cfg.MultiGPU.Policy = policy
	cfg.MultiGPU.FaultLatencyUs = 1
	cfg.GPU.SMs = 1
	cfg.GPU.WarpsPerSM = 1
	cfg.Cache.L2, cfg.Cache.L1 = false, false
	cfg.Check.Invariants = true
	return &cfg
}

// events records, per GPU, the cycles at which the driver took a walk
// (Remote), a promotion (Promote), wrote a PTE (Update) and answered
// (Migrated).
type events struct{ remote, promote, update, answer [MaxGPUs][]uint64 }

func run(t *testing.T, cfg *config.Config, wl workload.Workload) (*System, Result, *events) {
	t.Helper()
	s, err := NewWith(cfg, wl)
	require.NoError(t, err)
	ev := &events{}
	s.Sim.Probe(func(c uint64) {
		for g, gp := range s.GPUs {
			if gp.Router.Remote.Fire() {
				ev.remote[g] = append(ev.remote[g], c)
			}
			if p := gp.Counters.Promote; p != nil && p.Fire() {
				ev.promote[g] = append(ev.promote[g], c)
			}
			if gp.GMMU.Update.Fire() {
				ev.update[g] = append(ev.update[g], c)
			}
			if gp.Router.Migrated.Fire() {
				ev.answer[g] = append(ev.answer[g], c)
			}
		}
	})
	r, err := s.Run()
	require.NoError(t, err)
	require.NoError(t, s.Check())
	return s, r, ev
}

// The fault latency L at 1 us and 1.0 GHz, and a 4 KB copy over NVLink (a
// blocks/pcie link): the packet is granted the cycle after the link takes
// it, then 300 GB/s at 1.0 GHz is 300 bytes a cycle, 4096 bytes 13.65
// cycles, 14 whole cycles, then the 200-cycle NVLink latency.
const (
	faultL     = 1000
	nvlinkCopy = 1 + 14 + 200
)

// TestOnTouchMigrationCycles: GPU 0 reads the page (a cold fault from host
// memory), then GPU 1 reads it and it migrates GPU 0 -> GPU 1. From the
// cycle T the driver takes GPU 1's walk:
//
//	T           the walk enters GPU 1's fault buffer
//	T+1         taken; the plan is built (ot)
//	T+2         fault latency starts;   T+2+L  it ends
//	T+3+L       GPU 0's PTE written not present (its caches drop the page)
//	T+4+L       shootdown armed;  T+5+L  GPU 0's L1 TLB takes it
//	T+6+L       its acknowledgement
//	T+7+L       the page's packet enters the NVLink: granted at T+8+L, 14
//	            wire cycles + 200 latency, out at T+222+L
//	T+223+L     GPU 1's local PTE written
//	T+224+L     answer registered;  T+225+L  GPU 1's router takes it
func TestOnTouchMigrationCycles(t *testing.T) {
	wl := newPerBlock()
	wl.ops = [][]workload.Op{{wl.access(workload.OpLoad)}, {compute(20000), wl.access(workload.OpLoad)}}
	_, r, ev := run(t, directedConfig(t, "ot"), wl)
	require.Len(t, ev.remote[1], 1)
	T := ev.remote[1][0]
	assert.Equal(t, []uint64{T + 3 + faultL}, ev.update[0][1:], "GPU 0 invalidated after the latency")
	assert.Equal(t, []uint64{T + 7 + faultL + nvlinkCopy + 1}, ev.update[1])
	assert.Equal(t, []uint64{T + 225 + faultL}, ev.answer[1])
	assert.Equal(t, uint64(1), r.PerGPU[1].Migrations)
	assert.Equal(t, uint64(4096), r.PerGPU[1].NVLinkBytes)
	assert.Equal(t, uint64(4096), r.PerGPU[0].PCIeH2DBytes, "the cold fault came over PCIe")
	assert.Equal(t, uint64(1), r.PerGPU[0].Invalidations)
	assert.Equal(t, uint64(1), r.PerGPU[1].LocalFaults)
}

// TestAccessCounterPromotionCycles: GPU 0 owns the page; GPU 1 maps it
// remotely at its first fault and reads it 256 times (GRIT Table I's
// threshold); the 256th remote hit raises the promotion. From the cycle P
// the driver takes it:
//
//	P           the promotion enters GPU 1's buffer;  P+1  taken
//	P+2         fault latency;  P+2+L  it ends
//	P+3+L       both GPUs' PTEs written not present (the broadcast)
//	P+4+L       shootdown armed;  P+5+L  taken;  P+6+L  acknowledged
//	P+7+L       copy GPU 0 -> GPU 1 (grant, 14 wire cycles, 200), out at P+222+L
//	P+223+L     GPU 1's local PTE written; a promotion has no walk to answer
func TestAccessCounterPromotionCycles(t *testing.T) {
	wl := newPerBlock()
	reads := []workload.Op{compute(20000)}
	for range 300 {
		reads = append(reads, wl.access(workload.OpLoad))
	}
	wl.ops = [][]workload.Op{{wl.access(workload.OpLoad)}, reads}
	s, r, ev := run(t, directedConfig(t, "ac"), wl)
	require.Len(t, ev.promote[1], 1)
	P := ev.promote[1][0]
	// GPU 1's writes: the remote mapping, the broadcast, the local PTE.
	require.Len(t, ev.update[1], 3)
	assert.Equal(t, P+3+faultL, ev.update[1][1])
	assert.Equal(t, P+3+faultL, ev.update[0][1], "the broadcast reaches both GPUs in one cycle")
	assert.Equal(t, P+223+faultL, ev.update[1][2])
	// 256 remote hits raise the promotion; the warp's loads go on hitting
	// the remote mapping until the broadcast reaches GPU 1's TLB, then
	// they are local.
	assert.GreaterOrEqual(t, r.PerGPU[1].RemoteAccesses, uint64(256))
	assert.Less(t, r.PerGPU[1].RemoteAccesses, uint64(300))
	assert.Equal(t, uint64(300), r.PerGPU[1].RemoteAccesses+r.PerGPU[1].LocalAccesses, "every load counted once")
	assert.Equal(t, uint64(1), r.PerGPU[1].Promotions)
	assert.Equal(t, uint64(1), r.PerGPU[1].Migrations)
	p := s.Driver.Table().Page(0)
	assert.Equal(t, uint16(1<<1), p.Holders)
	assert.Zero(t, p.Mapped)
}

// TestDuplicationReplicaAndCollapseCycles: GPU 0 reads the page (cold:
// read-only copy from host memory), GPU 1 reads it (a replica copied from
// GPU 0), then GPU 0 writes it: a protection fault collapses GPU 1's
// replica. From the cycle T of GPU 1's walk:
//
//	T, T+1      buffered, taken;  T+2..T+2+L  fault latency
//	T+3+L       the copy GPU 0 -> GPU 1 starts (GPU 0's copy is already
//	            read-only: nothing to downgrade), out at T+218+L
//	T+219+L     GPU 1's read-only PTE written;  T+220+L  answer registered
//	T+221+L     GPU 1's router takes it
//
// and from the cycle W of GPU 0's protection fault:
//
//	W, W+1      buffered, taken;  W+2..W+2+L  fault latency
//	W+3+L       GPU 1's PTE written not present
//	W+4+L       shootdown armed;  W+5+L  taken;  W+6+L  acknowledged
//	W+7+L       GPU 0's writable PTE written (its own copy: no transfer)
//	W+8+L       answer registered;  W+9+L  taken
func TestDuplicationReplicaAndCollapseCycles(t *testing.T) {
	wl := newPerBlock()
	wl.ops = [][]workload.Op{
		{wl.access(workload.OpLoad), compute(20000), wl.access(workload.OpStore)},
		{compute(10000), wl.access(workload.OpLoad)},
	}
	s, r, ev := run(t, directedConfig(t, "dup"), wl)
	require.Len(t, ev.remote[1], 1)
	T := ev.remote[1][0]
	assert.Equal(t, T+3+faultL+nvlinkCopy+1, ev.update[1][0])
	assert.Equal(t, []uint64{T + 221 + faultL}, ev.answer[1])
	require.Len(t, ev.remote[0], 2, "the cold fault and the protection fault")
	W := ev.remote[0][1]
	assert.Equal(t, W+3+faultL, ev.update[1][1])
	assert.Equal(t, W+7+faultL, ev.update[0][len(ev.update[0])-1])
	assert.Equal(t, W+9+faultL, ev.answer[0][len(ev.answer[0])-1])
	assert.Equal(t, uint64(1), r.PerGPU[1].ReplicasMade)
	assert.Equal(t, uint64(1), r.PerGPU[0].ProtectionFaults)
	assert.Equal(t, uint64(1), r.PerGPU[0].ReplicasCollapse)
	p := s.Driver.Table().Page(0)
	assert.Equal(t, uint16(1), p.Holders)
	assert.True(t, p.Writable)
}
