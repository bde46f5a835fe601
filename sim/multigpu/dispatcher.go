package multigpu

import (
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// Dispatcher is the multi-GPU thread-block scheduler of GRIT Section
// III-B: "the TB scheduler first schedules the TBs across CUs within one
// GPU in a round-robin fashion. Only when the GPU cannot accommodate more
// TBs, the scheduler moves to the next GPU." It runs the phases in program
// order like the single-GPU dispatcher (gpu.Dispatcher: one block a cycle,
// kernel launch latency, the next phase once every SM is empty, host
// phases on the Host port), over every GPU's SMs in GPU order; its next
// target is the next SM with room in the current target's GPU, else the
// first SM with room in the following GPUs, wrapping to GPU 0.
type Dispatcher struct {
	rtl.Base
	gpu.DispatcherPorts

	phases    []workload.Phase
	kernels   []int
	latency   uint64
	smsPerGPU int

	phase   *rtl.Reg[uint32]
	block   *rtl.Reg[uint32]
	target  *rtl.Reg[uint32]
	waiting *rtl.Reg[bool]
	startAt *rtl.Reg[uint64]
}

// NewDispatcher adds the dispatcher of phases under path on ports p, whose
// launch ports are smsPerGPU per GPU in GPU order.
func NewDispatcher(s *rtl.Sim, path string, phases []workload.Phase, p gpu.DispatcherPorts, smsPerGPU int, launchLatency uint64) *Dispatcher {
	d := &Dispatcher{DispatcherPorts: p, latency: launchLatency, phases: phases, kernels: make([]int, len(phases)), smsPerGPU: smsPerGPU}
	k := 0
	for i, ph := range phases {
		d.kernels[i] = k
		if ph.Kernel != nil {
			k++
		}
	}
	s.Add(d, path)
	b := &d.Base
	d.phase = rtl.NewReg[uint32](b, "phase", 32, 0)
	d.block = rtl.NewReg[uint32](b, "block", 32, 0)
	d.target = rtl.NewReg[uint32](b, "target", 16, 0)
	d.waiting = rtl.NewFlag(b, "waiting", false)
	d.startAt = rtl.NewReg(b, "start_at", 64, launchLatency)
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
	offer := kernel && !d.waiting.Q() && d.Now() >= d.startAt.Q()
	t := int(d.target.Q())
	for i, l := range d.Launch {
		l.Valid.Set(offer && i == t)
	}
	if offer {
		d.Launch[t].Bits.Set(gpu.Launch{Kernel: uint16(d.kernels[ph]), Block: d.block.Q()})
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
		d.next(ph)
	default:
		d.Sleep()
	}
}

func (d *Dispatcher) next(ph int) {
	d.phase.Set(uint32(ph + 1))
	d.startAt.Set(d.Now() + 1 + d.latency)
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
		d.target.Set(0)
		d.next(int(d.phase.Q()))
		return
	}
	if now := d.Now(); now < d.startAt.Q() {
		d.SleepUntil(d.startAt.Q())
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
	if c, ok := d.choose(t, fired); ok {
		if c != t {
			d.target.Set(uint32(c))
		}
		return
	}
	if !fired {
		d.Sleep()
	}
}

// choose is the next target after t: round robin over the SMs of t's GPU,
// then the following GPUs' SMs in order.
func (d *Dispatcher) choose(t int, fired bool) (int, bool) {
	n, per := len(d.Launch), d.smsPerGPU
	g := t / per
	room := func(c int) bool { return d.Launch[c].Ready.Get() && !(fired && c == t) }
	start := t % per
	if fired {
		start++
	}
	for i := range per {
		if c := g*per + (start+i)%per; room(c) {
			return c, true
		}
	}
	for i := 1; i*per < n; i++ {
		base := (g + i) * per % n
		for j := range per {
			if room(base + j) {
				return base + j, true
			}
		}
	}
	return 0, false
}
