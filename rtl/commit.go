package rtl

import (
	"fmt"
	"reflect"
	"unsafe"
)

// The clock edge. A register's first write in a cycle appends a reference
// to it to its block's dirty list; at the edge each evaluated block walks
// its list once and copies every written register's D into Q, whatever
// its type: a Reg[T] is laid out as Q, D and the dirty flag one after the
// other (checkLayout proves it for every register type), so the copy
// needs only the register's address and the size of T, and no call per
// register type or per register.

// dirtyReg is a register written in this cycle: its address, the size of
// its value, and whether the value is one aligned word of that size (an
// unsigned integer or bool, or a struct aligned like one), copied with
// one load and store rather than as bytes.
type dirtyReg struct {
	reg  unsafe.Pointer
	size uint32
	word bool
}

// mark records a register's first write of the cycle, given its value's
// size and alignment. A write outside Eval (a modeling error that checked
// mode reports) still commits at the next clock edge, as every write
// does, though its owner may sleep.
func (b *Base) mark(reg unsafe.Pointer, size, align uintptr) {
	if len(b.dirty) == 0 && len(b.pending) == 0 && b.sim.phase != phaseEval {
		b.sim.stray = append(b.sim.stray, b)
	}
	b.dirty = append(b.dirty, dirtyReg{reg, uint32(size), size == align})
}

// commitRegs makes the cycle's register writes take effect.
func (b *Base) commitRegs() {
	for _, w := range b.dirty {
		p, n := w.reg, uintptr(w.size)
		switch {
		case w.word && n == 8:
			*(*uint64)(p) = *(*uint64)(unsafe.Add(p, 8))
		case w.word && n == 4:
			*(*uint32)(p) = *(*uint32)(unsafe.Add(p, 4))
		case w.word && n == 1:
			*(*uint8)(p) = *(*uint8)(unsafe.Add(p, 1))
		case w.word && n == 2:
			*(*uint16)(p) = *(*uint16)(unsafe.Add(p, 2))
		default:
			copy(unsafe.Slice((*byte)(p), n), unsafe.Slice((*byte)(unsafe.Add(p, n)), n))
		}
		*(*bool)(unsafe.Add(p, 2*n)) = false
	}
}

// dropRegs forgets the writes of a cycle that is not committed (reset).
func (b *Base) dropRegs() {
	for _, w := range b.dirty {
		*(*bool)(unsafe.Add(w.reg, 2*w.size)) = false
	}
	b.dirty = b.dirty[:0]
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
