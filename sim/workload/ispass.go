package workload

import (
	"sort"
)

// The ISPASS-2009 benchmarks GPGPU-Sim ships (public repository
// gpgpu-sim/ispass2009-benchmarks), the set the incomplete-pages paper
// (Shen et al., NPC 2018, Section 4.1) runs. Each is modelled from its
// kernel's global-memory accesses at the input its README.GPGPU-Sim runs;
// constant and shared memory are on chip and need no translation, so a
// kernel that works in them is compute between its global accesses. They
// are kept apart from the nine UVMMU workloads (Names) so that experiments
// over those stay as they are.
var ispassGenerators = map[string]generator{
	"ispass-bfs": newISPASSBFS,
	"ispass-cp":  newISPASSCP,
	"ispass-lps": newISPASSLPS,
	"ispass-nn":  newISPASSNN,
	"ispass-nqu": newISPASSNQU,
	"ispass-ray": newISPASSRAY,
}

// ISPASSNames returns the ISPASS-2009 workload names, sorted.
func ISPASSNames() []string {
	names := make([]string, 0, len(ispassGenerators))
	for n := range ispassGenerators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ispass-bfs: BFS/kernel.cu and kernel2.cu are Rodinia's BFS kernel pair
// (the bfs workload's), run on BFS/data/graph65536.txt: 65,536 nodes of
// six edges on average, as the Rodinia generator makes them. Scale
// multiplies the node and edge counts.
const (
	ispassBFSNodes = 65536
	ispassBFSEdges = 6 * ispassBFSNodes
)

func newISPASSBFS(p Params, scale float64) (*builtin, error) {
	g := generateRodiniaGraph(scaled(ispassBFSNodes, scale, 1, 2), scaled(ispassBFSEdges, scale, 2, 4), p.Seed)
	w := buildBFS(g)
	w.name = "ispass-bfs"
	return w, nil
}

// ispass-cp: Parboil's coulombic potential, the cuda_short build
// (CP/benchmarks/cp/src/cuda_short): a 256 x 256 grid of floats
// (cuenergy.h VOLSIZEX, VOLSIZEY), 200 atoms in constant memory
// (ATOMCOUNT), blocks of 16 x 8 threads each computing UNROLLX = 2 points
// 16 apart (cuenergy_pre8_coalesce.cu cenergy: one launch, since 200 <
// MAXATOMS). A thread loops over the atoms (about 13 ALU operations each:
// two distances, two reciprocal square roots, two multiply-adds) and then
// read-modify-writes energygrid[outaddr] and energygrid[outaddr + 16].
// Scale multiplies the grid's rows.
const (
	cpGridX, cpGridY = 256, 256
	cpAtoms          = 200
	cpBlockX         = 16
	cpBlockY         = 8
	cpUnroll         = 2
	cpOpsPerAtom     = 13
)

func newISPASSCP(p Params, scale float64) (*builtin, error) {
	rows := scaled(cpGridY, scale, cpBlockY, cpBlockY)
	w := &builtin{name: "ispass-cp", class: Regular}
	iGrid := w.alloc("energygrid", uint64(cpGridX*rows)*4, Managed, false)
	Layout(w.allocs)
	grid := w.base(iGrid)
	gx := cpGridX / (cpBlockX * cpUnroll)
	w.kernel(&Kernel{Name: "cenergy", Blocks: gx * rows / cpBlockY, ThreadsPerBlock: cpBlockX * cpBlockY,
		NewWarp: func(b, wp int) WarpStream {
			bx, by := b%gx, b/gx
			addr := func(l, u int) uint64 {
				tid := wp*WarpSize + l
				tx, ty := tid%cpBlockX, tid/cpBlockX
				x := bx*cpBlockX*cpUnroll + tx + u*cpBlockX
				y := by*cpBlockY + ty
				return grid + 4*uint64(y*cpGridX+x)
			}
			// the atom loop, then load and store of each of the two points.
			return &stepWarp{n: 1 + 2*cpUnroll, step: func(pc int, op *Op) {
				if pc == 0 {
					op.compute(cpAtoms * cpOpsPerAtom)
					return
				}
				u, store := (pc-1)/2, (pc-1)%2 == 1
				kind := OpLoad
				if store {
					kind = OpStore
				}
				op.mem(kind, 4)
				for l := 0; l < WarpSize; l++ {
					op.lane(addr(l, u))
				}
			}}
		}})
	return w, nil
}

// ispass-lps: the 3D Laplace solver (LPS/laplace3d.cu, laplace3d_kernel.cu)
// at its default 100^3 grid, one iteration (REPEAT 1): u1 and u2 are
// pitched arrays (cudaMallocPitch of 400 B rows; a 512 B pitch), blocks of
// 32 x 4 threads over the x-y plane march in z. Per plane a thread loads
// its point of the next plane of u1 and stores its point of u2; the
// block's halo threads (the first 76 of 128: the rows above and below,
// then the columns left and right) load the halo of the next plane.
// Scale multiplies NZ.
const (
	lpsN      = 100
	lpsPitch  = 128 // floats: 400 B rows padded to 512 B
	lpsBlockX = 32
	lpsBlockY = 4
	lpsOps    = 10 // the six-neighbour average and the boundary test
)

func newISPASSLPS(p Params, scale float64) (*builtin, error) {
	nz := scaled(lpsN, scale, 1, 2)
	w := &builtin{name: "ispass-lps", class: Regular}
	plane := uint64(lpsPitch * lpsN)
	iU1 := w.alloc("u1", plane*uint64(nz)*4, Managed, false)
	iU2 := w.alloc("u2", plane*uint64(nz)*4, Managed, false)
	Layout(w.allocs)
	u1, u2 := w.base(iU1), w.base(iU2)
	bx := 1 + (lpsN-1)/lpsBlockX
	by := 1 + (lpsN-1)/lpsBlockY
	const halo = 2 * (lpsBlockX + lpsBlockY + 2)
	w.kernel(&Kernel{Name: "GPU_laplace3d", Blocks: bx * by, ThreadsPerBlock: lpsBlockX * lpsBlockY,
		NewWarp: func(b, wp int) WarpStream {
			x0, y0 := (b%bx)*lpsBlockX, (b/bx)*lpsBlockY
			// own point (i, j) and halo point of thread tid, -1 when none.
			own := func(tid int) (int, int, bool) {
				i, j := x0+tid%lpsBlockX, y0+tid/lpsBlockX
				return i, j, i < lpsN && j < lpsN
			}
			haloPt := func(tid int) (int, int, bool) {
				if tid >= halo {
					return 0, 0, false
				}
				tx, ty := tid%lpsBlockX, tid/lpsBlockX
				var i, j int
				if ty < 2 {
					i, j = tx, ty*(lpsBlockY+1)-1
				} else {
					i, j = (tid%2)*(lpsBlockX+1)-1, tid/2-lpsBlockX-1
				}
				i, j = i+x0, j+y0
				return i, j, i >= 0 && i < lpsN && j >= 0 && j < lpsN
			}
			at := func(base uint64, i, j, k int) uint64 {
				return base + 4*(uint64(k)*plane+uint64(j*lpsPitch+i))
			}
			// plane 0 loads (own, halo), then per plane k: own load of
			// k+1, halo load of k+1, compute, store of u2 at k.
			return &stepWarp{n: 2 + 4*nz, step: func(pc int, op *Op) {
				k, part := (pc-2)/4, (pc-2)%4
				load, pt := 0, own
				switch {
				case pc < 2:
					load, pt = 0, own
					if pc == 1 {
						pt = haloPt
					}
				case part == 2:
					op.compute(lpsOps)
					return
				case part == 3:
					op.mem(OpStore, 4)
					for l := 0; l < WarpSize; l++ {
						if i, j, ok := own(wp*WarpSize + l); ok {
							op.lane(at(u2, i, j, k))
						}
					}
					return
				default:
					if k+1 >= nz {
						op.Lanes = 0
						op.Kind = OpLoad
						return
					}
					load = k + 1
					if part == 1 {
						pt = haloPt
					}
				}
				op.mem(OpLoad, 4)
				for l := 0; l < WarpSize; l++ {
					if i, j, ok := pt(wp*WarpSize + l); ok {
						op.lane(at(u1, i, j, load))
					}
				}
			}}
		}})
	return w, nil
}

// ispass-nn: the convolutional neural network (NN/NN.cu, NN_kernel.cu)
// classifying NUM = 28 images (README.GPGPU-Sim "NN 28"): four kernels,
// one per layer, grid (neurons, images). Layer 1: blocks (6, NUM) of
// 13 x 13 threads, 25 loads of a 5 x 5 window of the 29 x 29 image (and
// the weights) and a store into layer 2. Layer 2: (50, NUM) of 5 x 5,
// 25 x 6 window loads from the 6 layer-2 maps. Layers 3 and 4: (100, NUM)
// and (10, NUM) blocks of one thread, a dot product over 1,250 and 100
// inputs. Scale multiplies NUM.
const (
	nnImages = 28
)

func newISPASSNN(p Params, scale float64) (*builtin, error) {
	num := scaled(nnImages, scale, 1, 1)
	w := &builtin{name: "ispass-nn", class: Regular}
	n := uint64(num)
	iL1 := w.alloc("layer1_neurons", 29*29*n*4, Managed, true)
	iW1 := w.alloc("layer1_weights", 156*4, Managed, true)
	iL2 := w.alloc("layer2_neurons", 13*13*6*n*4, Managed, false)
	iW2 := w.alloc("layer2_weights", 7800*4, Managed, true)
	iL3 := w.alloc("layer3_neurons", 1250*n*4, Managed, false)
	iW3 := w.alloc("layer3_weights", 125100*4, Managed, true)
	iL4 := w.alloc("layer4_neurons", 100*n*4, Managed, false)
	iW4 := w.alloc("layer4_weights", 1010*4, Managed, true)
	iL5 := w.alloc("layer5_neurons", 10*n*4, Managed, false)
	Layout(w.allocs)
	l1, w1, l2, w2, l3, w3, l4, w4, l5 := w.base(iL1), w.base(iW1), w.base(iL2), w.base(iW2), w.base(iL3), w.base(iW3), w.base(iL4), w.base(iW4), w.base(iL5)
	window := [25]int{0, 1, 2, 3, 4, 29, 30, 31, 32, 33, 58, 59, 60, 61, 62, 87, 88, 89, 90, 91, 116, 117, 118, 119, 120}
	window2 := [25]int{0, 1, 2, 3, 4, 13, 14, 15, 16, 17, 26, 27, 28, 29, 30, 39, 40, 41, 42, 43, 52, 53, 54, 55, 56}
	// Layer 1: per window tap, the neuron load and the weight load.
	w.kernel(&Kernel{Name: "executeFirstLayer", Blocks: 6 * num, ThreadsPerBlock: 13 * 13,
		NewWarp: func(b, wp int) WarpStream {
			blk, img := b%6, b/6
			lanes := min(WarpSize, 13*13-wp*WarpSize)
			return &stepWarp{n: 1 + 3*25 + 1, step: func(pc int, op *Op) {
				switch {
				case pc == 0:
					op.mem(OpLoad, 4)
					for l := 0; l < lanes; l++ {
						op.lane(w1 + 4*uint64(blk*26))
					}
				case pc == 76:
					op.mem(OpStore, 4)
					for l := 0; l < lanes; l++ {
						t := wp*WarpSize + l
						op.lane(l2 + 4*uint64(13*13*blk+t+13*13*6*img))
					}
				case (pc-1)%3 == 2:
					op.compute(2)
				case (pc-1)%3 == 0:
					i := (pc - 1) / 3
					op.mem(OpLoad, 4)
					for l := 0; l < lanes; l++ {
						t := wp*WarpSize + l
						x, y := 2*(t%13), 2*(t/13)
						op.lane(l1 + 4*uint64(y*29+x+window[i]+29*29*img))
					}
				default:
					i := (pc - 1) / 3
					op.mem(OpLoad, 4)
					for l := 0; l < lanes; l++ {
						op.lane(w1 + 4*uint64(blk*26+1+i))
					}
				}
			}}
		}})
	// Layer 2: per window tap, six map loads and six weight loads.
	w.kernel(&Kernel{Name: "executeSecondLayer", Blocks: 50 * num, ThreadsPerBlock: 25,
		NewWarp: func(b, wp int) WarpStream {
			blk, img := b%50, b/50
			return &stepWarp{n: 25*13 + 1, step: func(pc int, op *Op) {
				if pc == 25*13 {
					op.mem(OpStore, 4)
					for t := 0; t < 25; t++ {
						op.lane(l3 + 4*uint64(25*blk+t+1250*img))
					}
					return
				}
				i, m := pc/13, pc%13
				switch {
				case m == 12:
					op.compute(6)
				case m%2 == 0:
					op.mem(OpLoad, 4)
					for t := 0; t < 25; t++ {
						x, y := 2*(t%5), 2*(t/5)
						op.lane(l2 + 4*uint64(169*(m/2)+x+13*y+window2[i]+13*13*6*img))
					}
				default:
					op.mem(OpLoad, 4)
					for t := 0; t < 25; t++ {
						op.lane(w2 + 4*uint64(blk*26*6+1+i*6+m/2))
					}
				}
			}}
		}})
	dot := func(name string, neurons, inputs int, in, wt, out uint64, outPer int) {
		w.kernel(&Kernel{Name: name, Blocks: neurons * num, ThreadsPerBlock: 1,
			NewWarp: func(b, _ int) WarpStream {
				blk, img := b%neurons, b/neurons
				return &stepWarp{n: 3*inputs + 1, step: func(pc int, op *Op) {
					i := pc / 3
					switch {
					case pc == 3*inputs:
						op.mem(OpStore, 4)
						op.lane(out + 4*uint64(blk+outPer*img))
					case pc%3 == 0:
						op.mem(OpLoad, 4)
						op.lane(in + 4*uint64(i+inputs*img))
					case pc%3 == 1:
						op.mem(OpLoad, 4)
						op.lane(wt + 4*uint64(blk*(inputs+1)+1+i))
					default:
						op.compute(1)
					}
				}}
			}})
	}
	dot("executeThirdLayer", 100, 1250, l3, w3, l4, 100)
	dot("executeFourthLayer", 10, 100, l4, w4, l5, 10)
	return w, nil
}

// ispass-nqu: the N-Queens solver (NQU/nqueen.cu,
// solve_nqueen_cuda_kernel): blocks of THREAD_NUM = 96 threads; a thread
// loads its starting condition (three mask words at idx = block x 96 +
// tid), backtracks in shared memory (modelled as compute: the solver's
// loop runs about 2,000 ALU operations per condition at n = 10 from a
// 4-queen prefix), the block reduces its sums in shared memory and
// thread 0 stores results[block]. The model runs 24,576 conditions (256
// blocks). Scale multiplies the conditions.
const (
	nquThreads    = 96
	nquConditions = 256 * nquThreads
	nquSolveOps   = 2000
)

func newISPASSNQU(p Params, scale float64) (*builtin, error) {
	steps := scaled(nquConditions, scale, nquThreads, nquThreads)
	w := &builtin{name: "ispass-nqu", class: Regular}
	n := uint64(steps)
	iM := w.alloc("total_masks", 4*n, Managed, true)
	iL := w.alloc("total_l_masks", 4*n, Managed, true)
	iR := w.alloc("total_r_masks", 4*n, Managed, true)
	iRes := w.alloc("results", 4*n/nquThreads, Managed, false)
	Layout(w.allocs)
	masks := [3]uint64{w.base(iM), w.base(iL), w.base(iR)}
	res := w.base(iRes)
	w.kernel(&Kernel{Name: "solve_nqueen_cuda_kernel", Blocks: steps / nquThreads, ThreadsPerBlock: nquThreads,
		NewWarp: func(b, wp int) WarpStream {
			return &stepWarp{n: 3 + 2, step: func(pc int, op *Op) {
				switch {
				case pc < 3:
					op.mem(OpLoad, 4)
					for l := 0; l < WarpSize; l++ {
						op.lane(masks[pc] + 4*uint64(b*nquThreads+wp*WarpSize+l))
					}
				case pc == 3:
					op.compute(nquSolveOps)
				case wp == 0:
					op.mem(OpStore, 4)
					op.lane(res + 4*uint64(b))
				default:
					op.Kind, op.Lanes = OpStore, 0
				}
			}}
		}})
	return w, nil
}

// ispass-ray: the ray tracer (RAY/rayTracing.cu, rayTracing_kernel.cu) at
// 256 x 256 pixels (README.GPGPU-Sim "RAY 256 256"), blocks of 16 x 8
// threads. The scene is in constant memory (cnode), so a thread's work is
// compute (the intersection tests over the objects for each reflection;
// about 1,500 ALU operations per pixel) and one global store of its pixel
// into d_output. Scale multiplies the image's rows.
const (
	rayWidth, rayHeight = 256, 256
	rayBlockX           = 16
	rayBlockY           = 8
	rayOps              = 1500
)

func newISPASSRAY(p Params, scale float64) (*builtin, error) {
	rows := scaled(rayHeight, scale, rayBlockY, rayBlockY)
	w := &builtin{name: "ispass-ray", class: Regular}
	iOut := w.alloc("d_output", uint64(rayWidth*rows)*4, Managed, false)
	Layout(w.allocs)
	out := w.base(iOut)
	gx := rayWidth / rayBlockX
	w.kernel(&Kernel{Name: "render", Blocks: gx * rows / rayBlockY, ThreadsPerBlock: rayBlockX * rayBlockY,
		NewWarp: func(b, wp int) WarpStream {
			bx, by := b%gx, b/gx
			return &stepWarp{n: 2, step: func(pc int, op *Op) {
				if pc == 0 {
					op.compute(rayOps)
					return
				}
				op.mem(OpStore, 4)
				for l := 0; l < WarpSize; l++ {
					t := wp*WarpSize + l
					x, y := bx*rayBlockX+t%rayBlockX, by*rayBlockY+t/rayBlockX
					op.lane(out + 4*uint64(y*rayWidth+x))
				}
			}}
		}})
	return w, nil
}
