// Package cosim checks emitted Verilog against the Go model of the same
// block, cycle for cycle.
//
// A DUT adapter presents a Go block through the ports of its Verilog
// module. Record drives it with seeded random legal stimulus for N cycles
// and writes every cycle's inputs and outputs as golden vectors (hex files,
// one packed row per cycle). Testbench generates a self-checking Verilog
// testbench that $readmemh's the vectors, applies the inputs, compares every
// output every cycle and, on a mismatch, prints
//
//	cycle N port P expected X got Y
//
// and fails. Icarus and Verilator run it; a Verilator binary is built once
// per design and reused for every vector set. Run re-simulates a failing run
// with a VCD dump and keeps the file, naming its path in the error.
//
// A co-simulation test of a block needs three things: the emitted module
// (verilog/gen), a DUT adapter around the Go block, and a Stimulus. See
// docs/verilog.md for a worked example with the DCQ.
package cosim

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// Dir is a port direction.
type Dir int

const (
	In Dir = iota
	Out
)

// Port is one port of the Verilog module under test, other than clk.
type Port struct {
	Name  string
	Width int
	Dir   Dir
	// ValidBy names a one-bit output that qualifies this output: the value
	// is compared only in cycles where that output is expected to be 1, as
	// the payload of a valid/ready channel is meaningless while valid is low.
	ValidBy string
}

// ResetPort is the synchronous active-high reset every module has
// (SPEC 5.3). It is an input column of the vectors like any other.
const ResetPort = "rst"

// DUT is a Go model seen through the ports of its Verilog module.
type DUT interface {
	// Ports lists the module's ports except clk, in any order; the inputs
	// must include ResetPort. Widths are 1..64 bits.
	Ports() []Port
	// Outputs writes this cycle's value of every output port, in the order
	// the outputs appear in Ports. Outputs are Moore: they depend on state
	// only, so they are read before the inputs are applied.
	Outputs(out []uint64)
	// Clock applies this cycle's inputs (in the order the inputs appear in
	// Ports) and advances one clock edge. When the ResetPort input is 1 the
	// edge is a synchronous reset. An error (a modeling error the kernel
	// caught) stops the recording.
	Clock(in []uint64) error
}

// Layout is the packing of one vector row: a check flag, the inputs, then
// the outputs, most significant first.
type Layout struct {
	Inputs, Outputs []Port
}

// NewLayout splits ports by direction and validates them.
func NewLayout(ports []Port) (Layout, error) {
	var l Layout
	seen := map[string]Port{}
	for _, p := range ports {
		if p.Width < 1 || p.Width > 64 {
			return l, fmt.Errorf("port %s: width %d outside 1..64", p.Name, p.Width)
		}
		if p.Name == "clk" || p.Name == "" {
			return l, fmt.Errorf("port %q: the clock is implicit and every port needs a name", p.Name)
		}
		if _, dup := seen[p.Name]; dup {
			return l, fmt.Errorf("port %s listed twice", p.Name)
		}
		seen[p.Name] = p
		if p.Dir == In {
			l.Inputs = append(l.Inputs, p)
		} else {
			l.Outputs = append(l.Outputs, p)
		}
	}
	if r, ok := seen[ResetPort]; !ok || r.Dir != In || r.Width != 1 {
		return l, fmt.Errorf("ports must include a one-bit input %s", ResetPort)
	}
	for _, p := range l.Outputs {
		if p.ValidBy == "" {
			continue
		}
		if v, ok := seen[p.ValidBy]; !ok || v.Dir != Out || v.Width != 1 {
			return l, fmt.Errorf("port %s: ValidBy %s is not a one-bit output", p.Name, p.ValidBy)
		}
	}
	return l, nil
}

// RowWidth is the number of bits in one packed row.
func (l Layout) RowWidth() int {
	w := 1
	for _, p := range l.Inputs {
		w += p.Width
	}
	for _, p := range l.Outputs {
		w += p.Width
	}
	return w
}

// field is a port's position in a row: bits lo..lo+width-1.
type field struct {
	Port
	Lo int
}

// fields returns the check bit position and each port's bit range.
func (l Layout) fields() (check int, in, out []field) {
	pos := l.RowWidth()
	check = pos - 1
	pos--
	for _, p := range l.Inputs {
		pos -= p.Width
		in = append(in, field{p, pos})
	}
	for _, p := range l.Outputs {
		pos -= p.Width
		out = append(out, field{p, pos})
	}
	return check, in, out
}

// packer turns rows into hex text without allocating per row.
type packer struct {
	layout Layout
	words  []uint64
	line   []byte
	check  int
	in     []field
	out    []field
}

func newPacker(l Layout) *packer {
	check, in, out := l.fields()
	n := l.RowWidth()
	return &packer{layout: l, words: make([]uint64, (n+63)/64), line: make([]byte, 0, (n+3)/4+1), check: check, in: in, out: out}
}

func (p *packer) put(lo, width int, v uint64) {
	w, off := lo/64, lo%64
	p.words[w] |= v << uint(off)
	if off+width > 64 {
		p.words[w+1] |= v >> uint(64-off)
	}
}

// row packs one cycle and returns the hex line (without newline).
func (p *packer) row(check bool, in, out []uint64) []byte {
	clear(p.words)
	if check {
		p.put(p.check, 1, 1)
	}
	for i, f := range p.in {
		p.put(f.Lo, f.Width, in[i])
	}
	for i, f := range p.out {
		p.put(f.Lo, f.Width, out[i])
	}
	digits := (p.layout.RowWidth() + 3) / 4
	p.line = p.line[:0]
	for d := digits - 1; d >= 0; d-- {
		bit := d * 4
		nib := p.words[bit/64] >> uint(bit%64) & 0xf
		p.line = append(p.line, "0123456789abcdef"[nib])
	}
	return p.line
}

// Vectors names a recorded run: files Prefix.NNNNNN.hex of ChunkRows rows
// each (the last may be shorter), Cycles rows in all.
type Vectors struct {
	Prefix    string
	Cycles    uint64
	ChunkRows int
	Layout    Layout
}

// ChunkFile is the path of chunk k.
func (v Vectors) ChunkFile(k int) string { return fmt.Sprintf("%s.%06d.hex", v.Prefix, k) }

// DefaultChunkRows is the testbench's vector memory depth: large enough
// that $readmemh is called rarely, small enough that Icarus's four-state
// memory stays a few tens of megabytes.
const DefaultChunkRows = 1 << 16

// Stimulus chooses the inputs of one cycle, in the order the inputs appear
// in the DUT's Ports, from the outputs the DUT shows in that cycle. A
// stimulus keeps whatever state the handshake rules need (a producer holds
// valid and data until ready) and draws from its own seeded generator.
type Stimulus func(cycle uint64, out, in []uint64)

// Record runs dut for cycles cycles under stim and writes the golden
// vectors to files under dir named after name. Cycle 0 is forced to a
// reset, and outputs are checked from the cycle after the first reset edge;
// stim may assert the reset again at any time.
func Record(dut DUT, stim Stimulus, cycles uint64, dir, name string) (Vectors, error) {
	l, err := NewLayout(dut.Ports())
	if err != nil {
		return Vectors{}, err
	}
	if cycles == 0 {
		return Vectors{}, fmt.Errorf("cycles must be at least 1")
	}
	v := Vectors{Prefix: filepath.Join(dir, name), Cycles: cycles, ChunkRows: DefaultChunkRows, Layout: l}
	rstIdx := 0
	for i, p := range l.Inputs {
		if p.Name == ResetPort {
			rstIdx = i
		}
	}
	pk := newPacker(l)
	in := make([]uint64, len(l.Inputs))
	out := make([]uint64, len(l.Outputs))
	var f *os.File
	var w *bufio.Writer
	closeChunk := func() error {
		if f == nil {
			return nil
		}
		if err := w.Flush(); err != nil {
			return err
		}
		return f.Close()
	}
	reset := false
	for c := uint64(0); c < cycles; c++ {
		if c%uint64(v.ChunkRows) == 0 {
			if err := closeChunk(); err != nil {
				return v, err
			}
			if f, err = os.Create(v.ChunkFile(int(c / uint64(v.ChunkRows)))); err != nil {
				return v, err
			}
			w = bufio.NewWriterSize(f, 1<<16)
		}
		dut.Outputs(out)
		clear(in)
		stim(c, out, in)
		if c == 0 {
			in[rstIdx] = 1
		}
		for i, p := range l.Inputs {
			if in[i]>>uint(p.Width) != 0 && p.Width < 64 {
				f.Close()
				return v, fmt.Errorf("cycle %d: stimulus value %#x does not fit input %s (%d bits)", c, in[i], p.Name, p.Width)
			}
		}
		w.Write(pk.row(reset, in, out))
		w.WriteByte('\n')
		if err := dut.Clock(in); err != nil {
			f.Close()
			return v, fmt.Errorf("cycle %d: %w", c, err)
		}
		reset = reset || in[rstIdx] == 1
	}
	return v, closeChunk()
}

// Mask is the mask of the low width bits (1..64), for drawing a random
// value of a port's width: rng.Uint64() & Mask(width).
func Mask(width int) uint64 { return ^uint64(0) >> uint(64-width) }
