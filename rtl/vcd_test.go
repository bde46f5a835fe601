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
