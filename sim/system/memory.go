package system

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// The host memory model of a run, fitted to runtime.MemStats.HeapSys after
// building systems of every workload and policy at scales 1 to 256
// (TestModelMemoryBoundsHeap keeps it above the measurement) and to the
// peak resident set of whole runs:
const (
	// modelBaseBytes: the binary, the Go runtime and the fixed-size blocks
	// (28 SMs of 64 warps with their translate queues, the TLBs, the
	// walkers and the policy's queues): about 55 MB of heap at any scale,
	// 57 to 66 MB resident once built, and up to 83 MB resident at the
	// end of a run at scale 1 (sssp under uvmmu at 125%).
	modelBaseBytes = 96 << 20
	// modelPageBytes: per 4 KB page of the allocations, the page-table
	// entry and the policy's per-page state, about 26 B live (um) and
	// twice that with the collector's headroom.
	modelPageBytes = 64
)

// ModelMemory is the host memory, in bytes, of a run of a workload of the
// given size.
func ModelMemory(size workload.Size) uint64 {
	return modelBaseBytes + size.Bytes/4096*modelPageBytes + size.Host
}

// EstimateMemory predicts the host memory a run of cfg needs, without
// building the workload at its scale (a trace or a graph file is read).
func EstimateMemory(cfg *config.Config) (uint64, error) {
	size, err := workload.SizeOf(cfg.Run.Workload, workload.Params{Scale: cfg.Run.Scale, Seed: cfg.Run.Seed, GraphFile: cfg.Run.GraphFile})
	if err != nil {
		return 0, err
	}
	return ModelMemory(size), nil
}

// MemoryError is a run whose predicted host memory exceeds the limit,
// found before anything large is built.
type MemoryError struct {
	Workload string
	Scale    float64
	Estimate uint64 // bytes
	Limit    uint64 // bytes
	Machine  bool   // the limit is the machine's memory (run.max_memory_gb = 0)
	MaxScale float64
}

func (e *MemoryError) Error() string {
	limit := fmt.Sprintf("run.max_memory_gb = %.1f", gib(e.Limit))
	if e.Machine {
		limit = fmt.Sprintf("this machine's %.1f GB (run.max_memory_gb = 0)", gib(e.Limit))
	}
	msg := fmt.Sprintf("system: workload %s at run.scale = %g needs an estimated %.1f GB of host memory, more than %s",
		e.Workload, e.Scale, gib(e.Estimate), limit)
	if e.MaxScale > 0 {
		msg += fmt.Sprintf("; run.scale = %g fits", e.MaxScale)
	}
	return msg
}

// largestFit is the largest scale below cfg's at which cfg's built-in
// workload is estimated within limit (0 when none is).
func largestFit(cfg *config.Config, limit uint64) float64 {
	fits := func(scale float64) bool {
		size, err := workload.SizeOf(cfg.Run.Workload, workload.Params{Scale: scale, Seed: cfg.Run.Seed})
		return err == nil && ModelMemory(size) <= limit
	}
	lo, hi := 0.0, cfg.Run.Scale
	for range 64 {
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// floorDigits rounds x > 0 down to its first digits significant digits.
func floorDigits(x float64, digits int) float64 {
	if x <= 0 {
		return 0
	}
	unit := math.Pow(10, math.Floor(math.Log10(x))-float64(digits-1))
	return math.Floor(x/unit) * unit
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

// MemoryLimit is run.max_memory_gb in bytes, or the machine's physical
// memory when it is 0 (0, no limit, where the machine's is unknown).
func MemoryLimit(cfg *config.Config) (limit uint64, machine bool) {
	if cfg.Run.MaxMemoryGB > 0 {
		return uint64(cfg.Run.MaxMemoryGB * (1 << 30)), false
	}
	return machineMemory(), true
}

// checkMemory fails with a *MemoryError when a workload of the given size
// needs more host memory than the limit.
func checkMemory(cfg *config.Config, size workload.Size) error {
	limit, machine := MemoryLimit(cfg)
	est := ModelMemory(size)
	if limit == 0 || est <= limit {
		return nil
	}
	e := &MemoryError{Workload: cfg.Run.Workload, Scale: cfg.Run.Scale, Estimate: est, Limit: limit, Machine: machine}
	if _, trace := workload.TraceFile(cfg.Run.Workload); !trace && cfg.Run.GraphFile == "" && limit > modelBaseBytes {
		// A built-in workload's estimate grows with its scale (not always
		// in proportion: sssp's host data is fixed), so the largest scale
		// that fits is found by bisection, then rounded down to the three
		// digits the message prints and kept within what the workload
		// accepts.
		e.MaxScale = min(floorDigits(largestFit(cfg, limit), 3), workload.LargestScale(cfg.Run.Workload))
	}
	return e
}

// machineMemory is MemTotal of /proc/meminfo, or 0 where there is none.
func machineMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "MemTotal:       24576000 kB"
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// checkGPUMemory refuses, before the workload is built, a run whose
// predicted allocations certainly overflow memory.capacity_gb; NewLayout
// checks the exact need once it is built. The GPU memory a run needs is at
// least its allocations / R (device allocations are not divided, and
// managed memory rounds down to whole 2 MB regions, one region less at
// most); the prediction is within a few percent, so 5% is left for it.
func checkGPUMemory(cfg *config.Config, size workload.Size) error {
	capacity := cfg.Memory.CapacityGB * (1 << 30)
	need := float64(size.Bytes)*100/float64(cfg.Run.OversubPct)*0.95 - float64(uint64(1)<<RegionShift)
	if need <= capacity {
		return nil
	}
	return fmt.Errorf("system: workload %s at run.scale = %g needs more than %.0f MB of GPU memory at run.oversub_pct = %d, more than memory.capacity_gb = %g",
		cfg.Run.Workload, cfg.Run.Scale, need/(1<<20), cfg.Run.OversubPct, cfg.Memory.CapacityGB)
}
