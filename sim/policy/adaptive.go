package policy

import "github.com/uvmmu/uvmmu/sim/config"

// newAdaptive is the adaptive scheme of the UVMSmart paper (IPDPS'20, seed
// 001, Section IV): the UM driver (um.go) with the [adaptive] section of
// the configuration, whose defaults are
//
//   - access counters per 64 KB basic block, a 27-bit count and a 5-bit
//     round-trip count, each halved in every block when one saturates
//     (Section IV, "Access Counter Maintenance"), counting every access at
//     its L1 TLB hit, local or remote (the driver taps the TLBs' response
//     ports; sim/uvm Counters, the functional mirror of blocks/accessctr);
//   - remote zero-copy access for cold blocks under the dynamic threshold
//     of Eq. 1 (adaptive.remote = "adaptive", t_s =
//     adaptive.migrate_threshold = 8, p = adaptive.penalty = 2; Table I);
//     the comparison variants of Section VI are adaptive.remote = "always"
//     (t_s from the start) and "oversub" (t_s once oversubscribed);
//   - access-counter LFU eviction over 2 MB large pages that prefers
//     read-only blocks and falls back to LRU on equal counts
//     (adaptive.eviction = "lfu2m", Section IV, "Access Counter Based Page
//     Replacement");
//   - the tree-based neighbourhood prefetcher before and after
//     oversubscription (Section II-B).
//
// The counters are the sim/uvm mirror rather than the blocks/accessctr
// block: the block's Inc port takes one access per cycle with
// back-pressure, while the L1 TLBs hit up to one page per SM per cycle and
// a tap cannot be held back, so driving the block would need a queue that
// the paper's hardware does not have. The mirror's words equal the
// block's for the same accesses (sim/uvm TestCountersMirrorTheHardwareBlock).
// See docs/uvmsmart.md.
func newAdaptive(cfg *config.Config) *UM {
	return &UM{cfg: cfg, name: "adaptive", section: &cfg.Adaptive}
}
