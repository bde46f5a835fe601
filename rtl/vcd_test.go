package rtl_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// parsedVCD is what a waveform viewer reads from a VCD: each signal's full
// name and width, and its value at every time at which it changed.
type parsedVCD struct {
	Widths  map[string]int
	Changes map[string][][2]uint64 // name -> (time, value)
}

func parseVCD(t *testing.T, data []byte) parsedVCD {
	t.Helper()
	p := parsedVCD{Widths: map[string]int{}, Changes: map[string][][2]uint64{}}
	names := map[string]string{}
	var scope []string
	var now uint64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "$scope":
			scope = append(scope, f[2])
		case f[0] == "$upscope":
			scope = scope[:len(scope)-1]
		case f[0] == "$var":
			w, err := strconv.Atoi(f[2])
			require.NoError(t, err)
			full := strings.Join(append(append([]string{}, scope...), f[4]), ".")
			names[f[3]] = full
			p.Widths[full] = w
		case f[0][0] == '#':
			v, err := strconv.ParseUint(f[0][1:], 10, 64)
			require.NoError(t, err)
			now = v
		case f[0][0] == 'b':
			v, err := strconv.ParseUint(f[0][1:], 2, 64)
			require.NoError(t, err)
			p.Changes[names[f[1]]] = append(p.Changes[names[f[1]]], [2]uint64{now, v})
		case f[0][0] == '0' || f[0][0] == '1':
			id := f[0][1:]
			p.Changes[names[id]] = append(p.Changes[names[id]], [2]uint64{now, uint64(f[0][0] - '0')})
		}
	}
	require.NoError(t, sc.Err())
	require.Empty(t, scope, "every scope is closed")
	return p
}

func TestVCDRoundTrip(t *testing.T) {
	b := newQueueBench(t, 2, 1, true)
	path := filepath.Join(t.TempDir(), "q.vcd")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, b.sim.TraceVCD(f, "q.count", "deq.*"))

	b.cycle(t, true, 0xA5, false) // cycle 0: push
	b.cycle(t, false, 0, false)   // cycle 1: head visible, not popped
	b.cycle(t, false, 0, true)    // cycle 2: popped
	b.cycle(t, false, 0, false)   // cycle 3: empty again
	require.NoError(t, b.sim.CloseTrace())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	got := parseVCD(t, data)
	want := parsedVCD{
		Widths: map[string]int{"q.count": 2, "deq.valid": 1, "deq.ready": 1, "deq.bits": 8},
		Changes: map[string][][2]uint64{
			"q.count":   {{0, 0}, {1, 1}, {3, 0}},
			"deq.valid": {{0, 0}, {1, 1}, {3, 0}},
			"deq.ready": {{0, 0}, {2, 1}, {3, 0}},
			"deq.bits":  {{0, 0}, {1, 0xA5}},
		},
	}
	require.Empty(t, cmp.Diff(want, got))
	require.Contains(t, string(data), "$scope module q $end")
	require.Contains(t, string(data), "#4\n", "the final timestamp closes the last cycle")
}

func TestVCDRejectsPatternsThatMatchNothing(t *testing.T) {
	b := newQueueBench(t, 2, 1, false)
	require.ErrorContains(t, b.sim.TraceVCD(&bytes.Buffer{}, "nosuch.*"), "match no register or wire")
	require.ErrorContains(t, b.sim.TraceVCD(&bytes.Buffer{}, "[bad"), "trace pattern")
}

// Example of dumping a waveform: trace every signal under "lane0" of a
// design to a file GTKWave opens.
func ExampleSim_TraceVCD() {
	s := rtl.New(rtl.Options{SkipIdle: true})
	in := rtl.NewDecoupled[uint8](s, "lane0.in", 8)
	out := rtl.NewDecoupled[uint8](s, "lane0.out", 8)
	rtl.NewQueue(s, "lane0.fifo", 4, in, out)
	s.Reset()
	f, _ := os.CreateTemp("", "lane0-*.vcd")
	defer os.Remove(f.Name())
	_ = s.TraceVCD(f, "lane0.*")
	_ = s.Run(100)
	_ = s.CloseTrace()
}

// With a clock, VCD time is in picoseconds, each stamp rounded on its own:
// at 1481 MHz a cycle is 10^6/1481 = 675.219 ps, so cycle 1 is at 675 ps,
// cycle 2 at 1350 ps, cycle 3 at 2025.66 -> 2026 ps and cycle 4 at 2701 ps.
func TestVCDClockTimescale(t *testing.T) {
	b := newQueueBench(t, 2, 1, true)
	var buf bytes.Buffer
	require.NoError(t, b.sim.TraceVCDClock(&buf, 1481, "q.count"))
	b.cycle(t, true, 0xA5, false) // cycle 0: push
	b.cycle(t, false, 0, false)   // cycle 1: count 1
	b.cycle(t, false, 0, true)    // cycle 2: popped
	b.cycle(t, false, 0, false)   // cycle 3: count 0
	require.NoError(t, b.sim.CloseTrace())
	out := buf.String()
	require.Contains(t, out, "$timescale 1ps $end")
	require.Contains(t, out, "1481 MHz core clock")
	for _, stamp := range []string{"#0\n", "#675\n", "#2026\n", "#2701\n"} {
		require.Contains(t, out, stamp)
	}
}

func TestSignalNames(t *testing.T) {
	b := newQueueBench(t, 2, 1, false)
	names := b.sim.SignalNames()
	require.Contains(t, names, "q.count")
	require.True(t, slices.IsSorted(names))
	n, err := b.sim.MatchSignals("deq.*")
	require.NoError(t, err)
	require.Equal(t, 3, n)
	_, err = b.sim.MatchSignals("nosuch.*")
	require.ErrorContains(t, err, "match no register or wire")
}

func TestSignalNamesOfVecElements(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true})
	f := newFaulty(s, "a")
	v := rtl.NewVec[uint16](&f.Base, "tab", 12, 9, 3)
	require.Equal(t, "a.tab[0]", v.At(0).Name())
	require.Equal(t, "a.tab[11]", v.At(11).Name())
	require.Equal(t, 9, v.At(11).Width())
	names := s.SignalNames()
	require.Contains(t, names, "a.tab[10]")
	require.Len(t, names, 13) // a.r and the 12 elements
	n, err := s.MatchSignals("a.tab[[]1*")
	require.NoError(t, err)
	require.Equal(t, 3, n) // tab[1], tab[10], tab[11]
}

// Every signal name is unique, also where a Vec's element names meet a
// scalar register's or a wire's name or another Vec's.
func TestSignalNamesAreUnique(t *testing.T) {
	cases := []struct {
		name  string
		build func(s *rtl.Sim, b *rtl.Base)
		dup   string // the name reported twice; empty when all are unique
	}{
		{"vec then a register named like its element", func(s *rtl.Sim, b *rtl.Base) {
			rtl.NewVec[uint8](b, "v", 4, 8, 0)
			rtl.NewReg[uint8](b, "v[3]", 8, 0)
		}, "a.v[3]"},
		{"register named like an element, then the vec", func(s *rtl.Sim, b *rtl.Base) {
			rtl.NewReg[uint8](b, "v[2]", 8, 0)
			rtl.NewVec[uint8](b, "v", 4, 8, 0)
		}, "a.v[0]"},
		{"vec then a wire named like its element", func(s *rtl.Sim, b *rtl.Base) {
			rtl.NewVec[uint8](b, "v", 4, 8, 0)
			rtl.NewBit(s, "a.v[0]")
		}, "a.v[0]"},
		{"two vecs of one name", func(s *rtl.Sim, b *rtl.Base) {
			rtl.NewVec[uint8](b, "v", 4, 8, 0)
			rtl.NewVec[uint32](b, "v", 1, 8, 0)
		}, "a.v[0]"},
		{"two registers of one name", func(s *rtl.Sim, b *rtl.Base) {
			rtl.NewReg[uint8](b, "x", 8, 0)
			rtl.NewFlag(b, "x", false)
		}, "a.x"},
		{"registers past the vec's end", func(s *rtl.Sim, b *rtl.Base) {
			rtl.NewReg[uint8](b, "v[4]", 8, 0)
			rtl.NewVec[uint8](b, "v", 4, 8, 0)
			rtl.NewReg[uint8](b, "v[5]", 8, 0)
		}, ""},
		{"indices not written as an element's", func(s *rtl.Sim, b *rtl.Base) {
			rtl.NewVec[uint8](b, "v", 4, 8, 0)
			rtl.NewReg[uint8](b, "v[01]", 8, 0)
			rtl.NewReg[uint8](b, "v[+1]", 8, 0)
		}, ""},
		{"a vec named like an element", func(s *rtl.Sim, b *rtl.Base) {
			rtl.NewVec[uint8](b, "v", 4, 8, 0)
			rtl.NewVec[uint8](b, "v[1]", 4, 8, 0)
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := rtl.New(rtl.Options{Checked: true})
			f := newFaulty(s, "a")
			build := func() { tc.build(s, &f.Base) }
			if tc.dup == "" {
				require.NotPanics(t, build)
			} else {
				require.PanicsWithValue(t, "rtl: two signals named "+tc.dup, build)
			}
		})
	}
}
