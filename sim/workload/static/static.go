// Package static describes each kernel's memory operations the way a
// compiler sees them (SUV, Section V-A, SUV-Kern): per memory operation the
// allocation it touches, its index as an affine expression of the thread,
// block, kernel-loop and host-iteration variables (or "indirect" when the
// index is a loaded value, "pointer chase" when a loaded value feeds the next
// iteration's address), the loops around it and the fraction of threads that
// take the branch enclosing it. Package sim/suv classifies allocations from
// these descriptions; docs/suv.md documents the format.
package static

import "fmt"

// Var is a variable an affine index may use.
type Var uint8

const (
	ThreadX  Var = iota // threadIdx.x, in [0, BlockX)
	ThreadY             // threadIdx.y, in [0, BlockY)
	BlockX              // blockIdx.x, in [0, GridX)
	BlockY              // blockIdx.y, in [0, GridY)
	HostIter            // the host loop's induction variable, Kernel.HostIter at this launch
	Loop0               // Loop0+k is the induction variable of Kernel.Loops[k], in [0, Trips)
)

func (v Var) String() string {
	switch v {
	case ThreadX:
		return "tid.x"
	case ThreadY:
		return "tid.y"
	case BlockX:
		return "bid.x"
	case BlockY:
		return "bid.y"
	case HostIter:
		return "iter"
	}
	return fmt.Sprintf("loop%d", int(v-Loop0))
}

// LoopVar is the induction variable of Kernel.Loops[k].
func LoopVar(k int) Var { return Loop0 + Var(k) }

// Term is Coef * Var.
type Term struct {
	Var  Var
	Coef int64
}

// Affine is Const + sum of Terms, in elements of the operation's ElemBytes.
type Affine struct {
	Const int64
	Terms []Term
}

// Uses reports whether v appears with a non-zero coefficient.
func (a Affine) Uses(v Var) bool {
	for _, t := range a.Terms {
		if t.Var == v && t.Coef != 0 {
			return true
		}
	}
	return false
}

// Range is the smallest and largest value of a when every variable v ranges
// over [lo(v), hi(v)] (inclusive): each term takes its extreme at one end,
// the end chosen by the coefficient's sign (the min/max propagation of SUV
// Section V-B, Listing 4).
func (a Affine) Range(bounds func(Var) (lo, hi int64)) (lo, hi int64) {
	lo, hi = a.Const, a.Const
	for _, t := range a.Terms {
		vlo, vhi := bounds(t.Var)
		x, y := t.Coef*vlo, t.Coef*vhi
		lo += min(x, y)
		hi += max(x, y)
	}
	return lo, hi
}

// IndexKind says how a memory operation's index is formed.
type IndexKind uint8

const (
	// AffineIndex: Index is an affine function of the variables.
	AffineIndex IndexKind = iota
	// Indirect: the index is (computed from) a value loaded from memory; it
	// may fall anywhere in the allocation.
	Indirect
	// PointerChase: a value loaded in one loop iteration forms the address of
	// the next (SUV Section V-A); anywhere in the allocation.
	PointerChase
)

func (k IndexKind) String() string {
	switch k {
	case AffineIndex:
		return "affine"
	case Indirect:
		return "indirect"
	case PointerChase:
		return "pointer-chase"
	}
	return fmt.Sprintf("IndexKind(%d)", uint8(k))
}

// Access is what a memory operation does.
type Access uint8

const (
	Read Access = iota
	Write
	Atomic // read-modify-write
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case Atomic:
		return "atomic"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// Loop is a kernel loop whose induction variable runs 0, 1, ..., Trips-1.
type Loop struct {
	Name string
	// Trips is the iteration count as the host can compute it at launch;
	// ignored when DataDependent.
	Trips int64
	// DataDependent marks a bound read from memory inside the kernel: the
	// host cannot evaluate it (SUV Section V-B: such regions are Unknown).
	DataDependent bool
}

// MemOp is one static load, store or atomic of a kernel.
type MemOp struct {
	Alloc     string // allocation name, as workload.Alloc.Name
	Access    Access
	ElemBytes int64 // bytes per access; Index counts in these units
	Kind      IndexKind
	Index     Affine // used when Kind is AffineIndex
	Loops     []int  // indices into Kernel.Loops of the enclosing loops
	// BranchFraction is the fraction of the launched threads that reach the
	// operation, in (0, 1]: 1 outside branches and for conditions the
	// compiler cannot evaluate (data-dependent), otherwise the fraction the
	// host computes from the condition at launch (SUV Section V-B).
	BranchFraction float64
}

// Kernel is one kernel launch: its geometry, loops and memory operations.
type Kernel struct {
	Name           string
	GridX, GridY   int64 // thread blocks per dimension
	BlockX, BlockY int64 // threads per block per dimension
	Loops          []Loop
	// HostIter is the host loop variable's value at this launch, in
	// [0, HostIters); HostIters is 0 for a kernel launched outside a host
	// loop whose variable reaches its indices.
	HostIter, HostIters int64
	Ops                 []MemOp
}

// Blocks is the number of thread blocks.
func (k *Kernel) Blocks() int64 { return k.GridX * k.GridY }

// ThreadsPerBlock is the number of threads of a block.
func (k *Kernel) ThreadsPerBlock() int64 { return k.BlockX * k.BlockY }

// Threads is the number of threads launched.
func (k *Kernel) Threads() int64 { return k.Blocks() * k.ThreadsPerBlock() }

// Alloc is an allocation the description refers to.
type Alloc struct {
	Name  string
	Bytes uint64
	// Managed is false for cudaMalloc'd memory, which SUV does not place.
	Managed bool
}

// Program is a workload's static description: its allocations and one
// Kernel per kernel launch, in launch order.
type Program struct {
	Workload string
	Allocs   []Alloc
	Kernels  []Kernel
}

// Alloc returns the named allocation.
func (p *Program) Alloc(name string) (Alloc, bool) {
	for _, a := range p.Allocs {
		if a.Name == name {
			return a, true
		}
	}
	return Alloc{}, false
}

// Bounds is the variable ranges of one launch: threads over the whole block;
// blocks over [BlockLo, BlockHi] per dimension; the host variable fixed at
// HostIter; each loop over [0, Trips-1]. A data-dependent loop has no bound
// and reports ok=false from OpRange when its variable appears.
type Bounds struct {
	K                  *Kernel
	BlockXLo, BlockXHi int64
	BlockYLo, BlockYHi int64
}

// WholeGrid is the bounds of every block of k (the span, SUV Section V-B).
func WholeGrid(k *Kernel) Bounds {
	return Bounds{K: k, BlockXHi: k.GridX - 1, BlockYHi: k.GridY - 1}
}

// OneBlock is the bounds of block (bx, by) alone (the working set of one
// thread block, SUV Section V-B).
func OneBlock(k *Kernel, bx, by int64) Bounds {
	return Bounds{K: k, BlockXLo: bx, BlockXHi: bx, BlockYLo: by, BlockYHi: by}
}

// OpRange is the byte range [lo, hi) of allocation a that op may touch under
// b, clipped to the allocation: the whole allocation for an indirect or
// pointer-chase index or one that uses a data-dependent loop's variable
// (then ok is false: the range is not known statically).
func (b Bounds) OpRange(op *MemOp, a Alloc) (lo, hi uint64, ok bool) {
	if op.Kind != AffineIndex {
		return 0, a.Bytes, false
	}
	known := true
	ilo, ihi := op.Index.Range(func(v Var) (int64, int64) {
		switch v {
		case ThreadX:
			return 0, b.K.BlockX - 1
		case ThreadY:
			return 0, b.K.BlockY - 1
		case BlockX:
			return b.BlockXLo, b.BlockXHi
		case BlockY:
			return b.BlockYLo, b.BlockYHi
		case HostIter:
			return b.K.HostIter, b.K.HostIter
		}
		l := b.K.Loops[v-Loop0]
		if l.DataDependent {
			known = false
			return 0, 0
		}
		return 0, l.Trips - 1
	})
	if !known {
		return 0, a.Bytes, false
	}
	clip := func(x int64) uint64 { return uint64(min(max(x, 0), int64(a.Bytes))) }
	return clip(ilo * op.ElemBytes), clip((ihi + 1) * op.ElemBytes), true
}

// Validate checks the description: names resolve, geometry is positive,
// fractions lie in (0, 1], loop and variable indices exist.
func (p *Program) Validate() error {
	for ki := range p.Kernels {
		k := &p.Kernels[ki]
		where := fmt.Sprintf("static %s: kernel %d (%s)", p.Workload, ki, k.Name)
		if k.GridX < 1 || k.GridY < 1 || k.BlockX < 1 || k.BlockY < 1 {
			return fmt.Errorf("%s: grid %dx%d of blocks %dx%d must be positive", where, k.GridX, k.GridY, k.BlockX, k.BlockY)
		}
		if k.HostIters < 0 || (k.HostIters > 0 && (k.HostIter < 0 || k.HostIter >= k.HostIters)) {
			return fmt.Errorf("%s: HostIter %d outside [0, HostIters %d)", where, k.HostIter, k.HostIters)
		}
		for li, l := range k.Loops {
			if !l.DataDependent && l.Trips < 1 {
				return fmt.Errorf("%s: loop %d (%s) Trips %d must be >= 1", where, li, l.Name, l.Trips)
			}
		}
		for oi := range k.Ops {
			op := &k.Ops[oi]
			if _, ok := p.Alloc(op.Alloc); !ok {
				return fmt.Errorf("%s: op %d: unknown allocation %q", where, oi, op.Alloc)
			}
			if op.ElemBytes < 1 {
				return fmt.Errorf("%s: op %d: ElemBytes %d must be >= 1", where, oi, op.ElemBytes)
			}
			if !(op.BranchFraction > 0 && op.BranchFraction <= 1) {
				return fmt.Errorf("%s: op %d: BranchFraction %v outside (0, 1]", where, oi, op.BranchFraction)
			}
			for _, li := range op.Loops {
				if li < 0 || li >= len(k.Loops) {
					return fmt.Errorf("%s: op %d: loop %d does not exist", where, oi, li)
				}
			}
			for _, t := range op.Index.Terms {
				if t.Var >= Loop0 && int(t.Var-Loop0) >= len(k.Loops) {
					return fmt.Errorf("%s: op %d: index uses %v, which does not exist", where, oi, t.Var)
				}
				if t.Var == HostIter && k.HostIters == 0 {
					return fmt.Errorf("%s: op %d: index uses iter outside a host loop", where, oi)
				}
			}
		}
	}
	return nil
}
