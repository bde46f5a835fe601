package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPresetsApplyCleanly applies every preset over the defaults: each
// assignment names a key and a value in range, and the result validates.
func TestPresetsApplyCleanly(t *testing.T) {
	for _, p := range Presets() {
		c := Default()
		require.NoError(t, c.ApplyPreset(p.Name), p.Name)
		require.NoError(t, c.Validate(), p.Name)
		assert.Equal(t, p.Name, c.Run.Preset)
	}
	assert.Equal(t, DefaultPreset, Presets()[0].Name)
	assert.Equal(t, DefaultPreset, Default().Run.Preset)
}

// TestPresetOrder: a preset named in a file goes under the file's other
// keys wherever it is written; through --set it goes over what came
// before it.
func TestPresetOrder(t *testing.T) {
	saved := presets
	t.Cleanup(func() { presets = saved })
	presets = append(presets, Preset{Name: "small", Sets: []string{"gpu.sms=4", "pcie.bandwidth_gbs=32"}})

	c := Default()
	require.NoError(t, c.LoadTOML("f", []byte("[gpu]\nsms = 8\n[run]\nworkload = \"ra\"\npreset = \"small\"\n")))
	assert.Equal(t, 8, c.GPU.SMs, "the file's key wins over its preset")
	assert.Equal(t, 32.0, c.PCIe.BandwidthGBs)
	assert.Equal(t, "small", c.Run.Preset)

	c = Default()
	require.NoError(t, c.Set("gpu.sms=8"))
	require.NoError(t, c.Set("run.preset=small"))
	assert.Equal(t, 4, c.GPU.SMs, "a later --set preset goes over earlier keys")
}

func TestUnknownPresetIsNamed(t *testing.T) {
	c := Default()
	err := c.Set("run.preset=nosuch")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run.preset")
	assert.Contains(t, err.Error(), DefaultPreset)
	err = c.LoadTOML("f.toml", []byte("[run]\npreset = \"nosuch\"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "f.toml")
}
