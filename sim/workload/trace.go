package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// The trace format is specified in docs/trace-format.md.

const (
	traceMagic      = "uvmtrace"
	traceVersion    = "1"
	traceMaxLine    = 1 << 16
	traceMaxBytes   = 1 << 48
	traceMaxBlocks  = 1<<31 - 1
	traceMaxThreads = 1024 // CUDA's threads-per-block limit
)

var traceMnemonic = map[OpKind]string{OpLoad: "ld", OpStore: "st", OpAtomic: "at"}

// traceOp is one recorded instruction; its lane addresses are
// addrs[addr : addr+lanes] of its kernel.
type traceOp struct {
	kind   OpKind
	size   uint8
	lanes  uint8
	cycles uint32
	addr   int
}

type traceKernel struct {
	warps map[int][2]int // block*warpsPerBlock + warp -> ops[lo:hi]
	ops   []traceOp
	addrs []uint64
}

type traceStream struct {
	ops   []traceOp
	addrs []uint64
	pos   int
}

func (s *traceStream) Next(op *Op) bool {
	if s.pos >= len(s.ops) {
		return false
	}
	t := &s.ops[s.pos]
	s.pos++
	op.Kind, op.Cycles, op.Size, op.Lanes = t.kind, t.cycles, t.size, t.lanes
	copy(op.Addr[:t.lanes], s.addrs[t.addr:t.addr+int(t.lanes)])
	return true
}

// traced is a workload read from a trace: its records stay in memory.
type traced struct {
	*builtin
	kernels []*traceKernel
}

// HostBytes is the memory of the trace's records: 16 B per instruction and
// 8 B per lane address of the slices as allocated, twice over for the
// collector's headroom, plus about 64 B per warp of the warp index.
func (t *traced) HostBytes() uint64 {
	var n uint64
	for _, k := range t.kernels {
		n += 2*(16*uint64(cap(k.ops))+8*uint64(cap(k.addrs))) + 64*uint64(len(k.warps))
	}
	return n
}

type traceParser struct {
	line     int
	wl       *builtin
	kernels  []*traceKernel
	haveName bool
	phases   bool // a phase was seen: no more allocations
	kernel   *Kernel
	tk       *traceKernel
	warpKey  int // current warp, -1 before the first warp line
	warpLive int // threads of the current warp
}

func (p *traceParser) errorf(format string, args ...any) error {
	return fmt.Errorf("trace line %d: %s", p.line, fmt.Sprintf(format, args...))
}

// FromTrace reads a workload in the trace format (docs/trace-format.md).
// Malformed input yields an error naming the line and what was expected.
func FromTrace(r io.Reader) (Workload, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), traceMaxLine)
	p := &traceParser{wl: &builtin{}, warpKey: -1}
	header := false
	for sc.Scan() {
		p.line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if !header {
			if len(f) != 2 || f[0] != traceMagic || f[1] != traceVersion {
				return nil, p.errorf("expected header %q", traceMagic+" "+traceVersion)
			}
			header = true
			continue
		}
		if err := p.parse(f); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		p.line++
		var perr *fs.PathError
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			return nil, p.errorf("line longer than %d bytes", traceMaxLine)
		case errors.As(err, &perr):
			return nil, &ReadError{Err: err}
		}
		return nil, p.errorf("unreadable input: %v", err)
	}
	if !header {
		return nil, fmt.Errorf("trace: empty input, expected header %q", traceMagic+" "+traceVersion)
	}
	if !p.haveName {
		return nil, fmt.Errorf("trace: missing workload line")
	}
	return &traced{builtin: p.wl, kernels: p.kernels}, nil
}

func (p *traceParser) parse(f []string) error {
	if f[0] != "workload" && !p.haveName {
		return p.errorf("expected \"workload <name> regular|irregular\", got %q", f[0])
	}
	switch f[0] {
	case "workload":
		if p.haveName {
			return p.errorf("second workload line")
		}
		if len(f) != 3 || (f[2] != Regular && f[2] != Irregular) {
			return p.errorf("expected \"workload <name> regular|irregular\"")
		}
		p.wl.name, p.wl.class, p.haveName = f[1], f[2], true
	case "alloc":
		return p.alloc(f)
	case "host":
		return p.host(f)
	case "kernel":
		return p.kernelLine(f)
	case "warp":
		return p.warp(f)
	case "c", "ld", "st", "at":
		return p.op(f)
	default:
		return p.errorf("unknown record %q; expected workload, alloc, host, kernel, warp, c, ld, st or at", f[0])
	}
	return nil
}

func (p *traceParser) uint(s, what string, lo, hi uint64) (uint64, error) {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil || v < lo || v > hi {
		return 0, p.errorf("%s must be an integer in [%d, %d], got %q", what, lo, hi, s)
	}
	return v, nil
}

func (p *traceParser) alloc(f []string) error {
	if p.phases {
		return p.errorf("alloc after the first host or kernel record; allocations come first")
	}
	if len(f) != 5 {
		return p.errorf("expected \"alloc <name> <bytes> managed|device ro|rw\"")
	}
	for _, a := range p.wl.allocs {
		if a.Name == f[1] {
			return p.errorf("allocation %q declared twice", f[1])
		}
	}
	bytes, err := p.uint(f[2], "alloc bytes", 1, traceMaxBytes)
	if err != nil {
		return err
	}
	var kind AllocKind
	switch f[3] {
	case "managed":
		kind = Managed
	case "device":
		kind = Device
	default:
		return p.errorf("alloc kind must be managed or device, got %q", f[3])
	}
	if f[4] != "ro" && f[4] != "rw" {
		return p.errorf("alloc access must be ro or rw, got %q", f[4])
	}
	p.wl.allocs = append(p.wl.allocs, Alloc{Name: f[1], Bytes: bytes, Kind: kind, ReadOnly: f[4] == "ro"})
	Layout(p.wl.allocs)
	return nil
}

func (p *traceParser) startPhase() {
	p.phases = true
	p.kernel, p.tk, p.warpKey = nil, nil, -1
}

func (p *traceParser) host(f []string) error {
	p.startPhase()
	if len(f) < 4 {
		return p.errorf("expected \"host <alloc> read|write <start>-<end> ...\"")
	}
	var a *Alloc
	for i := range p.wl.allocs {
		if p.wl.allocs[i].Name == f[1] {
			a = &p.wl.allocs[i]
		}
	}
	if a == nil {
		return p.errorf("host access to undeclared allocation %q", f[1])
	}
	if f[2] != "read" && f[2] != "write" {
		return p.errorf("host access must be read or write, got %q", f[2])
	}
	h := &HostAccess{Alloc: a.Name, Write: f[2] == "write"}
	for _, r := range f[3:] {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			return p.errorf("host range must be <start>-<end>, got %q", r)
		}
		start, err1 := strconv.ParseUint(lo, 0, 64)
		end, err2 := strconv.ParseUint(hi, 0, 64)
		if err1 != nil || err2 != nil || start >= end || start < a.Base || end > a.Base+a.Bytes {
			return p.errorf("host range %q must be non-empty and inside %s [%#x, %#x)", r, a.Name, a.Base, a.Base+a.Bytes)
		}
		h.Ranges = append(h.Ranges, [2]uint64{start, end})
	}
	p.wl.host(h)
	return nil
}

func (p *traceParser) kernelLine(f []string) error {
	p.startPhase()
	if len(f) != 4 {
		return p.errorf("expected \"kernel <name> <blocks> <threads-per-block>\"")
	}
	blocks, err := p.uint(f[2], "kernel blocks", 1, traceMaxBlocks)
	if err != nil {
		return err
	}
	threads, err := p.uint(f[3], "kernel threads-per-block", 1, traceMaxThreads)
	if err != nil {
		return err
	}
	tk := &traceKernel{warps: map[int][2]int{}}
	k := &Kernel{Name: f[1], Blocks: int(blocks), ThreadsPerBlock: int(threads)}
	wpb := k.WarpsPerBlock()
	k.NewWarp = func(b, w int) WarpStream {
		r := tk.warps[b*wpb+w]
		return &traceStream{ops: tk.ops[r[0]:r[1]], addrs: tk.addrs}
	}
	p.kernel, p.tk = k, tk
	p.kernels = append(p.kernels, tk)
	p.wl.kernel(k)
	return nil
}

func (p *traceParser) warp(f []string) error {
	if p.kernel == nil {
		return p.errorf("warp record outside a kernel")
	}
	if len(f) != 3 {
		return p.errorf("expected \"warp <block> <warp>\"")
	}
	wpb := p.kernel.WarpsPerBlock()
	b, err := p.uint(f[1], "warp block", 0, uint64(p.kernel.Blocks-1))
	if err != nil {
		return err
	}
	w, err := p.uint(f[2], "warp index", 0, uint64(wpb-1))
	if err != nil {
		return err
	}
	key := int(b)*wpb + int(w)
	if _, dup := p.tk.warps[key]; dup {
		return p.errorf("warp %d of block %d listed twice", w, b)
	}
	p.warpKey = key
	p.warpLive = min(WarpSize, p.kernel.ThreadsPerBlock-int(w)*WarpSize)
	n := len(p.tk.ops)
	p.tk.warps[key] = [2]int{n, n}
	return nil
}

func (p *traceParser) op(f []string) error {
	if p.warpKey < 0 {
		return p.errorf("instruction %q outside a warp", f[0])
	}
	t := traceOp{addr: len(p.tk.addrs)}
	if f[0] == "c" {
		if len(f) != 2 {
			return p.errorf("expected \"c <cycles>\"")
		}
		c, err := p.uint(f[1], "compute cycles", 1, 1<<32-1)
		if err != nil {
			return err
		}
		t.kind, t.cycles = OpCompute, uint32(c)
	} else {
		switch f[0] {
		case "ld":
			t.kind = OpLoad
		case "st":
			t.kind = OpStore
		default:
			t.kind = OpAtomic
		}
		if len(f) < 3 || len(f)-2 > p.warpLive {
			return p.errorf("expected \"%s <size> <addr> ...\" with 1 to %d addresses", f[0], p.warpLive)
		}
		size, err := p.uint(f[1], "access size", 1, 16)
		if err != nil {
			return err
		}
		if size&(size-1) != 0 {
			return p.errorf("access size must be 1, 2, 4, 8 or 16, got %d", size)
		}
		t.size, t.lanes = uint8(size), uint8(len(f)-2)
		for _, s := range f[2:] {
			a, err := strconv.ParseUint(s, 0, 64)
			if err != nil {
				return p.errorf("lane address must be an integer (hex 0x...), got %q", s)
			}
			if !p.inAlloc(a, size) {
				return p.errorf("lane address %#x (+%d bytes) is outside every allocation", a, size)
			}
			p.tk.addrs = append(p.tk.addrs, a)
		}
	}
	p.tk.ops = append(p.tk.ops, t)
	r := p.tk.warps[p.warpKey]
	p.tk.warps[p.warpKey] = [2]int{r[0], len(p.tk.ops)}
	return nil
}

func (p *traceParser) inAlloc(addr, size uint64) bool {
	as := p.wl.allocs
	i := sort.Search(len(as), func(i int) bool { return as[i].Base+as[i].Bytes > addr })
	return i < len(as) && addr >= as[i].Base && addr+size <= as[i].Base+as[i].Bytes && addr+size > addr
}

// WriteTrace writes wl in the trace format. maxWarps > 0 keeps only the
// first maxWarps warps (block-major order) of every kernel; the others read
// back as empty streams.
func WriteTrace(w io.Writer, wl Workload, maxWarps int) error {
	if err := traceTokens(wl); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s %s\n", traceMagic, traceVersion)
	fmt.Fprintf(bw, "workload %s %s\n", wl.Name(), wl.Class())
	for _, a := range wl.Allocs() {
		access := "rw"
		if a.ReadOnly {
			access = "ro"
		}
		fmt.Fprintf(bw, "alloc %s %d %s %s\n", a.Name, a.Bytes, a.Kind, access)
	}
	var op Op
	for _, ph := range wl.Phases() {
		if h := ph.Host; h != nil {
			dir := "read"
			if h.Write {
				dir = "write"
			}
			fmt.Fprintf(bw, "host %s %s", h.Alloc, dir)
			for _, r := range h.Ranges {
				fmt.Fprintf(bw, " %#x-%#x", r[0], r[1])
			}
			bw.WriteByte('\n')
			continue
		}
		k := ph.Kernel
		fmt.Fprintf(bw, "kernel %s %d %d\n", k.Name, k.Blocks, k.ThreadsPerBlock)
		wpb := k.WarpsPerBlock()
		warps := k.Blocks * wpb
		if maxWarps > 0 {
			warps = min(warps, maxWarps)
		}
		for i := 0; i < warps; i++ {
			s := k.NewWarp(i/wpb, i%wpb)
			first := true
			for s.Next(&op) {
				if first {
					fmt.Fprintf(bw, "warp %d %d\n", i/wpb, i%wpb)
					first = false
				}
				if op.Kind == OpCompute {
					fmt.Fprintf(bw, "c %d\n", op.Cycles)
					continue
				}
				fmt.Fprintf(bw, "%s %d", traceMnemonic[op.Kind], op.Size)
				for _, a := range op.Addr[:op.Lanes] {
					fmt.Fprintf(bw, " %#x", a)
				}
				bw.WriteByte('\n')
			}
		}
	}
	return bw.Flush()
}

// traceTokens checks that every name WriteTrace emits is a single token.
func traceTokens(wl Workload) error {
	bad := func(s string) bool { return s == "" || strings.ContainsFunc(s, unicode.IsSpace) }
	if bad(wl.Name()) {
		return fmt.Errorf("trace: workload name %q must be one token without white space", wl.Name())
	}
	for _, a := range wl.Allocs() {
		if bad(a.Name) {
			return fmt.Errorf("trace: allocation name %q must be one token without white space", a.Name)
		}
	}
	for _, ph := range wl.Phases() {
		if ph.Kernel != nil && bad(ph.Kernel.Name) {
			return fmt.Errorf("trace: kernel name %q must be one token without white space", ph.Kernel.Name)
		}
	}
	return nil
}
