package workload

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// TracePrefix marks a workload name that is a trace file rather than a
// built-in generator: "trace:FILE" (uvmsim run --trace-file FILE, and
// --workloads trace:FILE in sweeps).
const TracePrefix = "trace:"

// TraceFile returns the file of a "trace:FILE" workload name, and whether
// name is one.
func TraceFile(name string) (string, bool) {
	return strings.CutPrefix(name, TracePrefix)
}

// CheckName reports whether name is a built-in workload or a trace file
// that can be opened, with an error naming the allowed values. It reads no
// more than the file's first bytes; FromTraceFile checks the records.
func CheckName(name string) error {
	if file, ok := TraceFile(name); ok {
		if file == "" {
			return fmt.Errorf("workload %q: expected trace:FILE with a file name", name)
		}
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("workload trace: %w", err)
		}
		return f.Close()
	}
	if _, ok := generatorOf(name); !ok {
		return fmt.Errorf("workload %q unknown; allowed: %s, or trace:FILE", name, strings.Join(AllNames(), ", "))
	}
	return nil
}

// gzipMagic are the first two bytes of every gzip stream (RFC 1952 2.3.1).
var gzipMagic = []byte{0x1f, 0x8b}

// FromTraceFile reads a trace file (docs/trace-format.md), plain text or
// gzip-compressed (recognised by its first two bytes). Errors name the file.
func FromTraceFile(file string) (Workload, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("workload trace: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(len(gzipMagic)); string(head) == string(gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", file, err)
		}
		defer zr.Close()
		r = zr
	}
	wl, err := FromTrace(r)
	if err != nil {
		var rerr *ReadError
		if errors.As(err, &rerr) {
			rerr.File = file
			return nil, rerr
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return wl, nil
}

// ReadError is a failure to read an input file (an I/O error or a corrupt
// compressed stream), as opposed to a malformed record in it.
type ReadError struct {
	File string
	Err  error
}

func (e *ReadError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("read: %v", e.Err)
	}
	return fmt.Sprintf("%s: read: %v", e.File, e.Err)
}
func (e *ReadError) Unwrap() error { return e.Err }
