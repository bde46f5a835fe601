package multigpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// l2Events records GPU 0's L2 TLB stage: walks in, lookup results (hit or
// miss), walks to the GMMU, results out, fills, and SM 2's L1 TLB fills.
type l2Events struct {
	in, hit, miss, gmmu, out, fill, sm2Fill []uint64
}

// TestL1MissL2HitCycles: three SMs of GPU 0 read page 0 in turn. SM 0's
// read is a cold fault, which the driver answers (the L2 TLB is not
// filled: the driver fills the L1 TLB through the router). SM 1's L1
// miss misses in the L2 TLB and walks the GMMU, whose result fills the
// L2 TLB. SM 2's L1 miss hits in the L2 TLB. From the cycle A the stage
// takes SM 2's walk from the walk arbiter:
//
//	A        the walk enters the stage's input queue
//	A+1      the lookup is accepted by the TLB (GRIT Table I: 10 cycles)
//	A+11     its response: a hit, queued towards the router
//	A+12     the result leaves the stage (the protection check takes it)
//	A+13     the protection check offers it, the router takes it
//	A+14     the router fills SM 2's L1 TLB
//
// and no walk reaches the GMMU. SM 1's walk, from the cycle B the stage
// takes it: the lookup at B+1 misses at B+11, the miss goes to the GMMU at
// B+12; SM 0's walk left the upper three levels in the page-walk cache, so
// the walk reads the leaf level only (100 cycles, GRIT Table I) and its
// result comes back at B+113; at B+114 it leaves the stage and fills the
// L2 TLB. The L2 hit costs 14 cycles from the stage to the L1 fill, the
// miss 116 (B+114 + 2) with the walk cache's help, 416 without.
func TestL1MissL2HitCycles(t *testing.T) {
	wl := newPerBlock()
	wl.ops = [][]workload.Op{
		{wl.access(workload.OpLoad)},
		{compute(10000), wl.access(workload.OpLoad)},
		{compute(20000), wl.access(workload.OpLoad)},
	}
	cfg := directedConfig(t, "ot")
	cfg.GPU.SMs = 3
	s, err := NewWith(cfg, wl)
	require.NoError(t, err)
	l2 := s.GPUs[0].L2TLB
	require.NotNil(t, l2)
	ev := &l2Events{}
	s.Sim.Probe(func(c uint64) {
		if l2.In.Fire() {
			ev.in = append(ev.in, c)
		}
		if r := l2.TLB.Resp; r.Fire() {
			if r.Bits.Get().Status == tlb.Hit {
				ev.hit = append(ev.hit, c)
			} else {
				ev.miss = append(ev.miss, c)
			}
		}
		if l2.Miss.Fire() {
			ev.gmmu = append(ev.gmmu, c)
		}
		if l2.Out.Fire() {
			ev.out = append(ev.out, c)
		}
		if l2.TLB.Fill.Fire() {
			ev.fill = append(ev.fill, c)
		}
		if s.GPUs[0].TLBs[2].Fill.Fire() {
			ev.sm2Fill = append(ev.sm2Fill, c)
		}
	})
	r, err := s.Run()
	require.NoError(t, err)
	require.NoError(t, s.Check())
	require.Len(t, ev.in, 3, "one walk per SM")
	B, A := ev.in[1], ev.in[2]
	assert.Equal(t, []uint64{ev.in[0] + 11, B + 11}, ev.miss, "SM 0's and SM 1's lookups miss")
	assert.Equal(t, []uint64{ev.in[0] + 12, B + 12}, ev.gmmu)
	assert.Equal(t, []uint64{B + 114}, ev.fill, "SM 1's walk fills the L2 TLB")
	assert.Equal(t, []uint64{A + 11}, ev.hit)
	assert.Equal(t, []uint64{B + 114, A + 12}, ev.out[1:])
	assert.Equal(t, []uint64{A + 14}, ev.sm2Fill)
	assert.Equal(t, uint64(1), r.PerGPU[0].LocalFaults)
}
