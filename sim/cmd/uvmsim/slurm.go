package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/experiment"
)

// SlurmDir is the folder of an output directory that holds the job script
// and each array task's log.
const SlurmDir = "slurm"

// runSlurm submits the plan's specs that have no stored result as one
// Slurm job array: task i runs this binary with the same flags and
// --slurm-task i, so each task configures, simulates and stores its run
// exactly as a local run does. It waits for the job (sbatch --wait), or
// returns at once with --no-wait, and then assembles the results.
func runSlurm(pl *experiment.Plan, base config.Config, cfgs []config.Config, b *batchFlags, fs *pflag.FlagSet, stdout, stderr io.Writer, show func([]experiment.Outcome, experiment.RunSummary) error) error {
	if err := experiment.WritePlan(b.out, pl); err != nil {
		return usage("--out: %v", err)
	}
	pending, shared := experiment.Pending(pl.Specs, cfgs, b.out)
	if skipped := len(shared) - len(pending); skipped > 0 {
		fmt.Fprintf(stderr, "uvmsim: %d of %d runs already have a result in %s, skipped (--fresh starts over)\n", skipped, len(shared), b.out)
	}
	if len(pending) > 0 {
		script, err := writeJobScript(pl, b, fs, pending)
		if err != nil {
			return usage("--out: %v", err)
		}
		job, err := sbatch(script, b, len(pending), stderr)
		if err != nil {
			return err
		}
		if b.noWait {
			fmt.Fprintf(stdout, "submitted Slurm job %s; when it has finished, uvmsim plot %s assembles the results\n", job, b.out)
			return nil
		}
		if err := waitSlurm(job, pl, cfgs, pending, len(shared), b.out, stderr); err != nil {
			return err
		}
	}
	outcomes, err := experiment.Run(pl.Specs, experiment.Options{Base: base, Dir: b.out, StoredOnly: true})
	if err != nil {
		return err
	}
	sum, err := experiment.Assemble(pl, outcomes, b.out, stdout)
	if err != nil {
		return usage("--out: %v", err)
	}
	return show(outcomes, sum)
}

// writeJobScript writes DIR/slurm/job.sh, an sbatch script of one array
// task per pending spec index.
func writeJobScript(pl *experiment.Plan, b *batchFlags, fs *pflag.FlagSet, pending []int) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	dir, err := filepath.Abs(filepath.Join(b.out, SlurmDir))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	command := []string{exe}
	command = append(command, taskArgs(pl, fs)...)
	quoted := make([]string, len(command))
	for i, a := range command {
		quoted[i] = shellQuote(a)
	}
	script := fmt.Sprintf(`#!/bin/sh
# uvmsim %s: one array task per run without a stored result.
#SBATCH --job-name=uvmsim-%s
#SBATCH --array=%s
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --chdir=%s
#SBATCH --output=%s/%%A_%%a.out
exec %s --slurm-task "$SLURM_ARRAY_TASK_ID"
`, pl.Command, pl.Command, arrayRanges(pending), cwd, dir, strings.Join(quoted, " "))
	path := filepath.Join(dir, "job.sh")
	return path, experiment.WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, script); return err })
}

// taskArgs is the command line of a task: the command and its arguments,
// and every flag given except those that only shape the submission.
func taskArgs(pl *experiment.Plan, fs *pflag.FlagSet) []string {
	args := []string{experiment.SweepCommand}
	if pl.Command != experiment.SweepCommand {
		args = []string{"experiment", pl.Command}
	}
	fs.Visit(func(f *pflag.Flag) {
		if slices.Contains(submitOnlyFlags, f.Name) {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return args
}

// arrayRanges writes sorted indices as sbatch --array ranges: 0-3,7,9-10.
func arrayRanges(idx []int) string {
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(idx[i]))
		} else {
			parts = append(parts, strconv.Itoa(idx[i])+"-"+strconv.Itoa(idx[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sbatch submits the script and returns the job id.
func sbatch(script string, b *batchFlags, tasks int, stderr io.Writer) (string, error) {
	args := append(append([]string{"--parsable"}, strings.Fields(b.slurmOpts)...), script)
	var out bytes.Buffer
	cmd := exec.Command("sbatch", args...)
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("--slurm: sbatch %s: %v (is Slurm's sbatch installed and on PATH?)", strings.Join(args, " "), err)
	}
	job, _, _ := strings.Cut(strings.TrimSpace(out.String()), ";")
	fmt.Fprintf(stderr, "uvmsim: submitted Slurm job %s: %d array tasks (%s, logs in %s)\n", job, tasks, script, filepath.Dir(script))
	return job, nil
}

// slurmPoll is how often waitSlurm looks at the stored runs and the queue.
const slurmPoll = time.Second

// waitSlurm follows the job: one line per run whose result appears in the
// output directory, until the job has left the queue (squeue lists it no
// more). A task that failed leaves its run without a result, which the
// assembly reports.
func waitSlurm(job string, pl *experiment.Plan, cfgs []config.Config, pending []int, total int, dir string, stderr io.Writer) error {
	left := slices.Clone(pending)
	done := total - len(pending)
	start := time.Now()
	fmt.Fprintf(stderr, "uvmsim: waiting for Slurm job %s (--no-wait returns at once)\n", job)
	for {
		out, err := exec.Command("squeue", "--noheader", "--jobs", job, "--format", "%i").Output()
		queued := err == nil && len(bytes.TrimSpace(out)) > 0
		still := left[:0]
		for _, i := range left {
			if _, err := experiment.ReadRecord(dir, &cfgs[i]); err != nil {
				still = append(still, i)
				continue
			}
			done++
			eta := time.Duration(0)
			if simulated := done - (total - len(pending)); simulated > 0 {
				eta = (time.Since(start) / time.Duration(simulated) * time.Duration(total-done)).Round(time.Second)
			}
			fmt.Fprintf(stderr, "uvmsim: [%d/%d] %s stored by Slurm job %s; ETA %s\n", done, total, pl.Specs[i], job, eta)
		}
		left = still
		if !queued || len(left) == 0 {
			if len(left) > 0 {
				fmt.Fprintf(stderr, "uvmsim: Slurm job %s has ended; %d runs stored no result (see %s)\n", job, len(left), filepath.Join(dir, SlurmDir))
			}
			return nil
		}
		time.Sleep(slurmPoll)
	}
}

// slurmTask runs the simulation of the spec a Slurm array task was given
// (shared by the specs of the same configuration) into --out, with the
// same resume check and record as a local run.
func slurmTask(pl *experiment.Plan, base config.Config, cfgs []config.Config, b *batchFlags, stdout io.Writer) error {
	if b.slurmTask >= len(pl.Specs) {
		return usage("--slurm-task = %d out of range; allowed: 0 to %d", b.slurmTask, len(pl.Specs)-1)
	}
	if err := experiment.PrepareDir(b.out, false); err != nil {
		return outDirError(err)
	}
	_, shared := experiment.Pending(pl.Specs, cfgs, "")
	var specs []experiment.Spec
	for _, j := range shared[b.slurmTask] {
		specs = append(specs, pl.Specs[j])
	}
	if len(specs) == 0 {
		return usage("--slurm-task = %d is not the first spec of its configuration", b.slurmTask)
	}
	outcomes, err := experiment.Run(specs, experiment.Options{Jobs: 1, Base: base, Dir: b.out, Progress: stdout})
	if err != nil {
		return err
	}
	return experiment.Failures(outcomes)
}
