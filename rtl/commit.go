package rtl

import (
	"fmt"
	"reflect"
	"unsafe"
)

// The clock edge. A register's first write in a cycle appends its
// address and the written value (D) to one of its block's dirty lists,
// chosen by the size of its value; at the edge each evaluated block walks
// its lists once and stores every value in its register's Q. A Reg[T] is
// laid out as Q and then the dirty flag (checkLayout proves it for every
// register type), so the store needs only the register's address and the
// size of T: a value that is one aligned word of 1, 2, 4 or 8 bytes (an
// unsigned integer or bool, or a struct aligned like one) is stored by a
// loop for its size, any other copied as bytes from the block's byte
// list. There is no call per register type or per register, and a
// register keeps no room for a next value.

// dirtyLists are a block's registers written in this cycle, with the
// values they take, by value size.
type dirtyLists struct {
	n     int // registers on the lists
	w8    []write8
	w4    []write4
	w2    []write2
	w1    []write1
	wide  []wideWrite // values that are not one aligned word
	bytes []byte      // the values of wide, one after the other
}

// write8 to write1 are a written register's address and next value.
type (
	write8 struct {
		reg unsafe.Pointer
		v   uint64
	}
	write4 struct {
		reg unsafe.Pointer
		v   uint32
	}
	write2 struct {
		reg unsafe.Pointer
		v   uint16
	}
	write1 struct {
		reg unsafe.Pointer
		v   uint8
	}
)

// wideWrite is a written register whose value is not one aligned word:
// its address, the size of its value, and where the value sits in bytes.
type wideWrite struct {
	reg  unsafe.Pointer
	size uintptr
	at   int
}

// rewrite replaces the recorded next value of register reg, already on a
// list, by the size bytes at v: a second write in a cycle, which checked
// mode reports, or a Poke, so that the last value written wins as in a
// register that keeps D.
func (d *dirtyLists) rewrite(reg, v unsafe.Pointer, size, align uintptr) {
	switch {
	case size == 8 && align == 8:
		for i := range d.w8 {
			if d.w8[i].reg == reg {
				d.w8[i].v = *(*uint64)(v)
			}
		}
	case size == 4 && align == 4:
		for i := range d.w4 {
			if d.w4[i].reg == reg {
				d.w4[i].v = *(*uint32)(v)
			}
		}
	case size == 1:
		for i := range d.w1 {
			if d.w1[i].reg == reg {
				d.w1[i].v = *(*uint8)(v)
			}
		}
	case size == 2 && align == 2:
		for i := range d.w2 {
			if d.w2[i].reg == reg {
				d.w2[i].v = *(*uint16)(v)
			}
		}
	default:
		for _, w := range d.wide {
			if w.reg == reg {
				copy(d.bytes[w.at:w.at+int(size)], unsafe.Slice((*byte)(v), size))
			}
		}
	}
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
	for _, w := range d.w8 {
		*(*uint64)(w.reg) = w.v
		*(*bool)(unsafe.Add(w.reg, 8)) = false
	}
	for _, w := range d.w4 {
		*(*uint32)(w.reg) = w.v
		*(*bool)(unsafe.Add(w.reg, 4)) = false
	}
	for _, w := range d.w1 {
		*(*uint8)(w.reg) = w.v
		*(*bool)(unsafe.Add(w.reg, 1)) = false
	}
	for _, w := range d.w2 {
		*(*uint16)(w.reg) = w.v
		*(*bool)(unsafe.Add(w.reg, 2)) = false
	}
	for _, w := range d.wide {
		copy(unsafe.Slice((*byte)(w.reg), w.size), d.bytes[w.at:])
		*(*bool)(unsafe.Add(w.reg, w.size)) = false
	}
	d.reset()
}

func (d *dirtyLists) reset() {
	d.n = 0
	d.w8, d.w4, d.w2, d.w1 = d.w8[:0], d.w4[:0], d.w2[:0], d.w1[:0]
	d.wide, d.bytes = d.wide[:0], d.bytes[:0]
}

// dropRegs forgets the writes of a cycle that is not committed (reset).
func (b *Base) dropRegs() {
	d := &b.dirty
	for _, w := range d.w8 {
		*(*bool)(unsafe.Add(w.reg, 8)) = false
	}
	for _, w := range d.w4 {
		*(*bool)(unsafe.Add(w.reg, 4)) = false
	}
	for _, w := range d.w2 {
		*(*bool)(unsafe.Add(w.reg, 2)) = false
	}
	for _, w := range d.w1 {
		*(*bool)(unsafe.Add(w.reg, 1)) = false
	}
	for _, w := range d.wide {
		*(*bool)(unsafe.Add(w.reg, w.size)) = false
	}
	d.reset()
}

// checkLayout makes sure a register of type T is laid out as the commit
// stores it: the dirty flag right after Q, and a value that holds no
// pointers (it may be copied as bytes).
func checkLayout[T comparable](r *Reg[T]) {
	t := reflect.TypeFor[T]()
	switch {
	case unsafe.Offsetof(r.dirty) != unsafe.Sizeof(r.q):
		panic(fmt.Sprintf("rtl: register type %v is not laid out as Q, dirty", t))
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
