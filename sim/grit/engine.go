package grit

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pte"
)

// Fault is one fault the host driver receives from a GPU.
type Fault struct {
	GPU  int
	VPN  uint64
	Kind FaultKind
	// Write is the faulting access's R/W bit (a protection fault is a
	// write whatever this says).
	Write bool
}

// Decision is what GRIT tells the driver for one fault.
type Decision struct {
	// Scheme resolves the fault: the page's scheme after this fault,
	// written into the host PTE and the faulting GPU's PTE.
	Scheme pte.Scheme
	// Previous is the host PTE's scheme before the fault.
	Previous pte.Scheme
	// Count is the Initiator's count for the page, this fault included.
	Count int
	// Interrupt: the count reached the threshold and Scheme is GRIT's
	// decision from the page's R/W bit.
	Interrupt bool
	// Adopted: no interrupt, and the host PTE held a scheme (set by the
	// prediction) other than the one the faulting GPU's PTE had.
	Adopted bool
	// LeaveDuplication: Previous is duplication and Scheme is not. Before
	// resolving the fault the driver removes every replica and invalidates
	// every GPU's PTE and TLB entries of the page (GRIT Section V-F).
	LeaveDuplication bool
	// DecisionCycles is the time from the fault's arrival to GRIT's
	// answer (the Initiator's count; the decision rule is combinational).
	DecisionCycles uint64
	// Cycles is the time from the fault's arrival to the end of its walk:
	// max(walk, DecisionCycles), since the lookup runs in parallel with
	// the walk and the walk waits for a slower decision (Section V-C).
	Cycles uint64
	// WalkStall is Cycles minus the walk: the cycles the walk waited.
	WalkStall uint64
}

// job is a background group check: it runs at cycle at.
type job struct {
	at       uint64
	vpn      uint64
	old, new pte.Scheme
}

// Engine is GRIT in the host driver: the Fault-Aware Initiator with its
// PA-Cache and PA-Table, the decision, the scheme bits of both page
// tables, and the Neighboring-Aware Prediction in the background. Fault is
// its entry point; see the package doc for how the driver calls it.
type Engine struct {
	cfg  Config
	pt   PageTables
	init *Initiator
	pred *Predictor

	// pending holds the group checks in the order they run; busyTo is the
	// cycle the last of them runs.
	pending []job
	busyTo  uint64

	// Decisions counts interrupts by decided scheme; Adoptions faults
	// that took a predicted scheme; Stalls faults whose walk waited, and
	// StallCycles the cycles they waited.
	Decisions   [4]uint64
	Adoptions   uint64
	Stalls      uint64
	StallCycles uint64
}

// New makes GRIT for cfg over the system's page tables.
func New(cfg Config, pt PageTables) (*Engine, error) {
	return newEngine(cfg, pt, false)
}

func newEngine(cfg Config, pt PageTables, checked bool) (*Engine, error) {
	if pt == nil {
		return nil, fmt.Errorf("grit: no page tables")
	}
	in, err := NewInitiator(cfg, checked)
	if err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg, pt: pt, init: in, pred: NewPredictor(pt)}, nil
}

// Config is the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Initiator is the fault counter: statistics and testbench view.
func (e *Engine) Initiator() *Initiator { return e.init }

// Predictor is the group check: statistics view.
func (e *Engine) Predictor() *Predictor { return e.pred }

// Advance runs the background group checks due by cycle now.
func (e *Engine) Advance(now uint64) {
	n := 0
	for ; n < len(e.pending) && e.pending[n].at <= now; n++ {
		j := e.pending[n]
		e.pred.Check(j.vpn, j.old, j.new)
	}
	e.pending = e.pending[:copy(e.pending, e.pending[n:])]
}

// Drain runs every pending group check (end of a run, tests).
func (e *Engine) Drain() { e.Advance(^uint64(0)) }

// Fault handles fault f arriving at the driver in cycle now, whose page
// walk takes walk cycles. Faults are presented in the order of now.
func (e *Engine) Fault(now uint64, f Fault, walk uint64) (Decision, error) {
	e.Advance(now)
	host, ok := e.pt.HostPTE(f.VPN)
	if !ok {
		return Decision{}, fmt.Errorf("grit: fault on VPN %#x, which has no host PTE", f.VPN)
	}
	c, err := e.init.Count(now, f.Kind, f.VPN, f.Write)
	if err != nil {
		return Decision{}, err
	}
	old := SchemeOf(host)
	d := Decision{Previous: old, Scheme: old, Count: c.Faults, Interrupt: c.Interrupt, DecisionCycles: c.Cycles}
	if c.Interrupt {
		d.Scheme = Decide(c.Write)
		e.Decisions[d.Scheme]++
		if host.Scheme() != d.Scheme {
			e.pt.SetHostPTE(f.VPN, host.WithScheme(d.Scheme))
		}
		if e.cfg.Prediction && d.Scheme != old {
			start := max(now+c.Cycles, e.busyTo)
			e.busyTo = start + uint64(e.cfg.PredictionCycles)
			e.pending = append(e.pending, job{at: e.busyTo, vpn: f.VPN, old: old, new: d.Scheme})
		}
	}
	if g := e.pt.GPUScheme(f.GPU, f.VPN); g != d.Scheme {
		d.Adopted = !c.Interrupt && g != pte.SchemeNone
		e.pt.SetGPUScheme(f.GPU, f.VPN, d.Scheme)
	}
	if d.Adopted {
		e.Adoptions++
	}
	d.LeaveDuplication = old == pte.SchemeDuplication && d.Scheme != pte.SchemeDuplication
	d.Cycles = max(walk, c.Cycles)
	d.WalkStall = d.Cycles - walk
	if d.WalkStall > 0 {
		e.Stalls++
		e.StallCycles += d.WalkStall
	}
	return d, nil
}
