package policy

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/incpage"
	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// pme4K is the largest page the PME moves at a time (its default 4 KB);
// a unit over it travels as several.
const pme4K = 4096

// Paged is a policy of the 2 MB page system (run.page_size = "2MB",
// Shen et al., NPC 2018): the GMMU's migration requests (blocks/incpage)
// are handled by the host, each after a handling latency, one at a time,
// and moved by the PME over the PCIe link; the completion goes back to
// the GMMU. Two policies share it:
//
//   - incomplete: the paper's scheme. Units of incomplete.unit_bytes; a
//     range miss migrates a range of incomplete.min_length, merged with
//     pending requests within incomplete.merge_gap_bytes up to
//     incomplete.max_request_bytes; incomplete.handling_us per request.
//   - complete: the paper's baseline, paged memory on 2 MB pages. The
//     unit is the whole page, so the first touch of a page migrates all
//     of it, with the UM fault latency (um.fault_latency_us) as the
//     handling latency; no prefetch, no TLB freeze.
//
// Host phases between kernels finish at once: the 2 MB page system does
// not model host accesses to managed data.
type Paged struct {
	cfg      *config.Config
	name     string
	unit     int
	handling uint64
	sys      *system.System
	host     *rangeHost
	phases   *hostAck
	PME      *pme.Engine
	Link     *pcie.Link
}

func newPaged(cfg *config.Config, name string) *Paged {
	p := &Paged{cfg: cfg, name: name, unit: cfg.Incomplete.UnitBytes, handling: cfg.Cycles(cfg.Incomplete.HandlingUs)}
	if name == "complete" {
		p.unit, p.handling = 1<<incpage.PageShift, cfg.Cycles(cfg.UM.FaultLatencyUs)
	}
	return p
}

// Name is "incomplete" or "complete".
func (p *Paged) Name() string { return p.name }

// UnitBytes is the migration unit: incomplete.unit_bytes, or 2 MB.
func (p *Paged) UnitBytes() int { return p.unit }

// Preloaded is false: managed data starts in host memory.
func (p *Paged) Preloaded() bool { return false }

// Attach builds the link, the PME (moving pages of a unit, at most 4 KB)
// and the host's request handler on the GMMU's migration ports.
func (p *Paged) Attach(s *system.System) error {
	if s.Pages2M == nil {
		return fmt.Errorf("run.policy = %q needs run.page_size = %q", p.name, config.PageSize2M)
	}
	p.sys = s
	page := min(p.unit, pme4K)
	var err error
	if p.Link, p.PME, err = newLinkAndPMEOf(s, p.cfg, page); err != nil {
		return err
	}
	g := s.Pages2M
	p.host, err = newRangeHost(s.Sim, p.name+".host", rangeHostConfig{
		Handling: p.handling, PagesPerUnit: p.unit / page, MaxPages: pme.DefaultConfig().MaxPages,
		Tags: g.Cfg.MRQ, BasePage: g.Cfg.BasePage, Pages: g.Cfg.Pages, UnitsPerPage: g.Cfg.UnitsPerPage(),
	}, rangeHostPorts{Req: g.GMMU.MigReq, Done: g.GMMU.MigDone, Cmd: p.PME.Cmd, Events: p.PME.Events})
	if err != nil {
		return err
	}
	p.phases = newHostAck(s)
	return nil
}

// Stats reports the migration requests as far faults and the migrated
// bytes in 4 KB pages.
func (p *Paged) Stats() system.PolicyStats {
	st := p.sys.Pages2M.GMMU.Stats()
	return system.PolicyStats{
		FarFaults:    st.Requests,
		Migrations:   st.Units * uint64(p.unit) / 4096,
		PCIeH2DBytes: p.Link.H2D.Stats().Bytes,
		PCIeD2HBytes: p.Link.D2H.Stats().Bytes,
	}
}

// Check verifies that the page table and TLB records hold only landed
// units (system.Pages2M.Check) against the host handler's record of the
// data the PME has delivered.
func (p *Paged) Check() error { return p.sys.Pages2M.Check(p.host.Landed) }

// Busy names the GMMU's and the host's unfinished work.
func (p *Paged) Busy() []string {
	return []string{
		fmt.Sprintf("%s: %s", p.sys.Pages2M.GMMU.Path(), p.sys.Pages2M.GMMU.Busy()),
		fmt.Sprintf("%s: %s", p.host.Path(), p.host.busyText()),
	}
}

// CopyExecute is the reference the incomplete-pages paper normalises to
// (Figure 2): the programmer's cudaMemcpy of every managed allocation
// before the kernels, overlapped ideally with their execution. The run
// itself has every page in GPU memory from the start (2 MB pages, so the
// same translation path as complete); its time is
//
//	T = max(T_exec, T_copy)
//	T_exec = the cycles of that run (kernel launch latencies included)
//	T_copy = pcie.rtt_us / 2 + (managed bytes) / pcie.bandwidth_gbs
//
// in core cycles (config.OneWayCycles and WireCycles): the copy streams
// every managed allocation's bytes host to device at the link's full
// bandwidth after one one-way latency, and "ideal overlap" means the
// kernels never wait for data that is still in flight, so the longer of
// the two is the run time. The cycles T_copy exceeds T_exec by are
// reported as added cycles (Result.Cycles - Result.TimelineCycles).
type CopyExecute struct {
	cfg    *config.Config
	sys    *system.System
	phases *hostAck
	copyB  uint64
	copyT  uint64
}

func newCopyExecute(cfg *config.Config) *CopyExecute { return &CopyExecute{cfg: cfg} }

// Name is "copy-execute".
func (*CopyExecute) Name() string { return "copy-execute" }

// UnitBytes is the whole 2 MB page: nothing migrates on demand.
func (*CopyExecute) UnitBytes() int { return 1 << incpage.PageShift }

// Preloaded is true: the copy put every page in GPU memory.
func (*CopyExecute) Preloaded() bool { return true }

// Attach computes T_copy from the workload's managed allocations.
func (p *CopyExecute) Attach(s *system.System) error {
	if s.Pages2M == nil {
		return fmt.Errorf("run.policy = %q needs run.page_size = %q", p.Name(), config.PageSize2M)
	}
	p.sys = s
	for _, a := range s.Workload.Allocs() {
		if a.Kind != workload.Device {
			p.copyB += a.Bytes
		}
	}
	p.copyT = p.cfg.OneWayCycles() + p.cfg.WireCycles(p.copyB, p.cfg.PCIe.BandwidthGBs)
	p.phases = newHostAck(s)
	return nil
}

// CopyCycles is T_copy.
func (p *CopyExecute) CopyCycles() uint64 { return p.copyT }

// Stats reports the copied bytes and the copy time not hidden under the
// execution as added cycles.
func (p *CopyExecute) Stats() system.PolicyStats {
	now := p.sys.Sim.Cycle()
	var added uint64
	if p.copyT > now {
		added = p.copyT - now
	}
	return system.PolicyStats{PCIeH2DBytes: p.copyB, Migrations: p.copyB / 4096, AddedFaultCycles: added}
}

// Check verifies the TLB records against the page table; every page is
// in GPU memory.
func (p *CopyExecute) Check() error {
	all := make(incpage.Bitmap, (p.sys.Pages2M.Cfg.UnitsPerPage()+63)/64)
	all.Set(incpage.Span{First: 0, Last: uint16(p.sys.Pages2M.Cfg.UnitsPerPage() - 1)})
	return p.sys.Pages2M.Check(func(uint64) incpage.Bitmap { return all })
}

// Busy names no units: nothing migrates.
func (*CopyExecute) Busy() []string { return nil }

// rangeHostConfig sizes the host's migration request handler.
type rangeHostConfig struct {
	Handling     uint64 // cycles from taking a request to its first PME command
	PagesPerUnit int    // PME pages per unit
	MaxPages     int    // PME pages per command
	Tags         int    // MRQ entries: request tags
	BasePage     uint64
	Pages        int
	UnitsPerPage int
}

type rangeHostPorts struct {
	Req    *rtl.Decoupled[incpage.MigRequest]
	Done   *rtl.Decoupled[uint16]
	Cmd    *rtl.Decoupled[pme.Command]
	Events *rtl.Decoupled[pme.Event]
}

// rangeHost is the host side of a range migration: it takes one request
// at a time, spends the handling latency on it, then hands it to the PME
// as commands of at most MaxPages pages and takes the next; when a
// request's last command has landed it records the units as in GPU
// memory and reports the request's tag back to the GMMU.
type rangeHost struct {
	rtl.Base
	rangeHostPorts
	cfg rangeHostConfig

	busy    *rtl.Reg[bool]
	cur     *rtl.Reg[incpage.MigRequest]
	readyAt *rtl.Reg[uint64]
	issued  *rtl.Reg[uint32] // PME pages of cur issued

	open   *rtl.Vec[uint16] // per tag: commands not yet landed
	page   *rtl.Vec[uint64] // per tag: the request's page, first unit and count
	first  *rtl.Vec[uint16]
	count  *rtl.Vec[uint16]
	done   *rtl.Ring[uint16]
	landed *rtl.Vec[uint64] // per page: a bit per unit in GPU memory
	words  int
}

func newRangeHost(s *rtl.Sim, path string, cfg rangeHostConfig, p rangeHostPorts) (*rangeHost, error) {
	h := &rangeHost{rangeHostPorts: p, cfg: cfg, words: (cfg.UnitsPerPage + 63) / 64}
	s.Add(h, path)
	b := &h.Base
	h.busy = rtl.NewFlag(b, "busy", false)
	h.cur = rtl.NewRegOf(b, "cur", incpage.MigRequestBits, incpage.MigRequest{})
	h.readyAt = rtl.NewReg[uint64](b, "ready_at", 64, 0)
	h.issued = rtl.NewReg[uint32](b, "issued", 32, 0)
	h.open = rtl.NewVec[uint16](b, "open", cfg.Tags, 16, 0)
	h.page = rtl.NewVec[uint64](b, "page", cfg.Tags, 27, 0)
	h.first = rtl.NewVec[uint16](b, "first", cfg.Tags, 14, 0)
	h.count = rtl.NewVec[uint16](b, "count", cfg.Tags, 15, 0)
	h.done = rtl.NewRing[uint16](b, "done", cfg.Tags, 8, false)
	h.landed = rtl.NewVec[uint64](b, "landed", cfg.Pages*h.words, 64, 0)
	h.Req.Consumer(b)
	h.Done.Producer(b)
	h.Cmd.Producer(b)
	h.Events.Consumer(b)
	return h, nil
}

// pages is a request's PME pages.
func (h *rangeHost) pages(r incpage.MigRequest) uint32 {
	return uint32(r.Count) * uint32(h.cfg.PagesPerUnit)
}

func (h *rangeHost) Drive() {
	busy := h.busy.Q()
	h.Req.Ready.Set(!busy)
	r := h.cur.Q()
	issuing := busy && h.Now() >= h.readyAt.Q()
	h.Cmd.Valid.Set(issuing)
	if issuing {
		n := min(h.pages(r)-h.issued.Q(), uint32(h.cfg.MaxPages))
		h.Cmd.Bits.Set(pme.Command{Tag: r.Tag, Op: pme.Fetch, Pages: uint16(n)})
	}
	h.Events.Ready.Set(true)
	h.Done.Valid.Set(h.done.Len() > 0)
	if h.done.Len() > 0 {
		h.Done.Bits.Set(h.done.Head())
	}
}

func (h *rangeHost) Eval() {
	now := h.Now()
	active := false
	if h.Req.Fire() {
		active = true
		r := h.Req.Bits.Get()
		h.busy.Set(true)
		h.cur.Set(r)
		h.readyAt.Set(now + max(h.cfg.Handling, 1))
		h.issued.Set(0)
		cmds := (h.pages(r) + uint32(h.cfg.MaxPages) - 1) / uint32(h.cfg.MaxPages)
		h.open.At(int(r.Tag)).Set(uint16(cmds))
		h.page.At(int(r.Tag)).Set(r.Page)
		h.first.At(int(r.Tag)).Set(r.First)
		h.count.At(int(r.Tag)).Set(r.Count)
	}
	if h.Cmd.Fire() {
		active = true
		n := h.issued.Q() + uint32(h.Cmd.Bits.Get().Pages)
		h.issued.Set(n)
		if n == h.pages(h.cur.Q()) {
			h.busy.Set(false)
		}
	}
	push, tag := false, uint16(0)
	if h.Events.Fire() {
		active = true
		ev := h.Events.Bits.Get()
		if ev.Last && !ev.Victim {
			t := int(ev.Tag)
			left := h.open.At(t).Q() - 1
			h.open.At(t).Set(left)
			if left == 0 {
				push, tag = true, ev.Tag
				h.land(t)
			}
		}
	}
	pop := h.Done.Fire()
	if push || pop {
		active = true
		h.done.Update(push, tag, 0, pop)
	}
	if active || h.done.Len() > 0 {
		return
	}
	if h.busy.Q() && now < h.readyAt.Q() {
		h.SleepUntil(h.readyAt.Q())
		return
	}
	if !h.busy.Q() {
		h.Sleep()
	}
}

// land marks request tag t's units as in GPU memory.
func (h *rangeHost) land(t int) {
	i := int(h.page.At(t).Q() - h.cfg.BasePage)
	bm := make(incpage.Bitmap, h.words)
	for w := range bm {
		bm[w] = h.landed.At(i*h.words + w).Q()
	}
	f := h.first.At(t).Q()
	bm.Set(incpage.Span{First: f, Last: f + h.count.At(t).Q() - 1})
	for w := range bm {
		if r := h.landed.At(i*h.words + w); r.Q() != bm[w] {
			r.Set(bm[w])
		}
	}
}

// Landed is the units of page in GPU memory, read between cycles.
func (h *rangeHost) Landed(page uint64) incpage.Bitmap {
	i := int(page - h.cfg.BasePage)
	bm := make(incpage.Bitmap, h.words)
	for w := range bm {
		bm[w] = h.landed.At(i*h.words + w).Q()
	}
	return bm
}

func (h *rangeHost) busyText() string {
	return fmt.Sprintf("handling a request %v, %d completions to report", h.busy.Q(), h.done.Len())
}
