package rtl

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/bits"
	"path"
	"slices"
	"strconv"
	"strings"
)

// vcdWriter dumps selected registers and wires in Value Change Dump format.
// With a clock frequency, time is in picoseconds: cycle n is at
// round(n * 10^6 / MHz) ps, each stamp rounded on its own so that no error
// accumulates (at 1481 MHz cycle 1 is at 675 ps, cycle 3 at 2026 ps).
// Without one, one time unit is one cycle, declared as 1 ns (a nominal
// 1 GHz clock). Skipped idle cycles simply have no value changes.
type vcdWriter struct {
	w       *bufio.Writer
	mhz     uint64 // clock in MHz, or 0 for one time unit per cycle
	closer  io.Closer
	sigs    []traced
	ids     []string
	last    []uint64
	started bool
	buf     []byte
}

// TraceVCD starts dumping every register and wire whose hierarchical name
// matches one of the glob patterns (path.Match syntax, where * also crosses
// dots) to w, from the current cycle on, one time unit per cycle. If w is
// an io.Closer, CloseTrace closes it.
func (s *Sim) TraceVCD(w io.Writer, patterns ...string) error {
	return s.TraceVCDClock(w, 0, patterns...)
}

// TraceVCDClock is TraceVCD with time in picoseconds of a clockMHz clock
// (0: one time unit per cycle).
func (s *Sim) TraceVCDClock(w io.Writer, clockMHz int, patterns ...string) error {
	sigs, err := s.match(patterns)
	if err != nil {
		return err
	}
	v := &vcdWriter{w: bufio.NewWriter(w), sigs: sigs, mhz: uint64(max(clockMHz, 0))}
	if c, ok := w.(io.Closer); ok {
		v.closer = c
	}
	// Sorting by name components keeps every scope's signals contiguous.
	slices.SortStableFunc(v.sigs, func(a, b traced) int {
		return slices.Compare(strings.Split(a.Name(), "."), strings.Split(b.Name(), "."))
	})
	v.ids = make([]string, len(v.sigs))
	v.last = make([]uint64, len(v.sigs))
	for i := range v.sigs {
		v.ids[i] = vcdID(i)
	}
	v.header()
	s.vcd = v
	return v.w.Flush()
}

// SignalNames lists the hierarchical name of every register and wire, the
// names TraceVCD patterns match, sorted.
func (s *Sim) SignalNames() []string {
	var names []string
	s.eachSignal(func(sig traced) { names = append(names, sig.Name()) })
	slices.Sort(names)
	return names
}

// MatchSignals checks the patterns as TraceVCD does and returns how many
// signals they select.
func (s *Sim) MatchSignals(patterns ...string) (int, error) {
	sigs, err := s.match(patterns)
	return len(sigs), err
}

func (s *Sim) match(patterns []string) ([]traced, error) {
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("trace pattern %q: %w", p, err)
		}
	}
	var sigs []traced
	s.eachSignal(func(sig traced) {
		for _, p := range patterns {
			if ok, _ := path.Match(p, sig.Name()); ok {
				sigs = append(sigs, sig)
				break
			}
		}
	})
	if len(sigs) == 0 {
		return nil, fmt.Errorf("trace patterns %q match no register or wire", patterns)
	}
	return sigs, nil
}

// CloseTrace writes the final timestamp, flushes and closes the VCD.
func (s *Sim) CloseTrace() error {
	v := s.vcd
	if v == nil {
		return nil
	}
	s.vcd = nil
	fmt.Fprintf(v.w, "#%d\n", v.time(s.cycle))
	err := v.w.Flush()
	if v.closer != nil {
		if cerr := v.closer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// vcdID is the short printable identifier of signal i.
func vcdID(i int) string {
	const first, span = '!', '~' - '!' + 1
	var b []byte
	for {
		b = append(b, byte(first+i%span))
		i /= span
		if i == 0 {
			return string(b)
		}
		i--
	}
}

// time is the VCD time of cycle t.
func (v *vcdWriter) time(t uint64) uint64 {
	if v.mhz == 0 {
		return t
	}
	// round(t * 10^6 / mhz) without overflow for any cycle count.
	hi, lo := bits.Mul64(t, 1_000_000)
	lo, carry := bits.Add64(lo, v.mhz/2, 0)
	if hi+carry >= v.mhz {
		return math.MaxUint64 // beyond 2^64 ps (213 days)
	}
	q, _ := bits.Div64(hi+carry, lo, v.mhz)
	return q
}

func (v *vcdWriter) header() {
	if v.mhz == 0 {
		fmt.Fprintln(v.w, "$comment uvmmu rtl kernel; one time unit is one clock cycle (a nominal 1 GHz clock) $end")
		fmt.Fprintln(v.w, "$timescale 1ns $end")
	} else {
		fmt.Fprintf(v.w, "$comment uvmmu rtl kernel; %d MHz core clock: cycle n is at round(n * 1000000 / %d) ps $end\n", v.mhz, v.mhz)
		fmt.Fprintln(v.w, "$timescale 1ps $end")
	}
	var open []string
	for i, sig := range v.sigs {
		parts := strings.Split(sig.Name(), ".")
		scope, leaf := parts[:len(parts)-1], parts[len(parts)-1]
		common := 0
		for common < len(open) && common < len(scope) && open[common] == scope[common] {
			common++
		}
		for range len(open) - common {
			fmt.Fprintln(v.w, "$upscope $end")
		}
		for _, name := range scope[common:] {
			fmt.Fprintf(v.w, "$scope module %s $end\n", name)
		}
		open = scope
		kind := "wire"
		if _, ok := sig.(clocked); ok {
			kind = "reg"
		}
		fmt.Fprintf(v.w, "$var %s %d %s %s $end\n", kind, sig.Width(), v.ids[i], leaf)
	}
	for range open {
		fmt.Fprintln(v.w, "$upscope $end")
	}
	fmt.Fprintln(v.w, "$enddefinitions $end")
}

// dump writes the values of cycle t that differ from the last dump.
func (v *vcdWriter) dump(t uint64) {
	stamped := false
	for i, sig := range v.sigs {
		val := sig.bits()
		if v.started && val == v.last[i] {
			continue
		}
		if !stamped {
			fmt.Fprintf(v.w, "#%d\n", v.time(t))
			if !v.started {
				fmt.Fprintln(v.w, "$dumpvars")
			}
			stamped = true
		}
		v.last[i] = val
		v.buf = v.buf[:0]
		if sig.Width() == 1 {
			v.buf = strconv.AppendUint(v.buf, val, 2)
		} else {
			v.buf = append(v.buf, 'b')
			v.buf = strconv.AppendUint(v.buf, val, 2)
			v.buf = append(v.buf, ' ')
		}
		v.buf = append(v.buf, v.ids[i]...)
		v.buf = append(v.buf, '\n')
		v.w.Write(v.buf)
	}
	if !v.started {
		fmt.Fprintln(v.w, "$end")
		v.started = true
	}
}
