package rtl

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
)

// vcdWriter dumps selected registers and wires in Value Change Dump format.
// One VCD time unit is one core cycle; skipped idle cycles simply have no
// value changes.
type vcdWriter struct {
	w       *bufio.Writer
	closer  io.Closer
	sigs    []traced
	ids     []string
	last    []uint64
	started bool
	buf     []byte
}

// TraceVCD starts dumping every register and wire whose hierarchical name
// matches one of the glob patterns (path.Match syntax, where * also crosses
// dots) to w, from the current cycle on. If w is an io.Closer, CloseTrace
// closes it.
func (s *Sim) TraceVCD(w io.Writer, patterns ...string) error {
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("trace pattern %q: %w", p, err)
		}
	}
	v := &vcdWriter{w: bufio.NewWriter(w)}
	if c, ok := w.(io.Closer); ok {
		v.closer = c
	}
	for _, sig := range s.signals {
		for _, p := range patterns {
			if ok, _ := path.Match(p, sig.Name()); ok {
				v.sigs = append(v.sigs, sig)
				break
			}
		}
	}
	if len(v.sigs) == 0 {
		return fmt.Errorf("trace patterns %q match no register or wire", patterns)
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

// CloseTrace writes the final timestamp, flushes and closes the VCD.
func (s *Sim) CloseTrace() error {
	v := s.vcd
	if v == nil {
		return nil
	}
	s.vcd = nil
	fmt.Fprintf(v.w, "#%d\n", s.cycle)
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

func (v *vcdWriter) header() {
	fmt.Fprintln(v.w, "$comment uvmmu rtl kernel; one time unit is one core cycle $end")
	fmt.Fprintln(v.w, "$timescale 1ns $end")
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
			fmt.Fprintf(v.w, "#%d\n", t)
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
