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
//
// A kernel's first block goes out LaunchLatency cycles after the previous
// phase ended (after reset for the first phase): the UVMSmart simulator
// gives every kernel a launch-latency countdown (abstract_hardware_model.cc:
// 622, from -gpgpu_kernel_launch_latency, gpu-sim.cc:624) that its stream
// manager decrements once per GPU cycle while the kernel waits at the head
// of its stream, starting it at zero (stream_manager.cc:201-218); the
// GTX 1080 Ti configuration sets 222,150 cycles, 150 us
// (configs/GeForceGTX1080Ti/gpgpusim.config:193). The dispatcher sleeps
// until the launch, so idle skipping makes the wait cost one jump and the
// watchdog sees a timed wait, not a stall.
type Dispatcher struct {
	rtl.Base
	DispatcherPorts

	phases  []workload.Phase
	kernels []int // phase index -> kernel index (launch port numbering)
	latency uint64
	// gpuSMs is the SMs of one GPU: the launch ports are gpuSMs per GPU in
	// GPU order, and the next target is the next SM with room in the
	// target's GPU, else the first with room in the following GPUs (GRIT
	// Section III-B: "Only when the GPU cannot accommodate more TBs, the
	// scheduler moves to the next GPU"). On one GPU it is every SM: plain
	// round robin.
	gpuSMs int
	// firstGPUEachKernel starts every kernel at the first SM of GPU 0,
	// as GRIT's scheduler fills GPU 0 first; one GPU keeps the rotation.
	firstGPUEachKernel bool

	phase   *rtl.Reg[uint32] // current phase; len(phases) when done
	block   *rtl.Reg[uint32] // next thread block of the current kernel
	target  *rtl.Reg[uint32] // SM offered the next block
	waiting *rtl.Reg[bool]   // every block (or the host request) is out
	startAt *rtl.Reg[uint64] // cycle the current phase, if a kernel, may launch its first block
	// shown is the target before its last change: the one launch port
	// besides the target's whose Valid Drive may have to lower.
	shown *rtl.Reg[uint32]
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

// NewDispatcher adds a dispatcher of phases under path on ports p; every
// kernel waits launchLatency cycles before its first block.
func NewDispatcher(s *rtl.Sim, path string, phases []workload.Phase, p DispatcherPorts, launchLatency uint64) *Dispatcher {
	return newDispatcher(s, path, phases, p, len(p.Launch), false, launchLatency)
}

// NewGPUFirstDispatcher adds the multi-GPU dispatcher of GRIT Section
// III-B: ports p hold gpuSMs launch ports per GPU in GPU order, blocks fill
// one GPU's SMs round robin before the next GPU's, and every kernel starts
// at GPU 0.
func NewGPUFirstDispatcher(s *rtl.Sim, path string, phases []workload.Phase, p DispatcherPorts, gpuSMs int, launchLatency uint64) *Dispatcher {
	return newDispatcher(s, path, phases, p, gpuSMs, true, launchLatency)
}

func newDispatcher(s *rtl.Sim, path string, phases []workload.Phase, p DispatcherPorts, gpuSMs int, firstGPUEachKernel bool, launchLatency uint64) *Dispatcher {
	d := &Dispatcher{
		DispatcherPorts:    p,
		latency:            launchLatency,
		phases:             phases,
		kernels:            make([]int, len(phases)),
		gpuSMs:             gpuSMs,
		firstGPUEachKernel: firstGPUEachKernel,
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
	d.shown = rtl.NewReg[uint32](b, "shown", 16, 0)
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
	if p := int(d.shown.Q()); p != t {
		d.Launch[p].Valid.Set(false)
	}
	d.Launch[t].Valid.Set(offer)
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
		d.next(ph)
	default:
		d.Sleep()
	}
}

// next ends phase ph in this cycle: the next phase begins in the next
// cycle, and a kernel launches its first block the launch latency later.
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
		if d.firstGPUEachKernel {
			d.retarget(0)
		}
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
			d.retarget(c)
		}
		return
	}
	if !fired {
		d.Sleep()
	}
}

// retarget makes SM c the target from the next cycle.
func (d *Dispatcher) retarget(c int) {
	if t := d.target.Q(); uint32(c) != t {
		d.target.Set(uint32(c))
		d.shown.Set(t)
	}
}

// choose is the next target after t (or t itself if it did not take the
// block) that has room: round robin over t's GPU, then the following GPUs'
// SMs in order, wrapping to GPU 0.
func (d *Dispatcher) choose(t int, fired bool) (int, bool) {
	n, per := len(d.Launch), d.gpuSMs
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
