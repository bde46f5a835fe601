package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/experiment"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated samples in README.md and docs/*.md")

const repoRoot = "../../.."

// docFiles are the documents whose uvmsim command lines are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

// docCommand is one uvmsim command line in a document.
type docCommand struct {
	text  string // as written, continuation lines joined
	where string // file:line
}

var (
	commandStart = regexp.MustCompile(`^(\$ )?(out/)?uvmsim `)
	inlineCode   = regexp.MustCompile("`((?:out/)?uvmsim [^`]*)`")
	shellComment = regexp.MustCompile(`\s+#\s.*$`)
)

// docCommands finds every command line: each line of a code block that
// starts with uvmsim (a "$ " prompt allowed; a trailing "\" joins the next
// line, a "# ..." comment is dropped), and every inline code span that
// starts with uvmsim.
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	var cmds []docCommand
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		name := strings.TrimPrefix(file, repoRoot+"/")
		lines := strings.Split(string(data), "\n")
		inBlock := false
		for i := 0; i < len(lines); i++ {
			line := lines[i]
			if strings.HasPrefix(line, "```") {
				inBlock = !inBlock
				continue
			}
			if !inBlock {
				// Inline spans may wrap across two lines.
				joined := line
				if i+1 < len(lines) && strings.Count(line, "`")%2 == 1 {
					joined += " " + lines[i+1]
				}
				for _, m := range inlineCode.FindAllStringSubmatch(joined, -1) {
					if strings.Contains(line, m[0]) || strings.Count(line, "`")%2 == 1 {
						cmds = append(cmds, docCommand{strings.Join(strings.Fields(m[1]), " "), fmt.Sprintf("%s:%d", name, i+1)})
					}
				}
				continue
			}
			text := strings.TrimSpace(line)
			if !commandStart.MatchString(text) {
				continue
			}
			where := fmt.Sprintf("%s:%d", name, i+1)
			for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
				i++
				text = strings.TrimSuffix(text, "\\") + " " + strings.TrimSpace(lines[i])
			}
			text = strings.TrimPrefix(shellComment.ReplaceAllString(text, ""), "$ ")
			cmds = append(cmds, docCommand{strings.Join(strings.Fields(text), " "), where})
		}
	}
	return cmds
}

// docRun is how a documented command line runs in the test: its arguments
// (placeholders and large sizes replaced by tiny ones; {tmp}, {trace},
// {config}, {results} and {incomplete} are a temporary directory, the
// trace-format example, a small configuration file, two results, a
// page holding the incomplete experiment's markers and one holding the
// GRIT experiments') and its exit
// status. A line that names a command and flags without values (a
// reference such as "uvmsim run --json") is checked against the command's
// --help instead.
type docRun struct {
	args []string
	code int
}

// Experiments take minutes even with --quick; their command lines run in
// full on one small workload (--workloads and --scale win over --quick and
// the defaults), each experiment in its own output directory, so a line
// that repeats an experiment resumes it and simulates nothing. The tables,
// figures and, for validate, the validation table are written as the
// documented command writes them.
func experimentCheck(name string, flags ...string) docRun {
	args := append([]string{"experiment", name}, flags...)
	return docRun{append(args, "--workloads", "ra", "--scale", "0.01", "--jobs", "2", "--out", "{tmp}/exp-"+name), exitOK}
}

var docRuns = map[string]docRun{
	"uvmsim suv-analyze --workload W": {[]string{"suv-analyze", "--workload", "ra"}, exitOK},
	"uvmsim suv-analyze --workload W [--scale S] [--seed N] [--sms N] [--warps-per-sm N] [--kernels]": {
		[]string{"suv-analyze", "--workload", "nw", "--scale", "0.1", "--seed", "2", "--sms", "4", "--warps-per-sm", "32", "--kernels"}, exitOK},
	"uvmsim run --workload bfs --policy uvmmu --oversub 150 [--scale F] [--seed N] [--config FILE] [--set key=value]... [--json FILE] [--vcd FILE --vcd-signals GLOB] [--check]": {
		[]string{"run", "--workload", "bfs", "--policy", "uvmmu", "--oversub", "150", "--scale", "0.01", "--seed", "2", "--config", "{config}",
			"--set", "gpu.sms=2", "--json", "{tmp}/r.json", "--vcd", "{tmp}/r.vcd", "--vcd-signals", "uvmmu.da.afm.*", "--check"}, exitOK},
	"uvmsim run --trace-file FILE --policy um":          {[]string{"run", "--trace-file", "{trace}", "--policy", "um"}, exitOK},
	"uvmsim run --trace-file FILE":                      {[]string{"run", "--trace-file", "{trace}"}, exitOK},
	"uvmsim run --trace-file example.trace --policy um": {[]string{"run", "--trace-file", "{trace}", "--policy", "um"}, exitOK},
	"uvmsim signals [--workload W --policy P]":          {[]string{"signals", "--workload", "ra", "--policy", "um"}, exitOK},
	"uvmsim signals --policy uvmmu":                     {[]string{"signals", "--policy", "uvmmu"}, exitOK},
	"uvmsim config --check FILE":                        {[]string{"config", "--check", "{config}"}, exitOK},
	"uvmsim run --config FILE":                          {[]string{"run", "--config", "{config}", "--scale", "0.01"}, exitOK},
	"uvmsim report [--where key=value] RESULT.json...":  {[]string{"report", "--where", "um.fault_latency_us=45", "{results}"}, exitOK},
	"out/uvmsim report out/fig4/results.json":           {[]string{"report", "{results}"}, exitOK},
	"uvmsim report [--policy uvmmu] [--baseline um] [--where key=value]... [--csv FILE] RESULT.json...": {[]string{"report", "--policy", "uvmmu", "--baseline", "um", "--csv", "{tmp}/r.csv", "{results}"}, exitOK},
	"uvmsim report [--policy uvmmu] [--baseline um] [--where key=value]... [--csv FILE] FILE...":        {[]string{"report", "--policy", "uvmmu", "--baseline", "um", "--where", "run.graph_file=", "{results}"}, exitOK},
	"uvmsim plot DIR": {[]string{"plot", "{tmp}/not-an-output-dir"}, exitUsage}, // plot reads a directory an experiment wrote
	"uvmsim plot OUT": {[]string{"plot", "{tmp}/not-an-output-dir"}, exitUsage},
	"uvmsim run --json /nonexistent/dir/x.json":                           {[]string{"run", "--workload", "ra", "--scale", "0.01", "--json", "/nonexistent/dir/x.json"}, exitUsage},
	"uvmsim area [--liberty FILE] [--json FILE]":                          {[]string{"area", "--help"}, exitOK}, // the Yosys flow takes minutes
	"uvmsim suv-analyze":                                                  {[]string{"suv-analyze", "--workload", "ra"}, exitOK},
	"uvmsim suv-analyze --table [--scale S] [--sms N] [--warps-per-sm N]": {[]string{"suv-analyze", "--table", "--scale", "0.5", "--sms", "4", "--warps-per-sm", "32"}, exitOK},
	"uvmsim suv-analyze --table --scale 0.25":                             {[]string{"suv-analyze", "--table", "--scale", "0.25"}, exitOK},
	"uvmsim suv-analyze --table":                                          {[]string{"suv-analyze", "--table"}, exitOK},
	"uvmsim suv-analyze --table --sms 82 --warps-per-sm 48":               {[]string{"suv-analyze", "--table", "--sms", "82", "--warps-per-sm", "48"}, exitOK},
	"uvmsim grit-characterize":                                            {[]string{"grit-characterize", "--scale", "0.01", "--out", "{tmp}/grit"}, exitOK},
	"uvmsim run --preset grit --workload grit-st --policy ac [--gpus N] [--scale F] [--json FILE] [--check]": {
		[]string{"run", "--preset", "grit", "--workload", "grit-st", "--policy", "ac", "--gpus", "4", "--scale", "0.002", "--set", "gpu.sms=2", "--set", "gpu.warps_per_sm=8", "--json", "{tmp}/m.json", "--check"}, exitOK},
	"uvmsim experiment grit-schemes [--workloads LIST] [--schemes ot,ac,dup] [--scale F] [--jobs N] [--out DIR]": {
		[]string{"experiment", "grit-schemes", "--workloads", "grit-gemm", "--schemes", "ot,ac,dup", "--scale", "0.002", "--set", "gpu.sms=2", "--set", "gpu.warps_per_sm=8", "--jobs", "1", "--out", "{tmp}/gs"}, exitOK},
	"uvmsim experiment grit [--workloads LIST] [--gpus N] [--scale F] [--jobs N] [--runs DIR] [--out DIR]": {
		[]string{"experiment", "grit", "--workloads", "grit-gemm", "--scale", "0.002", "--set", "gpu.sms=2", "--set", "gpu.warps_per_sm=8", "--jobs", "1", "--runs", "{tmp}/gr", "--out", "{tmp}/g"}, exitOK},
	"uvmsim experiment grit-validate --scale 0.0625 --set gpu.sms=4 --jobs 2": {
		[]string{"experiment", "grit-validate", "--workloads", "grit-gemm", "--scale", "0.002", "--set", "gpu.sms=2", "--set", "gpu.warps_per_sm=8", "--jobs", "2", "--runs", "{tmp}/gvr", "--out", "{tmp}/gv"}, exitOK},
	"uvmsim experiment grit-fault-latency [--workloads LIST] [--latencies 0,5,20,50] [--scale F] [--jobs N] [--out DIR]": {
		[]string{"experiment", "grit-fault-latency", "--workloads", "grit-gemm", "--latencies", "0,5", "--scale", "0.002", "--set", "gpu.sms=2", "--set", "gpu.warps_per_sm=8", "--jobs", "2", "--out", "{tmp}/gfl2"}, exitOK},
	// The GRIT tables' regeneration commands run on one small workload into
	// a copy of docs/grit.md's markers ({gritdoc}); docs/results keeps the
	// full runs (TestGritDocsAreGenerated in sim/experiment).
	"uvmsim experiment grit-schemes --scale 0.05 --set gpu.sms=4 --jobs 2 --fresh --out docs/results/grit-schemes --doc docs/grit.md": {
		[]string{"experiment", "grit-schemes", "--workloads", "grit-gemm", "--scale", "0.002", "--set", "gpu.sms=2", "--set", "gpu.warps_per_sm=8", "--jobs", "2", "--fresh", "--out", "{tmp}/gsd", "--doc", "{gritdoc}"}, exitOK},
	"uvmsim experiment grit-fault-latency --workloads grit-gemm,grit-st --scale 0.05 --set gpu.sms=4 --jobs 2 --fresh --out docs/results/grit-fault-latency --doc docs/grit.md": {
		[]string{"experiment", "grit-fault-latency", "--workloads", "grit-gemm", "--latencies", "0,20", "--scale", "0.002", "--set", "gpu.sms=2", "--set", "gpu.warps_per_sm=8", "--jobs", "2", "--fresh", "--out", "{tmp}/gfl", "--doc", "{gritdoc}"}, exitOK},
	"uvmsim experiment grit-characterize --out docs/results/grit-characterize --doc docs/grit.md": {
		[]string{"experiment", "grit-characterize", "--workloads", "grit-gemm", "--scale", "0.01", "--out", "{tmp}/gcd", "--doc", "{gritdoc}"}, exitOK},
	"uvmsim experiment grit-characterize [--scale F] [--out DIR]": {
		[]string{"experiment", "grit-characterize", "--workloads", "grit-gemm", "--scale", "0.01", "--out", "{tmp}/gc"}, exitOK},
	"uvmsim COMMAND --help":                                                             {[]string{"run", "--help"}, exitOK},
	"uvmsim run --workload bfs --scale 10000":                                           {[]string{"run", "--workload", "bfs", "--scale", "10000", "--set", "run.max_memory_gb=16"}, exitUsage},
	"uvmsim run --workload bfs --scale 10000 --set run.max_memory_gb=16":                {[]string{"run", "--workload", "bfs", "--scale", "10000", "--set", "run.max_memory_gb=16"}, exitUsage},
	"uvmsim run --workload sssp --scale 10000":                                          {[]string{"run", "--workload", "sssp", "--scale", "10000"}, exitUsage},
	"uvmsim run --workload bfs --scale 1370 --oversub 1000 --set run.max_memory_gb=64":  {[]string{"run", "--workload", "bfs", "--scale", "1370", "--oversub", "1000", "--set", "run.max_memory_gb=64"}, exitUsage},
	"uvmsim run --workload sssp --scale 1024 --oversub 1000 --set run.max_memory_gb=64": {[]string{"run", "--workload", "sssp", "--scale", "1024", "--oversub", "1000", "--set", "run.max_memory_gb=64"}, exitUsage},
	"uvmsim run --workload bfs --scale 1369 --set run.max_memory_gb=1":                  {[]string{"run", "--workload", "bfs", "--scale", "1369", "--set", "run.max_memory_gb=1"}, exitUsage},
	"uvmsim run --workload sssp --scale 1023 --set run.max_memory_gb=0.5":               {[]string{"run", "--workload", "sssp", "--scale", "1023", "--set", "run.max_memory_gb=0.5"}, exitUsage},
	"uvmsim run --workload hotspot --policy uvmmu --oversub 125":                        {[]string{"run", "--workload", "hotspot", "--policy", "uvmmu", "--oversub", "125", "--scale", "0.05"}, exitOK},
	"uvmsim run --workload ra --policy uvmmu --oversub 125 --scale 0.35":                {[]string{"run", "--workload", "ra", "--policy", "uvmmu", "--oversub", "125", "--scale", "0.35"}, exitOK},
	"uvmsim run --workload ra --policy uvmmu --scale 0.01 --vcd run.vcd --vcd-signals 'uvmmu.da.afm.*'": {
		[]string{"run", "--workload", "ra", "--policy", "uvmmu", "--scale", "0.01", "--vcd", "{tmp}/run.vcd", "--vcd-signals", "uvmmu.da.afm.*"}, exitOK},
	"uvmsim run --workload ra --policy uvmmu --oversub 150 --scale 0.5 --set uvmmu.eviction=nru --check": {
		[]string{"run", "--workload", "ra", "--policy", "uvmmu", "--oversub", "150", "--scale", "0.05", "--set", "uvmmu.eviction=nru", "--check"}, exitOK},
	"uvmsim run --workload ra --policy uvmmu --oversub 125 --scale 2 --set uvmmu.eviction=seqlocal": {
		[]string{"run", "--workload", "ra", "--policy", "uvmmu", "--oversub", "125", "--scale", "0.05", "--set", "uvmmu.eviction=seqlocal"}, exitOK},
	"uvmsim sweep --workloads all --policies um,uvmmu --oversub 100,125,150 [--jobs N] [--out DIR] [--scale F] [--seed N] [--config FILE] [--set key=value]... [--fresh] [--slurm ...]": {
		[]string{"sweep", "--workloads", "all", "--policies", "um,uvmmu", "--oversub", "100,125,150", "--scale", "0.001", "--jobs", "2", "--out", "{tmp}/sweep"}, exitOK},
	"uvmsim sweep --policies LIST [--workloads LIST|all] [--oversub LIST]": {
		[]string{"sweep", "--policies", "ideal", "--workloads", "ra,trace:{trace}", "--oversub", "100,150", "--scale", "0.01", "--jobs", "1", "--out", "{tmp}/sweep"}, exitOK},
	"uvmsim sweep --workloads hotspot,ra --policies uvmmu --oversub 100,125,150 --scale 0.5 --out out/uvmmu-small": {
		[]string{"sweep", "--workloads", "hotspot,ra", "--policies", "uvmmu", "--oversub", "100,125,150", "--scale", "0.01", "--jobs", "1", "--out", "{tmp}/sweep"}, exitOK},
	"uvmsim run --preset gtx480 --workload ispass-cp --policy incomplete --set run.page_size=2MB --check": {
		[]string{"run", "--preset", "gtx480", "--workload", "ispass-cp", "--policy", "incomplete", "--set", "run.page_size=2MB", "--scale", "0.25", "--check"}, exitOK},
	"uvmsim experiment incomplete --out out/incomplete --jobs 2": experimentCheck("incomplete"),
	"uvmsim experiment incomplete":                               experimentCheck("incomplete"),
	// The page is a copy of docs/incomplete.md's markers ({incomplete}).
	"uvmsim experiment incomplete --workloads all --out docs/results/incomplete --doc docs/incomplete.md --jobs 2": experimentCheck("incomplete",
		"--doc", "{incomplete}"),
	// P and T stand for each fault-based policy and fault timing; one of the
	// four sweeps runs here.
	"uvmsim sweep --workloads bfs,nw,ra --policies um,uvmsmart --oversub 125,150 --set P.fault_timing=T": {
		[]string{"sweep", "--workloads", "bfs,nw,ra", "--policies", "um,uvmsmart", "--oversub", "125,150", "--set", "uvmsmart.fault_timing=reference", "--scale", "0.01", "--jobs", "2", "--out", "{tmp}/sweep"}, exitOK},
	"uvmsim sweep --policies ideal --workloads all --jobs 1": {
		[]string{"sweep", "--policies", "ideal", "--workloads", "all", "--jobs", "1", "--scale", "0.01", "--out", "{tmp}/sweep"}, exitOK},
	"uvmsim experiment fig1|fig4|fig5|fig6|migration-latency|validate [--out DIR] [--quick] [--workloads LIST] [--scale F] [--seed N] [--config FILE] [--set key=value]... [--fresh] [--slurm ...]": experimentCheck("fig1", "--quick"),
	"uvmsim experiment NAME [--out DIR] [--quick] [--jobs N] [--workloads LIST|all]":                                                                                                                experimentCheck("fig5", "--quick"),
	"uvmsim experiment NAME":                                       experimentCheck("fig6"),
	"uvmsim experiment fig4":                                       experimentCheck("fig4"),
	"out/uvmsim experiment fig4 --out out/fig4":                    experimentCheck("fig4"),
	"out/uvmsim experiment fig4 --jobs $(RUN_JOBS) --out out/fig4": experimentCheck("fig4"),
	"uvmsim experiment validate":                                   experimentCheck("validate"),
	"uvmsim experiment validate --out DIR":                         experimentCheck("validate"),
	"uvmsim experiment suv":                                        experimentCheck("suv"),
	"uvmsim experiment suv-faults":                                 experimentCheck("suv-faults"),
	"uvmsim experiment suv-baselines":                              experimentCheck("suv-baselines"),
	"uvmsim experiment suv-nooversub":                              experimentCheck("suv-nooversub"),
	"uvmsim experiment suv --jobs 2 --out out/suv":                 experimentCheck("suv"),
	"uvmsim run --workload mvt --policy suv --oversub 150":         {[]string{"run", "--workload", "mvt", "--policy", "suv", "--oversub", "150", "--scale", "0.1"}, exitOK},

	// suv-all's lines; {tmp}/suv.md is a copy of docs/suv.md's markers
	// (newDocFixture).
	"uvmsim experiment suv-all":              experimentCheck("suv-all"),
	"uvmsim experiment suv-all --scale 0.25": experimentCheck("suv-all"),
	"uvmsim experiment suv-all --scale 0.25 --out docs/results/suv --doc docs/suv.md --jobs 2": experimentCheck("suv-all", "--doc", "{tmp}/suv.md"),
	"uvmsim experiment suv-all --out docs/results/suv --doc docs/suv.md --jobs 2":              experimentCheck("suv-all", "--doc", "{tmp}/suv.md"),
}

// reference is a command with only flags that take no value here:
// "uvmsim run --json" names a flag, it is not a run.
var reference = regexp.MustCompile(`^uvmsim (run|sweep|experiment|plot|list|signals|report|config|area)((?: --[a-z-]+)*)$`)

// TestDocCommandsRun runs every uvmsim command line of README.md and
// docs/*.md and checks its exit status.
func TestDocCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented command")
	}
	fx := newDocFixture(t)
	seen := map[string]bool{}
	for _, c := range docCommands(t) {
		if seen[c.text] {
			continue
		}
		seen[c.text] = true
		t.Run(c.where, func(t *testing.T) {
			if r, ok := docRuns[c.text]; ok {
				code, _, stderr := run(fx.expand(r.args)...)
				assert.Equal(t, r.code, code, "%s: %q\n%s", c.where, c.text, stderr)
				return
			}
			m := reference.FindStringSubmatch(c.text)
			require.NotNil(t, m, "%s: %q is neither a reference to a command's flags nor in docRuns; add how it runs", c.where, c.text)
			var help strings.Builder
			code := Main([]string{m[1], "--help"}, &help, &help)
			require.Equal(t, exitOK, code, c.text)
			for _, f := range strings.Fields(m[2]) {
				assert.Contains(t, help.String(), f, "%s: %q", c.where, c.text)
			}
		})
	}
}

// docFixture holds the files the documented commands read.
type docFixture struct{ tmp, trace, config, results, incomplete, gritdoc string }

func newDocFixture(t *testing.T) *docFixture {
	t.Helper()
	fx := &docFixture{tmp: t.TempDir(), trace: docExampleTrace(t)}
	fx.config = filepath.Join(fx.tmp, "small.toml")
	require.NoError(t, os.WriteFile(fx.config, []byte("[gpu]\nsms = 4\n"), 0o644))
	suvBegin, suvEnd := experiment.DocMarkers(experiment.SUVAllName)
	require.NoError(t, os.WriteFile(filepath.Join(fx.tmp, "suv.md"), []byte(suvBegin+suvEnd), 0o644))
	fx.incomplete = filepath.Join(fx.tmp, "incomplete.md")
	begin, end := experiment.DocMarkers(experiment.IncompleteName)
	require.NoError(t, os.WriteFile(fx.incomplete, []byte(begin+end), 0o644))
	fx.gritdoc = filepath.Join(fx.tmp, "grit.md")
	var markers string
	for _, name := range gritExperimentNames {
		begin, end := experiment.DocMarkers(name)
		markers += begin + end
	}
	require.NoError(t, os.WriteFile(fx.gritdoc, []byte(markers), 0o644))
	var files []string
	for _, p := range []string{"um", "uvmmu"} {
		js := filepath.Join(fx.tmp, p+".json")
		code, _, stderr := run("run", "--workload", "ra", "--policy", p, "--scale", "0.01", "--json", js)
		require.Equal(t, exitOK, code, stderr)
		files = append(files, js)
	}
	fx.results = filepath.Join(fx.tmp, "results.json")
	var parts []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		parts = append(parts, string(data))
	}
	require.NoError(t, os.WriteFile(fx.results, []byte("["+strings.Join(parts, ",")+"]"), 0o644))
	return fx
}

func (fx *docFixture) expand(args []string) []string {
	r := strings.NewReplacer("{tmp}", fx.tmp, "{trace}", fx.trace, "{config}", fx.config, "{results}", fx.results, "{incomplete}", fx.incomplete, "{gritdoc}", fx.gritdoc)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// Every entry of docRuns is still shown somewhere.
func TestDocRunsAreShown(t *testing.T) {
	shown := map[string]bool{}
	for _, c := range docCommands(t) {
		shown[c.text] = true
	}
	var stale []string
	for text := range docRuns {
		if !shown[text] {
			stale = append(stale, text)
		}
	}
	sort.Strings(stale)
	assert.Empty(t, stale, "docRuns entries no document shows")
}

// A generated sample: a "<!-- uvmsim output: ARGS -->" line followed by a
// code block holding "$ uvmsim ARGS" and what the command prints (stdout,
// then stderr). The wall-time line is the one the generating run printed
// and is not compared.
var (
	sampleMarker = regexp.MustCompile("(?m)^<!-- uvmsim output: (.*) -->\n```\n((?s:.*?))```\n")
	wallLine     = regexp.MustCompile(`(?m)^  wall time .*$`)
)

// TestDocSamples regenerates every sample output in the documents and
// compares it with the text; go test ./sim/cmd/uvmsim -run TestDocSamples
// -update rewrites them.
func TestDocSamples(t *testing.T) {
	found := 0
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		text := string(data)
		changed := false
		text = sampleMarker.ReplaceAllStringFunc(text, func(block string) string {
			found++
			m := sampleMarker.FindStringSubmatch(block)
			args := strings.Fields(m[1])
			_, stdout, stderr := run(args...)
			got := "$ uvmsim " + m[1] + "\n" + stdout + stderr
			if !strings.HasSuffix(got, "\n") {
				got += "\n"
			}
			if *updateDocs {
				changed = changed || got != m[2]
				return "<!-- uvmsim output: " + m[1] + " -->\n```\n" + got + "```\n"
			}
			assert.Equal(t, wallLine.ReplaceAllString(m[2], ""), wallLine.ReplaceAllString(got, ""),
				"%s: the sample of %q differs from what uvmsim prints; go test ./sim/cmd/uvmsim -run TestDocSamples -update", file, m[1])
			return block
		})
		if changed {
			require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
		}
	}
	assert.NotZero(t, found, "the documents show generated samples")
}

// generatedMarker delimits a document's copy of a generated file under
// docs/results, as the command that writes it wrote it.
func generatedMarker(file string) *regexp.Regexp {
	return regexp.MustCompile("(?s)(<!-- generated: docs/results/" + regexp.QuoteMeta(file) + " -->\n)(.*?)(<!-- end of docs/results/" + regexp.QuoteMeta(file) + " -->\n)")
}

// checkGenerated holds doc's generated section to docs/results/file, byte
// for byte; with -update it copies the file in.
func checkGenerated(t *testing.T, doc, file string) {
	t.Helper()
	path := filepath.Join(repoRoot, doc)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	table, err := os.ReadFile(filepath.Join(repoRoot, "docs", "results", file))
	require.NoError(t, err)
	m := generatedMarker(file).FindSubmatchIndex(data)
	require.NotNil(t, m, "%s has no section generated from docs/results/%s", doc, file)
	if *updateDocs {
		out := append(append(append([]byte{}, data[:m[4]]...), table...), data[m[5]:]...)
		require.NoError(t, os.WriteFile(path, out, 0o644))
		return
	}
	assert.Equal(t, string(table), string(data[m[4]:m[5]]),
		"%s's section differs from docs/results/%s; go test ./sim/cmd/uvmsim -run %s -update", doc, file, t.Name())
}

// TestREADMEValidationIsGenerated holds the README's validation section to
// docs/results/validation.md, as `uvmsim experiment validate` wrote it.
func TestREADMEValidationIsGenerated(t *testing.T) {
	checkGenerated(t, "README.md", experiment.ValidationFile)
}

// TestGritValidationIsGenerated holds the GRIT validation table of the
// README and docs/grit.md to docs/results/grit-validation.md, the
// validation.md that `uvmsim experiment grit-validate` wrote.
func TestGritValidationIsGenerated(t *testing.T) {
	checkGenerated(t, "README.md", "grit-validation.md")
	checkGenerated(t, filepath.Join("docs", "grit.md"), "grit-validation.md")
}
