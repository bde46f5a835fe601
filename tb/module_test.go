package tb

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// TestGoBlocksFollowTheirDescriptions builds the Go blocks at their
// defaults and at random legal points of uvmmu_da and checks them against
// the descriptions the Verilog is printed from: every register of each
// block has the declared name, width, reset value and depth, no register
// is undeclared, and every port of uvmmu_da (victim port included) is a Go
// wire of the declared width.
func TestGoBlocksFollowTheirDescriptions(t *testing.T) {
	seed := paramSeed(t)
	reportSeed(t, seed)
	r := rand.New(rand.NewPCG(seed, 20))
	points := []gen.Values{gen.Values(da.DefaultConfig().Params())}
	points = append(points, randomPoints(t, r, "uvmmu_da", 8)...)
	for i, values := range points {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			cfg := daConfigOf(t, values)
			cfg.Victims = afm.VictimExternal
			d, err := NewDA(cfg, dram.DefaultConfig(1), nil)
			require.NoError(t, err)
			for _, c := range []struct {
				m    *rtl.Module
				path string
				p    rtl.Params
			}{
				{da.Module, "da", cfg.Params()},
				{afm.Module, "da.afm", cfg.AFM().Params()},
				{dcq.Module, "da.dcq", cfg.AFM().DCQ.Params()},
				{frab.Module, "da.frab", cfg.AFM().FrAB().Params()},
				{lfsr.Module, "da.lfsr", lfsr.Config{Width: cfg.LFSRWidth, Seed: cfg.LFSRSeed}.Params()},
			} {
				require.NoError(t, c.m.At(c.p).Check(d.sim, c.path))
			}
			_, err = NewModuleDUT(d.sim, "uvmmu_da", "da", gen.Values(cfg.Params()), nil)
			require.NoError(t, err)
		})
	}
}
