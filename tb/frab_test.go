package tb

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// TestCosimFrAB co-simulates uvmmu_da_frab as its own top: at 1,000
// regions in 16 words of 64 bits under both simulators, as a default set
// is, and under Icarus at 200 regions in seven 32-bit words, the last one
// partial, and at three regions, which fit one word narrowed to 4 bits
// (every set under both in the long run). Wider words are co-simulated inside
// uvmmu_da: under FrABStimulus, which issues a command in up to every
// cycle, Icarus runs the 256-bit priority tree at a few tens of cycles a
// second.
func TestCosimFrAB(t *testing.T) {
	for i, ps := range []paramSet{
		{"regions1000_word64", gen.Values{"NFG": 1000 * frab.FrameGroupsPerRegion, "FRAB_WORD": 64}, sweepCycles},
		{"regions200_word32", gen.Values{"NFG": 200 * frab.FrameGroupsPerRegion, "FRAB_WORD": 32}, sweepCycles},
		{"regions3_oneword", gen.Values{"NFG": 3 * frab.FrameGroupsPerRegion, "FRAB_WORD": 64}, sweepCycles},
	} {
		t.Run(ps.name, func(t *testing.T) {
			sims := ps.simulators()
			if i == 0 {
				sims = cosim.Simulators
			}
			v := mustCheck(t, mustLookup(t, "uvmmu_da_frab"), ps.values)
			cfg := frab.Config{Regions: int(v["NFG"] / frab.FrameGroupsPerRegion), WordBits: int(v["FRAB_WORD"])}
			dut, err := NewFrAB(cfg)
			require.NoError(t, err)
			cosim.Run(t, cosim.Case{
				Top: "uvmmu_da_frab", Sources: frabSources(t, ps.values), Params: overrides(t, "uvmmu_da_frab", ps.values), DUT: dut,
				Stim: FrABStimulus(dut, cfg.Regions, 13), Cycles: cosim.Cycles(t, ps.cycles), Simulators: sims,
			})
		})
	}
}
