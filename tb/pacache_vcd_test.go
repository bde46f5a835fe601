package tb

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// paCacheGoName names grit_pa_cache's signals as the Go block under "pac"
// does (pacache.PortList and pacache.RegList give both the same names).
// The tag store is left out: ages_q, because the Verilog packs every
// set's ages into one vector of SETS x WAYS x log2(WAYS) bits (128 at the
// defaults) where the Go model keeps them per set as ages_q[set], and the
// signals of the per-way generate scopes (g_way[w].valid_q, the way's
// lookup wires), which the Go model holds as whole lines line_q[i].
func paCacheGoName(leaf string) (string, bool) {
	if leaf == pacache.RegAges || strings.Contains(leaf, ".") {
		return "", false
	}
	return "pac." + leaf, true
}

// TestVCDMatchesGoPACache runs one stimulus through the Go PA-Cache (traced)
// and through grit_pa_cache under Icarus (dumped), and compares the two
// VCDs signal by signal in every cycle: every port and every register of
// the module's top scope but ages_q (see paCacheGoName), at the defaults
// and at GRIT's threshold study's extremes with its 45-bit VPN.
func TestVCDMatchesGoPACache(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values gen.Values
	}{
		{"default", gen.Values{}},
		{"vpn45_thr2", gen.Values{"SETS": 16, "WAYS": 4, "VPN_BITS": 45, "THRESHOLD": 2}},
		{"vpn45_thr16", gen.Values{"SETS": 16, "WAYS": 4, "VPN_BITS": 45, "THRESHOLD": 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustCheck(t, mustLookup(t, "grit_pa_cache"), tc.values)
			cfg := paConfigOf(v)
			dut, err := NewPACache(cfg, pacache.TableConfig{Latency: 3, StallSeed: 0xace})
			require.NoError(t, err)
			require.NoError(t, compareVCD(t, "grit_pa_cache", overrides(t, "grit_pa_cache", tc.values),
				dut.sim, paCacheGoName, dut, PACacheStimulus(dut, 9), 4000))
			require.Positive(t, dut.table.WriteBacks)
			require.Positive(t, dut.table.Deletes)
		})
	}
}

// TestVCDComparePACacheFindsADifference feeds the PA-Cache's vectors at
// threshold 4 to the RTL at threshold 3: the comparison names the first
// signal and cycle where they part.
func TestVCDComparePACacheFindsADifference(t *testing.T) {
	dut, err := NewPACache(pacache.DefaultConfig(), pacache.TableConfig{Latency: 3})
	require.NoError(t, err)
	err = compareVCD(t, "grit_pa_cache", overrides(t, "grit_pa_cache", gen.Values{"THRESHOLD": 3}),
		dut.sim, paCacheGoName, dut, PACacheStimulus(dut, 9), 4000)
	require.Error(t, err)
	require.Regexp(t, `^grit_pa_cache: first difference at cycle \d+, signal \w+: Go [01]+, Verilog [01]+$`, err.Error())
	t.Log(err)
}

// paConfigOf is the Go configuration of grit_pa_cache's parameter values.
func paConfigOf(v gen.Values) pacache.Config {
	return pacache.Config{Sets: int(v["SETS"]), Ways: int(v["WAYS"]), VPNBits: int(v["VPN_BITS"]), Threshold: int(v["THRESHOLD"])}
}
