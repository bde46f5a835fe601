package umdriver

import (
	"fmt"

	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// A host runtime (SUV-Mgmt, SUV Section V-C) calls the driver between
// kernels. The system puts a host phase before every kernel for it
// (system.PrelaunchPolicy), and Config.Steps gives that phase the driver
// operations to run, in order, on the driver's state machine and
// serialised on the stream before the kernel (the kernel's launch latency
// starts when they are done):
//
//	drvStep:      the step's advice takes effect (uvm.Driver.Place); its
//	              call cost starts.
//	drvStepWait:  once the cost is over, a StepFetch moves its range one
//	              2 MB region at a time through the fault path's transfer
//	              (victims unmapped and written back, then the fetch runs,
//	              then zero-copy mappings shot down), a StepRelease writes
//	              its range's resident pages back; each transfer returns
//	              here, and the next region or step follows.
//
// The transfers are the fault handler's own states; only the state they
// return to differs (idle).

// StepKind is what a runtime step does.
type StepKind uint8

const (
	// StepPlace gives the range an advice (uvm.Placement): pin on GPU
	// (suvPinOnGPU's pin), pin on host (suvPinOnHost), access counters
	// (suvEnableAccessCounter), no-migrate (suvSetNoMigrateRegion, the same
	// advice as pin on host), on demand (unset policies).
	StepPlace StepKind = iota
	// StepFetch prefetches the range (cudaMemPrefetchAsync, and the
	// placement half of suvPinOnGPU).
	StepFetch
	// StepRelease writes the range's resident unpinned pages back to the
	// host (SUV Algorithm 2's eviction of an earlier iteration's span).
	StepRelease
)

func (k StepKind) String() string {
	switch k {
	case StepPlace:
		return "place"
	case StepFetch:
		return "fetch"
	case StepRelease:
		return "release"
	}
	return fmt.Sprintf("StepKind(%d)", uint8(k))
}

// Step is one driver operation of a runtime: a range of the layout's pages
// (page indices from BaseVPN), the advice of a StepPlace, and the call's
// cost in cycles, spent before the step acts on residency.
type Step struct {
	Kind      StepKind
	First     int
	Pages     int
	Placement uvm.Placement
	Cycles    uint64
}

// validateSteps checks every step's range against the layout.
func (c Config) validateSteps() error {
	for ph, steps := range c.Steps {
		for i, st := range steps {
			if st.Pages < 0 || st.First < 0 || st.First+st.Pages > c.Pages {
				return fmt.Errorf("umdriver: Steps[%d][%d] (%v) pages %d+%d outside 0..%d", ph, i, st.Kind, st.First, st.Pages, c.Pages)
			}
		}
	}
	return nil
}

// hasSteps reports whether host phase ph is a runtime's phase (its step
// list is not nil, possibly empty): it runs the steps instead of a
// read-back and a host synchronisation.
func (d *Driver) hasSteps(ph uint16) bool {
	return int(ph) < len(d.cfg.Steps) && d.cfg.Steps[ph] != nil
}

// startSteps begins host phase ph's steps.
func (d *Driver) startSteps(ph uint16) uint8 {
	d.stepPhase.Set(ph)
	d.stepIndex.Set(0)
	d.inSteps.Set(true)
	return drvStep
}

// idle is the state a finished transfer goes to: the runtime's steps when
// they are running, else idle.
func (d *Driver) idle() uint8 {
	if d.inSteps.Q() {
		return drvStepWait
	}
	return drvIdle
}

// beginStep applies the next step's advice and starts its call cost, or
// ends the phase after the last step.
func (d *Driver) beginStep() uint8 {
	steps := d.cfg.Steps[d.stepPhase.Q()]
	i := int(d.stepIndex.Q())
	if i >= len(steps) {
		d.inSteps.Set(false)
		return drvHostDone
	}
	st := steps[i]
	if st.Kind == StepPlace {
		if err := d.menu.Place(st.First, st.Pages, st.Placement); err != nil {
			panic(fmt.Sprintf("%s: %v", d.Path(), err))
		}
	}
	due := d.c.now + st.Cycles
	d.until.Set(due)
	d.c.stepDue = due
	d.stepPage.Set(uint64(st.First))
	return drvStepWait
}

// stepTransfer moves the current step's next 2 MB region (a fetch), its
// whole range (a release), or goes to the next step.
func (d *Driver) stepTransfer() uint8 {
	st := d.cfg.Steps[d.stepPhase.Q()][d.stepIndex.Q()]
	next, end := int(d.stepPage.Q()), st.First+st.Pages
	if st.Kind == StepPlace || next >= end {
		d.stepIndex.Set(d.stepIndex.Q() + 1)
		return drvStep
	}
	d.c.stepDue = d.c.now
	var (
		plan uvm.Plan
		err  error
		last = end
	)
	pages := d.mappings[:0] // free until the fetch collects its mappings
	if st.Kind == StepFetch {
		last = min(end, (next/system.PagesPerRegion+1)*system.PagesPerRegion)
	}
	for p := next; p < last; p++ {
		if d.pageState(p) != pageFixed {
			pages = append(pages, p)
		}
	}
	d.stepPage.Set(uint64(last))
	if st.Kind == StepFetch {
		plan, err = d.menu.Prefetch(pages)
	} else {
		plan, err = d.menu.Release(pages)
	}
	if err != nil {
		panic(fmt.Sprintf("%s: %v", d.Path(), err))
	}
	d.victims = append(d.victims[:0], plan.Evict...)
	d.faultVPN.Set(d.cfg.BaseVPN + uint64(next))
	runs := 0
	if len(plan.Fetch) > 0 {
		runs = d.startFetchAt(plan.Fetch, next)
	} else {
		d.runs.Set(0)
	}
	d.cursor.Set(0)
	d.shoot.Clear()
	switch {
	case len(d.victims) > 0:
		return drvUnmap
	case runs > 0:
		return drvFetchCmd
	}
	return drvStepWait
}
