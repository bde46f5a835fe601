package incpage

import "math/bits"

// Span is a run of migrated units of one 2 MB page, First..Last inclusive.
type Span struct{ First, Last uint16 }

// Field layout of a packed span, the word a TLB entry holds per range:
//
//	bits  0-13  Last  (unit index, 14 bits: up to 16,384 units of 128 B)
//	bits 14-27  First
//	bit  28     valid
const (
	unitFieldBits = 14
	firstLSB      = unitFieldBits
	spanValidBit  = 2 * unitFieldBits
	// SpanBits is the stored width of one range: two unit indexes and a
	// valid bit.
	SpanBits = 2*unitFieldBits + 1
	unitMask = 1<<unitFieldBits - 1
)

// Pack lays a valid span out as {valid, First, Last}.
func (s Span) Pack() uint64 {
	return 1<<spanValidBit | uint64(s.First)<<firstLSB | uint64(s.Last)
}

// UnpackSpan is Pack's inverse; ok is the valid bit.
func UnpackSpan(p uint64) (s Span, ok bool) {
	return Span{First: uint16(p >> firstLSB & unitMask), Last: uint16(p & unitMask)}, p>>spanValidBit&1 != 0
}

// Contains reports whether unit u is in the span.
func (s Span) Contains(u uint16) bool { return s.First <= u && u <= s.Last }

// Len is the span's unit count.
func (s Span) Len() int { return int(s.Last) - int(s.First) + 1 }

// Record is a TLB entry's migrated-range record: at most K disjoint,
// non-adjacent spans in ascending order, and Exact, set when the spans are
// the page's whole migrated set (the page table's bitmap holds no unit
// outside them). The record is conservative by construction: it only
// ever names units the page table records as present, so a unit it lacks
// may still be present (Exact false) and the next level is asked.
type Record struct {
	N     int
	Spans [MaxRanges]Span
	Exact bool
}

// Contains reports whether unit u is recorded present.
func (r *Record) Contains(u uint16) bool {
	for i := 0; i < r.N; i++ {
		if r.Spans[i].Contains(u) {
			return true
		}
	}
	return false
}

// Insert adds span s (units that have just landed) to a record of at most
// k spans, merging it with the spans it overlaps or touches. When the
// result would hold k+1 spans, the smallest span other than the one
// holding s is dropped and the record is no longer exact: the spans it
// keeps are still present, so the record never claims a unit the page
// table lacks.
func (r *Record) Insert(s Span, k int) {
	var out [MaxRanges + 1]Span
	n, placed, keep := 0, false, 0
	for i := 0; i < r.N; i++ {
		t := r.Spans[i]
		switch {
		case int(t.Last)+1 < int(s.First): // wholly before s, not touching
			out[n] = t
			n++
		case int(s.Last)+1 < int(t.First): // wholly after s
			if !placed {
				out[n], keep, placed = s, n, true
				n++
			}
			out[n] = t
			n++
		default: // overlaps or touches: absorb into s
			s.First, s.Last = min(s.First, t.First), max(s.Last, t.Last)
		}
	}
	if !placed {
		out[n], keep = s, n
		n++
	}
	if n > k {
		drop := -1
		for i := 0; i < n; i++ {
			if i != keep && (drop < 0 || out[i].Len() < out[drop].Len()) {
				drop = i
			}
		}
		copy(out[drop:], out[drop+1:n])
		n--
		r.Exact = false
	}
	r.N = n
	copy(r.Spans[:], out[:n])
}

// Bitmap is a page table's exact migrated-unit record of one 2 MB page:
// bit u of word u/64 is unit u. It lives beside the PTE in GPU memory
// (UnitsPerPage/8 bytes per page).
type Bitmap []uint64

// Has reports whether unit u is present.
func (b Bitmap) Has(u int) bool { return b[u>>6]>>(u&63)&1 != 0 }

// Set marks units s.First..s.Last present.
func (b Bitmap) Set(s Span) {
	for u := int(s.First); u <= int(s.Last); {
		w, o := u>>6, u&63
		n := min(64-o, int(s.Last)-u+1)
		m := ^uint64(0)
		if n < 64 {
			m = (uint64(1)<<n - 1) << o
		}
		b[w] |= m
		u += n
	}
}

// runFrom returns the run of present units that starts at or after unit
// u, and whether there is one.
func (b Bitmap) runFrom(u int) (Span, bool) {
	units := len(b) * 64
	for u < units {
		w, o := u>>6, u&63
		if x := b[w] >> o; x != 0 {
			u += bits.TrailingZeros64(x)
			break
		}
		u = (w + 1) * 64
	}
	if u >= units {
		return Span{}, false
	}
	first := u
	for u < units {
		w, o := u>>6, u&63
		x := ^b[w] >> o
		if o > 0 {
			x &= 1<<(64-o) - 1
		}
		if x != 0 {
			u += bits.TrailingZeros64(x)
			break
		}
		u = (w + 1) * 64
	}
	return Span{First: uint16(first), Last: uint16(min(u, units) - 1)}, true
}

// RecordAround builds the TLB record a walk returns for an access to unit
// u: the run holding u (if u is present) and the largest other runs, at
// most k in all, in ascending order; Exact when every run fits.
func (b Bitmap) RecordAround(u uint16, k int) Record {
	var r Record
	r.Exact = true
	var held Span
	hasHeld := false
	// Best k-1 (or k) other runs by length; ties keep the lower address.
	var best [MaxRanges]Span
	nb := 0
	for s, ok := b.runFrom(0); ok; s, ok = b.runFrom(int(s.Last) + 1) {
		if s.Contains(u) {
			held, hasHeld = s, true
			continue
		}
		room := k
		if b.Has(int(u)) {
			room = k - 1
		}
		if nb < room {
			best[nb] = s
			nb++
			continue
		}
		r.Exact = false
		small := -1
		for i := 0; i < nb; i++ {
			if best[i].Len() < s.Len() && (small < 0 || best[i].Len() < best[small].Len()) {
				small = i
			}
		}
		if small >= 0 {
			copy(best[small:], best[small+1:nb])
			best[nb-1] = s
		}
	}
	for i := 0; i < nb; i++ {
		r.Spans[r.N] = best[i]
		r.N++
	}
	if hasHeld {
		r.Spans[r.N] = held
		r.N++
	}
	sortSpans(r.Spans[:r.N])
	return r
}

func sortSpans(s []Span) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].First < s[j-1].First; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// SubsetOf reports whether every unit r records is present in b.
func (r *Record) SubsetOf(b Bitmap) bool {
	for i := 0; i < r.N; i++ {
		for u := int(r.Spans[i].First); u <= int(r.Spans[i].Last); u++ {
			if !b.Has(u) {
				return false
			}
		}
	}
	return true
}
