package policy

import "github.com/uvmmu/uvmmu/sim/config"

// newUVMSmart is the runtime the UVMMU paper compares against (its
// reference [5], the DATE'21 adaptive framework; gpgpu-sim_UVMSmart
// -enable_smart_runtime 1): the UM driver (um.go) with the [uvmsmart]
// section of the configuration, whose defaults are the baseline's (tree
// prefetcher, LRU 2 MB eviction, no remote access) with
// uvmsmart.smart_runtime = true. Every fault batch's 64 KB blocks are
// logged per kernel and managed allocation (sim/uvm SmartRuntime); each
// time a batch has to evict, the allocations' patterns are classified and
// the driver switches, for good, to zero-copy once oversubscribed (remote
// mode oversub, t_s = uvmsmart.migrate_threshold) and tree-based
// neighbourhood eviction (lrutree) when any allocation is random or mixed,
// or to tree-based eviction alone when one reuses linearly
// (gpu-sim.cc:2672-2833, 3101-3104, 3769-3770). See docs/uvmsmart.md.
func newUVMSmart(cfg *config.Config) *UM {
	return &UM{cfg: cfg, name: "uvmsmart", section: &cfg.UVMSmart}
}
