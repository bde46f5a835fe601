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
// the baseline driver and the UVMMU.
const systemSpeedOversub = 150

var systemSpeedPolicies = []string{"um", "uvmmu"}

// systemSpeedRow is one workload and policy of the full-system table:
// medians over the runs.
type systemSpeedRow struct {
	workload, policy     string
	warpInstr, evaluated uint64
	instrRate, cycleRate float64
	wallSeconds          float64
}

// measureSystemSpeed runs every built-in workload under each policy of
// systemSpeedPolicies in the fast kernel, as uvmsim run does.
func measureSystemSpeed(t *testing.T, scale float64, runs int) []systemSpeedRow {
	var rows []systemSpeedRow
	for _, wl := range workload.Names() {
		for _, pol := range systemSpeedPolicies {
			cfg := config.Default()
			cfg.Run.Workload, cfg.Run.Policy = wl, pol
			cfg.Run.OversubPct, cfg.Run.Scale = systemSpeedOversub, scale
			require.NoError(t, cfg.Validate())
			row := systemSpeedRow{workload: wl, policy: pol}
			var instr, cyc, wall []float64
			for range runs {
				p, err := policy.New(pol, &cfg)
				require.NoError(t, err)
				s, err := system.New(&cfg, p)
				require.NoError(t, err)
				r, err := s.Run(p, system.Options{})
				require.NoError(t, err)
				row.warpInstr, row.evaluated = r.WarpInstructions, r.EvaluatedCycles
				instr = append(instr, float64(r.WarpInstructions)/r.WallSeconds)
				cyc = append(cyc, float64(r.EvaluatedCycles)/r.WallSeconds)
				wall = append(wall, r.WallSeconds)
			}
			row.instrRate, row.cycleRate, row.wallSeconds = median(instr), median(cyc), median(wall)
			rows = append(rows, row)
		}
	}
	return rows
}

// describeMachine names the machine a measurement ran on: processor,
// cores, memory, Go, Verilator, and the load when it started.
func describeMachine() string {
	cpu, mem, load := "unknown processor", "unknown memory", "unknown"
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
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(data))[:3], " ")
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

// speedReport is docs/performance.md: both tables and the machine.
func speedReport(machine string, rows []speedRow, sys []systemSpeedRow, cycles uint64, runs int, scale float64) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Performance\n\n")
	fmt.Fprintf(&b, "Written by `make speed` (`TestSpeed` in `tb/speed_test.go`); regenerate it\n")
	fmt.Fprintf(&b, "with that command. Every figure is the median of %d runs.\n\n", runs)
	fmt.Fprintf(&b, "Machine: %s.\n\n", machine)
	fmt.Fprintf(&b, "## Go models against Verilator -O3\n\n")
	fmt.Fprintf(&b, "The same %d-cycle stimulus through the Go model in the fast kernel (as a\n", cycles)
	fmt.Fprintf(&b, "simulation runs it), in the checked kernel the tests use, and through a\n")
	fmt.Fprintf(&b, "Verilator -O3 build of the emitted RTL; output checksums compared.\n\n")
	fmt.Fprintln(&b, "| top | Go fast cycles/s | Go checked cycles/s | Verilator cycles/s | Go fast / Verilator | checksums equal |")
	fmt.Fprintln(&b, "|---|---:|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.0f | %.2f | %t |\n", r.top, r.goRate, r.checkedRate, r.verilatorRate, r.goRate/r.verilatorRate, r.sumsEqual)
	}
	fmt.Fprintf(&b, "\n## Full system\n\n")
	fmt.Fprintf(&b, "Every built-in workload at scale %g, %d%% oversubscription, default\n", scale, systemSpeedOversub)
	fmt.Fprintf(&b, "configuration otherwise (one thread), wall time of the simulation loop.\n\n")
	fmt.Fprintln(&b, "| workload | policy | warp instructions | evaluated cycles | wall s | warp instructions/s | evaluated cycles/s |")
	fmt.Fprintln(&b, "|---|---|---:|---:|---:|---:|---:|")
	for _, r := range sys {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.2f | %.3g | %.3g |\n", r.workload, r.policy, r.warpInstr, r.evaluated, r.wallSeconds, r.instrRate, r.cycleRate)
	}
	return b.String()
}
