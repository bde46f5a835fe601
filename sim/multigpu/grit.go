package multigpu

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/grit"
)

// GritPolicy is the name of GRIT's per-page placement policy.
const GritPolicy = "grit"

// GritPrefetchPolicy is GRIT with the prefetcher of ot-prefetch on the
// pages it keeps on on-touch migration (GRIT Section VI-E, Fig. 30).
const GritPrefetchPolicy = "grit-prefetch"

// Staller is a Decider whose decision can delay the fault it was asked
// about: the driver checks for it after each Decide and lengthens the
// fault's handling step by Stall cycles (GRIT Section V-C: the PA-Cache
// lookup runs in parallel with the host's page walk, and the walk waits
// when the decision is slower).
type Staller interface {
	// Stall is the cycles the fault of the last Decide waits beyond its
	// page walk.
	Stall() uint64
}

// GritDecider is GRIT (package sim/grit) as the host driver's Decider:
// every local fault and protection fault goes through grit.Engine.Fault,
// which counts it in the Fault-Aware Initiator (PA-Cache and PA-Table),
// decides the page's scheme at the threshold, writes the scheme bits into
// the host PTE and the faulting GPU's PTE, and queues the
// Neighboring-Aware Prediction's group checks. A promotion (an access
// counter reaching its threshold) is no fault (GRIT Section II-B2): it
// keeps the scheme the host PTE holds and does not reach the Engine.
//
// It implements grit.PageTables over the driver's tables: a page's host
// PTE scheme bits are its centralized entry's Scheme (so the planner
// writes them into every GPU PTE it installs), its group bits (52-53)
// are kept here, one per page; the scheme bits of GPU g's PTE that GRIT
// reads and writes are kept here too, one per page and GPU.
//
// Leaving duplication (Decision.LeaveDuplication) needs no step of its
// own: the planner serves any fault on a page with replicas under the
// access-counter or on-touch scheme by first writing every other
// holder's PTE not-present and shooting down its TLBs (planner.own,
// planner.mapRemote), so that one writable copy is left.
type GritDecider struct {
	engine  *grit.Engine
	table   *Table
	gpus    int
	baseVPN uint64
	walk    uint64
	group   []pte.Group  // [page]: host PTE group bits
	scheme  []pte.Scheme // [page*gpus+g]: scheme bits of GPU g's PTE
	stall   uint64
	err     error
}

// GritConfig is GRIT's configuration from cfg's [grit] section: the keys
// set threshold, PA-Cache and prediction; the rest is GRIT's (Section V).
func GritConfig(cfg *config.Config) grit.Config {
	g := grit.DefaultConfig()
	g.Threshold, g.PACache, g.Prediction = cfg.Grit.Threshold, cfg.Grit.PACache, cfg.Grit.Prediction
	return g
}

// NewGritDecider builds GRIT over table t of a system whose first page is
// baseVPN. walk is the host's page walk of a fault, which the decision
// runs in parallel with.
func NewGritDecider(cfg grit.Config, t *Table, baseVPN, walk uint64) (*GritDecider, error) {
	if last := baseVPN + uint64(t.pages) - 1; last>>uint(cfg.VPNBits) != 0 {
		return nil, fmt.Errorf("grit: the workload's last VPN %#x is wider than the PA-Table's %d-bit VPN", last, cfg.VPNBits)
	}
	d := &GritDecider{table: t, gpus: t.gpus, baseVPN: baseVPN, walk: walk,
		group: make([]pte.Group, t.pages), scheme: make([]pte.Scheme, t.pages*t.gpus)}
	e, err := grit.New(cfg, d)
	if err != nil {
		return nil, err
	}
	d.engine = e
	return d, nil
}

// hostWalk is the host's walk of a fault's centralized page table: GRIT
// Table I's four levels at gpu.walk_cycles each (400 cycles at 100).
func hostWalk(cfg *config.Config) uint64 {
	return uint64(ptw.GRITConfig().Levels * cfg.GPU.WalkCycles)
}

// Engine is GRIT's engine: statistics and testbench view.
func (d *GritDecider) Engine() *grit.Engine { return d.engine }

// Err is the first error the Engine reported, nil if none.
func (d *GritDecider) Err() error { return d.err }

// Decide runs GRIT for a local or protection fault; a promotion keeps
// the page's host scheme.
func (d *GritDecider) Decide(f Fault, p Page, cycle uint64) pte.Scheme {
	d.stall = 0
	if f.Kind == Promotion {
		return grit.SchemeOf(pte.PTE(0).WithScheme(p.Scheme))
	}
	kind := grit.LocalFault
	if f.Kind == ProtectionFault {
		kind = grit.ProtectionFault
	}
	dec, err := d.engine.Fault(cycle, grit.Fault{GPU: f.GPU, VPN: f.VPN, Kind: kind, Write: f.Write}, d.walk)
	if err != nil {
		if d.err == nil {
			d.err = err
		}
		return grit.SchemeOf(pte.PTE(0).WithScheme(p.Scheme))
	}
	d.stall = dec.WalkStall
	return dec.Scheme
}

// Stall is the last fault's wait for GRIT's decision beyond its walk.
func (d *GritDecider) Stall() uint64 { return d.stall }

func (d *GritDecider) page(vpn uint64) (int, bool) {
	i := vpn - d.baseVPN
	return int(i), vpn >= d.baseVPN && i < uint64(d.table.pages)
}

// HostPTE is the page's host PTE as GRIT sees it: its scheme and group
// bits.
func (d *GritDecider) HostPTE(vpn uint64) (pte.PTE, bool) {
	i, ok := d.page(vpn)
	if !ok {
		return 0, false
	}
	return pte.PTE(0).WithScheme(d.table.Page(i).Scheme).WithGroup(d.group[i]), true
}

// SetHostPTE writes the page's scheme and group bits.
func (d *GritDecider) SetHostPTE(vpn uint64, e pte.PTE) {
	i, ok := d.page(vpn)
	if !ok {
		return
	}
	p := d.table.Page(i)
	p.Scheme = e.Scheme()
	d.table.setPage(i, p)
	d.group[i] = e.Group()
}

// GPUScheme is the scheme bits GRIT last wrote into GPU g's PTE of the
// page.
func (d *GritDecider) GPUScheme(g int, vpn uint64) pte.Scheme {
	i, ok := d.page(vpn)
	if !ok {
		return pte.SchemeNone
	}
	return d.scheme[i*d.gpus+g]
}

// SetGPUScheme writes the scheme bits of GPU g's PTE of the page; the
// planner installs the translation with the same bits (Page.Scheme).
func (d *GritDecider) SetGPUScheme(g int, vpn uint64, s pte.Scheme) {
	if i, ok := d.page(vpn); ok {
		d.scheme[i*d.gpus+g] = s
	}
}

// GritResult is GRIT's own counts in a run.
type GritResult struct {
	Faults           uint64                `json:"faults_counted"`
	Interrupts       uint64                `json:"interrupts"`
	ToAccessCounter  uint64                `json:"decided_ac"`
	ToDuplication    uint64                `json:"decided_dup"`
	Adoptions        uint64                `json:"predicted_adopted"`
	Promotions       [grit.MaxLevel]uint64 `json:"group_promotions"` // groups of 8, 64, 512 pages formed
	Degradations     uint64                `json:"group_degradations"`
	Rewrites         uint64                `json:"host_pte_rewrites"`
	TableReads       uint64                `json:"pa_table_reads"`
	TableWrites      uint64                `json:"pa_table_writes"`
	Stalls           uint64                `json:"walk_stalls"`
	StallCycles      uint64                `json:"walk_stall_cycles"`
	SchemeOnTouch    int                   `json:"pages_ot"`
	SchemeAccessCntr int                   `json:"pages_ac"`
	SchemeDup        int                   `json:"pages_dup"`
}

// Result is GRIT's counts so far, with the pages' schemes at the end.
func (d *GritDecider) Result() *GritResult {
	e := d.engine
	in, pr := e.Initiator(), e.Predictor()
	r := &GritResult{Faults: in.Faults[0] + in.Faults[1], Interrupts: in.Interrupts,
		ToAccessCounter: e.Decisions[pte.SchemeAccessCounter], ToDuplication: e.Decisions[pte.SchemeDuplication],
		Adoptions: e.Adoptions, Promotions: pr.Promotions, Degradations: pr.Degradations, Rewrites: pr.Rewrites,
		TableReads: in.Table().Reads, TableWrites: in.Table().Writes, Stalls: e.Stalls, StallCycles: e.StallCycles}
	for i := range d.table.pages {
		switch d.table.Page(i).Scheme {
		case pte.SchemeNone: // never faulted on
		case pte.SchemeAccessCounter:
			r.SchemeAccessCntr++
		case pte.SchemeDuplication:
			r.SchemeDup++
		case pte.SchemeOnTouch:
			r.SchemeOnTouch++
		}
	}
	return r
}
