package tb

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/system"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// systemSpeedOversub and systemSpeedPolicies are the full-system runs of
// TestSpeed: the oversubscription of the papers' headline comparison, under
// the baseline driver, the UVMMU and the ideal bound.
const systemSpeedOversub = 150

var systemSpeedPolicies = []string{"um", "uvmmu", "ideal"}

// systemSpeedRow is one workload and policy of the full-system table:
// medians over the runs.
type systemSpeedRow struct {
	workload, policy     string
	footprint            uint64 // bytes of the workload's allocations
	warpInstr, evaluated uint64
	instrRate, cycleRate float64
	setupSeconds         float64 // building the workload and the system
	wallSeconds          float64 // the simulation loop (Result.WallSeconds)
}

// measureSystemSpeed runs every built-in workload under each policy of
// systemSpeedPolicies in the fast kernel, as uvmsim run does, timing the
// set-up (policy.New and system.New) apart from the simulation loop.
func measureSystemSpeed(t *testing.T, scale float64, runs int) []systemSpeedRow {
	var rows []systemSpeedRow
	for _, wl := range workload.Names() {
		for _, pol := range systemSpeedPolicies {
			cfg := config.Default()
			cfg.Run.Workload, cfg.Run.Policy = wl, pol
			cfg.Run.OversubPct, cfg.Run.Scale = systemSpeedOversub, scale
			require.NoError(t, cfg.Validate())
			row := systemSpeedRow{workload: wl, policy: pol}
			var instr, cyc, setup, wall []float64
			for range runs {
				start := time.Now()
				p, err := policy.New(pol, &cfg)
				require.NoError(t, err)
				s, err := system.New(&cfg, p)
				require.NoError(t, err)
				setup = append(setup, time.Since(start).Seconds())
				r, err := s.Run(p, system.Options{})
				require.NoError(t, err)
				row.footprint, row.warpInstr, row.evaluated = r.FootprintBytes, r.WarpInstructions, r.EvaluatedCycles
				instr = append(instr, float64(r.WarpInstructions)/r.WallSeconds)
				cyc = append(cyc, float64(r.EvaluatedCycles)/r.WallSeconds)
				wall = append(wall, r.WallSeconds)
			}
			row.instrRate, row.cycleRate = median(instr), median(cyc)
			row.setupSeconds, row.wallSeconds = median(setup), median(wall)
			rows = append(rows, row)
		}
	}
	return rows
}

// systemSpeedSummary is one policy's line under the full-system table:
// medians over the workloads of their median rates, and the total of the
// median loop times.
type systemSpeedSummary struct {
	policy               string
	instrRate, cycleRate float64
	wallSeconds          float64
}

func summarizeSystemSpeed(rows []systemSpeedRow) []systemSpeedSummary {
	var out []systemSpeedSummary
	for _, pol := range systemSpeedPolicies {
		sum := systemSpeedSummary{policy: pol}
		var instr, cyc []float64
		for _, r := range rows {
			if r.policy == pol {
				instr, cyc = append(instr, r.instrRate), append(cyc, r.cycleRate)
				sum.wallSeconds += r.wallSeconds
			}
		}
		if len(instr) > 0 {
			sum.instrRate, sum.cycleRate = median(instr), median(cyc)
			out = append(out, sum)
		}
	}
	return out
}

// loadAverage is the 1, 5 and 15 minute load averages of /proc/loadavg.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

// describeMachine names the machine a measurement ran on: processor,
// cores, memory, Go, Verilator, and the load when it started.
func describeMachine() string {
	cpu, mem, load := "unknown processor", "unknown memory", loadAverage()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		if line, _, _ := strings.Cut(string(data), "\n"); strings.HasPrefix(line, "MemTotal:") {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "MemTotal:"), "%g", &kb); err == nil {
				mem = fmt.Sprintf("%.1f GB memory", kb/(1<<20))
			}
		}
	}
	return fmt.Sprintf("%s, %d hardware threads, %s; %s %s/%s; %s; load average at start %s; %s",
		cpu, runtime.NumCPU(), mem, runtime.Version(), runtime.GOOS, runtime.GOARCH,
		verilatorVersion(), load, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}

// verilatorVersion is the first line of verilator --version.
func verilatorVersion() string {
	out, err := exec.Command("verilator", "--version").Output()
	if err != nil {
		return "Verilator (version unknown)"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// speedReport is docs/performance.md: both tables, the machine and the
// load at the start and at the end, and how long the measurement took.
func speedReport(machine, endLoad string, elapsed time.Duration, rows []speedRow, sys []systemSpeedRow, cycles uint64, runs int, scale float64) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Performance\n\n")
	fmt.Fprintf(&b, "Written by `make speed` (`TestSpeed` in `tb/speed_test.go`); regenerate it\n")
	fmt.Fprintf(&b, "with that command (`SPEED_CYCLES=%d SPEED_RUNS=%d SPEED_SCALE=%g` here). Every\n", cycles, runs, scale)
	fmt.Fprintf(&b, "figure is the median of %d runs, one at a time; the measurement took %.0f s.\n\n", runs, elapsed.Seconds())
	fmt.Fprintf(&b, "Machine: %s; load average at the end %s. A load above 0 means\n", machine, endLoad)
	fmt.Fprintf(&b, "other processes shared the cores, and every rate below is lower than on an\n")
	fmt.Fprintf(&b, "idle machine.\n\n")
	fmt.Fprintf(&b, "## Go models against Verilator -O3\n\n")
	fmt.Fprintf(&b, "The same %d-cycle stimulus through the Go model in the fast kernel (as a\n", cycles)
	fmt.Fprintf(&b, "simulation runs it), in the checked kernel the tests use, and through a\n")
	fmt.Fprintf(&b, "Verilator -O3 build of the emitted RTL; output checksums compared.\n\n")
	fmt.Fprintln(&b, "| top | Go fast cycles/s | Go checked cycles/s | Verilator cycles/s | Go fast / Verilator | Go fast / checked | checksums equal |")
	fmt.Fprintln(&b, "|---|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.0f | %.2f | %.2f | %t |\n", r.top, r.goRate, r.checkedRate, r.verilatorRate, r.goRate/r.verilatorRate, r.goRate/r.checkedRate, r.sumsEqual)
	}
	fmt.Fprintf(&b, "\n## Full system\n\n")
	fmt.Fprintf(&b, "Every built-in workload at scale %g, %d%% oversubscription, default\n", scale, systemSpeedOversub)
	fmt.Fprintf(&b, "configuration otherwise (one thread, fast kernel). Set-up is building the\n")
	fmt.Fprintf(&b, "workload and the system; the rates are of the simulation loop alone\n")
	fmt.Fprintf(&b, "(`Result.WallSeconds`).\n\n")
	fmt.Fprintln(&b, "| workload | policy | footprint MB | warp instructions | evaluated cycles | set-up s | loop s | warp instructions/s | evaluated cycles/s |")
	fmt.Fprintln(&b, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range sys {
		fmt.Fprintf(&b, "| %s | %s | %.1f | %d | %d | %.2f | %.2f | %.3g | %.3g |\n", r.workload, r.policy, float64(r.footprint)/(1<<20),
			r.warpInstr, r.evaluated, r.setupSeconds, r.wallSeconds, r.instrRate, r.cycleRate)
	}
	fmt.Fprintf(&b, "\nPer policy, the median over the workloads of their warp instructions/s and\n")
	fmt.Fprintf(&b, "evaluated cycles/s, and the sum of their loop times:\n\n")
	fmt.Fprintln(&b, "| policy | warp instructions/s | evaluated cycles/s | loop s, all workloads |")
	fmt.Fprintln(&b, "|---|---:|---:|---:|")
	for _, s := range summarizeSystemSpeed(sys) {
		fmt.Fprintf(&b, "| %s | %.3g | %.3g | %.2f |\n", s.policy, s.instrRate, s.cycleRate, s.wallSeconds)
	}
	return b.String()
}
