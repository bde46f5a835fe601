package config

import (
	"fmt"
	"strings"
)

// Preset is one paper's platform as a named list of key assignments (SPEC
// 2, "Platform presets"): applying it is exactly applying each assignment
// with Set, so a preset accepts and checks what a config file or --set
// does, and `uvmsim list` prints the same list it applies.
type Preset struct {
	Name string
	// Doc names the paper and the table the values come from.
	Doc string
	// Sets are "key=value" assignments, applied in order over whatever the
	// configuration holds when the preset is applied.
	Sets []string
}

// DefaultPreset is the platform Default builds: the UVMMU paper's GTX
// 1080 Ti (Table I), so its preset assigns nothing.
const DefaultPreset = "gtx1080ti"

// presets lists every platform, DefaultPreset first.
var presets = []Preset{
	{Name: DefaultPreset, Doc: "UVMMU paper Table I: GTX 1080 Ti, 28 SMs at 1481 MHz, 11 GB, PCIe 3.0 x16 (the built-in defaults)"},
	// SUV Section VI: RTX 3090 (24 GB) on PCIe 4.0 x16. GA102 has 82 SMs
	// at 1695 MHz boost and 48 warps per SM, 936 GB/s GDDR6X; the model
	// holds at most 63 SMs (64-bit walk-arbiter and shootdown masks), so
	// the preset has 63. PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 =
	// 31.5 GB/s per direction.
	{Name: "rtx3090", Doc: "SUV paper Section VI: RTX 3090 24 GB (82 SMs, capped at the model's 63) at 1695 MHz, 48 warps/SM, 936 GB/s, PCIe 4.0 x16", Sets: []string{
		"gpu.sms=63", "gpu.clock_mhz=1695", "gpu.warps_per_sm=48",
		"memory.capacity_gb=24", "memory.bandwidth_gbs=936", "pcie.bandwidth_gbs=31.5",
	}},
}

// Presets lists the platform presets, DefaultPreset first.
func Presets() []Preset { return presets }

// PresetNames lists the presets' names in Presets order.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return names
}

// LookupPreset finds a preset by name.
func LookupPreset(name string) (Preset, error) {
	for _, p := range presets {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("config: run.preset = %q is not a preset; allowed: one of %s", name, strings.Join(PresetNames(), ", "))
}

// ApplyPreset sets every key of the named preset over c and records the
// name in run.preset. Keys set later (a config file's, --set's) win over
// the preset's.
func (c *Config) ApplyPreset(name string) error {
	p, err := LookupPreset(name)
	if err != nil {
		return err
	}
	for _, s := range p.Sets {
		if err := c.Set(s); err != nil {
			return fmt.Errorf("config: preset %s: %w", name, err)
		}
	}
	c.Run.Preset = name
	return nil
}
