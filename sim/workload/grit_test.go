package workload

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GRIT Table II footprints are reproduced within 7%: bitonic sort needs a
// power-of-two length (32 MiB against 30) and SimpleConvolution a square
// 4096 image (128 MiB against 131).
func TestGRITFootprintsMatchTableII(t *testing.T) {
	for _, name := range GRITNames() {
		t.Run(name, func(t *testing.T) {
			wl := mustNew(t, name, Params{Seed: 1})
			got := float64(wl.Footprint()) / (1 << 20)
			want := GRITFootprintMiB[name]
			assert.InEpsilon(t, want, got, 0.07, "%s footprint %.1f MiB, Table II %v", name, got, want)
		})
	}
}

func TestGRITNamesAreSeparateFromTheNine(t *testing.T) {
	assert.Equal(t, []string{"grit-bfs", "grit-bs", "grit-c2d", "grit-fir", "grit-gemm", "grit-mm", "grit-sc", "grit-st"}, GRITNames())
	for _, n := range GRITNames() {
		assert.NotContains(t, Names(), n)
	}
	_, err := New("grit-lud", Params{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "grit-bfs")
}

// Every lane address of every warp lies in an allocation and read-only
// allocations are never written (all warps at a small scale).
func TestGRITWarpsStayInsideAllocations(t *testing.T) {
	for _, name := range GRITNames() {
		t.Run(name, func(t *testing.T) {
			wl := mustNew(t, name, Params{Scale: 1.0 / 1024, Seed: 5})
			allocs := wl.Allocs()
			find := func(a uint64) *Alloc {
				for i := range allocs {
					if a >= allocs[i].Base && a < allocs[i].Base+allocs[i].Bytes {
						return &allocs[i]
					}
				}
				return nil
			}
			written := map[string]bool{}
			var op Op
			for _, k := range kernels(wl) {
				for b := 0; b < k.Blocks; b++ {
					for w := 0; w < k.WarpsPerBlock(); w++ {
						s := k.NewWarp(b, w)
						for s.Next(&op) {
							if op.Kind == OpCompute {
								require.Positive(t, op.Cycles)
								continue
							}
							if op.Lanes == 0 {
								t.Fatalf("%s: %s issues a memory instruction with no lane", name, k.Name)
							}
							for _, a := range op.Addr[:op.Lanes] {
								al := find(a)
								if al == nil || a+uint64(op.Size) > al.Base+al.Bytes {
									t.Fatalf("%s: %s block %d warp %d access at %#x outside every allocation", name, k.Name, b, w, a)
								}
								if op.Kind != OpLoad {
									if al.ReadOnly {
										t.Fatalf("%s: %s writes read-only %s", name, k.Name, al.Name)
									}
									written[al.Name] = true
								}
							}
						}
					}
				}
			}
			for _, a := range allocs {
				assert.Equal(t, !a.ReadOnly, written[a.Name], "%s: %s declared read-only=%v", name, a.Name, a.ReadOnly)
			}
		})
	}
}

func TestGRITSameSeedSameStreams(t *testing.T) {
	for _, name := range GRITNames() {
		t.Run(name, func(t *testing.T) {
			p := Params{Scale: 1.0 / 64, Seed: 9}
			assert.Equal(t, streamHash(mustNew(t, name, p), 64), streamHash(mustNew(t, name, p), 64))
		})
	}
	a := streamHash(mustNew(t, "grit-bfs", Params{Scale: 1.0 / 64, Seed: 1}), 64)
	b := streamHash(mustNew(t, "grit-bfs", Params{Scale: 1.0 / 64, Seed: 2}), 64)
	assert.NotEqual(t, a, b, "the seed draws the graph")
}

func TestGRITScaleGrowsFootprint(t *testing.T) {
	for _, name := range GRITNames() {
		t.Run(name, func(t *testing.T) {
			small := mustNew(t, name, Params{Scale: 1.0 / 8, Seed: 1}).Footprint()
			large := mustNew(t, name, Params{Scale: 1.0 / 2, Seed: 1}).Footprint()
			ratio := float64(large) / float64(small)
			assert.InDelta(t, 4, ratio, 0.6, fmt.Sprintf("%s: %d -> %d", name, small, large))
		})
	}
}

// Hand-computed addresses of one warp per kernel shape.
func TestGRITKernelAddresses(t *testing.T) {
	// FIR warp 1 of block 0: threads 32..63; tap 3 reads input[tid-3].
	fir := mustNew(t, "grit-fir", Params{Scale: 1.0 / 1024})
	in := allocByName(t, fir, "input").Base
	ops := collect(kernels(fir)[0], 0, 1)
	require.Len(t, ops, 3*firTaps+1)
	assert.Equal(t, in+4*(32-3), ops[3*3+1].Addr[0])
	// warp 0, tap 3: threads 0..2 read history[16-(3-tid)] = 13, 14, 15.
	hist := allocByName(t, fir, "history").Base
	ops = collect(kernels(fir)[0], 0, 0)
	assert.Equal(t, []uint64{hist + 4*13, hist + 4*14, hist + 4*15, in}, lanes(ops[3*3+1])[:4])

	// Bitonic sort, stage 2 pass 1 (d = 2): thread t pairs t%2 + t/2*4 with +2.
	bs := mustNew(t, "grit-bs", Params{Scale: 1.0 / 1024})
	arr := allocByName(t, bs, "array").Base
	k := kernels(bs)[1+2+1] // stages 0 (1 pass), 1 (2 passes), then stage 2 pass 1
	ops = collect(k, 0, 0)
	assert.Equal(t, []uint64{arr, arr + 4, arr + 16, arr + 20}, lanes(ops[1])[:4])
	assert.Equal(t, []uint64{arr + 8, arr + 12, arr + 24, arr + 28}, lanes(ops[2])[:4])

	// Stencil: block 1 is row strip 1 of band 0; its first read is data
	// row 15 (halo above row 16), column 0, at flat (16)*pitch + 1.
	st := mustNew(t, "grit-st", Params{Scale: 1.0 / 64})
	d1 := allocByName(t, st, "data1").Base
	pitch := uint64(ceilDiv(stCols+2, stAlign) * stAlign) // 2064
	ops = collect(kernels(st)[0], 1, 0)
	assert.Equal(t, d1+4*(16*pitch+1), ops[0].Addr[0])
	// warp 0 issues the left halo column with lane 0 only.
	assert.Equal(t, []uint64{d1 + 4*(16*pitch)}, lanes(ops[stLRows+2]))

	// GEMM block 0 warp 0 (rows 0-1, cols 0-15): tile 0 reads A[row*1024+tx].
	gm := mustNew(t, "grit-gemm", Params{})
	a := allocByName(t, gm, "a").Base
	ops = collect(kernels(gm)[0], 0, 0)
	assert.Equal(t, a+4*1024, ops[2].Addr[16], "lane 16 is row 1, column 0")

	// MM block 0 warp 0, first A load: row 4*gIdY, float4 column lIdX.
	mm := mustNew(t, "grit-mm", Params{})
	ma := allocByName(t, mm, "matrixA").Base
	ops = collect(kernels(mm)[0], 0, 0)
	vec := uint64(mmDim / 4)
	assert.Equal(t, ma+16*(4*vec), ops[0].Addr[8], "lane 8 is lIdY 1: row 4")
}

func TestGRITBFSLevelsReachEveryNode(t *testing.T) {
	g := &gritBFSGraph{nodes: 10000}
	g.generate(3)
	depth := g.bfs()
	assert.Equal(t, uint32(10000*gritBFSDegree/2*2), g.offset[g.nodes])
	for i, l := range g.level {
		require.NotEqual(t, uint32(math.MaxUint32), l, "node %d unreached", i)
	}
	assert.Greater(t, depth, uint32(3))
}

func TestGRITSCAndC2DWindows(t *testing.T) {
	// SC block 1 warp 1: threads 96..127 of row 0; tap (j, i) = (1, 2)
	// reads input[(0+1)*4098 + x+2], x = 96.
	sc := mustNew(t, "grit-sc", Params{Scale: 1.0 / 256})
	in := allocByName(t, sc, "input").Base
	ops := collect(kernels(sc)[0], 1, 1)
	tap := 1*scMask + 2
	assert.Equal(t, in+4*(1*4098+96+2), ops[1+3*tap].Addr[0])
	assert.Equal(t, allocByName(t, sc, "output").Base+4*96, ops[len(ops)-1].Addr[0])

	// C2D im2col warp 0: columns 0..31 (batch 0, block_y 0, block_x 0..31);
	// row i = 13 is channel 1, y = 1, x = 1: input[1*208*208 + 1*208 + bx+1];
	// its store goes to im2col[13*cols + tid].
	c2d := mustNew(t, "grit-c2d", Params{Scale: 1.0 / 16})
	cin, col := allocByName(t, c2d, "input").Base, allocByName(t, c2d, "im2col").Base
	cols := uint64(206 * 206) // batch 16/16 = 1
	ops = collect(kernels(c2d)[0], 0, 0)
	assert.Equal(t, cin+4*(208*208+208+1+5), ops[1+3*13+1].Addr[5])
	assert.Equal(t, col+4*(13*cols+5), ops[1+3*13+2].Addr[5])
	// gemm with m = 3: a warp of rows 0-1 reads weights rows 0-1; rows
	// 2-3 (warp 1) have only row 2 active.
	g := kernels(c2d)[1]
	ops = collect(g, 0, 1)
	assert.Equal(t, uint8(16), ops[2].Lanes, "only Row 2 of rows 2-3 is below m = 3")
	// rows 4-5 (warp 2) are all above m: only their B loads (im2col rows
	// 4-5 and 20-21 of k = 27) remain.
	var loads []uint64
	for _, op := range collect(g, 0, 2) {
		if op.Kind != OpCompute {
			require.Equal(t, OpLoad, op.Kind)
			loads = append(loads, op.Addr[0])
		}
	}
	assert.Equal(t, []uint64{col + 4*4*cols, col + 4*20*cols}, loads)
}

func TestGRITBFSFirstKernelVisitsTheSource(t *testing.T) {
	wl := mustNew(t, "grit-bfs", Params{Scale: 1.0 / 1024, Seed: 4})
	lev, off := allocByName(t, wl, "levels").Base, allocByName(t, wl, "edgeArray").Base
	ph := wl.Phases()
	require.NotNil(t, ph[0].Host, "the host clears the flag before every kernel")
	require.True(t, ph[0].Host.Write)
	require.NotNil(t, ph[2].Host, "and reads it after")
	ops := collect(ph[1].Kernel, 0, 0)
	// vertex 0 (level 0 == curr): every lane reads levels[0], then
	// edgeArray[0] and edgeArray[1].
	assert.Equal(t, uint8(WarpSize), ops[0].Lanes)
	assert.Equal(t, lev, ops[0].Addr[31])
	assert.Equal(t, OpCompute, ops[1].Kind)
	assert.Equal(t, off, ops[2].Addr[0])
	assert.Equal(t, off+4, ops[3].Addr[0])
	// then its neighbours' edgeArrayAux entries, levels, and the stores of
	// the level-1 visits and the flag.
	assert.Equal(t, allocByName(t, wl, "edgeArrayAux").Base, ops[5].Addr[0])
	assert.Equal(t, OpStore, ops[8].Kind)
	assert.Equal(t, ops[6].Addr[:ops[6].Lanes], ops[8].Addr[:ops[8].Lanes], "every neighbour of the source is new")
	assert.Equal(t, allocByName(t, wl, "flag").Base, ops[9].Addr[0])
}

func TestGRITNextDoesNotAllocate(t *testing.T) {
	for _, name := range GRITNames() {
		t.Run(name, func(t *testing.T) {
			wl := mustNew(t, name, Params{Scale: 0.1, Seed: 5})
			ks := kernels(wl)
			k := ks[len(ks)/2]
			const runs = 50
			streams := make([]WarpStream, 0, runs+1)
			for i := 0; i <= runs; i++ {
				streams = append(streams, k.NewWarp(i*7919%k.Blocks, i%k.WarpsPerBlock()))
			}
			var op Op
			next := 0
			allocs := testing.AllocsPerRun(runs, func() {
				s := streams[next]
				next++
				for s.Next(&op) {
				}
			})
			assert.Zero(t, allocs)
		})
	}
}

// BenchmarkGRITNext drains whole warps of the middle kernel of each GRIT
// workload at default size; ns/Next counts instructions.
func BenchmarkGRITNext(b *testing.B) {
	for _, name := range GRITNames() {
		b.Run(name, func(b *testing.B) {
			wl := mustNew(b, name, Params{Seed: 1})
			ks := kernels(wl)
			k := ks[len(ks)/2]
			wpb := k.WarpsPerBlock()
			total := k.Blocks * wpb
			var op Op
			ops := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := i % total
				s := k.NewWarp(w/wpb, w%wpb)
				for s.Next(&op) {
					ops++
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(max(ops, 1)), "ns/Next")
		})
	}
}
