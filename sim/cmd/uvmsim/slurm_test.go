package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/experiment"
)

func TestArrayRanges(t *testing.T) {
	assert.Equal(t, "0-3,7,9-10", arrayRanges([]int{0, 1, 2, 3, 7, 9, 10}))
	assert.Equal(t, "5", arrayRanges([]int{5}))
	assert.Equal(t, "", arrayRanges(nil))
}

// slurmPackages are the Debian packages of the one-node test cluster.
var slurmPackages = []string{"slurm-wlm", "munge"}

// skipOrFailSlurm skips with the reason, or fails when UVMMU_REQUIRE_SLURM=1
// (as in CI) demands the Slurm test run.
func skipOrFailSlurm(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("UVMMU_REQUIRE_SLURM") == "1" {
		t.Fatalf("UVMMU_REQUIRE_SLURM=1 but the Slurm test cannot run: "+format, args...)
	}
	t.Skipf("Slurm test skipped: "+format+" (UVMMU_REQUIRE_SLURM=1 makes this a failure)", args...)
}

// requireSlurm makes sure Slurm's daemons and clients and munge are
// installed, installing Debian's packages when running as root.
func requireSlurm(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		skipOrFailSlurm(t, "needs Linux, running on %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		skipOrFailSlurm(t, "not root: the test installs %s and starts munged, slurmctld and slurmd as root", strings.Join(slurmPackages, " and "))
	}
	tools := []string{"sbatch", "squeue", "sinfo", "slurmctld", "slurmd", "munged"}
	missing := func() []string {
		var m []string
		for _, tool := range tools {
			if _, err := exec.LookPath(tool); err != nil {
				m = append(m, tool)
			}
		}
		return m
	}
	if m := missing(); len(m) > 0 {
		if _, err := exec.LookPath("apt-get"); err != nil {
			skipOrFailSlurm(t, "%s missing and no apt-get to install %s", strings.Join(m, ", "), strings.Join(slurmPackages, " "))
		}
		t.Logf("installing %s with apt-get (missing: %s)", strings.Join(slurmPackages, " "), strings.Join(m, ", "))
		install := exec.Command("apt-get", append([]string{"install", "-y", "-qq", "--no-install-recommends"}, slurmPackages...)...)
		install.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := install.CombinedOutput(); err != nil {
			t.Logf("apt-get install failed (%v), updating the package lists: %s", err, lastLines(out, 5))
			update := exec.Command("apt-get", "update", "-qq")
			if out, err := update.CombinedOutput(); err != nil {
				skipOrFailSlurm(t, "apt-get update failed: %v: %s", err, lastLines(out, 5))
			}
			install = exec.Command(install.Path, install.Args[1:]...)
			install.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := install.CombinedOutput(); err != nil {
				skipOrFailSlurm(t, "the packages %s cannot be installed: %v: %s", strings.Join(slurmPackages, " "), err, lastLines(out, 5))
			}
		}
		if m := missing(); len(m) > 0 {
			skipOrFailSlurm(t, "%s still missing after installing %s", strings.Join(m, ", "), strings.Join(slurmPackages, " "))
		}
	}
}

func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startCluster starts a one-node Slurm cluster in a new folder and returns
// its SLURM_CONF; the daemons stop when the test ends.
func startCluster(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script, err := filepath.Abs(filepath.Join("testdata", "slurm-cluster.sh"))
	require.NoError(t, err)
	t.Cleanup(func() {
		out, err := exec.Command("bash", script, "stop", dir).CombinedOutput()
		assert.NoError(t, err, "stopping the cluster: %s", out)
		t.Logf("slurm: daemons stopped by their pid files")
	})
	out, err := exec.Command("bash", script, "start", dir).CombinedOutput()
	require.NoError(t, err, "starting the cluster: %s", out)
	t.Logf("%s", strings.TrimSpace(string(out)))
	return filepath.Join(dir, "slurm.conf")
}

// slurmSweep is a small sweep, 8 runs of a few tenths of a second.
func slurmSweep(out string) []string {
	return []string{"sweep", "--workloads", "hotspot,ra", "--policies", "um,uvmmu", "--oversub", "100,125", "--scale", "0.02", "--out", out}
}

// wallFieldLine matches the lines of an indented result JSON that hold host
// wall time, the only bytes two runs of one configuration may differ in.
var wallFieldLine = regexp.MustCompile(`(?m)^\s*"(wall_seconds|sim_cycles_per_second|warp_instructions_per_second)": [^\n]*\n`)

// recordsWithoutWall is the stored runs and results.csv of an output directory
// with the host wall-time fields taken out, everything else byte for byte.
func recordsWithoutWall(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for name, data := range readRuns(t, dir) {
		m[experiment.RunsDir+"/"+name] = wallFieldLine.ReplaceAllString(string(data), "")
	}
	var csv bytes.Buffer
	for _, row := range deterministicCSV(t, dir) {
		csv.WriteString(strings.Join(row, ",") + "\n")
	}
	m[experiment.ResultsCSV] = csv.String()
	return m
}

func TestSlurmSweepMatchesLocal(t *testing.T) {
	requireSlurm(t)
	conf := startCluster(t)
	bin := uvmsimBinary(t)
	work := t.TempDir()
	run := func(args []string, env ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "uvmsim %s:\n%s", strings.Join(args, " "), stderr.String())
		return stderr.String()
	}
	run(append(slurmSweep("local"), "--jobs", "2"))
	log := run(append(slurmSweep("slurm"), "--slurm"), "SLURM_CONF="+conf)
	t.Logf("uvmsim sweep --slurm:\n%s", log)
	assert.Contains(t, log, "uvmsim: submitted Slurm job ")
	assert.Contains(t, log, "[8/8]")

	local, slurm := recordsWithoutWall(t, filepath.Join(work, "local")), recordsWithoutWall(t, filepath.Join(work, "slurm"))
	require.Len(t, slurm, 8+1)
	assert.Equal(t, keys2(local), keys2(slurm), "the same result file names")
	same := 0
	for name, want := range local {
		if assert.Equal(t, want, slurm[name], "%s differs between the local and the Slurm sweep", name) {
			same++
		}
	}
	t.Logf("local vs Slurm: %d of %d files byte-identical outside the wall-time fields (8 run records and results.csv)", same, len(local))

	// plot rebuilds the same results from the collected directory.
	before, err := os.ReadFile(filepath.Join(work, "slurm", experiment.ResultsCSV))
	require.NoError(t, err)
	run([]string{"plot", "slurm"})
	after, err := os.ReadFile(filepath.Join(work, "slurm", experiment.ResultsCSV))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "uvmsim plot rebuilds results.csv byte for byte")

	// --no-wait returns once submitted; plot assembles the collected runs.
	cmd := exec.Command(bin, "sweep", "--workloads", "ra", "--policies", "um,uvmmu", "--oversub", "100", "--scale", "0.02", "--out", "later", "--slurm", "--no-wait")
	cmd.Dir, cmd.Env = work, append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.Output()
	require.NoError(t, err)
	job := regexp.MustCompile(`^submitted Slurm job (\d+); when it has finished, uvmsim plot later assembles the results`).FindStringSubmatch(string(out))
	require.NotNil(t, job, "%s", out)
	t.Logf("uvmsim sweep --slurm --no-wait: %s", strings.TrimSpace(string(out)))
	waitForJob(t, conf, job[1])
	run([]string{"plot", "later"})
	later := deterministicCSV(t, filepath.Join(work, "later"))
	require.Len(t, later, 1+2)
	whole := deterministicCSV(t, filepath.Join(work, "local"))
	assert.Equal(t, [][]string{whole[0], whole[5], whole[7]}, later, "ra/um/100% and ra/uvmmu/100% as in the local sweep")
	t.Logf("uvmsim plot later: the job's 2 runs assembled, equal to the local sweep's rows")

	// A rerun finds every result stored and submits nothing.
	again := run(append(slurmSweep("slurm"), "--slurm"), "SLURM_CONF="+conf)
	assert.Contains(t, again, "8 of 8 runs already have a result")
	assert.NotContains(t, again, "submitted")
}

// waitForJob waits, up to a minute, until squeue no longer lists the job.
func waitForJob(t *testing.T, conf, job string) {
	t.Helper()
	for range 120 {
		cmd := exec.Command("squeue", "--noheader", "--jobs", job)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		out, err := cmd.Output()
		if err != nil || len(bytes.TrimSpace(out)) == 0 {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Slurm job %s still queued after a minute", job)
}

func keys2(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
