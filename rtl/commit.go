package rtl

import (
	"fmt"
	"reflect"
	"unsafe"
)

// The clock edge. A register's first write in a cycle appends its
// address and what the write stores at the edge to one of its block's
// dirty lists, chosen by the size of its value; at the edge each
// evaluated block walks its lists once. A Reg[T] is laid out as Q, the
// dirty flag, the checked flag and then the fields that never change
// after it is made (checkLayout proves it for every register type), so:
//   - a value of up to 4 bytes (an unsigned integer or bool, or a struct
//     as small) lies, with the flags, in the register's first 64-bit word,
//     which holds no pointer: the write records that whole word as it is
//     to be after the edge (Q the new value, dirty clear), and the edge
//     stores it with one store;
//   - a value that is whole aligned 64-bit words (a uint64, or a struct
//     of such words) is stored word by word, each word an entry of its
//     own, and the dirty flag after the last word cleared: the words but
//     the last go on the list of plain word stores, the last on the list
//     that also clears the flag, so no copy of bytes is needed;
//   - any other value is copied as bytes from the block's byte list.
// There is no call per register type or per register, and a register
// keeps no room for a next value.

// dirtyLists are a block's registers written in this cycle, with the
// values they take, by value size.
type dirtyLists struct {
	n     int         // registers on the lists
	head  []write8    // words stored as they are: the first word of a value of up to 4 bytes, or any but the last word of a wider one
	w8    []write8    // the last word of a value of whole aligned words, followed by the dirty flag
	wide  []wideWrite // values that are neither
	bytes []byte      // the values of wide, one after the other
}

// write8 is a written register's address and the 64-bit word to store
// there at the edge.
type write8 struct {
	reg unsafe.Pointer
	v   uint64
}

// wideWrite is a written register whose value is not one aligned word:
// its address, the size of its value, and where the value sits in bytes.
type wideWrite struct {
	reg  unsafe.Pointer
	size uintptr
	at   int
}

// isHead reports whether a value of the given size lies, with the
// register's flags, in the register's first word.
func isHead(size uintptr) bool { return size <= 4 }

// isWords reports whether a value of the given size and alignment is
// whole aligned 64-bit words.
func isWords(size, align uintptr) bool { return size%8 == 0 && align == 8 }

// headWord is the first word of register reg with its Q replaced by the
// size bytes at v and its dirty flag (the byte after Q) clear.
func headWord(reg, v unsafe.Pointer, size uintptr) uint64 {
	var q uint64
	switch size {
	case 1:
		q = uint64(*(*uint8)(v))
	case 2:
		q = uint64(*(*uint16)(v))
	case 4:
		q = uint64(*(*uint32)(v))
	default: // 3
		q = uint64(*(*uint16)(v)) | uint64(*(*uint8)(unsafe.Add(v, 2)))<<16
	}
	keep := ^uint64(0) << (8 * (size + 1))
	return *(*uint64)(reg)&keep | q
}

// rewrite replaces the recorded next value of register reg, already on a
// list, by the size bytes at v: a second write in a cycle, which checked
// mode reports, or a Poke, so that the last value written wins as in a
// register that keeps D.
func (d *dirtyLists) rewrite(reg, v unsafe.Pointer, size, align uintptr) {
	switch {
	case isHead(size):
		for i := range d.head {
			if d.head[i].reg == reg {
				d.head[i].v = headWord(reg, v, size)
			}
		}
	case isWords(size, align):
		last := size - 8
		for i := range d.head {
			if off := uintptr(d.head[i].reg) - uintptr(reg); off < last {
				d.head[i].v = *(*uint64)(unsafe.Add(v, off))
			}
		}
		for i := range d.w8 {
			if d.w8[i].reg == unsafe.Add(reg, last) {
				d.w8[i].v = *(*uint64)(unsafe.Add(v, last))
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
	for _, w := range d.head {
		*(*uint64)(w.reg) = w.v
	}
	for _, w := range d.w8 {
		*(*uint64)(w.reg) = w.v
		*(*bool)(unsafe.Add(w.reg, 8)) = false
	}
	d.n, d.head, d.w8 = 0, d.head[:0], d.w8[:0]
	if len(d.wide) != 0 {
		for _, w := range d.wide {
			copy(unsafe.Slice((*byte)(w.reg), w.size), d.bytes[w.at:])
			*(*bool)(unsafe.Add(w.reg, w.size)) = false
		}
		d.wide, d.bytes = d.wide[:0], d.bytes[:0]
	}
}

func (d *dirtyLists) reset() {
	d.n = 0
	d.head, d.w8, d.wide, d.bytes = d.head[:0], d.w8[:0], d.wide[:0], d.bytes[:0]
}

// dropRegs forgets the writes of a cycle that is not committed (reset);
// the registers' own reset, which comes first, clears their dirty flags.
func (b *Base) dropRegs() { b.dirty.reset() }

// checkLayout makes sure a register of type T is laid out as the commit
// stores it: the dirty flag right after Q and the checked flag after it
// (so that a write tests both at once), no pointer in the first word of a
// register whose value lies in it, and a value that holds no pointers (it
// may be copied as bytes).
func checkLayout[T comparable](r *Reg[T]) {
	t := reflect.TypeFor[T]()
	switch n := unsafe.Sizeof(r.q); {
	case unsafe.Offsetof(r.dirty) != n || unsafe.Offsetof(r.checked) != n+1:
		panic(fmt.Sprintf("rtl: register type %v is not laid out as Q, dirty, checked", t))
	case isHead(n) && unsafe.Offsetof(r.owner) < 8:
		panic(fmt.Sprintf("rtl: register type %v has a pointer in its first word", t))
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
