package rtl

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"golang.org/x/exp/constraints"
)

// Packer is implemented by small structs held in registers or carried on
// ports, so that they can be traced and compared against RTL as a bit vector.
type Packer interface {
	Pack() uint64
}

// committer is an SRAM of a block written in this cycle. commit makes the
// writes take effect and returns the number of write-backs.
type committer interface {
	commit() uint64
}

// clocked is what sets a register apart from a wire among the
// traced signals.
type clocked interface {
	isReg()
}

func (r *Reg[T]) isReg() {}

// traced is anything that can be dumped to a VCD file.
type traced interface {
	Name() string
	Width() int
	bits() uint64
}

// Reg is a clocked register: Q is its value during the current cycle, Set
// writes the value it takes at the next clock edge (D). A register that is
// not written holds its value. T is an unsigned integer, bool, or a small
// comparable struct that implements Packer.
type Reg[T comparable] struct {
	// The fields read every cycle come first and the descriptive ones sit
	// in the Sim, found by number, so that scanning a Vec touches little
	// memory. The next value (D) is not kept here: a write records it on
	// the owner's dirty list (commit.go), so that a 64-bit register takes
	// 24 bytes.
	q       T
	dirty   bool // written in this cycle: D is on the owner's dirty list
	checked bool // the Sim's checked mode, kept beside the value
	info    uint32
	owner   *Base
}

// regBank holds a block's scalar registers of one type in contiguous
// chunks.
type regBank[T comparable] struct {
	chunk []Reg[T] // room for the next scalar registers
}

// regChunk is how many scalar registers of one type a block gets per
// allocation: enough that a block's registers share a few cache lines.
const regChunk = 16

// bankOf returns block b's bank for registers of type T, making it on first
// use.
func bankOf[T comparable](b *Base) *regBank[T] {
	for _, k := range b.banks {
		if bk, ok := k.(*regBank[T]); ok {
			return bk
		}
	}
	bk := &regBank[T]{}
	b.banks = append(b.banks, bk)
	return bk
}

// newScalar returns a fresh register from the bank's current chunk.
func (k *regBank[T]) newScalar() *Reg[T] {
	if len(k.chunk) == 0 {
		k.chunk = make([]Reg[T], regChunk)
	}
	r := &k.chunk[0]
	k.chunk = k.chunk[1:]
	return r
}

// regInfo is what a register needs only for checks, tracing and reset.
// The registers of a Vec share one: elems is the Vec's registers and an
// element's name is name[i], made when asked.
type regInfo[T comparable] struct {
	name  string
	width int
	reset T
	pack  func(T) uint64
	elems []Reg[T]
}

// NewReg makes an unsigned register of the given width (1..64 bits and no
// wider than T) with a reset value, owned by block b.
func NewReg[T constraints.Unsigned](b *Base, name string, width int, reset T) *Reg[T] {
	r := scalarReg[T](b, name)
	initReg(r, b, name, width, reset, packerFor[T]())
	return r
}

// scalarReg allocates a register in block b's bank for its type.
func scalarReg[T comparable](b *Base, name string) *Reg[T] {
	if b.sim == nil {
		panic(fmt.Sprintf("rtl: register %q created on a block that was not added to a Sim", name))
	}
	return bankOf[T](b).newScalar()
}

// NewFlag makes a one-bit register.
func NewFlag(b *Base, name string, reset bool) *Reg[bool] {
	r := scalarReg[bool](b, name)
	initReg(r, b, name, 1, reset, packerFor[bool]())
	return r
}

// NewRegOf makes a register holding a small struct that packs into width
// bits.
func NewRegOf[T interface {
	comparable
	Packer
}](b *Base, name string, width int, reset T) *Reg[T] {
	r := scalarReg[T](b, name)
	initReg(r, b, name, width, reset, func(v T) uint64 { return v.Pack() })
	return r
}

func initReg[T comparable](r *Reg[T], b *Base, name string, width int, reset T, pack func(T) uint64) {
	info := newRegInfo(b, name, width, reset, pack)
	*r = Reg[T]{q: reset, checked: b.checked, owner: b, info: info}
	checkLayout(r)
	b.sim.regs = append(b.sim.regs, r)
	b.sim.addSignal(r)
}

// newRegInfo checks the description of a register (or of every register
// of a Vec) named name in block b and records it in the Sim; it returns
// its number.
func newRegInfo[T comparable](b *Base, name string, width int, reset T, pack func(T) uint64) uint32 {
	if b.sim == nil {
		panic(fmt.Sprintf("rtl: register %q created on a block that was not added to a Sim", name))
	}
	if width < 1 || width > 64 {
		panic(fmt.Sprintf("rtl: register %s width %d outside 1..64", b.Child(name), width))
	}
	if len(b.sim.regInfo) > math.MaxUint32 {
		panic(fmt.Sprintf("rtl: register %s: too many registers", b.Child(name)))
	}
	if pack(reset)&^mask(width) != 0 {
		panic(fmt.Sprintf("rtl: register %s reset value does not fit %d bits", b.Child(name), width))
	}
	b.sim.regInfo = append(b.sim.regInfo, &regInfo[T]{name: b.Child(name), width: width, reset: reset, pack: pack})
	return uint32(len(b.sim.regInfo) - 1)
}

// Q is the register's value in the current cycle.
func (r *Reg[T]) Q() T {
	if r.checked {
		r.checkRead()
	}
	return r.q
}

//go:noinline
func (r *Reg[T]) checkRead() { r.owner.sim.checkRegRead(r.owner, r) }

// Set writes the value the register takes at the next clock edge. Only the
// owning block may write it, only in Eval, and only once per cycle.
func (r *Reg[T]) Set(v T) { r.note(v) }

// note checks a write in checked mode and records the value, with the
// register's address, on its owner's dirty list for the size of T (a
// constant of the register's type, so the choice of list folds away); it
// is out of line so that Set inlines. A second write in a cycle (a
// modeling error that checked mode reports) replaces the first. A write
// outside Eval (another such error) still commits at the next clock edge,
// as every write does, though its owner may sleep.
//
//go:noinline
func (r *Reg[T]) note(v T) {
	// The dirty and checked flags are adjacent bytes (checkLayout): one
	// test finds an ordinary write.
	if *(*uint16)(unsafe.Pointer(&r.dirty)) != 0 && r.unusual(v) {
		return
	}
	b := r.owner
	d := &b.dirty
	if d.n == 0 && len(b.pending) == 0 {
		b.firstWrite()
	}
	d.n++
	p := unsafe.Pointer(r)
	switch size, align := unsafe.Sizeof(v), unsafe.Alignof(v); {
	case isHead(size):
		d.head = append(d.head, write8{p, headWord(p, unsafe.Pointer(&v), size)})
	case isWords(size, align):
		last := size - 8
		for off := uintptr(0); off < last; off += 8 {
			d.head = append(d.head, write8{unsafe.Add(p, off), *(*uint64)(unsafe.Add(unsafe.Pointer(&v), off))})
		}
		d.w8 = append(d.w8, write8{unsafe.Add(p, last), *(*uint64)(unsafe.Add(unsafe.Pointer(&v), last))})
	default:
		d.wide = append(d.wide, wideWrite{p, size, len(d.bytes)})
		d.bytes = append(d.bytes, unsafe.Slice((*byte)(unsafe.Pointer(&v)), size)...)
	}
	r.dirty = true
}

// unusual handles a write in checked mode or a second write in a cycle:
// it checks the first kind, and records the second by replacing the
// value the first one put on the dirty list, and then reports the write
// done.
//
//go:noinline
func (r *Reg[T]) unusual(v T) (done bool) {
	if r.checked {
		r.checkSet(v)
	}
	if r.dirty {
		r.owner.dirty.rewrite(unsafe.Pointer(r), unsafe.Pointer(&v), unsafe.Sizeof(v), unsafe.Alignof(v))
		return true
	}
	return false
}

// Poke sets the register's value immediately, outside the clocked path, and
// re-drives the owner's outputs. It is a testbench backdoor for preloading
// state between cycles; it wakes the owner. A write of the cycle made
// before it is replaced too, so that the value survives the clock edge.
func (r *Reg[T]) Poke(v T) {
	r.q = v
	if r.dirty {
		r.owner.dirty.rewrite(unsafe.Pointer(r), unsafe.Pointer(&v), unsafe.Sizeof(v), unsafe.Alignof(v))
	}
	r.owner.wake()
	r.owner.sim.redrive(r.owner)
}

func (r *Reg[T]) checkSet(v T) {
	s, in := r.owner.sim, r.about()
	s.checkRegWrite(r.owner, r, r.dirty)
	if in.pack(v)&^mask(in.width) != 0 {
		s.fail(fmt.Errorf("register %s: value %#x does not fit %d bits in cycle %d", r.Name(), in.pack(v), in.width, s.cycle))
	}
}

func (r *Reg[T]) resetValue() {
	r.q, r.dirty = r.about().reset, false
}

// about is what the register needs only for checks, tracing and reset.
func (r *Reg[T]) about() *regInfo[T] { return r.owner.sim.regInfo[r.info].(*regInfo[T]) }

// Name is the register's hierarchical name.
func (r *Reg[T]) Name() string {
	in := r.about()
	if in.elems == nil {
		return in.name
	}
	i := (uintptr(unsafe.Pointer(r)) - uintptr(unsafe.Pointer(&in.elems[0]))) / unsafe.Sizeof(*r)
	return elemName(in.name, int(i))
}

// eachReg visits the register.
func (r *Reg[T]) eachReg(visit func(traced)) { visit(r) }

// Width is the register's width in bits.
func (r *Reg[T]) Width() int { return r.about().width }

func (r *Reg[T]) bits() uint64 { return r.about().pack(r.q) }

// Vec is a vector of registers of one type and width, such as the entries of
// a FIFO. Element i is named name[i]; the names are made when asked (by
// checks, tracing and SignalNames), so that a large table costs its
// registers alone to build.
type Vec[T comparable] struct {
	regs []Reg[T]
}

// NewVec makes n unsigned registers of the given width and reset value.
func NewVec[T constraints.Unsigned](b *Base, name string, n, width int, reset T) *Vec[T] {
	return newVec(b, name, n, width, reset, packerFor[T]())
}

// NewVecOf makes n struct registers of the given packed width.
func NewVecOf[T interface {
	comparable
	Packer
}](b *Base, name string, n, width int, reset T) *Vec[T] {
	return newVec(b, name, n, width, reset, func(v T) uint64 { return v.Pack() })
}

func newVec[T comparable](b *Base, name string, n, width int, reset T, pack func(T) uint64) *Vec[T] {
	v := &Vec[T]{}
	initVec(v, b, name, n, width, reset, pack)
	return v
}

// initVec makes v a vector of n registers.
func initVec[T comparable](v *Vec[T], b *Base, name string, n, width int, reset T, pack func(T) uint64) {
	v.regs = make([]Reg[T], n)
	if n == 0 {
		return
	}
	info := newRegInfo(b, name, width, reset, pack)
	b.sim.regInfo[info].(*regInfo[T]).elems = v.regs
	for i := range v.regs {
		v.regs[i] = Reg[T]{q: reset, checked: b.checked, owner: b, info: info}
	}
	checkLayout(&v.regs[0])
	b.sim.regs = append(b.sim.regs, v)
	b.sim.addVec(b.Child(name), n, v)
}

func (v *Vec[T]) resetValue() {
	reset := v.regs[0].about().reset
	for i := range v.regs {
		r := &v.regs[i]
		r.q, r.dirty = reset, false
	}
}

// eachReg visits the registers in order.
func (v *Vec[T]) eachReg(visit func(traced)) {
	for i := range v.regs {
		visit(&v.regs[i])
	}
}

// At returns register i.
func (v *Vec[T]) At(i int) *Reg[T] { return &v.regs[i] }

// Len is the number of registers.
func (v *Vec[T]) Len() int { return len(v.regs) }

func mask(width int) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(width) - 1
}

// packerFor returns the bit-vector view of an unsigned integer or bool type.
// It reinterprets the value's bytes, so it never allocates.
func packerFor[T comparable]() func(T) uint64 {
	var zero T
	switch k := reflect.TypeOf(zero).Kind(); k {
	case reflect.Bool, reflect.Uint8:
		return func(v T) uint64 { return uint64(*(*uint8)(unsafe.Pointer(&v))) }
	case reflect.Uint16:
		return func(v T) uint64 { return uint64(*(*uint16)(unsafe.Pointer(&v))) }
	case reflect.Uint32:
		return func(v T) uint64 { return uint64(*(*uint32)(unsafe.Pointer(&v))) }
	case reflect.Uint64, reflect.Uint, reflect.Uintptr:
		return func(v T) uint64 { return *(*uint64)(unsafe.Pointer(&v)) }
	default:
		if _, ok := any(zero).(Packer); ok {
			return func(v T) uint64 { return any(v).(Packer).Pack() }
		}
		panic(fmt.Sprintf("rtl: type %T is neither unsigned, bool nor a Packer", zero))
	}
}
