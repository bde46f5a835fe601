// Package policy holds the migration policies of SPEC 6.4, each selected by
// name: ideal (every page local), um (the fault-based NVIDIA UM baseline as
// the UVMSmart simulator models it), uvmsmart (the same driver with the
// DATE'21 smart runtime), adaptive (the same driver with the IPDPS'20
// adaptive scheme's menu) and uvmmu (the hardware migration path with the
// Destination Allocator). A policy attaches its blocks behind the
// system's router (package system).
package policy

import (
	"fmt"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/system"
)

// Names lists the policies in the order uvmsim list shows them.
func Names() []string {
	return []string{"ideal", "um", "uvmsmart", "adaptive", "uvmmu", "incomplete", "complete", "copy-execute", "suv", "ac", "sc"}
}

// Describe is a one-line summary of each policy, for uvmsim list.
var Describe = map[string]string{
	"ideal":    "every page local from the start (upper bound)",
	"um":       "fault-based NVIDIA UM: far faults, 45 us driver handling, TLB freeze, tree prefetcher, LRU 2 MB eviction",
	"uvmsmart": "UVMSmart runtime (DATE'21): the um driver classifying each allocation's pattern on oversubscription; zero-copy + tree eviction for random or mixed, tree eviction for linear reuse",
	"adaptive": "UVMSmart adaptive (IPDPS'20): the um driver with access counters, remote zero-copy for cold blocks (Eq. 1), LFU 2 MB eviction",
	"uvmmu":    "hardware migration: DA destination, PME page-group transfer critical page first, swap on oversubscription",
	// The 2 MB page system (run.page_size = "2MB"), incomplete.go.
	"incomplete":   "incomplete pages (NPC'18): 2 MB pages with migrated-range records, a range miss migrates only its range, merged requests",
	"complete":     "paged memory on 2 MB pages: the whole page migrates on first touch, UM fault latency, no prefetch",
	"copy-execute": "programmer-controlled copy of every managed allocation ideally overlapped with execution (the incomplete-pages reference)",
	"suv":          "SUV (seed 004): the um driver with SUV-Mgmt before every kernel (Algorithms 1 and 2 on the static analysis): pin on GPU or host, reserve for on-demand, access counters for Unknown, iteration prefetch",
	"ac":           "NVIDIA access-counter migration (SUV Section II-A): every page remote-mapped, a 64 KB block migrates after 256 accesses",
	"sc":           "SC'19 placement (SUV Section VI-B): whole structures pinned on GPU by total access count and reuse distance while they fit, the rest on host",
}

// New builds the named policy for cfg.
func New(name string, cfg *config.Config) (system.Policy, error) {
	switch name {
	case "ideal":
		return &Ideal{}, nil
	case "um":
		return newUM(cfg), nil
	case "uvmsmart":
		return newUVMSmart(cfg), nil
	case "adaptive":
		return newAdaptive(cfg), nil
	case "uvmmu":
		return newUVMMU(cfg), nil
	case "incomplete", "complete":
		return newPaged(cfg, name), nil
	case "copy-execute":
		return newCopyExecute(cfg), nil
	case "suv":
		return newSUV(cfg), nil
	case "ac":
		return newAC(cfg), nil
	case "sc":
		return newSC(cfg), nil
	}
	return nil, fmt.Errorf("run.policy: unknown policy %q; allowed: %s", name, strings.Join(Names(), ", "))
}
