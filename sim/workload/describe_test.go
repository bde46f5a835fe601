package workload

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/workload/static"
)

// TestDescriptionBounds runs every described workload at a small scale and
// checks that each address its generator emits lies inside the byte range
// the description implies for the emitting thread block: some operation of
// the launch on the same allocation, with the same access kind, whose range
// (block indices fixed to the block's, threads, loops and host iteration over
// their bounds; the whole allocation for indirect indices) covers it.
func TestDescriptionBounds(t *testing.T) {
	accessOf := map[OpKind]static.Access{OpLoad: static.Read, OpStore: static.Write, OpAtomic: static.Atomic}
	for _, name := range DescribedNames() {
		t.Run(name, func(t *testing.T) {
			wl, prog, err := Describe(name, Params{Scale: 0.05, Seed: 7})
			require.NoError(t, err)
			ks := kernels(wl)
			require.Len(t, prog.Kernels, len(ks), "one description per kernel launch")
			allocs := wl.Allocs()
			checked := 0
			for ki, k := range ks {
				d := &prog.Kernels[ki]
				require.Equal(t, k.Name, d.Name, "launch %d", ki)
				require.EqualValues(t, k.Blocks, d.Blocks(), "launch %d (%s) blocks", ki, k.Name)
				require.EqualValues(t, k.ThreadsPerBlock, d.ThreadsPerBlock(), "launch %d (%s) threads per block", ki, k.Name)
				for b := 0; b < k.Blocks; b++ {
					bounds := static.OneBlock(d, int64(b)%d.GridX, int64(b)/d.GridX)
					for w := 0; w < k.WarpsPerBlock(); w++ {
						for _, op := range collect(k, b, w) {
							if op.Kind == OpCompute {
								continue
							}
							for _, addr := range op.Addr[:op.Lanes] {
								a := allocOf(allocs, addr)
								require.NotNil(t, a, "launch %d block %d: address %#x in no allocation", ki, b, addr)
								off := addr - a.Base
								sa, _ := prog.Alloc(a.Name)
								covered := false
								for oi := range d.Ops {
									m := &d.Ops[oi]
									if m.Alloc != a.Name || m.Access != accessOf[op.Kind] {
										continue
									}
									lo, hi, _ := bounds.OpRange(m, sa)
									if off >= lo && off+uint64(op.Size) <= hi {
										covered = true
										break
									}
								}
								require.True(t, covered, "launch %d (%s) block %d: %v of %d B at %s+%d outside every described %v range",
									ki, k.Name, b, op.Kind, op.Size, a.Name, off, accessOf[op.Kind])
								checked++
							}
						}
					}
				}
			}
			require.Positive(t, checked)
			t.Logf("%s: %d addresses checked over %d launches", name, checked, len(ks))
		})
	}
}

func allocOf(allocs []Alloc, addr uint64) *Alloc {
	for i := range allocs {
		if addr >= allocs[i].Base && addr < allocs[i].Base+allocs[i].Bytes {
			return &allocs[i]
		}
	}
	return nil
}
