package cosim

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// ReadInputs reads the inputs of every cycle of recorded vectors back, in
// the order of v.Layout.Inputs: cycle c's inputs are
// in[c*len(Inputs) : (c+1)*len(Inputs)].
func ReadInputs(v Vectors) ([]uint64, error) {
	_, fs, _ := v.Layout.fields()
	words := make([]uint64, (v.Layout.RowWidth()+63)/64)
	in := make([]uint64, 0, v.Cycles*uint64(len(fs)))
	for k := 0; uint64(len(in)) < v.Cycles*uint64(len(fs)); k++ {
		f, err := os.Open(v.ChunkFile(k))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() && uint64(len(in)) < v.Cycles*uint64(len(fs)) {
			if err := parseRow(sc.Bytes(), words); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s row %d: %w", v.ChunkFile(k), len(in)/len(fs), err)
			}
			for _, fd := range fs {
				in = append(in, getBits(words, fd.Lo, fd.Width))
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// parseRow turns one hex line into little-endian 64-bit words.
func parseRow(line []byte, words []uint64) error {
	clear(words)
	for i, c := range line {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return fmt.Errorf("not lower-case hex: %q", line)
		}
		bit := (len(line) - 1 - i) * 4
		if bit/64 >= len(words) {
			return fmt.Errorf("row wider than the layout: %q", line)
		}
		words[bit/64] |= d << uint(bit%64)
	}
	return nil
}

// getBits is the inverse of packer.put.
func getBits(words []uint64, lo, width int) uint64 {
	w, off := lo/64, lo%64
	v := words[w] >> uint(off)
	if off+width > 64 {
		v |= words[w+1] << uint(64-off)
	}
	return v & Mask(width)
}

// WriteInputs writes inputs (as ReadInputs returns them) to a file of
// little-endian 64-bit words, the format the speed harness loads.
func WriteInputs(path string, in []uint64) error {
	b := make([]byte, 8*len(in))
	for i, x := range in {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return os.WriteFile(path, b, 0o644)
}

// FNV-1a 64-bit offset basis and prime (Fowler, Noll, Vo; IETF draft
// draft-eastlake-fnv), folded over whole 64-bit values rather than bytes.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// Checksum folds the outputs of a run into one number the same way the
// speed harness does: every output of every cycle after the first (cycle 0
// is the reset), in layout order, a payload output counted as 0 while its
// ValidBy output is 0, as the testbench ignores it then.
type Checksum struct {
	sum     uint64
	validBy []int // index of each output's ValidBy output, or -1
}

// NewChecksum starts a checksum over outputs laid out as l.
func NewChecksum(l Layout) *Checksum {
	c := &Checksum{sum: fnvOffset, validBy: make([]int, len(l.Outputs))}
	for i, p := range l.Outputs {
		c.validBy[i] = -1
		for j, q := range l.Outputs {
			if p.ValidBy != "" && q.Name == p.ValidBy {
				c.validBy[i] = j
			}
		}
	}
	return c
}

// Add folds in one cycle's outputs.
func (c *Checksum) Add(out []uint64) {
	for i, v := range out {
		if j := c.validBy[i]; j >= 0 && out[j] == 0 {
			v = 0
		}
		c.sum = (c.sum ^ v) * fnvPrime
	}
}

// Sum is the checksum so far.
func (c *Checksum) Sum() uint64 { return c.sum }

// Harness generates the C++ main of a Verilator speed build of module top
// with the given layout. The program takes
//
//	+inputs=FILE  the inputs of every cycle, as WriteInputs writes them
//	+cycles=N     the number of cycles in FILE
//
// loads FILE into memory, then for each cycle applies the inputs with clk
// low, calls eval(), folds the outputs into the checksum (from cycle 1 on,
// as Checksum), raises clk and calls eval() again. Only that loop is timed.
// It prints "cycles N seconds S checksum X" (X in hex).
func Harness(top string, l Layout) ([]byte, error) {
	type port struct {
		Name  string
		Valid string
	}
	var ins, outs []port
	for _, p := range l.Inputs {
		ins = append(ins, port{Name: p.Name})
	}
	for _, p := range l.Outputs {
		outs = append(outs, port{Name: p.Name, Valid: p.ValidBy})
	}
	var buf bytes.Buffer
	err := harnessTemplate.Execute(&buf, map[string]any{
		"Top": top, "Inputs": ins, "Outputs": outs, "Offset": fmt.Sprintf("0x%xULL", uint64(fnvOffset)), "Prime": fmt.Sprintf("0x%xULL", uint64(fnvPrime)),
	})
	return buf.Bytes(), err
}

// HarnessName is the file name of the speed harness for top.
func HarnessName(top string) string { return "speed_" + top + ".cpp" }

// SpeedResult is one run of a speed harness.
type SpeedResult struct {
	Cycles   uint64
	Seconds  float64
	Checksum uint64
}

// RunSpeed writes inputs to a file in dir, runs the built harness over
// them and parses its report.
func (e *Executable) RunSpeed(dir string, in []uint64, cycles uint64) (SpeedResult, error) {
	path := filepath.Join(dir, "inputs.bin")
	if err := WriteInputs(path, in); err != nil {
		return SpeedResult{}, err
	}
	out, err := e.Run("inputs="+path, fmt.Sprintf("cycles=%d", cycles))
	if err != nil {
		return SpeedResult{}, fmt.Errorf("%s: %v\n%s", e.Top, err, out)
	}
	var r SpeedResult
	line := strings.TrimSpace(out)
	if _, err := fmt.Sscanf(line, "cycles %d seconds %g checksum %x", &r.Cycles, &r.Seconds, &r.Checksum); err != nil {
		return r, fmt.Errorf("%s: unexpected harness output %q: %v", e.Top, line, err)
	}
	return r, nil
}

var harnessTemplate = template.Must(template.New("harness").Parse(`// Speed harness for {{.Top}}, generated by tb/cosim; do not edit.
// Replays recorded inputs through the Verilated model with a raw eval() loop
// and folds the outputs into the checksum of cosim.Checksum.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "V{{.Top}}.h"
#include "verilated.h"

static const size_t kInputs = {{len .Inputs}};

static inline void fold(uint64_t& sum, uint64_t v) { sum = (sum ^ v) * {{.Prime}}; }

int main(int argc, char** argv) {
  const char* path = nullptr;
  unsigned long long cycles = 0;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "+inputs=", 8)) path = argv[i] + 8;
    if (!strncmp(argv[i], "+cycles=", 8)) cycles = strtoull(argv[i] + 8, nullptr, 10);
  }
  if (path == nullptr || cycles == 0) {
    fprintf(stderr, "usage: %s +inputs=FILE +cycles=N\n", argv[0]);
    return 2;
  }
  std::vector<uint64_t> in(cycles * kInputs);
  FILE* f = fopen(path, "rb");
  if (f == nullptr || fread(in.data(), sizeof(uint64_t), in.size(), f) != in.size()) {
    fprintf(stderr, "cannot read %llu cycles of inputs from %s\n", cycles, path);
    return 1;
  }
  fclose(f);

  std::unique_ptr<VerilatedContext> ctx(new VerilatedContext);
  std::unique_ptr<V{{.Top}}> top(new V{{.Top}}(ctx.get()));
  uint64_t sum = {{.Offset}};
  top->clk = 0;
  top->eval();
  const auto start = std::chrono::steady_clock::now();
  for (unsigned long long c = 0; c < cycles; c++) {
    const uint64_t* row = &in[c * kInputs];
{{- range $i, $p := .Inputs}}
    top->{{$p.Name}} = row[{{$i}}];
{{- end}}
    top->clk = 0;
    top->eval();
    if (c > 0) {
{{- range .Outputs}}
      fold(sum, {{if .Valid}}top->{{.Valid}} ? (uint64_t)top->{{.Name}} : 0{{else}}(uint64_t)top->{{.Name}}{{end}});
{{- end}}
    }
    top->clk = 1;
    top->eval();
  }
  const auto stop = std::chrono::steady_clock::now();
  top->final();
  printf("cycles %llu seconds %.9f checksum %016llx\n", cycles,
         std::chrono::duration<double>(stop - start).count(), (unsigned long long)sum);
  return 0;
}
`))
