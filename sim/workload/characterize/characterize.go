// Package characterize classifies a workload's 4 KB pages by which GPUs of a
// multi-GPU system touch them, the characterisation of GRIT Section III-B
// and Fig. 4, computed from the warp streams alone: a page touched by one
// GPU during the whole run is private, a page touched by more than one is
// shared, and a shared page is read-only when no GPU ever writes it and
// read-write otherwise.
//
// Thread blocks are placed as GRIT III-B describes: round-robin over one
// GPU's SMs, moving to the next GPU only when that GPU cannot take more
// blocks. A GPU holds SMs x floor(WarpsPerSM / warps per block) blocks; the
// model takes the grid in order, fills GPU 0 with that many, then GPU 1,
// and after the last GPU starts again at GPU 0 (the earliest blocks finish
// first, freeing the first GPU). Host accesses between kernels are not GPU
// accesses and do not count.
package characterize

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/sim/workload"
)

// PageBytes is the page size of the classification (GRIT Table I: 4 KB).
const PageBytes = 4096

// Placement is the multi-GPU system the blocks are placed on.
type Placement struct {
	GPUs       int // 1..MaxGPUs; GRIT: 4
	SMs        int // per GPU, 1..1024; GRIT Table I: 64
	WarpsPerSM int // occupancy limit, 1..1024; the project's default 64
}

// MaxGPUs bounds Placement.GPUs (GRIT's sensitivity study goes to 16).
const MaxGPUs = 16

// GRIT is GRIT Table I's system: 4 GPUs of 64 SMs.
var GRIT = Placement{GPUs: 4, SMs: 64, WarpsPerSM: 64}

// Validate checks the placement's ranges.
func (p Placement) Validate() error {
	switch {
	case p.GPUs < 1 || p.GPUs > MaxGPUs:
		return fmt.Errorf("characterize: gpus = %d outside 1..%d", p.GPUs, MaxGPUs)
	case p.SMs < 1 || p.SMs > 1024:
		return fmt.Errorf("characterize: sms = %d outside 1..1024", p.SMs)
	case p.WarpsPerSM < 1 || p.WarpsPerSM > 1024:
		return fmt.Errorf("characterize: warps per SM = %d outside 1..1024", p.WarpsPerSM)
	}
	return nil
}

// BlocksPerGPU is how many blocks of k one GPU holds at once (at least one
// per SM, as a block larger than the occupancy limit still runs alone).
func (p Placement) BlocksPerGPU(k *workload.Kernel) int {
	return p.SMs * max(1, p.WarpsPerSM/k.WarpsPerBlock())
}

// GPU is the GPU block b of k runs on.
func (p Placement) GPU(k *workload.Kernel, b int) int { return b / p.BlocksPerGPU(k) % p.GPUs }

// Counts is a page classification. Accesses count warp memory
// instructions per distinct page they touch (a coalesced request to one page
// counts once).
type Counts struct {
	Pages                       int // pages touched by any GPU
	Private, SharedRO, SharedRW int
	Accesses                    uint64
	PrivateAccesses             uint64
	SharedROAccesses            uint64
	SharedRWAccesses            uint64
}

// Shared is the number of shared pages.
func (c Counts) Shared() int { return c.SharedRO + c.SharedRW }

// SharedAccesses is the number of accesses to shared pages.
func (c Counts) SharedAccesses() uint64 { return c.SharedROAccesses + c.SharedRWAccesses }

// add classifies one touched page.
func (c *Counts) add(pg page) {
	c.Pages++
	c.Accesses += pg.accesses
	switch {
	case bits.OnesCount16(pg.gpus) == 1:
		c.Private++
		c.PrivateAccesses += pg.accesses
	case pg.written:
		c.SharedRW++
		c.SharedRWAccesses += pg.accesses
	default:
		c.SharedRO++
		c.SharedROAccesses += pg.accesses
	}
}

// AllocCounts is the classification of one allocation's pages.
type AllocCounts struct {
	Name string
	Counts
}

// Result is the classification of one workload's pages, in total and per
// allocation (in declaration order; allocations start on 2 MB boundaries,
// so no page belongs to two).
type Result struct {
	Workload string
	Counts
	Allocs []AllocCounts
}

// Pct returns n as a percentage of total (0 when total is 0).
func Pct[T int | uint64](n, total T) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(n) / float64(total)
}

// page is what the classification keeps per page.
type page struct {
	gpus     uint16 // bit g: GPU g touched the page
	written  bool
	accesses uint64
}

// Run classifies every page wl's kernels touch under placement p.
func Run(wl workload.Workload, p Placement) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	allocs := wl.Allocs()
	var end uint64
	for _, a := range allocs {
		end = max(end, a.Base+a.Bytes)
	}
	if len(allocs) == 0 || allocs[0].Base < workload.VABase {
		return Result{}, fmt.Errorf("characterize: %s has no allocation at or above VABase", wl.Name())
	}
	pages := make([]page, (end-workload.VABase+PageBytes-1)/PageBytes)
	mapped := make([]bool, len(pages))
	for _, a := range allocs {
		for pn := (a.Base - workload.VABase) / PageBytes; pn*PageBytes+workload.VABase < a.Base+a.Bytes; pn++ {
			mapped[pn] = true
		}
	}
	var op workload.Op
	for _, ph := range wl.Phases() {
		k := ph.Kernel
		if k == nil {
			continue
		}
		wpb := k.WarpsPerBlock()
		for b := 0; b < k.Blocks; b++ {
			bit := uint16(1) << p.GPU(k, b)
			for w := 0; w < wpb; w++ {
				s := k.NewWarp(b, w)
				for s.Next(&op) {
					if op.Kind == workload.OpCompute {
						continue
					}
					write := op.Kind != workload.OpLoad
					last := ^uint64(0)
					for _, a := range op.Addr[:op.Lanes] {
						pn := (a - workload.VABase) / PageBytes
						if pn == last {
							continue
						}
						last = pn
						if a < workload.VABase || pn >= uint64(len(pages)) || !mapped[pn] {
							return Result{}, fmt.Errorf("characterize: %s kernel %s block %d warp %d address %#x outside its allocations", wl.Name(), k.Name, b, w, a)
						}
						pg := &pages[pn]
						pg.gpus |= bit
						pg.written = pg.written || write
						pg.accesses++
					}
				}
			}
		}
	}
	r := Result{Workload: wl.Name()}
	for _, a := range allocs {
		ac := AllocCounts{Name: a.Name}
		first := (a.Base - workload.VABase) / PageBytes
		last := (a.Base + max(a.Bytes, 1) - 1 - workload.VABase) / PageBytes
		for _, pg := range pages[first : last+1] {
			if pg.gpus != 0 {
				ac.add(pg)
				r.add(pg)
			}
		}
		r.Allocs = append(r.Allocs, ac)
	}
	return r, nil
}
