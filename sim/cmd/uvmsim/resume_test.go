package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/experiment"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// uvmsimBinary builds this command once per test binary, for the tests
// that run it as a separate process (signals, Slurm).
func uvmsimBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "uvmsim-bin")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "uvmsim")
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, binaryErr)
	return binaryPath
}

// resumeSweep is a sweep of 8 small runs, one at a time, about 5 s.
func resumeSweep(dir string) []string {
	return []string{"sweep", "--workloads", "hotspot,ra", "--policies", "um,uvmmu", "--oversub", "100,125",
		"--scale", "0.05", "--jobs", "1", "--out", dir}
}

// deterministicCSV is results.csv without the wall-time columns.
func deterministicCSV(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, experiment.ResultsCSV))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	var keep []int
	for i, c := range rows[0] {
		if !experiment.IsWallColumn(c) {
			keep = append(keep, i)
		}
	}
	var out [][]string
	for _, r := range rows {
		var cells []string
		for _, i := range keep {
			cells = append(cells, r[i])
		}
		out = append(out, cells)
	}
	return out
}

// readRuns maps each stored run's file name to its bytes.
func readRuns(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, experiment.RunsDir, "*"))
	require.NoError(t, err)
	m := map[string][]byte{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		m[filepath.Base(n)] = data
	}
	return m
}

// startUntil starts the command and returns once its stderr has shown
// the given number of finished-run lines.
// The returned wait ends the command and returns its whole stderr.
func startUntil(t *testing.T, bin string, args []string, finished int) (*exec.Cmd, func() (string, error)) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var log strings.Builder
	sc := bufio.NewScanner(pipe)
	for n := 0; n < finished && sc.Scan(); {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), " done in ") {
			n++
		}
	}
	return cmd, func() (string, error) {
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
		err := cmd.Wait()
		return log.String(), err
	}
}

func TestSweepKilledThenResumedMatchesUninterrupted(t *testing.T) {
	bin := uvmsimBinary(t)
	dir := t.TempDir()
	cmd, wait := startUntil(t, bin, resumeSweep(dir), 2)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	log, _ := wait()
	t.Logf("killed after:\n%s", log)
	before := readRuns(t, dir)
	require.GreaterOrEqual(t, len(before), 2)
	require.Less(t, len(before), 8, "the sweep finished before the kill")
	for name := range before {
		assert.Regexp(t, `^[a-z]+-[a-z]+-\d+-[0-9a-f]{16}\.json$`, name, "a complete record, no temporary file")
	}

	var stdout, stderr bytes.Buffer
	resume := exec.Command(bin, resumeSweep(dir)...)
	resume.Stdout, resume.Stderr = &stdout, &stderr
	require.NoError(t, resume.Run(), stderr.String())
	t.Logf("resumed:\n%s", stderr.String())
	assert.Contains(t, stderr.String(), "uvmsim: "+strconv.Itoa(len(before))+" of 8 runs already have a result in "+dir+", skipped")
	assert.Contains(t, stderr.String(), "uvmsim: simulating "+strconv.Itoa(8-len(before))+" of 8 runs")
	assert.Equal(t, 8-len(before), strings.Count(stderr.String(), " done in "), "only the missing runs are simulated")
	after := readRuns(t, dir)
	require.Len(t, after, 8)
	for name, data := range before {
		assert.Equal(t, string(data), string(after[name]), "%s was simulated again (its wall time would differ)", name)
	}

	whole := t.TempDir()
	var wholeErr bytes.Buffer
	straight := exec.Command(bin, resumeSweep(whole)...)
	straight.Stderr = &wholeErr
	require.NoError(t, straight.Run(), wholeErr.String())
	if d := cmp.Diff(deterministicCSV(t, whole), deterministicCSV(t, dir)); d != "" {
		t.Errorf("resumed results.csv differs from an uninterrupted sweep (-whole +resumed):\n%s", d)
	}
	assert.Equal(t, keys(readRuns(t, whole)), keys(after), "the same result file names")
}

func TestSweepInterruptedWritesWhatFinished(t *testing.T) {
	bin := uvmsimBinary(t)
	dir := t.TempDir()
	cmd, wait := startUntil(t, bin, resumeSweep(dir), 1)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	log, err := wait()
	t.Logf("interrupted:\n%s", log)
	assert.Contains(t, log, "uvmsim: interrupt: starting no new runs; the running ones finish and are saved")
	assert.Regexp(t, `uvmsim: interrupted: \d of 8 runs finished and are saved in `, log)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "exit non-zero")
	assert.NotZero(t, exit.ExitCode())
	runs := readRuns(t, dir)
	require.NotEmpty(t, runs)
	rows := deterministicCSV(t, dir)
	assert.Len(t, rows, 1+len(runs), "results.csv holds every finished run")
}

func keys(m map[string][]byte) []string {
	return slices.Sorted(maps.Keys(m))
}
