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
	// GPGPU-Sim 3.x's GTX 480 has no kernel launch latency and caches
	// global loads in L1 (16 KB: 32 sets x 4 ways of 128 B, its
	// -gpgpu_cache:dl1); Fermi holds 48 warps per SM and has 1.5 GB.
	{Name: "gtx480", Doc: "incomplete-pages paper (Shen et al., NPC 2018) Table 1: GTX 480 Fermi-like, 15 SMs at 1.4 GHz, 16 KB L1 per SM, 12 channels of 128 KB L2, 128-entry L1 TLB per SM, 512-entry shared L2 TLB, GDDR5 384 GB/s, PCIe 16 GB/s", Sets: []string{
		"gpu.clock_mhz=1400", "gpu.sms=15", "gpu.warps_per_sm=48", "gpu.l1_tlb_entries=128", "gpu.kernel_launch_us=0",
		"cache.l1=true", "cache.l1_sets=32", "cache.l1_ways=4",
		"cache.l2_slices=12", "cache.l2_sets=64", "cache.l2_ways=16",
		"memory.bandwidth_gbs=384", "memory.capacity_gb=1.5", "pcie.bandwidth_gbs=16",
		"incomplete.l2_tlb_entries=512", "incomplete.l2_tlb_ways=16",
	}},
	{Name: "grit", Doc: "GRIT Table I: 4 GPUs of 63 SMs (the model's per-GPU limit; GRIT has 64 CUs) at 1.0 GHz, L1 TLB 32 entries, 8 walkers at 100 cycles per level (four levels, 128-entry page-walk cache: ptw.GRITConfig), 64-entry walk queue, L1 16 KB 4-way and L2 256 KB 16-way data caches, memory 70% of the footprint per GPU, NVLink 300 GB/s, PCIe 4.0 32 GB/s, access-counter threshold 256; no kernel launch latency (MGPUSim has none of the UVMSmart simulator's 150 us)",
		Sets: []string{
			"multigpu.gpus=4", "gpu.clock_mhz=1000", "gpu.sms=63",
			"gpu.l1_tlb_entries=32", "gpu.l1_tlb_latency=1",
			"gpu.walkers=8", "gpu.walk_queue=64", "gpu.walk_cycles=100",
			"gpu.kernel_launch_us=0",
			// 256 KB of 128 B lines, 16 ways: 128 sets; 16 KB 4-way L1: 32 sets.
			"cache.l2=true", "cache.l2_slices=1", "cache.l2_sets=128", "cache.l2_ways=16",
			"cache.l1=true", "cache.l1_sets=32", "cache.l1_ways=4",
			"pcie.bandwidth_gbs=32",
			"multigpu.memory_pct=70", "multigpu.nvlink_gbs=300", "multigpu.ac_threshold=256",
		}},
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
