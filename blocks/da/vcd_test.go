package da

import (
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

var vcdPath = flag.String("vcd", "", "TestRefillVCD writes a VCD of a DA refill to this file")

// TestRefillVCD dumps the DA's ports and internal signals from reset
// through the first refill (all frame-groups free, IPgT latency 20) and a
// few allocations:
//
//	go test ./blocks/da -run TestRefillVCD -vcd /tmp/refill.vcd
//
// (go test runs in the package directory, so a relative path lands in
// blocks/da). Without -vcd it checks that the trace is produced and
// non-empty.
func TestRefillVCD(t *testing.T) {
	y := newSystem(t, smallConfig(256, 16, 8, 32), fastMemory(20), nil, checked)
	out := *vcdPath
	if out == "" {
		out = t.TempDir() + "/refill.vcd"
	}
	f, err := os.Create(out)
	require.NoError(t, err)
	require.NoError(t, y.sim.TraceVCD(f, "da.*", "dram.*"))
	y.waitFor("a full DCQ", func() bool { return y.da.DCQ.Len() == 16 }, 5000)
	for range 10 {
		y.pop()
	}
	y.quiet()
	require.NoError(t, y.sim.CloseTrace())
	st, err := os.Stat(out)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(1000))
}
