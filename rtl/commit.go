package rtl

import (
	"fmt"
	"reflect"
	"unsafe"
)

// The clock edge. A register's first write in a cycle appends its
// address to one of its block's dirty lists, chosen by the size of its
// value; at the edge each evaluated block walks its lists once and copies
// every written register's D into Q. A Reg[T] is laid out as Q, D and the
// dirty flag one after the other (checkLayout proves it for every register
// type), so the copy needs only the register's address and the size of T:
// a value that is one aligned word of 1, 2, 4 or 8 bytes (an unsigned
// integer or bool, or a struct aligned like one) is copied with one load
// and store by a loop for its size, any other as bytes. There is no call
// per register type or per register.

// dirtyLists are a block's registers written in this cycle, by value size.
type dirtyLists struct {
	n              int // registers on the lists
	w8, w4, w2, w1 []unsafe.Pointer
	wide           []dirtyReg // values that are not one aligned word
}

// dirtyReg is a written register whose value is not one aligned word: its
// address and the size of its value.
type dirtyReg struct {
	reg  unsafe.Pointer
	size uintptr
}

// firstWrite notes a block's first write of a cycle made outside Eval.
func (b *Base) firstWrite() {
	if b.sim.phase != phaseEval {
		b.sim.stray = append(b.sim.stray, b)
	}
}

// commitRegs makes the cycle's register writes take effect and empties
// the lists.
func (b *Base) commitRegs() {
	d := &b.dirty
	for _, p := range d.w8 {
		*(*uint64)(p) = *(*uint64)(unsafe.Add(p, 8))
		*(*bool)(unsafe.Add(p, 16)) = false
	}
	for _, p := range d.w4 {
		*(*uint32)(p) = *(*uint32)(unsafe.Add(p, 4))
		*(*bool)(unsafe.Add(p, 8)) = false
	}
	for _, p := range d.w1 {
		*(*uint8)(p) = *(*uint8)(unsafe.Add(p, 1))
		*(*bool)(unsafe.Add(p, 2)) = false
	}
	for _, p := range d.w2 {
		*(*uint16)(p) = *(*uint16)(unsafe.Add(p, 2))
		*(*bool)(unsafe.Add(p, 4)) = false
	}
	for _, w := range d.wide {
		p, n := w.reg, w.size
		copy(unsafe.Slice((*byte)(p), n), unsafe.Slice((*byte)(unsafe.Add(p, n)), n))
		*(*bool)(unsafe.Add(p, 2*n)) = false
	}
	d.reset()
}

func (d *dirtyLists) reset() {
	d.n = 0
	d.w8, d.w4, d.w2, d.w1, d.wide = d.w8[:0], d.w4[:0], d.w2[:0], d.w1[:0], d.wide[:0]
}

// dropRegs forgets the writes of a cycle that is not committed (reset).
func (b *Base) dropRegs() {
	d := &b.dirty
	for _, l := range [...]struct {
		regs []unsafe.Pointer
		size uintptr
	}{{d.w8, 8}, {d.w4, 4}, {d.w2, 2}, {d.w1, 1}} {
		for _, p := range l.regs {
			*(*bool)(unsafe.Add(p, 2*l.size)) = false
		}
	}
	for _, w := range d.wide {
		*(*bool)(unsafe.Add(w.reg, 2*w.size)) = false
	}
	d.reset()
}

// checkLayout makes sure a register of type T is laid out as the commit
// copies it: D right after Q, the dirty flag right after D, and a value
// that holds no pointers (it may be copied as bytes).
func checkLayout[T comparable](r *Reg[T]) {
	n := unsafe.Sizeof(r.q)
	t := reflect.TypeFor[T]()
	switch {
	case unsafe.Offsetof(r.d) != n || unsafe.Offsetof(r.dirty) != 2*n:
		panic(fmt.Sprintf("rtl: register type %v is not laid out as Q, D, dirty", t))
	case hasPointers(t):
		panic(fmt.Sprintf("rtl: register type %v holds pointers: a register holds bits", t))
	}
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}
