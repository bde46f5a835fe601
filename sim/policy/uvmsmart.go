package policy

import "github.com/uvmmu/uvmmu/sim/config"

// newUVMSmart is the adaptive scheme of the UVMSmart paper (seed 001,
// Section IV): the UM driver (um.go) with the [uvmsmart] section of the
// configuration, whose defaults are
//
//   - access counters per 64 KB basic block, a 27-bit count and a 5-bit
//     round-trip count, each halved in every block when one saturates
//     (Section IV, "Access Counter Maintenance"); counted for every access
//     the driver sees, local or remote (sim/uvm Counters, the functional
//     mirror of blocks/accessctr);
//   - remote zero-copy access for cold blocks under the dynamic threshold
//     of Eq. 1 (uvmsmart.remote = "adaptive", t_s =
//     uvmsmart.migrate_threshold = 8, p = uvmsmart.penalty = 2; Table I);
//     the comparison variants of Section VI are uvmsmart.remote = "always"
//     (t_s from the start) and "oversub" (t_s once oversubscribed);
//   - access-counter LFU eviction over 2 MB large pages that prefers
//     read-only blocks and falls back to LRU on equal counts
//     (uvmsmart.eviction = "lfu2m", Section IV, "Access Counter Based Page
//     Replacement");
//   - the tree-based neighbourhood prefetcher before and after
//     oversubscription (Section II-B).
//
// The counters are the sim/uvm mirror rather than the blocks/accessctr
// block because the driver block sees only the walks that find a remote
// PTE (the router's Remote port): the L1 TLB lookups that the paper counts
// at do not reach any policy port, so there is no access stream to drive
// the block with that the mirror does not already see. See
// docs/uvmsmart.md.
func newUVMSmart(cfg *config.Config) *UM {
	return &UM{cfg: cfg, name: "uvmsmart", section: &cfg.UVMSmart}
}
