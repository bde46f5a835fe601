package area

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/tb/cosim"
)

func TestCommandRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--top", "nope"}, `--top: no emitter for module "nope"; known modules: `},
		{[]string{"extra"}, `unexpected argument "extra"; flags are --liberty FILE, --json FILE, --top MODULE, --sweep PARAM=a,b,c`},
		{[]string{"--sweep", "NFG"}, `--sweep "NFG": want PARAM=a,b,c`},
		{[]string{"--sweep", "BOGUS=1"}, "no parameter BOGUS in uvmmu_da, grit_pa_cache, uvmmu_dcq, uvmmu_lfsr"},
		{[]string{"--sweep", "WAYS=2,x"}, `value "x" is not an unsigned integer`},
		{[]string{"--sweep", "WAYS=2,17"}, "grit_pa_cache parameter WAYS = 17 is outside the allowed range 2..16"},
		{[]string{"--sweep", "FRAB_WORD=48"}, "WordBits 48 outside 32..512, a power of two"},
		{[]string{"--liberty", "/nonexistent/x.lib"}, "--liberty /nonexistent/x.lib"},
		{[]string{"--frobnicate"}, "unknown flag: --frobnicate"},
	} {
		var stdout, stderr bytes.Buffer
		err := Command("area", tc.args, &stdout, &stderr)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want)
		assert.ErrorAs(t, err, new(UsageError), "bad input is a usage error (exit status 2)")
		assert.Empty(t, stdout.String())
	}
}

func TestDCQLatencies(t *testing.T) {
	rows, err := dcqLatencies()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, r := range rows {
		assert.Equal(t, dcqModule, r.Block)
		got[r.Operation] = r.Cycles
	}
	want := map[string]float64{"push to pop (fall-through)": 1, "throughput": 1}
	assert.Empty(t, cmp.Diff(want, got), "a first-word fall-through queue shows a pushed entry the next cycle and moves one entry per cycle")
}

func TestPACacheLatencies(t *testing.T) {
	rows, err := paCacheLatencies()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, r := range rows {
		assert.Equal(t, paCacheModule, r.Block)
		got[r.Operation] = r.Cycles
	}
	miss := float64(localMemLatency + 2)
	assert.Equal(t, 1.0, got["hit"])
	assert.Equal(t, miss, got["miss, no PA-Table record"], "PA-Table latency plus two (blocks/pacache TestLatency)")
	assert.Equal(t, miss, got["miss evicting a dirty line (write-back)"])
	assert.Equal(t, 1.0, got["hit reaching the threshold (delete)"])
}

// TestSweep synthesizes uvmmu_lfsr at two widths and uvmmu_dcq at two
// depths (every point passes the flow's latch check): the flip-flops follow
// the parameter, and the table shows every point.
func TestSweep(t *testing.T) {
	cosim.RequireTool(t, Available())
	var stdout, stderr bytes.Buffer
	require.NoError(t, Command("area", []string{"--sweep", "WIDTH=8,16"}, &stdout, &stderr))
	out := stdout.String()
	assert.Contains(t, out, "uvmmu_lfsr: WIDTH swept, other parameters at their defaults")
	s, err := ParseSweep("WIDTH=8,16", "")
	require.NoError(t, err)
	rows, err := s.Run("")
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, 8, rows[0].Result.FlipFlops)
	assert.Equal(t, 16, rows[1].Result.FlipFlops)

	s, err = ParseSweep("DEPTH=4,8", "uvmmu_dcq")
	require.NoError(t, err)
	rows, err = s.Run("")
	require.NoError(t, err)
	require.Len(t, rows, 2)
	// FG_BITS=32: entries of 33 bits, two pointers and the count (Yosys
	// may duplicate a few pointer bits).
	assert.GreaterOrEqual(t, rows[0].Result.FlipFlops, 4*33+2*2+3)
	assert.GreaterOrEqual(t, rows[1].Result.FlipFlops, 8*33+2*3+4)
	assert.Less(t, rows[0].Result.AreaUM2, rows[1].Result.AreaUM2)
}
