package gpu

import (
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// Dispatcher is the GPU's work distributor: it runs the workload's phases in
// program order (SPEC 6.1). For a kernel it hands the thread blocks out one
// per cycle, round robin over the SMs that have room, and waits until every
// SM is empty before the next phase; a host phase goes out on the Host port
// and the dispatcher waits for HostDone. Done rises after the last phase.
type Dispatcher struct {
	rtl.Base
	DispatcherPorts

	phases  []workload.Phase
	kernels []int // phase index -> kernel index (launch port numbering)

	phase   *rtl.Reg[uint32] // current phase; len(phases) when done
	block   *rtl.Reg[uint32] // next thread block of the current kernel
	target  *rtl.Reg[uint32] // SM offered the next block
	waiting *rtl.Reg[bool]   // every block (or the host request) is out
}

// Kernels lists the workload's kernels in phase order: the SMs' launch port
// numbers kernels by this list.
func Kernels(phases []workload.Phase) []*workload.Kernel {
	var ks []*workload.Kernel
	for _, p := range phases {
		if p.Kernel != nil {
			ks = append(ks, p.Kernel)
		}
	}
	return ks
}

// DispatcherPorts are the dispatcher's ports.
type DispatcherPorts struct {
	Launch   []*rtl.Decoupled[Launch] // one per SM
	Resident []*rtl.Wire[uint8]       // one per SM
	Host     *rtl.Decoupled[uint16]   // host phase index, to the host model
	HostDone *rtl.Decoupled[uint16]   // host phase finished
	Done     *rtl.Wire[bool]
}

// NewDispatcherPorts makes the host and done wires of a dispatcher named
// path (path.host, path.host_done, path.done) and connects it to the SMs'
// launch ports and occupancy wires.
func NewDispatcherPorts(s *rtl.Sim, path string, sms []*SM) DispatcherPorts {
	p := DispatcherPorts{
		Host:     rtl.NewDecoupled[uint16](s, path+".host", 16),
		HostDone: rtl.NewDecoupled[uint16](s, path+".host_done", 16),
		Done:     rtl.NewBit(s, path+".done"),
	}
	for _, m := range sms {
		p.Launch = append(p.Launch, m.Launch)
		p.Resident = append(p.Resident, m.Resident)
	}
	return p
}

// NewDispatcher adds a dispatcher of phases under path on ports p.
func NewDispatcher(s *rtl.Sim, path string, phases []workload.Phase, p DispatcherPorts) *Dispatcher {
	d := &Dispatcher{
		DispatcherPorts: p,
		phases:          phases,
		kernels:         make([]int, len(phases)),
	}
	k := 0
	for i, p := range phases {
		d.kernels[i] = k
		if p.Kernel != nil {
			k++
		}
	}
	s.Add(d, path)
	b := &d.Base
	d.phase = rtl.NewReg[uint32](b, "phase", 32, 0)
	d.block = rtl.NewReg[uint32](b, "block", 32, 0)
	d.target = rtl.NewReg[uint32](b, "target", 16, 0)
	d.waiting = rtl.NewFlag(b, "waiting", false)
	for i := range p.Launch {
		d.Launch[i].Producer(b)
		b.Listen(d.Resident[i])
	}
	d.Host.Producer(b)
	d.HostDone.Consumer(b)
	return d
}

// Drive offers the next block to the target SM, or the host phase.
func (d *Dispatcher) Drive() {
	ph := int(d.phase.Q())
	done := ph >= len(d.phases)
	d.Done.Set(done)
	kernel := !done && d.phases[ph].Kernel != nil
	offer := kernel && !d.waiting.Q()
	t := int(d.target.Q())
	for i, l := range d.Launch {
		l.Valid.Set(offer && i == t)
	}
	if offer {
		d.Launch[t].Bits.Set(Launch{Kernel: uint16(d.kernels[ph]), Block: d.block.Q()})
	}
	d.Host.Valid.Set(!done && !kernel && !d.waiting.Q())
	d.Host.Bits.Set(uint16(ph))
	d.HostDone.Ready.Set(true)
}

// Eval advances the block counter, the target SM and the phase.
func (d *Dispatcher) Eval() {
	ph := int(d.phase.Q())
	if ph >= len(d.phases) {
		d.Sleep()
		return
	}
	if k := d.phases[ph].Kernel; k != nil {
		d.evalKernel(k)
		return
	}
	switch {
	case d.Host.Fire():
		d.waiting.Set(true)
	case d.HostDone.Fire():
		d.waiting.Set(false)
		d.phase.Set(uint32(ph + 1))
	default:
		d.Sleep()
	}
}

func (d *Dispatcher) evalKernel(k *workload.Kernel) {
	if d.waiting.Q() {
		for _, r := range d.Resident {
			if r.Get() != 0 {
				d.Sleep()
				return
			}
		}
		d.waiting.Set(false)
		d.block.Set(0)
		d.phase.Set(d.phase.Q() + 1)
		return
	}
	if k.Blocks == 0 {
		d.waiting.Set(true)
		return
	}
	t := int(d.target.Q())
	fired := d.Launch[t].Fire()
	if fired {
		next := d.block.Q() + 1
		d.block.Set(next)
		if int(next) == k.Blocks {
			d.waiting.Set(true)
		}
	}
	// Next target: the first SM after t (or t itself if it did not take
	// the block) that has room.
	n := len(d.Launch)
	start := t
	if fired {
		start = t + 1
	}
	for i := 0; i < n; i++ {
		c := (start + i) % n
		if d.Launch[c].Ready.Get() && !(fired && c == t) {
			if c != t {
				d.target.Set(uint32(c))
			}
			return
		}
	}
	if !fired {
		d.Sleep()
	}
}
