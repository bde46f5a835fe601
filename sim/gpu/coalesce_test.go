package gpu

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/workload"
)

// refCoalesce is the coalescer's definition: each lane's bytes a..a+size-1,
// split into the lines they touch with a sector mask per line, lines and
// pages listed in first-touch lane order.
func refCoalesce(op *workload.Op, lineBytes int, granule uint) (pages, lines []uint64, sectors []uint8) {
	shift := uint(bits.TrailingZeros(uint(lineBytes)))
	ss := sectorShift(shift)
	size := uint64(max(op.Size, 1))
	for _, a := range op.Addr[:op.Lanes] {
		for b := a; b < a+size; b++ {
			l := b >> shift
			i := slices.Index(lines, l)
			if i < 0 {
				i = len(lines)
				lines, sectors = append(lines, l), append(sectors, 0)
			}
			sectors[i] |= 1 << (b & (1<<shift - 1) >> ss)
		}
		if p := a >> granule; !slices.Contains(pages, p) {
			pages = append(pages, p)
		}
	}
	return pages, lines, sectors
}

// TestCoalesceRandom compares the coalescer with refCoalesce on random
// warp instructions: clustered, scattered and line-straddling lane
// addresses, every access size and line size.
func TestCoalesceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 1))
	for n := 0; n < 20000; n++ {
		lineBytes := 1 << (5 + rng.IntN(8)) // 32..4096 B, gpu.line_bytes
		m := &SM{cfg: SMConfig{LineBytes: lineBytes}, granule: PageShift}
		op := workload.Op{Kind: workload.OpLoad, Lanes: uint8(rng.IntN(workload.WarpSize + 1)), Size: uint8(1 << rng.IntN(5))}
		base := rng.Uint64N(1 << 40)
		spread := uint64(1) << rng.IntN(16)
		for i := range op.Lanes {
			a := base + rng.Uint64N(spread)
			if rng.IntN(2) == 0 {
				a = base + uint64(i)*uint64(op.Size) // coalesced lanes
			}
			if rng.IntN(4) != 0 {
				a &^= uint64(op.Size) - 1 // naturally aligned
			}
			op.Addr[i] = a
		}
		if rng.IntN(8) == 0 {
			op.Size = 0 // read as one byte
		}
		pages, lines := m.coalesce(&op)
		wantPages, wantLines, wantSectors := refCoalesce(&op, lineBytes, PageShift)
		require.Equal(t, wantPages, slices.Clip(append([]uint64(nil), m.pages[:pages]...)), "op %d pages", n)
		require.Equal(t, wantLines, slices.Clip(append([]uint64(nil), m.lineIDs[:lines]...)), "op %d lines", n)
		require.Equal(t, wantSectors, slices.Clip(append([]uint8(nil), m.sectors[:lines]...)), "op %d sectors", n)
	}
}

// the first warps of each workload's first kernel.
func BenchmarkCoalesce(b *testing.B) {
	for _, name := range []string{"sssp", "fdtd", "hotspot", "bfs"} {
		wl, err := workload.New(name, workload.Params{Scale: 0.05, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		var ops []workload.Op
		for _, ph := range wl.Phases() {
			k := ph.Kernel
			if k == nil {
				continue
			}
			for blk := 0; blk < k.Blocks && len(ops) < 4096; blk++ {
				for w := 0; w < k.WarpsPerBlock(); w++ {
					s := k.NewWarp(blk, w)
					var op workload.Op
					for s.Next(&op) && len(ops) < 4096 {
						if op.Kind != workload.OpCompute && op.Lanes > 0 {
							ops = append(ops, op)
						}
					}
				}
			}
		}
		b.Run(name, func(b *testing.B) {
			m := &SM{cfg: SMConfig{LineBytes: 128}, granule: PageShift}
			n := 0
			for i := 0; i < b.N; i++ {
				p, l := m.coalesce(&ops[i%len(ops)])
				n += p + l
			}
			_ = n
		})
	}
}
