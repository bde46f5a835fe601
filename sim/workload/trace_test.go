package workload

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceRoundTrip writes every built-in workload (small scale, the
// first warps of every kernel) and reads it back: allocations, host
// accesses, kernel shapes and the op streams of every written warp are
// identical, and the warps left out read back empty.
func TestTraceRoundTrip(t *testing.T) {
	const maxWarps = 24
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			wl := mustNew(t, name, Params{Scale: 0.02, Seed: 6})
			var buf bytes.Buffer
			require.NoError(t, WriteTrace(&buf, wl, maxWarps))
			back, err := FromTrace(&buf)
			require.NoError(t, err)
			assert.Equal(t, wl.Name(), back.Name())
			assert.Equal(t, wl.Class(), back.Class())
			assert.Empty(t, cmp.Diff(wl.Allocs(), back.Allocs()))
			assert.Equal(t, wl.Footprint(), back.Footprint())
			ph, bph := wl.Phases(), back.Phases()
			require.Len(t, bph, len(ph))
			for i := range ph {
				if ph[i].Host != nil {
					assert.Empty(t, cmp.Diff(ph[i].Host, bph[i].Host))
					continue
				}
				k, bk := ph[i].Kernel, bph[i].Kernel
				require.NotNil(t, bk)
				assert.Equal(t, kernelWant{k.Name, k.Blocks, k.ThreadsPerBlock}, kernelWant{bk.Name, bk.Blocks, bk.ThreadsPerBlock})
				wpb := k.WarpsPerBlock()
				for wi := 0; wi < min(k.Blocks*wpb, maxWarps+2); wi++ {
					got := collect(bk, wi/wpb, wi%wpb)
					if wi >= maxWarps {
						assert.Empty(t, got)
						continue
					}
					require.Empty(t, cmp.Diff(collect(k, wi/wpb, wi%wpb), got), "phase %d warp %d", i, wi)
				}
			}
		})
	}
}

const tinyTrace = `# two allocations, one host read, one kernel of 2 blocks x 48 threads
uvmtrace 1
workload tiny irregular
alloc a 4096 managed ro
alloc b 64 device rw
host a read 0x100000000-0x100000080
kernel k 2 48
warp 1 1
c 12
ld 4 0x100000000 0x100000004
st 8 0x100200000
at 4 0x100200038
warp 0 0
c 1
`

func TestFromTraceReadsDocumentedExample(t *testing.T) {
	wl, err := FromTrace(strings.NewReader(tinyTrace))
	require.NoError(t, err)
	assert.Equal(t, "tiny", wl.Name())
	assert.Equal(t, Irregular, wl.Class())
	assert.Empty(t, cmp.Diff([]Alloc{
		{Name: "a", Bytes: 4096, Kind: Managed, ReadOnly: true, Base: VABase},
		{Name: "b", Bytes: 64, Kind: Device, Base: VABase + RegionBytes},
	}, wl.Allocs()))
	assert.EqualValues(t, 4096, wl.Footprint())
	ph := wl.Phases()
	require.Len(t, ph, 2)
	assert.Equal(t, &HostAccess{Alloc: "a", Ranges: [][2]uint64{{VABase, VABase + 128}}}, ph[0].Host)
	k := ph[1].Kernel
	assert.Equal(t, 2, k.WarpsPerBlock())
	ops := collect(k, 1, 1)
	require.Len(t, ops, 4)
	assert.Equal(t, Op{Kind: OpCompute, Cycles: 12}, ops[0])
	assert.Equal(t, []uint64{VABase, VABase + 4}, lanes(ops[1]))
	assert.Equal(t, OpLoad, ops[1].Kind)
	assert.EqualValues(t, 4, ops[1].Size)
	assert.Equal(t, OpStore, ops[2].Kind)
	assert.Equal(t, OpAtomic, ops[3].Kind)
	assert.Len(t, collect(k, 0, 0), 1)
	assert.Empty(t, collect(k, 0, 1), "unlisted warps are empty")
}

func TestFromTraceErrorsNameLineAndExpectation(t *testing.T) {
	head := "uvmtrace 1\nworkload w regular\nalloc a 4096 managed rw\n"
	cases := []struct{ name, in, want string }{
		{"no header", "workload w regular\n", "line 1: expected header"},
		{"empty", "# nothing\n", "empty input"},
		{"no workload", "uvmtrace 1\n", "missing workload line"},
		{"record before workload", "uvmtrace 1\nalloc a 1 managed rw\n", `line 2: expected "workload`},
		{"bad class", "uvmtrace 1\nworkload w odd\n", "line 2: expected \"workload <name> regular|irregular\""},
		{"unknown record", head + "launch k\n", `line 4: unknown record "launch"`},
		{"alloc size", "uvmtrace 1\nworkload w regular\nalloc a 0 managed rw\n", "line 3: alloc bytes must be an integer in [1,"},
		{"alloc kind", "uvmtrace 1\nworkload w regular\nalloc a 8 pinned rw\n", "line 3: alloc kind must be managed or device"},
		{"alloc twice", head + "alloc a 8 managed rw\n", `line 4: allocation "a" declared twice`},
		{"alloc late", head + "kernel k 1 32\nalloc c 8 managed rw\n", "line 5: alloc after the first host or kernel record"},
		{"host alloc", head + "host z read 0x100000000-0x100000004\n", `line 4: host access to undeclared allocation "z"`},
		{"host range", head + "host a read 0x100000000-0x100002000\n", "line 4: host range"},
		{"kernel threads", head + "kernel k 1 2048\n", "line 4: kernel threads-per-block must be an integer in [1, 1024]"},
		{"warp outside", head + "warp 0 0\n", "line 4: warp record outside a kernel"},
		{"warp block", head + "kernel k 2 64\nwarp 2 0\n", "line 5: warp block must be an integer in [0, 1]"},
		{"warp index", head + "kernel k 2 64\nwarp 0 2\n", "line 5: warp index must be an integer in [0, 1]"},
		{"warp twice", head + "kernel k 1 32\nwarp 0 0\nwarp 0 0\n", "line 6: warp 0 of block 0 listed twice"},
		{"op outside", head + "kernel k 1 32\nc 3\n", `line 5: instruction "c" outside a warp`},
		{"zero cycles", head + "kernel k 1 32\nwarp 0 0\nc 0\n", "line 6: compute cycles must be an integer in [1,"},
		{"no lanes", head + "kernel k 1 32\nwarp 0 0\nld 4\n", "line 6: expected \"ld <size> <addr> ...\" with 1 to 32 addresses"},
		{"too many lanes", head + "kernel k 1 40\nwarp 0 1\nld 4 0x100000000 0x100000000 0x100000000 0x100000000 0x100000000 0x100000000 0x100000000 0x100000000 0x100000000\n", "with 1 to 8 addresses"},
		{"odd size", head + "kernel k 1 32\nwarp 0 0\nst 3 0x100000000\n", "line 6: access size must be 1, 2, 4, 8 or 16"},
		{"bad address", head + "kernel k 1 32\nwarp 0 0\nst 4 zz\n", `line 6: lane address must be an integer (hex 0x...), got "zz"`},
		{"address outside", head + "kernel k 1 32\nwarp 0 0\nld 4 0x100000ffe\n", "line 6: lane address 0x100000ffe (+4 bytes) is outside every allocation"},
		{"long line", head + strings.Repeat("x", traceMaxLine+1) + "\n", "line 4:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromTrace(strings.NewReader(c.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestWriteTraceRejectsNamesWithSpaces(t *testing.T) {
	wl := &builtin{name: "two words", class: Regular}
	err := WriteTrace(&bytes.Buffer{}, wl, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"two words"`)
}

func FuzzFromTrace(f *testing.F) {
	f.Add(tinyTrace)
	f.Add("uvmtrace 1\nworkload w regular\nalloc a 64 managed rw\nkernel k 1 1\nwarp 0 0\nld 1 0x100000000\n")
	var buf bytes.Buffer
	if err := WriteTrace(&buf, mustNew(f, "ra", Params{Scale: 0.001}), 8); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Fuzz(func(t *testing.T, in string) {
		wl, err := FromTrace(strings.NewReader(in))
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "trace"), err.Error())
			return
		}
		// A parsed trace writes back to an equivalent trace (for grids small
		// enough to enumerate).
		for _, k := range kernels(wl) {
			if k.Blocks*k.WarpsPerBlock() > 1<<12 {
				return
			}
		}
		var out bytes.Buffer
		require.NoError(t, WriteTrace(&out, wl, 0))
		again, err := FromTrace(&out)
		require.NoError(t, err, fmt.Sprintf("rewritten trace:\n%s", out.String()))
		assert.Equal(t, len(wl.Phases()), len(again.Phases()))
		assert.Empty(t, cmp.Diff(wl.Allocs(), again.Allocs()))
	})
}
