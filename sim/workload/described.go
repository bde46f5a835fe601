package workload

import (
	"fmt"

	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// Described workloads are written once, as their static description
// (package static) plus the order in which a thread runs the memory
// operations and loops; the warp streams are interpreted from that same
// description, so the generator cannot drift from what the SUV analysis
// sees. An affine operation's lane reads the element its index gives
// (lanes whose element falls outside the allocation are masked, as the
// kernel's bounds guard would); an indirect operation reads an element
// drawn from the run's seed (the loaded index); a pointer chase reads an
// element drawn from the previous one (the loaded pointer); a
// data-dependent loop runs a trip count drawn per warp in [1, MaxTrips].

// codeKind is one instruction of a described kernel's body.
type codeKind uint8

const (
	codeOp        codeKind = iota // a memory operation, after its ALU work
	codeLoopBegin                 // enter loop: its variable starts at 0
	codeLoopEnd                   // next trip, or leave the loop
)

type code struct {
	kind  codeKind
	op    int // codeOp: index into Kernel.Ops
	loop  int // loop begin/end: index into Kernel.Loops
	alu   int // codeOp: ALU instructions before the operation
	begin int // codeLoopEnd: the pc of its begin
}

// dKernel is a described kernel: its description, the body's code and the
// trip bound of each data-dependent loop.
type dKernel struct {
	k        static.Kernel
	body     []code
	maxTrips []int64
	open     []int
	bases    map[string]uint64
	sizes    map[string]uint64
	seed     uint64
	launch   uint64
}

// kernelBuilder starts a described kernel of gridX x gridY blocks of
// blockX x blockY threads.
func kernelBuilder(name string, gridX, gridY, blockX, blockY int64) *dKernel {
	return &dKernel{k: static.Kernel{Name: name, GridX: gridX, GridY: gridY, BlockX: blockX, BlockY: blockY}}
}

// iter sets the host loop variable's value and bound at this launch.
func (d *dKernel) iter(i, n int64) *dKernel { d.k.HostIter, d.k.HostIters = i, n; return d }

// loop opens a loop of trips iterations and returns its variable.
func (d *dKernel) loop(name string, trips int64) static.Var {
	return d.openLoop(static.Loop{Name: name, Trips: trips}, 0)
}

// dataLoop opens a loop whose bound is loaded inside the kernel; the
// generator runs between 1 and maxTrips trips.
func (d *dKernel) dataLoop(name string, maxTrips int64) static.Var {
	return d.openLoop(static.Loop{Name: name, DataDependent: true}, maxTrips)
}

func (d *dKernel) openLoop(l static.Loop, maxTrips int64) static.Var {
	li := len(d.k.Loops)
	d.k.Loops = append(d.k.Loops, l)
	d.maxTrips = append(d.maxTrips, maxTrips)
	d.open = append(d.open, li)
	d.body = append(d.body, code{kind: codeLoopBegin, loop: li})
	return static.LoopVar(li)
}

// end closes the innermost open loop.
func (d *dKernel) end() *dKernel {
	li := d.open[len(d.open)-1]
	d.open = d.open[:len(d.open)-1]
	begin := 0
	for pc, c := range d.body {
		if c.kind == codeLoopBegin && c.loop == li {
			begin = pc
		}
	}
	d.body = append(d.body, code{kind: codeLoopEnd, loop: li, begin: begin})
	return d
}

// op appends a memory operation after alu ALU instructions, inside every
// open loop.
func (d *dKernel) op(alu int, m static.MemOp) *dKernel {
	m.Loops = append([]int(nil), d.open...)
	d.k.Ops = append(d.k.Ops, m)
	d.body = append(d.body, code{kind: codeOp, op: len(d.k.Ops) - 1, alu: alu})
	return d
}

// describedWorkload collects a described workload's allocations and
// launches; build lays the allocations out and returns the workload and its
// description.
type describedWorkload struct {
	w       *builtin
	kernels []*dKernel
	seed    uint64
}

func newDescribed(name, class string, seed uint64) *describedWorkload {
	return &describedWorkload{w: &builtin{name: name, class: class}, seed: seed}
}

func (dw *describedWorkload) alloc(name string, bytes uint64, readOnly bool) {
	dw.w.alloc(name, bytes, Managed, readOnly)
}

func (dw *describedWorkload) launch(d *dKernel) {
	if len(d.open) != 0 {
		panic(fmt.Sprintf("workload %s: kernel %s has %d loops left open", dw.w.name, d.k.Name, len(d.open)))
	}
	dw.kernels = append(dw.kernels, d)
}

// build lays out the allocations and makes one kernel phase per launch.
func (dw *describedWorkload) build() (*builtin, *static.Program) {
	w := dw.w
	Layout(w.allocs)
	bases, sizes := map[string]uint64{}, map[string]uint64{}
	for _, a := range w.allocs {
		bases[a.Name], sizes[a.Name] = a.Base, a.Bytes
	}
	p := staticProgram(w)
	for i, d := range dw.kernels {
		d.bases, d.sizes, d.seed, d.launch = bases, sizes, dw.seed, uint64(i)
		w.kernel(&Kernel{Name: d.k.Name, Blocks: int(d.k.Blocks()), ThreadsPerBlock: int(d.k.ThreadsPerBlock()), NewWarp: d.newWarp})
		p.Kernels = append(p.Kernels, d.k)
	}
	return w, p
}

// maxDescribedLoops bounds a described kernel's loops.
const maxDescribedLoops = 4

// dWarp is one warp's position in its kernel's code.
type dWarp struct {
	d        *dKernel
	block    int64
	warp     int64
	pc       int
	aluDone  bool
	counter  [maxDescribedLoops]int64
	trips    [maxDescribedLoops]int64
	chase    [WarpSize]uint64 // each lane's last pointer-chase element
	chaseSet bool
}

var dWarpPool warpPool[dWarp]

func (d *dKernel) newWarp(b, w int) WarpStream {
	return dWarpPool.fill(dWarp{d: d, block: int64(b), warp: int64(w)})
}

// Next yields the next instruction and returns the stream to its pool at
// the end.
func (s *dWarp) Next(op *Op) bool {
	if s.next(op) {
		return true
	}
	dWarpPool.done(s)
	return false
}

func (s *dWarp) next(op *Op) bool {
	d := s.d
	for s.pc < len(d.body) {
		c := d.body[s.pc]
		switch c.kind {
		case codeLoopBegin:
			s.counter[c.loop] = 0
			s.trips[c.loop] = d.k.Loops[c.loop].Trips
			if d.k.Loops[c.loop].DataDependent {
				s.trips[c.loop] = 1 + int64(draw(d.seed, d.launch<<8|uint64(c.loop), uint64(s.block<<16|s.warp), uint64(d.maxTrips[c.loop])))
			}
			s.pc++
		case codeLoopEnd:
			s.counter[c.loop]++
			if s.counter[c.loop] < s.trips[c.loop] {
				s.pc = c.begin + 1
			} else {
				s.pc++
			}
		case codeOp:
			if c.alu > 0 && !s.aluDone {
				s.aluDone = true
				op.compute(c.alu)
				return true
			}
			s.aluDone = false
			s.pc++
			s.fill(op, c.op)
			if op.Lanes > 0 {
				return true
			}
		}
	}
	return false
}

var accessKind = map[static.Access]OpKind{static.Read: OpLoad, static.Write: OpStore, static.Atomic: OpAtomic}

// fill makes op the memory instruction of operation oi for every active
// lane.
func (s *dWarp) fill(op *Op, oi int) {
	d := s.d
	m := &d.k.Ops[oi]
	op.mem(accessKind[m.Access], uint8(m.ElemBytes))
	base, size := d.bases[m.Alloc], d.sizes[m.Alloc]
	elems := int64(size) / m.ElemBytes
	bx, by := s.block%d.k.GridX, s.block/d.k.GridX
	for l := int64(0); l < WarpSize; l++ {
		t := s.warp*WarpSize + l
		if t >= d.k.ThreadsPerBlock() {
			break
		}
		var idx int64
		switch m.Kind {
		case static.AffineIndex:
			idx = m.Index.Const
			for _, tm := range m.Index.Terms {
				var v int64
				switch tm.Var {
				case static.ThreadX:
					v = t % d.k.BlockX
				case static.ThreadY:
					v = t / d.k.BlockX
				case static.BlockX:
					v = bx
				case static.BlockY:
					v = by
				case static.HostIter:
					v = d.k.HostIter
				default:
					v = s.counter[tm.Var-static.Loop0]
				}
				idx += tm.Coef * v
			}
			if idx < 0 || idx >= elems {
				continue
			}
		case static.Indirect:
			thread := uint64(s.block*d.k.ThreadsPerBlock() + t)
			key := thread
			for li := range d.k.Loops {
				key = key*131 + uint64(s.counter[li])
			}
			idx = int64(draw(d.seed, d.launch<<8|uint64(oi)|1<<7, key, uint64(elems)))
		case static.PointerChase:
			prev := uint64(s.block*d.k.ThreadsPerBlock() + t)
			if s.chaseSet {
				prev = s.chase[l]
			}
			idx = int64(draw(d.seed, d.launch<<8|uint64(oi), prev, uint64(elems)))
			s.chase[l] = uint64(idx)
		}
		op.lane(base + uint64(idx*m.ElemBytes))
	}
	if m.Kind == static.PointerChase {
		s.chaseSet = true
	}
}
