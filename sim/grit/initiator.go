package grit

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/rtl"
)

// FaultKind is the kind of a fault the host driver receives (GRIT
// Section V-B): both kinds count towards the threshold.
type FaultKind uint8

const (
	// LocalFault is a local page fault: the GPU's page table has no valid
	// translation for the page.
	LocalFault FaultKind = iota
	// ProtectionFault is a page protection fault: a write to a page the
	// GPU holds read-only, a replica under duplication (GRIT Section II-B3).
	ProtectionFault
)

func (k FaultKind) String() string {
	if k == ProtectionFault {
		return "protection"
	}
	return "local"
}

// Count is the Initiator's answer for one fault.
type Count struct {
	// Faults is the number of faults on the page since its record was
	// last deleted, this one included (1..Threshold).
	Faults int
	// Write is the OR of those faults' write bits: the page's R/W bit.
	Write bool
	// Interrupt is set when Faults reached the threshold: the driver is
	// interrupted to decide the page's scheme, and the record is gone.
	Interrupt bool
	// Cycles is the time from the fault's arrival to the answer, waiting
	// for the counter included.
	Cycles uint64
}

// Initiator is GRIT's Fault-Aware Initiator (Section V-B) with the state
// it counts in (Section V-C): every local page fault and page protection
// fault the driver receives is counted per page, by the PA-Cache in front
// of the PA-Table or, in the PA-Table-only configuration, by a Counter
// that reads and writes the PA-Table for every fault. The count reaching
// the threshold interrupts the driver to decide.
//
// The blocks run in the Initiator's own lockstep simulator, whose clock
// follows the driver's: Count advances it to the fault's arrival cycle
// (skipping idle cycles), presents the fault on req, and steps until the
// response. The counter serves one fault at a time; a fault that arrives
// while it is busy (a miss in flight, a write-back still queued for the
// host-memory port) waits, and its Cycles include the wait. Write-backs
// and deletes that follow a response complete while the clock advances
// to later faults.
type Initiator struct {
	cfg   Config
	sim   *rtl.Sim
	ports pacache.Ports
	cache *pacache.PACache // nil in the PA-Table-only configuration
	table *PATable

	// Faults counts faults by kind; Interrupts the faults that reached the
	// threshold.
	Faults     [2]uint64
	Interrupts uint64
}

// NewInitiator builds the counter and the PA-Table for cfg. checked turns
// on the rtl kernel's checked mode (tests use it).
func NewInitiator(cfg Config, checked bool) (*Initiator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := rtl.New(rtl.Options{Checked: checked, SkipIdle: true})
	in := &Initiator{cfg: cfg, sim: s, ports: pacache.NewPorts(s, "grit.counter", cfg.Cache())}
	var err error
	if cfg.PACache {
		in.cache, err = pacache.New(s, "grit.counter", cfg.Cache(), in.ports)
	} else {
		_, err = NewCounter(s, "grit.counter", cfg, in.ports)
	}
	if err != nil {
		return nil, err
	}
	if in.table, err = NewPATable(s, "grit.pa_table", cfg, in.ports); err != nil {
		return nil, err
	}
	s.Reset()
	return in, nil
}

// Table is the PA-Table: a testbench and statistics view.
func (in *Initiator) Table() *PATable { return in.table }

// Cache is the PA-Cache, nil in the PA-Table-only configuration.
func (in *Initiator) Cache() *pacache.PACache { return in.cache }

// Now is the Initiator's clock: the cycle after the last response.
func (in *Initiator) Now() uint64 { return in.sim.Cycle() }

// maxWait bounds a fault's service, far above any legal timing: a lookup
// and a write for each port ahead of it, and the port's own queue.
func (in *Initiator) maxWait() uint64 {
	return uint64(4*(in.cfg.Table.Ports+2)*in.cfg.Table.Latency) + 64
}

// Count counts a fault of the given kind on vpn arriving in cycle now;
// write is the faulting access's R/W bit (GRIT Section V-C: 0 read,
// 1 write; a protection fault is always a write).
func (in *Initiator) Count(now uint64, kind FaultKind, vpn uint64, write bool) (Count, error) {
	if vpn>>uint(in.cfg.VPNBits) != 0 {
		return Count{}, fmt.Errorf("grit: VPN %#x wider than VPNBits = %d", vpn, in.cfg.VPNBits)
	}
	s, p := in.sim, in.ports
	if c := s.Cycle(); c < now {
		if err := s.Run(now - c); err != nil {
			return Count{}, err
		}
	}
	in.Faults[kind]++
	p.Req.Valid.Set(true)
	p.Req.Set(pacache.Request{VPN: vpn, Write: write || kind == ProtectionFault})
	ok, err := s.RunUntil(p.Req.Ready.Get, in.maxWait())
	if err == nil && ok {
		err = s.Step()
	}
	p.Req.Valid.Set(false)
	if err != nil {
		return Count{}, err
	}
	if !ok {
		return Count{}, fmt.Errorf("grit: the fault counter did not accept VPN %#x within %d cycles", vpn, in.maxWait())
	}
	if ok, err = s.RunUntil(p.Resp.Valid.Get, in.maxWait()); err != nil || !ok {
		return Count{}, fmt.Errorf("grit: no count for VPN %#x within %d cycles: %v", vpn, in.maxWait(), err)
	}
	r := p.Resp.Get()
	if r.Trigger {
		in.Interrupts++
	}
	return Count{Faults: int(r.Count), Write: r.Write, Interrupt: r.Trigger, Cycles: s.Cycle() - now}, nil
}
