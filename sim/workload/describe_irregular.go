package workload

import (
	"math"

	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// describeRA: the ra kernel. Thread id = bx*256 + tx works when id % 100 == 0
// (a launch-value condition: fraction ceil(N/100) of the launched threads),
// reads input[id] and, at table_index computed from the loaded value,
// table[table_index] and output[table_index] (indirect).
func describeRA(wl *builtin, scale float64) *static.Program {
	n := scaled(raElements, scale, 1, raStride+1)
	blocks := ceilDiv(n, raBlock)
	workers := frac(ceilDiv(n, raStride), blocks*raBlock)
	id := affine(0, term(static.BlockX, raBlock), term(static.ThreadX, 1))
	p := staticProgram(wl)
	p.Kernels = []static.Kernel{{Name: "kernel", GridX: int64(blocks), GridY: 1, BlockX: raBlock, BlockY: 1,
		Ops: []static.MemOp{
			memop("input", static.Read, 4, id, workers),
			indirect("table", static.Read, 4, workers),
			indirect("output", static.Write, 4, workers),
		}}}
	return p
}

// describeBFS: Rodinia BFS, Kernel and Kernel2 per level. Thread tid =
// bx*512 + tx, tid < no_of_nodes. Kernel: if graph_mask[tid] (data-dependent,
// fraction 1), clear it, read graph_nodes[tid] (8 B), then loop over the edges
// from the loaded start for the loaded count (a data-dependent bound): read
// graph_edges[i] (indirect), graph_visited[id] (indirect) and, if unvisited,
// cost[tid], write cost[id] and updating_graph_mask[id] (indirect). Kernel2:
// read updating_graph_mask[tid]; if set, write graph_mask[tid],
// graph_visited[tid], *g_over and updating_graph_mask[tid]. The host loop
// repeats while g_over is set; its counter reaches no kernel.
func describeBFS(wl *builtin, scale float64) *static.Program {
	n := int(allocBytes(wl, "graph_mask")) // one byte per node
	blocks := ceilDiv(n, bfsThreads)
	live := frac(n, blocks*bfsThreads)
	tid := affine(0, term(static.BlockX, bfsThreads), term(static.ThreadX, 1))
	edgeLoop := []static.Loop{{Name: "edges", DataDependent: true}}
	expand := []static.MemOp{
		memop("graph_mask", static.Read, 1, tid, live),
		memop("graph_mask", static.Write, 1, tid, live),
		memop("graph_nodes", static.Read, 8, tid, live),
		inLoops(indirect("graph_edges", static.Read, 4, live), 0),
		inLoops(indirect("graph_visited", static.Read, 1, live), 0),
		inLoops(memop("cost", static.Read, 4, tid, live), 0),
		inLoops(indirect("cost", static.Write, 4, live), 0),
		inLoops(indirect("updating_graph_mask", static.Write, 1, live), 0),
	}
	update := []static.MemOp{
		memop("updating_graph_mask", static.Read, 1, tid, live),
		memop("graph_mask", static.Write, 1, tid, live),
		memop("graph_visited", static.Write, 1, tid, live),
		memop("d_over", static.Write, 1, affine(0), live),
		memop("updating_graph_mask", static.Write, 1, tid, live),
	}
	p := staticProgram(wl)
	for _, ph := range wl.phases {
		if ph.Kernel == nil {
			continue
		}
		k := static.Kernel{Name: ph.Kernel.Name, GridX: int64(blocks), GridY: 1, BlockX: bfsThreads, BlockY: 1, Ops: update}
		if k.Name == "Kernel" {
			k.Loops, k.Ops = edgeLoop, expand
		}
		p.Kernels = append(p.Kernels, k)
	}
	return p
}

// describeNW: needle_cuda_shared_1 at host iterations i = 1..bw (i blocks)
// and needle_cuda_shared_2 at i = bw-1..1 (i blocks), bw = dimension/16.
// Block b works on tile (bx, by) = (b, i-1-b), resp. (b+bw-i, bw-1-b), whose
// top-left element is base = 16*cols*by + 16*bx; the host variable i is in
// every index, so both matrices are Iterative. Thread tx: a 16-trip loop
// reading referrence[base + cols + 1 + cols*ty + tx]; the north-west corner
// itemsets[base] (tx == 0: 1/16 of the threads); the west column
// itemsets[base + cols + cols*tx]; the north row itemsets[base + 1 + tx]; a
// 16-trip loop writing itemsets[base + cols + 1 + cols*ty + tx].
func describeNW(wl *builtin, scale float64) *static.Program {
	dim := scaled(nwDimension, math.Sqrt(scale), nwBlock, nwBlock)
	c, bw := int64(dim+1), int64(dim/nwBlock)
	loops := []static.Loop{{Name: "ref rows", Trips: nwBlock}, {Name: "store rows", Trips: nwBlock}}
	// ops: the operations when base = baseConst + iterCoef*i + blockCoef*b.
	ops := func(baseConst, iterCoef, blockCoef int64) []static.MemOp {
		at := func(off int64, extra ...static.Term) static.Affine {
			return affine(baseConst+off, append([]static.Term{term(static.HostIter, iterCoef), term(static.BlockX, blockCoef)}, extra...)...)
		}
		return []static.MemOp{
			inLoops(memop("referrence", static.Read, 4, at(c+1, term(static.LoopVar(0), c), term(static.ThreadX, 1)), 1), 0),
			memop("itemsets", static.Read, 4, at(0), frac(1, nwBlock)),
			memop("itemsets", static.Read, 4, at(c, term(static.ThreadX, c)), 1),
			memop("itemsets", static.Read, 4, at(1, term(static.ThreadX, 1)), 1),
			inLoops(memop("itemsets", static.Write, 4, at(c+1, term(static.LoopVar(1), c), term(static.ThreadX, 1)), 1), 1),
		}
	}
	// shared_1: base = 16c*(i-1-b) + 16b.
	first := ops(-nwBlock*c, nwBlock*c, nwBlock-nwBlock*c)
	// shared_2: base = 16c*(bw-1-b) + 16*(b+bw-i).
	second := ops(nwBlock*c*(bw-1)+nwBlock*bw, -nwBlock, nwBlock-nwBlock*c)
	p := staticProgram(wl)
	for i := int64(1); i <= bw; i++ {
		p.Kernels = append(p.Kernels, static.Kernel{Name: "needle_cuda_shared_1", GridX: i, GridY: 1, BlockX: nwBlock, BlockY: 1,
			Loops: loops, HostIter: i, HostIters: bw + 1, Ops: first})
	}
	for i := bw - 1; i >= 1; i-- {
		p.Kernels = append(p.Kernels, static.Kernel{Name: "needle_cuda_shared_2", GridX: i, GridY: 1, BlockX: nwBlock, BlockY: 1,
			Loops: loops, HostIter: i, HostIters: bw, Ops: second})
	}
	return p
}

// describeSSSP: initializeArrays, then (Kernel1, Kernel2) per iteration, all
// on blocks of 16 threads, tid = bx*16 + tx < numVertices. initializeArrays
// writes finalizedVertices, shortestDistances and updatingShortestDistances
// at tid. Kernel1: read and (if set, data-dependent: fraction 1) clear
// finalizedVertices[tid]; read vertexArray[tid] and vertexArray[tid+1] and
// shortestDistances[tid]; then loop from the loaded start to the loaded end
// (a data-dependent bound), reading edgeArray and weightArray at the edge
// (indirect) and atomicMin on updatingShortestDistances at the loaded
// destination (a read and an atomic, indirect). Kernel2: read both distances
// at tid; where improved (data-dependent) write shortestDistances and
// finalizedVertices; write updatingShortestDistances. The host loop counter
// reaches no kernel.
func describeSSSP(wl *builtin, scale float64) *static.Program {
	n := scaled(ssspVertices, scale, 1, ssspNeighbours+1)
	blocks := ceilDiv(n, ssspBlock)
	live := frac(n, blocks*ssspBlock)
	tid := affine(0, term(static.BlockX, ssspBlock), term(static.ThreadX, 1))
	next := affine(1, term(static.BlockX, ssspBlock), term(static.ThreadX, 1))
	edges := []static.Loop{{Name: "edges", DataDependent: true}}
	ops := map[string][]static.MemOp{
		"initializeArrays": {
			memop("finalizedVertices", static.Write, 1, tid, live),
			memop("shortestDistances", static.Write, 4, tid, live),
			memop("updatingShortestDistances", static.Write, 4, tid, live),
		},
		"Kernel1": {
			memop("finalizedVertices", static.Read, 1, tid, live),
			memop("finalizedVertices", static.Write, 1, tid, live),
			memop("vertexArray", static.Read, 4, tid, live),
			memop("vertexArray", static.Read, 4, next, live),
			memop("shortestDistances", static.Read, 4, tid, live),
			inLoops(indirect("edgeArray", static.Read, 4, live), 0),
			inLoops(indirect("weightArray", static.Read, 4, live), 0),
			inLoops(indirect("updatingShortestDistances", static.Read, 4, live), 0),
			inLoops(indirect("updatingShortestDistances", static.Atomic, 4, live), 0),
		},
		"Kernel2": {
			memop("shortestDistances", static.Read, 4, tid, live),
			memop("updatingShortestDistances", static.Read, 4, tid, live),
			memop("shortestDistances", static.Write, 4, tid, live),
			memop("finalizedVertices", static.Write, 1, tid, live),
			memop("updatingShortestDistances", static.Write, 4, tid, live),
		},
	}
	p := staticProgram(wl)
	for _, ph := range wl.phases {
		if ph.Kernel == nil {
			continue
		}
		k := static.Kernel{Name: ph.Kernel.Name, GridX: int64(blocks), GridY: 1, BlockX: ssspBlock, BlockY: 1, Ops: ops[ph.Kernel.Name]}
		if k.Name == "Kernel1" {
			k.Loops = edges
		}
		p.Kernels = append(p.Kernels, k)
	}
	return p
}
