package workload

import (
	"fmt"
	"math"
	"sort"
)

// GRIT's eight multi-GPU applications (GRIT Table II; SPEC 7 "Beyond the
// nine"). Their names carry the prefix "grit-" so that they never collide
// with the UVMSmart set (grit-bfs is SHOC's level-synchronous BFS, bfs is
// Rodinia's). They are built by New like the nine, but Names lists only the
// nine single-GPU benchmarks, so the single-GPU experiments and sweeps keep
// their workload set; GRITNames lists these.
//
// Each generator reproduces the kernels that MGPUSim (sarchlab/mgpusim, the
// simulator GRIT was evaluated on) ships for the application, cited by
// file:line under amd/benchmarks/ (commit d01e70d5632a). MGPUSim launches
// one kernel per GPU over a slice of the grid; the model launches one
// kernel over the whole grid and leaves the split across GPUs to the
// thread-block placement of GRIT III-B.
//
// Default sizes give GRIT Table II's footprints within 7% (MB read as MiB):
//
//	grit-bfs   SHOC BFS, 1,677,721 nodes of degree 3         32.0 MiB (32)
//	grit-bs    bitonic sort of 2^23 uints                    32.0 MiB (30)
//	grit-c2d   conv 3x3, batch 16, 3x208x208 -> 3 channels   93.4 MiB (94)
//	grit-fir   16-tap FIR over 20,316,160 samples            155.0 MiB (155)
//	grit-gemm  1024x1024 D = A*B + C                          16.0 MiB (16)
//	grit-mm    1696x1696 float4-tiled C = A*B                 32.9 MiB (33)
//	grit-sc    3x3 convolution of a 4096x4096 image          128.1 MiB (131)
//	grit-st    2048x2048 9-point stencil, 4 iterations       32.3 MiB (33)
//
// Bitonic sort needs a power-of-two length: 2^23 is the nearest to 30 MiB.
var gritGenerators = map[string]generator{
	"grit-bfs":  newGritBFS,
	"grit-bs":   newGritBS,
	"grit-c2d":  newGritC2D,
	"grit-fir":  newGritFIR,
	"grit-gemm": newGritGEMM,
	"grit-mm":   newGritMM,
	"grit-sc":   newGritSC,
	"grit-st":   newGritST,
}

// GRITNames returns the names of GRIT's eight applications, sorted.
func GRITNames() []string {
	names := make([]string, 0, len(gritGenerators))
	for n := range gritGenerators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// GRITFootprintMiB is GRIT Table II's memory footprint of each application.
var GRITFootprintMiB = map[string]float64{
	"grit-bfs": 32, "grit-bs": 30, "grit-c2d": 94, "grit-fir": 155,
	"grit-gemm": 16, "grit-mm": 33, "grit-sc": 131, "grit-st": 33,
}

// stepWarp replays a program of n instructions: step(pc, op) fills
// instruction pc. Memory instructions left with no active lane are skipped,
// as a warp whose threads all take the other side of a branch issues none.
type stepWarp struct {
	pc, n int
	step  func(pc int, op *Op)
}

func (s *stepWarp) Next(op *Op) bool {
	for s.pc < s.n {
		pc := s.pc
		s.pc++
		s.step(pc, op)
		if op.Kind == OpCompute || op.Lanes > 0 {
			return true
		}
	}
	return false
}

// scaledPow2 returns the power of two nearest to n*scale, at least min.
func scaledPow2(n int, scale float64, min int) int {
	v := 1 << int(math.Round(math.Log2(float64(n)*scale)))
	if v < min {
		v = min
	}
	return v
}

// checkIndexRange rejects sizes whose element indices overflow the 32-bit
// integers the benchmarks' kernels compute them in.
func checkIndexRange(name string, elems uint64) error {
	if elems > math.MaxInt32 {
		return fmt.Errorf("workload: %s at this Params.Scale has %d elements per array, beyond the kernel's 32-bit indices (at most %d)", name, elems, math.MaxInt32)
	}
	return nil
}
