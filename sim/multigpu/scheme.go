package multigpu

import (
	"fmt"
	"strings"

	"github.com/uvmmu/uvmmu/blocks/pte"
)

// FaultKind is what brought a request to the host driver.
type FaultKind uint8

const (
	// LocalFault: a walk found no valid translation for the page in the
	// GPU's local table (GRIT Section II-B).
	LocalFault FaultKind = iota
	// ProtectionFault: a store found a read-only replica (duplication's
	// page write collapse, GRIT Section II-B3).
	ProtectionFault
	// Promotion: the GPU's access counter for the page's 64 KB group
	// reached the threshold (access-counter migration, GRIT II-B2 step 3).
	Promotion
)

func (k FaultKind) String() string {
	return [...]string{"local fault", "protection fault", "promotion"}[k]
}

// Fault is one request the host driver serves.
type Fault struct {
	Kind  FaultKind
	GPU   int    // the requesting GPU
	Page  int    // index of the page in the centralized table
	VPN   uint64 // its virtual page number
	Write bool   // the faulting access is a store
}

// Decider chooses the placement scheme the driver applies to a fault. The
// driver consults it once for every local fault, protection fault and
// promotion it serves, after the fault reaches the head of its queue and
// before it acts, with the page's current centralized entry (whose Scheme
// field holds the scheme bits of the page's previous fault, SchemeNone
// before the first). The scheme returned is applied to this fault and
// stored in the page's entry and in the scheme bits (9-10) of every PTE
// the driver writes for the page.
//
// The uniform schemes return a constant. A per-page policy such as GRIT's
// (fault-aware initiator, PA-Table, PA-Cache, neighbouring-aware
// prediction) implements Decider with its own state, which it updates in
// Decide: Decide is called only from the driver block's Eval, in the
// simulation's cycle order, and at most once per cycle; Cycle is the
// simulated cycle of the call, for a decider that keeps time.
type Decider interface {
	Decide(f Fault, p Page, cycle uint64) pte.Scheme
}

// Uniform is a Decider that applies one scheme to every page.
type Uniform pte.Scheme

// Decide returns the scheme.
func (u Uniform) Decide(Fault, Page, uint64) pte.Scheme { return pte.Scheme(u) }

// Policy is a multi-GPU placement policy: its decider and the variants of
// the driver it needs.
type Policy struct {
	Name    string
	Decider Decider
	// FirstTouch pins a page at its first GPU and maps every later
	// requester remotely: the access-counter scheme without counters.
	FirstTouch bool
	// Ideal is GRIT's ideal (Section I): a page's first, cold fault is
	// served as on-touch; every later fault is answered at once with a
	// local copy that may be written, whatever other GPUs hold, and GPU
	// memory never fills.
	Ideal bool
	// Counters enables the GPUs' access counters (access-counter
	// migration).
	Counters bool
	// Prefetch adds the tree-based neighborhood prefetcher to every local
	// fault served by on-touch migration (prefetch.go).
	Prefetch bool
	// Grit: the Decider is GRIT's (GritDecider), built by the system over
	// its centralized table.
	Grit bool
}

// Names lists the multi-GPU policies in the order uvmsim list shows them.
func Names() []string {
	return []string{"ot", "ot-prefetch", "first-touch", "ideal", "ac", "dup", GritPolicy, GritPrefetchPolicy}
}

// Describe is a one-line summary of each multi-GPU policy.
var Describe = map[string]string{
	"ot":               "on-touch migration: every local fault moves the page to the requester after the driver invalidates its other copies (GRIT II-B1)",
	"ot-prefetch":      "on-touch migration with the tree-based neighborhood prefetcher: a fault also brings its 64 KB block and the blocks the >50% rule fills in its 2 MB region, by the requester's occupancy (GRIT VI-E, Fig. 30)",
	"first-touch":      "first-touch: a page stays at its first GPU, later requesters map it remotely and read its lines over NVLink (GRIT VI-D)",
	"ideal":            "GRIT's ideal: only a page's first, cold fault costs; every later access is local and writes cost nothing (GRIT I)",
	"ac":               "access-counter migration: remote mapping first, remote accesses counted per 64 KB group, the group's pages at the owner migrate at the threshold after an invalidation broadcast (GRIT II-B2)",
	"dup":              "duplication: a read fault makes a read-only replica, a store's protection fault collapses every other replica (GRIT II-B3)",
	GritPrefetchPolicy: "GRIT with the tree-based neighborhood prefetcher on the faults it serves by on-touch migration (GRIT VI-E, Fig. 30)",
	GritPolicy:         "GRIT: every page starts on-touch; at grit.threshold faults the driver decides duplication (read only) or access-counter (written) and predicts the page's neighbours (GRIT V)",
}

// NewPolicy builds the named multi-GPU policy.
func NewPolicy(name string) (Policy, error) {
	switch name {
	case "ot":
		return Policy{Name: name, Decider: Uniform(pte.SchemeOnTouch)}, nil
	case "ot-prefetch":
		return Policy{Name: name, Decider: Uniform(pte.SchemeOnTouch), Prefetch: true}, nil
	case "first-touch":
		return Policy{Name: name, Decider: Uniform(pte.SchemeAccessCounter), FirstTouch: true}, nil
	case "ideal":
		return Policy{Name: name, Decider: Uniform(pte.SchemeOnTouch), Ideal: true}, nil
	case "ac":
		return Policy{Name: name, Decider: Uniform(pte.SchemeAccessCounter), Counters: true}, nil
	case "dup":
		return Policy{Name: name, Decider: Uniform(pte.SchemeDuplication)}, nil
	case GritPolicy:
		return Policy{Name: name, Counters: true, Grit: true}, nil
	case GritPrefetchPolicy:
		return Policy{Name: name, Counters: true, Grit: true, Prefetch: true}, nil
	}
	return Policy{}, fmt.Errorf("multigpu.policy: unknown multi-GPU policy %q; allowed: %s", name, strings.Join(Names(), ", "))
}
