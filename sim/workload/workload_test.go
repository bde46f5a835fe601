package workload

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNamesAreSortedAndComplete(t *testing.T) {
	names := Names()
	assert.True(t, sort.StringsAreSorted(names))
	assert.Equal(t, []string{"2dconv", "backprop", "bfs", "fdtd", "hotspot", "nw", "ra", "srad", "sssp"}, names)
}

func TestNewRejectsBadInput(t *testing.T) {
	_, err := New("lud", Params{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"lud"`)
	assert.Contains(t, err.Error(), "backprop, bfs")

	for _, s := range []float64{-1, math.NaN(), math.Inf(1), MaxScale + 1} {
		_, err := New("ra", Params{Scale: s})
		require.Error(t, err, "scale %v", s)
		assert.Contains(t, err.Error(), "Params.Scale")
		assert.Contains(t, err.Error(), "(0, 10000]")
	}

	_, err = New("hotspot", Params{GraphFile: "g.txt"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GraphFile")
}

func TestLayoutPacksOnRegionBoundaries(t *testing.T) {
	allocs := []Alloc{{Name: "a", Bytes: 1}, {Name: "b", Bytes: RegionBytes}, {Name: "c", Bytes: RegionBytes + 1}, {Name: "d", Bytes: 5}}
	Layout(allocs)
	got := []uint64{allocs[0].Base, allocs[1].Base, allocs[2].Base, allocs[3].Base}
	want := []uint64{VABase, VABase + RegionBytes, VABase + 2*RegionBytes, VABase + 4*RegionBytes}
	assert.Empty(t, cmp.Diff(want, got))
}

type allocWant struct {
	name  string
	bytes uint64
	kind  AllocKind
	ro    bool
}

// The allocation lists of the shipped benchmarks (SPEC 7), in declaration
// order, with the sizes their host code computes.
var wantAllocs = map[string][]allocWant{
	"backprop": {
		{"input_units", 131057 * 4, Managed, true}, {"hidden_units", 17 * 4, Managed, true},
		{"output_units", 2 * 4, Managed, true}, {"hidden_delta", 17 * 4, Managed, true},
		{"output_delta", 2 * 4, Managed, true}, {"target", 2 * 4, Managed, true},
		{"input_weights", 131057 * 17 * 4, Managed, false}, {"input_weights2", 131057 * 17 * 4, Managed, false},
		{"hidden_weights", 17 * 2 * 4, Managed, true}, {"input_prev_weights", 131057 * 17 * 4, Managed, false},
		{"hidden_prev_weights", 17 * 2 * 4, Managed, true}, {"output_hidden_cuda", 17 * 4, Managed, true},
		{"hidden_partial_sum", 8191 * 16 * 4, Managed, false},
	},
	"fdtd": {
		{"_fict_", 5 * 4, Managed, true}, {"ex", 1200 * 1201 * 4, Managed, false},
		{"ey", 1201 * 1200 * 4, Managed, false}, {"hz", 1200 * 1200 * 4, Managed, false},
	},
	"hotspot": {
		{"MatrixTemp0", 4 << 20, Managed, false}, {"MatrixTemp1", 4 << 20, Managed, false}, {"MatrixPower", 4 << 20, Managed, true},
	},
	"srad": {
		{"C_cuda", 4 << 20, Device, false}, {"E_C", 4 << 20, Device, false}, {"W_C", 4 << 20, Device, false},
		{"S_C", 4 << 20, Device, false}, {"N_C", 4 << 20, Device, false}, {"J_shared", 4 << 20, Managed, false},
	},
	"2dconv": {{"A", 4 << 20, Managed, true}, {"B", 4 << 20, Managed, false}},
	"bfs": {
		{"graph_nodes", 8 * 261444, Managed, true}, {"graph_mask", 261444, Managed, false},
		{"updating_graph_mask", 261444, Managed, false}, {"graph_visited", 261444, Managed, false},
		{"graph_edges", 4 * 1568420, Managed, true}, {"cost", 4 * 261444, Managed, false}, {"d_over", 1, Device, false},
	},
	"sssp": {
		{"vertexArray", 4 << 20, Managed, true}, {"edgeArray", 8 << 20, Managed, true}, {"weightArray", 8 << 20, Managed, true},
		{"shortestDistances", 4 << 20, Managed, false}, {"finalizedVertices", 1 << 20, Device, false},
		{"updatingShortestDistances", 4 << 20, Managed, false},
	},
	"nw": {{"referrence", 1025 * 1025 * 4, Managed, true}, {"itemsets", 1025 * 1025 * 4, Managed, false}},
	"ra": {{"input", 4 << 20, Managed, true}, {"output", 4 << 20, Managed, false}, {"table", 4 << 20, Managed, true}},
}

func TestAllocationsMatchShippedBenchmarks(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			wl := mustNew(t, name, Params{})
			var got []allocWant
			var managed uint64
			for _, a := range wl.Allocs() {
				got = append(got, allocWant{a.Name, a.Bytes, a.Kind, a.ReadOnly})
				if a.Kind == Managed {
					managed += a.Bytes
				}
				assert.Zero(t, a.Base%RegionBytes, "%s base %#x not 2 MB aligned", a.Name, a.Base)
			}
			assert.Empty(t, cmp.Diff(wantAllocs[name], got, cmp.AllowUnexported(allocWant{})))
			assert.Equal(t, managed, wl.Footprint())
			assert.Equal(t, VABase, wl.Allocs()[0].Base)
		})
	}
}

type kernelWant struct {
	Name    string
	Blocks  int
	Threads int
}

func kernelShapes(wl Workload) []kernelWant {
	var ks []kernelWant
	for _, k := range kernels(wl) {
		ks = append(ks, kernelWant{k.Name, k.Blocks, k.ThreadsPerBlock})
	}
	return ks
}

func repeatKernels(n int, ks ...kernelWant) []kernelWant {
	var out []kernelWant
	for i := 0; i < n; i++ {
		out = append(out, ks...)
	}
	return out
}

func TestKernelLaunchesMatchShippedBenchmarks(t *testing.T) {
	var nwWant []kernelWant
	for i := 1; i <= 64; i++ {
		nwWant = append(nwWant, kernelWant{"needle_cuda_shared_1", i, 16})
	}
	for i := 63; i >= 1; i-- {
		nwWant = append(nwWant, kernelWant{"needle_cuda_shared_2", i, 16})
	}
	want := map[string][]kernelWant{
		"backprop": {{"bpnn_layerforward_CUDA", 8191, 256}, {"bpnn_adjust_weights_cuda", 8191, 256}},
		"fdtd": repeatKernels(5, kernelWant{"fdtd_step1_kernel", 38 * 150, 256},
			kernelWant{"fdtd_step2_kernel", 38 * 150, 256}, kernelWant{"fdtd_step3_kernel", 38 * 150, 256}),
		"hotspot": repeatKernels(4, kernelWant{"calculate_temp", 86 * 86, 256}),
		"srad":    repeatKernels(4, kernelWant{"srad_cuda_1", 64 * 64, 256}, kernelWant{"srad_cuda_2", 64 * 64, 256}),
		"2dconv":  {{"Convolution2D_kernel", 32 * 128, 256}},
		"sssp": append([]kernelWant{{"initializeArrays", 65536, 16}},
			repeatKernels(15, kernelWant{"Kernel1", 65536, 16}, kernelWant{"Kernel2", 65536, 16})...),
		"nw": nwWant,
		"ra": {{"kernel", 4096, 256}},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, cmp.Diff(w, kernelShapes(mustNew(t, name, Params{}))))
		})
	}
	t.Run("bfs", func(t *testing.T) {
		ks := kernelShapes(mustNew(t, "bfs", Params{}))
		require.Equal(t, 0, len(ks)%2)
		// SPEC 7: about 11 iterations of two kernels.
		assert.InDelta(t, 11, len(ks)/2, 2)
		assert.Empty(t, cmp.Diff(repeatKernels(len(ks)/2, kernelWant{"Kernel", 511, 512}, kernelWant{"Kernel2", 511, 512}), ks))
	})
}

// TestRandomWarpsKeepInvariants samples warps of every kernel of every
// workload and checks what every generator must guarantee: memory
// instructions have 1..32 lanes, no more than the warp has threads, and
// every access lies inside an allocation; read-only allocations are never
// stored to; compute instructions take at least one cycle.
func TestRandomWarpsKeepInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			wl := mustNew(t, name, Params{Scale: 0.05, Seed: 3})
			allocs := wl.Allocs()
			find := func(a uint64) *Alloc {
				for i := range allocs {
					if a >= allocs[i].Base && a < allocs[i].Base+allocs[i].Bytes {
						return &allocs[i]
					}
				}
				return nil
			}
			for _, ph := range wl.Phases() {
				if h := ph.Host; h != nil {
					a := allocByName(t, wl, h.Alloc)
					for _, r := range h.Ranges {
						require.Less(t, r[0], r[1])
						require.True(t, r[0] >= a.Base && r[1] <= a.Base+a.Bytes, "host range %x outside %s", r, a.Name)
					}
					continue
				}
				k := ph.Kernel
				wpb := k.WarpsPerBlock()
				for n := 0; n < 40; n++ {
					b, w := rng.IntN(k.Blocks), rng.IntN(wpb)
					threads := min(WarpSize, k.ThreadsPerBlock-w*WarpSize)
					for i, op := range collect(k, b, w) {
						if op.Kind == OpCompute {
							require.Positive(t, op.Cycles, "%s b%d w%d op %d", k.Name, b, w, i)
							require.Zero(t, op.Lanes)
							continue
						}
						require.True(t, op.Lanes >= 1 && int(op.Lanes) <= threads, "%s b%d w%d op %d: %d lanes", k.Name, b, w, i, op.Lanes)
						for _, a := range op.Addr[:op.Lanes] {
							al := find(a)
							require.NotNil(t, al, "%s b%d w%d op %d: address %#x outside allocations", k.Name, b, w, i, a)
							require.LessOrEqual(t, a+uint64(op.Size), al.Base+al.Bytes)
							if op.Kind != OpLoad {
								require.False(t, al.ReadOnly, "%s writes read-only %s", k.Name, al.Name)
							}
						}
					}
				}
			}
		})
	}
}

func TestSameParamsGiveIdenticalStreams(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			p := Params{Scale: 0.1, Seed: 42}
			assert.Equal(t, streamHash(mustNew(t, name, p), 16), streamHash(mustNew(t, name, p), 16))
		})
	}
}

func TestSeedChangesRandomWorkloads(t *testing.T) {
	// nw is irregular but data-independent: its addresses do not depend on
	// the sequences, so no seed enters it.
	for _, name := range []string{"bfs", "sssp", "ra"} {
		t.Run(name, func(t *testing.T) {
			a := streamHash(mustNew(t, name, Params{Scale: 0.1, Seed: 1}), 64)
			b := streamHash(mustNew(t, name, Params{Scale: 0.1, Seed: 2}), 64)
			assert.NotEqual(t, a, b)
		})
	}
	for _, name := range []string{"hotspot", "nw"} {
		a := streamHash(mustNew(t, name, Params{Scale: 0.1, Seed: 1}), 16)
		b := streamHash(mustNew(t, name, Params{Scale: 0.1, Seed: 2}), 16)
		assert.Equal(t, a, b, name)
	}
}

func TestScaleFourQuadruplesFootprint(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			one := mustNew(t, name, Params{Seed: 1}).Footprint()
			four := mustNew(t, name, Params{Scale: 4, Seed: 1}).Footprint()
			assert.InDelta(t, 4.0, float64(four)/float64(one), 0.05)
		})
	}
}

// TestGigabyteScaleGeneratesArithmetically builds GB-scale regular and
// random-access workloads and reads warps at the far end of the grid: the
// generators keep no per-warp state, so this is as cheap as at scale 1.
func TestGigabyteScaleGeneratesArithmetically(t *testing.T) {
	for _, name := range []string{"hotspot", "2dconv", "ra", "nw", "backprop"} {
		wl := mustNew(t, name, Params{Scale: 400})
		assert.Greater(t, wl.Footprint(), uint64(1<<30), name)
		ks := kernels(wl)
		k := ks[len(ks)/2]
		last := wl.Allocs()[len(wl.Allocs())-1]
		for _, op := range collect(k, k.Blocks-1, k.WarpsPerBlock()-1) {
			for _, a := range op.Addr[:op.Lanes] {
				assert.Less(t, a, last.Base+last.Bytes, name)
			}
		}
	}
}

func TestNextDoesNotAllocate(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			wl := mustNew(t, name, Params{Scale: 0.1, Seed: 5})
			ks := kernels(wl)
			k := ks[len(ks)/2]
			const runs = 50
			streams := make([]WarpStream, 0, runs+1)
			for i := 0; i <= runs; i++ {
				b := i * 7919 % k.Blocks
				streams = append(streams, k.NewWarp(b, i%k.WarpsPerBlock()))
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

// BenchmarkNext drains whole warps of the middle kernel of each workload.
// One b.N iteration is one warp, whose single allocation is NewWarp's
// stream; ops/s and ns/Next count the instructions.
func BenchmarkNext(b *testing.B) {
	for _, name := range Names() {
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
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(ops)/sec, "ops/s")
			b.ReportMetric(sec*1e9/float64(ops), "ns/Next")
		})
	}
}

func TestReplayIssuesEachOpOnce(t *testing.T) {
	ops := []Op{{Kind: OpCompute, Cycles: 3}, {Kind: OpLoad, Lanes: 1, Size: 4}}
	s := Replay(ops)
	var got []Op
	var op Op
	for s.Next(&op) {
		got = append(got, op)
	}
	assert.Equal(t, ops, got)
	assert.False(t, s.Next(&op))
}
