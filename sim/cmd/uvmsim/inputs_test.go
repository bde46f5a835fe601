package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docExampleTrace is the example of docs/trace-format.md, read from the doc.
func docExampleTrace(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/trace-format.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "## Example\n\n```\n")
	require.True(t, ok, "docs/trace-format.md has an Example section with a code block")
	body, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	file := filepath.Join(t.TempDir(), "example.trace")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
	return file
}

func gzipFile(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	dst := src + ".gz"
	require.NoError(t, os.WriteFile(dst, buf.Bytes(), 0o644))
	return dst
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
	return file
}

// The doc's example trace runs through the CLI under every policy, plain
// and gzip-compressed, with the same result either way.
func TestRunTraceFile(t *testing.T) {
	plain := docExampleTrace(t)
	zipped := gzipFile(t, plain)
	for _, pol := range []string{"ideal", "um", "uvmsmart", "uvmmu"} {
		code, out, stderr := run("run", "--trace-file", plain, "--policy", pol, "--check")
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, out, "workload tiny, policy "+pol)
		code, outGz, stderr := run("run", "--trace-file", zipped, "--policy", pol)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, withoutWall(out), withoutWall(outGz), pol)
	}
}

func withoutWall(summary string) string {
	return regexp.MustCompile(`(?m)^  wall time.*\n`).ReplaceAllString(summary, "")
}

// sweep takes trace:FILE among its workloads.
func TestSweepTraceWorkload(t *testing.T) {
	trace := docExampleTrace(t)
	dir := t.TempDir()
	code, out, stderr := run("sweep", "--workloads", "trace:"+trace+",ra", "--policies", "um", "--scale", "0.01", "--jobs", "1", "--out", dir)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "tiny")
	assert.Contains(t, out, "ra")
	code, _, stderr = run("sweep", "--workloads", "trace:/nonexistent.trace", "--policies", "um", "--out", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no such file")
}

// A run too large for the host is refused at once with the scale and the
// estimate (exit 2), before anything is built; sssp, whose host data stays
// small at any scale, is refused as fast for its GPU memory.
func TestRunOverMemoryLimit(t *testing.T) {
	start := time.Now()
	// bfs at scale 1000 is a 9.7 GB footprint; at 1000% its managed GPU
	// memory fits, and its host estimate (2.2 GB) exceeds a 1 GB limit.
	code, _, stderr := run("run", "--workload", "bfs", "--scale", "1000", "--oversub", "1000", "--set", "run.max_memory_gb=1")
	assert.Less(t, time.Since(start), 30*time.Second) // generous: the answer takes well under a second
	assert.Equal(t, exitUsage, code)
	assert.Regexp(t, `workload bfs at run.scale = 1000 needs an estimated [0-9.]+ GB of host memory, more than run.max_memory_gb = 1.0; run.scale = [0-9]+ fits`, stderr)
	start = time.Now()
	code, _, stderr = run("run", "--workload", "sssp", "--scale", "10000")
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Equal(t, exitUsage, code)
	assert.Regexp(t, `workload sssp at run.scale = 10000 needs more than [0-9]+ MB of GPU memory`, stderr)
	code, _, stderr = run("run", "--workload", "ra", "--scale", "0.01", "--set", "run.max_memory_gb=0.01")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "more than run.max_memory_gb = 0.0")
}

// The result reports the predicted memory in the summary and the JSON.
func TestModelMemoryReported(t *testing.T) {
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr := run("run", "--workload", "ra", "--policy", "ideal", "--scale", "0.01", "--json", js)
	require.Equal(t, exitOK, code, stderr)
	var m map[string]any
	data, err := os.ReadFile(js)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &m))
	mem := m["model_memory_bytes"].(float64)
	assert.Greater(t, mem, float64(96<<20-1))
	assert.Regexp(t, `host memory +`+regexp.QuoteMeta(strconv.FormatFloat(mem/(1<<20), 'f', 1, 64))+" MB predicted", out)
}

// Legal configurations whose units wait long on scheduled events finish:
// a 100 ms fault latency, a compute record of 2^32-1 cycles, a 1000-cycle
// watchdog window across 45 us faults.
func TestWatchdogLegalConfigurations(t *testing.T) {
	long := writeFile(t, "long.trace", "uvmtrace 1\nworkload long irregular\nalloc a 4096 managed rw\nkernel k 1 32\nwarp 0 0\nc 4294967295\nld 4 0x100000000\n")
	for _, args := range [][]string{
		{"run", "--workload", "ra", "--policy", "um", "--scale", "0.02", "--set", "gpu.sms=2", "--set", "um.fault_latency_us=100000"},
		{"run", "--trace-file", long, "--policy", "um"},
		{"run", "--workload", "ra", "--policy", "um", "--scale", "0.02", "--set", "gpu.sms=2", "--set", "check.watchdog_cycles=1000"},
	} {
		code, out, stderr := run(args...)
		assert.Equal(t, exitOK, code, "%v: %s", args, stderr)
		assert.Contains(t, out, "simulated cycles", "%v", args)
	}
}

// Every case of the inputs review, each with its exit status and message.
func TestInputCases(t *testing.T) {
	dir := t.TempDir()
	trace := docExampleTrace(t)
	huge := strings.Repeat("x", 50<<20)
	results := writeRecords(t, record(t, "um", 10), record(t, "uvmmu", 5))
	negCost := writeFile(t, "neg.graph", "2\n0 1\n1 1\n0\n2\n1 1\n0 -3\n")
	overlap := writeFile(t, "overlap.graph", "3\n0 2\n2 1\n1 2\n0\n4\n1 1\n2 1\n0 1\n0 1\n")
	garbage := writeFile(t, "garbage.graph", "2\n0 \x1b[31m\xff\xfe\u202e\x00\x07 1\n")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"--trace is not the trace file", []string{"run", "--trace", trace}, exitUsage, "a recorded trace runs with --trace-file FILE"},
		{"--vcd-signals without --vcd", []string{"run", "--vcd-signals", "sm0.*"}, exitUsage, "give --vcd FILE too"},
		{"--vcd without --vcd-signals", []string{"run", "--vcd", filepath.Join(dir, "a.vcd")}, exitUsage, "--vcd needs at least one --vcd-signals pattern"},
		{"pattern matching nothing", []string{"run", "--trace-file", trace, "--vcd", filepath.Join(dir, "none.vcd"), "--vcd-signals", "da.afm.*"}, exitUsage, `trace patterns ["da.afm.*"] match no register or wire (uvmsim signals lists the names)`},
		{"--json empty", []string{"run", "--trace-file", trace, "--json", ""}, exitUsage, "--json needs a file name"},
		{"--json unwritable directory", []string{"run", "--trace-file", trace, "--json", "/nonexistent/r.json"}, exitUsage, "--json: open /nonexistent/r.json"},
		{"--cpuprofile empty", []string{"run", "--trace-file", trace, "--cpuprofile", ""}, exitUsage, "--cpuprofile needs a file name"},
		{"--cpuprofile unwritable directory", []string{"run", "--trace-file", trace, "--cpuprofile", "/nonexistent/cpu.pprof"}, exitUsage, "--cpuprofile: open /nonexistent/cpu.pprof"},
		{"report --policy nosuch", []string{"report", "--policy", "nosuch", results}, exitUsage, `--policy "nosuch": no result has this policy; the results hold: um, uvmmu`},
		{"--seed negative", []string{"run", "--seed=-1"}, exitUsage, "run.seed = -1 out of range; allowed: 0..9223372036854775807"},
		{"--set run.seed negative", []string{"run", "--set", "run.seed=-1"}, exitUsage, "run.seed = -1 out of range; allowed: 0..9223372036854775807"},
		{"--trace-file with --workload", []string{"run", "--trace-file", trace, "--workload", "ra"}, exitUsage, "give --workload or --trace-file, not both"},
		{"--trace-file with --scale", []string{"run", "--trace-file", trace, "--scale", "2"}, exitUsage, "a trace runs at its recorded size"},
		{"--trace-file missing", []string{"run", "--trace-file", "/nonexistent.trace"}, exitUsage, "no such file"},
		{"negative graph cost", []string{"run", "--workload", "bfs", "--set", "run.graph_file=" + negCost}, exitUsage, "rodinia graph line 7: cost of edge 1 must be an integer in [0, 2147483647]"},
		{"overlapping graph ranges", []string{"run", "--workload", "bfs", "--set", "run.graph_file=" + overlap}, exitUsage, "rodinia graph line 4: node 2's edges [1, 3) overlap node 0's [0, 2) (line 2)"},
		{"no command", nil, exitUsage, "commands: run, sweep, experiment, plot, list, signals, report, config, area, grit-characterize, suv-analyze"},
		{"50 MB value", []string{"run", "--set", "run.policy=" + huge}, exitUsage, "bytes left out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.msg)
			assert.Less(t, len(stderr), 8<<10, "a message never echoes a huge value whole")
		})
	}
	// A full disk (Linux's /dev/full, where the machine has one) is an I/O
	// failure, status 3.
	if fi, err := os.Stat("/dev/full"); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		code, _, stderr := run("run", "--trace-file", trace, "--json", "/dev/full")
		assert.Equal(t, exitIO, code, stderr)
		assert.Contains(t, stderr, "--json: write /dev/full: no space left on device")
	}
	_, err := os.Stat(filepath.Join(dir, "none.vcd"))
	assert.True(t, os.IsNotExist(err), "a refused --vcd leaves no file")

	// Binary garbage in a graph file reaches the terminal escaped.
	code, _, stderr := run("run", "--workload", "bfs", "--set", "run.graph_file="+garbage)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `got "\x1b[31m\xff\xfe\u202e\x00\a"`)
	for _, r := range stderr {
		assert.True(t, r == '\n' || (r >= ' ' && r <= '~'), "raw byte %q in %q", r, stderr)
	}
}

// --cpuprofile writes a profile, for one GPU and for several: a
// gzip-compressed protocol buffer, as runtime/pprof writes it.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "--workload", "ra", "--scale", "0.01"},
		{"run", "--gpus", "2", "--policy", "ot", "--workload", "grit-st", "--scale", "0.01"},
	} {
		name := filepath.Join(dir, args[2]+".pprof")
		code, _, stderr := run(append(args, "--cpuprofile", name)...)
		require.Equal(t, exitOK, code, stderr)
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Greater(t, len(data), 2, "%v", args)
		assert.Equal(t, []byte{0x1f, 0x8b}, data[:2], "%v: gzip magic", args)
	}
}

// --oversub beyond what the allocations allow says so: ra at scale 0.01 is
// three 40 KB arrays, each a 64 KB page-group as cudaMallocManaged sizes
// it (48 pages), so 1000% leaves the one-page-group minimum, 64 KB, for
// 0.1 MB of data.
func TestOversubNote(t *testing.T) {
	code, out, stderr := run("run", "--workload", "ra", "--policy", "ideal", "--scale", "0.01", "--oversub", "1000")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "uvmsim: note: run.oversub_pct = 1000 asks for 0.0 MB of managed GPU memory for 0.1 MB of managed data; it is the managed allocations as cudaMallocManaged sizes them (whole 2 MB pages, the rest rounded up to a power of two of 64 KB), 0.2 MB, over the ratio, 0.1 MB")
	assert.Contains(t, out, "oversubscription 1000% (footprint / managed memory 192%)")
}

// The VCD's time is in picoseconds of the core clock and the signals
// command lists the names its patterns match.
func TestVCDAndSignals(t *testing.T) {
	trace := docExampleTrace(t)
	code, names, stderr := run("signals", "--trace-file", trace, "--policy", "uvmmu")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, names, "\nuvmmu.da.afm.arrived_q\n")
	assert.Contains(t, names, "\nsm0.l1tlb.")
	vcd := filepath.Join(t.TempDir(), "run.vcd")
	code, _, stderr = run("run", "--trace-file", trace, "--policy", "uvmmu", "--vcd", vcd, "--vcd-signals", "uvmmu.da.afm.*")
	require.Equal(t, exitOK, code, stderr)
	data, err := os.ReadFile(vcd)
	require.NoError(t, err)
	assert.Contains(t, string(data), "$timescale 1ps $end")
	assert.Contains(t, string(data), "1481 MHz core clock: cycle n is at round(n * 1000000 / 1481) ps")
}

// The summary shows every value of the JSON: each integer field's value
// appears in it.
func TestSummaryShowsEveryJSONField(t *testing.T) {
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr := run("run", "--workload", "ra", "--policy", "uvmsmart", "--scale", "0.02", "--oversub", "150", "--json", js)
	require.Equal(t, exitOK, code, stderr)
	data, err := os.ReadFile(js)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	mb := func(v float64) string { return strconv.FormatFloat(v/(1<<20), 'f', 1, 64) + " MB" }
	for k, v := range m {
		var want string
		switch k {
		case "wall_seconds", "sim_cycles_per_second", "warp_instructions_per_second":
			continue // host speed, formatted in the wall time line
		case "config_id", "config":
			continue // the configuration that produced the result, not a measurement
		case "footprint_bytes", "gpu_memory_bytes", "managed_capacity_bytes", "model_memory_bytes":
			want = mb(v.(float64))
		case "workload", "policy":
			want = v.(string)
		case "scale", "clock_mhz":
			want = strconv.FormatFloat(v.(float64), 'g', -1, 64)
		default:
			assert.Regexp(t, `(^|[^0-9.])`+strconv.FormatFloat(v.(float64), 'f', -1, 64)+`([^0-9.]|$)`, out, k)
			continue
		}
		assert.Contains(t, out, want, k)
	}
}
