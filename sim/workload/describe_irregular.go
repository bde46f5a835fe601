package workload

import "github.com/uvmmu/uvmmu/sim/workload/static"

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
	n := int(wl.allocs[1].Bytes) // graph_mask: one byte per node
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
