package system

import (
	"fmt"
	"math/bits"

	"github.com/uvmmu/uvmmu/blocks/incpage"
	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// Pages2M is the translation path of the 2 MB page system (run.page_size
// = "2MB", the incomplete-pages paper's Figure 1): per-SM L1 TLBs of 2 MB
// entries with range records, and the GMMU with the shared L2 TLB, the
// walkers, the page table with its unit bitmaps and the migration request
// builder (blocks/incpage). The SMs look up one migration unit at a time.
// A policy serves the GMMU's migration requests (MigReq, MigDone).
//
//	SM[i] ─► L1 TLB[i] ─ miss or range miss ─► walk arbiter ─► GMMU ─► MigReq ─► policy
//	  ▲          ▲                                          │   ◄─ MigDone ◄─┘
//	  └ replay ──┴── fill, Landed broadcast ────────────────┘
type Pages2M struct {
	Cfg  incpage.Config
	L1   []*incpage.L1TLB
	GMMU *incpage.GMMU
	// Unmap is the page-table write port the caches watch; nothing leaves
	// GPU memory without oversubscription, so nothing drives it.
	Unmap ptw.PTEPort[uint64]
}

// Policy2M is what a policy of the 2 MB page system decides about the
// translation path before it is built.
type Policy2M interface {
	// UnitBytes is the migration unit the records and lookups use: the
	// incomplete.unit_bytes, or the whole 2 MB page.
	UnitBytes() int
	// Preloaded reports whether managed data starts in GPU memory.
	Preloaded() bool
}

// newTranslation2M builds the SMs and the 2 MB translation path for
// policy p.
func (s *System) newTranslation2M(kernels []*workload.Kernel, smCfg gpu.SMConfig, policy Policy) error {
	cfg, l := s.Cfg, s.Layout
	in := &cfg.Incomplete
	pol, ok := policy.(Policy2M)
	if !ok {
		return fmt.Errorf("run.page_size = \"2MB\": policy %s does not run on 2 MB pages", policy.Name())
	}
	unitShift := bits.TrailingZeros(uint(pol.UnitBytes()))
	pageGroups := uint64(1) << (incpage.PageShift - GroupShift)
	first := l.BaseVPN >> (incpage.PageShift - PageShift)
	last := (l.BaseVPN + uint64(l.Pages) - 1) >> (incpage.PageShift - PageShift)
	units := 1 << (incpage.PageShift - unitShift)
	icfg := incpage.Config{
		UnitShift: unitShift, Ranges: in.Ranges,
		L2Entries: in.L2TLBEntries, L2Ways: in.L2TLBWays, L2Latency: in.L2TLBLatency,
		Walkers: cfg.GPU.Walkers, WalkCycles: cfg.GPU.WalkCycles, Queue: cfg.GPU.WalkQueue,
		Suspend: in.SuspendEntries, MRQ: in.MRQEntries,
		MinUnits: min(in.MinUnits(cfg), units), MaxUnits: max(min(in.MaxRequestBytes>>unitShift, units), 1), GapUnits: min(in.MergeGapBytes>>unitShift, units),
		BasePage: first, Pages: int(last - first + 1), SMs: cfg.GPU.SMs,
	}
	if err := icfg.Validate(); err != nil {
		return fmt.Errorf("run.page_size = \"2MB\": %w", err)
	}
	p := &Pages2M{Cfg: icfg}
	s.Pages2M = p
	smCfg.TranslateShift = unitShift
	gp := incpage.NewPorts(s.Sim, "gmmu")
	var fills []incpage.FillPort
	var replays []*rtl.Decoupled[ptw.Walk]
	for i := 0; i < cfg.GPU.SMs; i++ {
		path := fmt.Sprintf("sm%d", i)
		tp := tlb.NewPorts(s.Sim, path+".l1tlb")
		fill := incpage.NewFillPort(s.Sim, path+".l1tlb.fill2m", in.Ranges)
		l1, err := incpage.NewL1TLB(s.Sim, path+".l1tlb", incpage.L1Config{
			Entries: cfg.GPU.L1TLBEntries, HitLatency: cfg.GPU.L1TLBLatency, UnitShift: unitShift, Ranges: in.Ranges,
		}, tp.Req, tp.Resp, fill, gp.Landed)
		if err != nil {
			return fmt.Errorf("gpu.l1_tlb_entries: %w", err)
		}
		sm, err := gpu.NewSM(s.Sim, path, i, smCfg, kernels, gpu.NewSMPorts(s.Sim, path, tp))
		if err != nil {
			return err
		}
		s.SMs = append(s.SMs, sm)
		p.L1 = append(p.L1, l1)
		fills = append(fills, fill)
		replays = append(replays, sm.Replay)
	}
	// Managed pages start in host memory (a remote PTE naming the host
	// frame equal to the page number), cudaMalloc'd pages in GPU memory.
	// Allocations start on 2 MB boundaries, so a page holds one kind.
	init := make([]incpage.PageInit, icfg.Pages)
	for i := range init {
		init[i].PTE = pte.Remote((first + uint64(i)) << (incpage.PageShift - PageShift))
	}
	present := l.Device
	if pol.Preloaded() {
		present = append(append([]Range(nil), l.Device...), l.Managed...)
	}
	for _, r := range present {
		for g := r.First; g < r.First+uint64(r.Count); g++ {
			init[g/pageGroups-first].Present = true
		}
	}
	var err error
	if p.GMMU, err = incpage.NewGMMU(s.Sim, "gmmu", icfg, gp, fills, replays, gpu.WarpBits, init); err != nil {
		return fmt.Errorf("run.page_size = \"2MB\": %w", err)
	}
	if s.Arbiter, err = gpu.NewWalkArbiter(s.Sim, "walk_arbiter", gpu.WalkReqs(s.SMs), gp.Req); err != nil {
		return err
	}
	p.Unmap = ptw.PTEPort[uint64]{
		Decoupled: rtl.NewDecoupled[uint64](s.Sim, "gmmu.unmap", pte.VPNBits),
		PTE:       rtl.NewWire[pte.PTE](s.Sim, "gmmu.unmap.pte", 64),
	}
	return nil
}

// UnitBytes is the migration unit in bytes.
func (p *Pages2M) UnitBytes() uint64 { return 1 << p.Cfg.UnitShift }

// Check verifies the range records (SPEC 6.5 for the 2 MB page system)
// between cycles: every TLB record, L1 and L2, names only units the page
// table's bitmap holds, and every unit the bitmap holds is in GPU memory
// as inGPU (the policy's record of the data that has landed) says.
func (p *Pages2M) Check(inGPU func(page uint64) incpage.Bitmap) error {
	g := p.GMMU
	for i := 0; i < p.Cfg.Pages; i++ {
		page := p.Cfg.BasePage + uint64(i)
		e, bm := g.PageRecord(page)
		have := inGPU(page)
		for u := 0; u < p.Cfg.UnitsPerPage(); u++ {
			if !bm.Has(u) {
				continue
			}
			if !have.Has(u) {
				return fmt.Errorf("incpage: page %#x unit %d is recorded present in the page table but is not in GPU memory", page, u)
			}
			if e.IsRemote() {
				return fmt.Errorf("incpage: page %#x records unit %d present under a remote PTE (no frame)", page, u)
			}
		}
	}
	for _, page := range g.L2Pages() {
		r, _ := g.L2Probe(page)
		if _, bm := g.PageRecord(page); !r.SubsetOf(bm) {
			return fmt.Errorf("incpage: L2 TLB record of page %#x %v claims units the page table lacks", page, r.Spans[:r.N])
		}
	}
	for i, t := range p.L1 {
		for _, page := range t.Pages() {
			_, r, _ := t.Probe(page)
			if _, bm := g.PageRecord(page); !r.SubsetOf(bm) {
				return fmt.Errorf("incpage: SM %d L1 TLB record of page %#x %v claims units the page table lacks", i, page, r.Spans[:r.N])
			}
		}
	}
	return nil
}

// result fills the run's translation and range counters.
func (p *Pages2M) result(r *Result) {
	st := p.GMMU.Stats()
	r.Walks = st.Walks
	for _, t := range p.L1 {
		r.L1RangeMisses += t.Stats().RangeMisses
	}
	r.L2RangeMisses, r.PTRangeMisses = st.L2RangeMisses, st.PTRangeMisses
	r.MigrationRequests, r.MergedRequests = st.Requests, st.Merged
	r.MigratedBytes = st.Units * p.UnitBytes()
	r.Frames2M = p.GMMU.Frames()
}
