// Package workload generates the warp instruction streams the simulated GPU
// executes (SPEC 6.1, 7): the nine benchmarks the UVMSmart simulator ships
// (backprop, fdtd, hotspot, srad, 2dconv, bfs, sssp, nw, ra), GRIT's eight
// multi-GPU applications (grit-*, see grit.go and docs/grit.md), and
// workloads read from the text trace format of docs/trace-format.md.
//
// A workload declares its allocations in the benchmark's order, with the
// benchmark's sizes and whether it used cudaMallocManaged (Managed) or
// cudaMalloc (Device), and its phases: kernel launches in order and the host
// accesses to managed memory between them. Layout places the allocations
// from VABase on 2 MB boundaries, so every lane address is a fixed function
// of the workload's parameters.
//
// Each kernel's warps replay what the benchmark's threads do, in program
// order: which arrays they read and write at which indices, with the
// kernel's branches deciding the active lanes. Lanes of a warp are threads
// 32w .. 32w+31 of the block in CUDA's x-fastest order, so the coalescing
// of consecutive threads falls out of the addresses. Arithmetic between
// memory instructions becomes one OpCompute of CyclesPerALUOp cycles per
// counted ALU instruction. Shared memory and barriers are not modelled.
//
// Regular workloads compute every address arithmetically from (block,
// warp, instruction), so any Scale works without per-warp storage. The
// graph workloads run their algorithm in Go once at construction and keep
// its outcome compactly (bfs: a level per node; sssp: one bit per vertex
// and iteration) plus the graph (bfs: 4 B per edge and 8 B per node; sssp:
// edges are redrawn from the seed on demand); ra draws its random indices
// from (Seed, thread id).
//
// What Scale multiplies, per workload:
//
//	backprop  input units (multiple of 16)
//	fdtd      rows NX (rows stay 1200 floats)
//	hotspot   grid rows (rows stay 1024 floats)
//	srad      image rows (multiple of 16; rows stay 1024 floats)
//	2dconv    rows NI (rows stay 1024 floats)
//	bfs       nodes and edges of the generated graph
//	sssp      vertices
//	nw        matrix area (the dimension grows by sqrt(Scale), multiple of 16)
//	ra        N
package workload
