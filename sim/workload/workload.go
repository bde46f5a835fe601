package workload

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// AllocKind says how the benchmark allocated an array.
type AllocKind uint8

const (
	// Managed memory (cudaMallocManaged) migrates between host and GPU on demand.
	Managed AllocKind = iota
	// Device memory (cudaMalloc) is pinned in GPU memory and never migrates.
	Device
)

func (k AllocKind) String() string {
	switch k {
	case Managed:
		return "managed"
	case Device:
		return "device"
	}
	return fmt.Sprintf("AllocKind(%d)", uint8(k))
}

// Alloc is one allocation the benchmark makes.
type Alloc struct {
	Name     string
	Bytes    uint64
	Kind     AllocKind
	ReadOnly bool   // never written by any kernel
	Base     uint64 // virtual base address, assigned by Layout
}

// OpKind is the class of a warp instruction.
type OpKind uint8

const (
	// OpCompute keeps the warp busy for Op.Cycles issue cycles.
	OpCompute OpKind = iota
	// OpLoad reads Op.Size bytes at every lane address.
	OpLoad
	// OpStore writes Op.Size bytes at every lane address.
	OpStore
	// OpAtomic is a read-modify-write of Op.Size bytes at every lane address.
	OpAtomic
)

func (k OpKind) String() string {
	switch k {
	case OpCompute:
		return "compute"
	case OpLoad:
		return "load"
	case OpStore:
		return "store"
	case OpAtomic:
		return "atomic"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// WarpSize is the number of threads in a warp.
const WarpSize = 32

// Op is one warp instruction. Only the active lanes carry addresses, packed
// into Addr[0:Lanes] in lane order.
type Op struct {
	Kind   OpKind
	Cycles uint32 // OpCompute: issue cycles the warp is busy
	Lanes  uint8  // active lanes with addresses (0..32)
	Size   uint8  // bytes per lane access
	Addr   [WarpSize]uint64
}

// WarpStream yields one warp's instructions in program order. Next fills *op
// and returns false at the end. Next does not allocate. Once Next has
// returned false the stream is finished and its holder must drop it: the
// built-in workloads recycle finished streams.
type WarpStream interface{ Next(op *Op) bool }

// Replay is a warp stream that issues a fixed list of instructions once,
// for hand-written micro-workloads.
func Replay(ops []Op) WarpStream { return &replay{ops: ops} }

type replay struct {
	ops []Op
	pc  int
}

func (r *replay) Next(op *Op) bool {
	if r.pc == len(r.ops) {
		return false
	}
	*op = r.ops[r.pc]
	r.pc++
	return true
}

// Kernel is one kernel launch.
type Kernel struct {
	Name            string
	Blocks          int // grid size in thread blocks
	ThreadsPerBlock int
	// NewWarp returns the stream of warp w (0-based, warps of 32 threads) of
	// thread block b.
	NewWarp func(b, w int) WarpStream
}

// WarpsPerBlock is the number of warps a thread block of the kernel occupies.
func (k *Kernel) WarpsPerBlock() int { return (k.ThreadsPerBlock + WarpSize - 1) / WarpSize }

// HostAccess is a host-side access to managed memory between kernels.
type HostAccess struct {
	Alloc  string
	Ranges [][2]uint64 // [start, end) virtual addresses
	Write  bool
}

// Phase is a kernel launch or a host access between kernels; exactly one of
// the fields is set.
type Phase struct {
	Kernel *Kernel
	Host   *HostAccess
}

// Workload is a benchmark: its allocations and its phases in program order.
// Host initialisation before the first kernel is not a phase: every managed
// page starts in host memory.
type Workload interface {
	Name() string
	Class() string   // "regular" or "irregular"
	Allocs() []Alloc // with Base filled in
	Phases() []Phase // in program order
	Footprint() uint64
}

// Params selects the problem size and randomness of a built-in workload.
type Params struct {
	// Scale multiplies the problem size (each workload documents which
	// dimension); 0 means 1. Allowed range (0, MaxScale].
	Scale float64
	// Seed drives every random choice (graph generation, random indices).
	Seed uint64
	// GraphFile, for bfs only, names a Rodinia-format graph to traverse
	// instead of a generated one.
	GraphFile string
}

// MaxScale bounds Params.Scale: at MaxScale the largest built-in footprint is
// a few hundred GB, beyond any GPU the simulator models.
const MaxScale = 10000

// Class names.
const (
	Regular   = "regular"
	Irregular = "irregular"
)

// Virtual layout: allocations are packed in declaration order from VABase,
// each starting on a RegionBytes boundary (the 2 MB frame-region, SPEC 2).
const (
	VABase      uint64 = 1 << 32
	RegionBytes uint64 = 2 << 20
)

// Layout assigns Base to every allocation: the first at VABase, each next one
// at the first RegionBytes boundary at or after the end of the previous one.
func Layout(allocs []Alloc) {
	next := VABase
	for i := range allocs {
		allocs[i].Base = next
		end := next + allocs[i].Bytes
		next = (end + RegionBytes - 1) / RegionBytes * RegionBytes
		if next == allocs[i].Base {
			next += RegionBytes
		}
	}
}

// builtin is the Workload every generator returns.
type builtin struct {
	name     string
	class    string
	allocs   []Alloc
	phases   []Phase
	fromFile bool // its data is read from a file and held whole (SizeOfWorkload)
}

func (b *builtin) Name() string    { return b.name }
func (b *builtin) Class() string   { return b.class }
func (b *builtin) Allocs() []Alloc { return b.allocs }
func (b *builtin) Phases() []Phase { return b.phases }
func (b *builtin) Footprint() uint64 {
	var total uint64
	for _, a := range b.allocs {
		if a.Kind == Managed {
			total += a.Bytes
		}
	}
	return total
}

// alloc declares an allocation and returns its index, used after layout to
// read back the base address.
func (b *builtin) alloc(name string, bytes uint64, kind AllocKind, readOnly bool) int {
	b.allocs = append(b.allocs, Alloc{Name: name, Bytes: bytes, Kind: kind, ReadOnly: readOnly})
	return len(b.allocs) - 1
}

func (b *builtin) base(i int) uint64 { return b.allocs[i].Base }

func (b *builtin) kernel(k *Kernel) { b.phases = append(b.phases, Phase{Kernel: k}) }

func (b *builtin) host(h *HostAccess) { b.phases = append(b.phases, Phase{Host: h}) }

type generator func(p Params, scale float64) (*builtin, error)

var generators = map[string]generator{
	"backprop": newBackprop,
	"fdtd":     newFDTD,
	"hotspot":  newHotspot,
	"srad":     newSRAD,
	"2dconv":   newConv2D,
	"bfs":      newBFS,
	"sssp":     newSSSP,
	"nw":       newNW,
	"ra":       newRA,
}

// Names returns the built-in workload names, sorted.
func Names() []string {
	names := make([]string, 0, len(generators))
	for n := range generators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the named built-in workload, or reads the trace of a
// "trace:FILE" name (a trace is its recorded size: Scale and Seed do not
// apply to it).
func New(name string, p Params) (Workload, error) {
	if file, ok := TraceFile(name); ok {
		if p.GraphFile != "" {
			return nil, fmt.Errorf("workload: Params.GraphFile is only read by bfs, not a trace")
		}
		return FromTraceFile(file)
	}
	gen, ok := generatorOf(name)
	if !ok {
		gen, ok = gritGenerators[name]
	}
	if !ok {
		return nil, fmt.Errorf("workload: unknown name %q; valid names: %s", name, strings.Join(append(AllNames(), GRITNames()...), ", "))
	}
	scale := p.Scale
	if scale == 0 {
		scale = 1
	}
	if math.IsNaN(scale) || scale <= 0 || scale > MaxScale {
		return nil, fmt.Errorf("workload: Params.Scale = %v out of range (0, %d]", p.Scale, MaxScale)
	}
	if p.GraphFile != "" && name != "bfs" {
		return nil, fmt.Errorf("workload: Params.GraphFile is only read by bfs, not %q", name)
	}
	wl, err := gen(p, scale)
	if err != nil {
		return nil, err
	}
	return wl, nil
}

// scaled multiplies n by scale, rounds to a multiple of unit and keeps at
// least min.
func scaled(n int, scale float64, unit, min int) int {
	v := int(math.Round(float64(n)*scale/float64(unit))) * unit
	if v < min {
		v = min
	}
	return v
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
