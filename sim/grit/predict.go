package grit

import "github.com/uvmmu/uvmmu/blocks/pte"

// PageTables is what GRIT reads and writes in the system's page tables:
// the host's centralized page table, whose PTEs carry the scheme bits
// (9-10) and the group bits (52-53) of blocks/pte, and the scheme bits of
// each GPU's local PTE. The multi-GPU host driver implements it over its
// page tables; GRIT changes no other PTE bit.
type PageTables interface {
	// HostPTE is vpn's host PTE; ok is false when the page has none (not
	// allocated), and such a page is neither counted nor rewritten by the
	// prediction.
	HostPTE(vpn uint64) (p pte.PTE, ok bool)
	// SetHostPTE writes vpn's host PTE.
	SetHostPTE(vpn uint64, p pte.PTE)
	// GPUScheme is the scheme bits of vpn's PTE in gpu's local page table
	// (pte.SchemeNone when the GPU has never mapped the page).
	GPUScheme(gpu int, vpn uint64) pte.Scheme
	// SetGPUScheme writes the scheme bits of vpn's PTE in gpu's local
	// page table; the driver keeps them when it installs the translation
	// that resolves the fault.
	SetGPUScheme(gpu int, vpn uint64, s pte.Scheme)
}

// Decide is GRIT's scheme decision (Section V-C, Fig. 13): a page that
// reached the threshold is shared; read only -> duplication, written ->
// access-counter migration.
func Decide(write bool) pte.Scheme {
	if write {
		return pte.SchemeAccessCounter
	}
	return pte.SchemeDuplication
}

// InitialScheme is every page's scheme before GRIT changes it (Section
// V-C: on-touch migration is the baseline GRIT starts from).
const InitialScheme = pte.SchemeOnTouch

// SchemeOf is the scheme a host PTE says, the initial one when its scheme
// bits are still 00.
func SchemeOf(p pte.PTE) pte.Scheme {
	if s := p.Scheme(); s != pte.SchemeNone {
		return s
	}
	return InitialScheme
}

// Levels of the neighbouring groups (GRIT Table V): a level-k group is 8^k
// aligned pages, its size code pte.Group(k); groups stop at 512 pages, the
// PTEs of one page-table page (Section V-D).
const (
	GroupFanout = 8
	MaxLevel    = int(pte.Group512)
)

// groupBase is the first page of the level-k group holding vpn (GRIT
// Section V-D's VPN_base with a group of 8^k pages).
func groupBase(vpn uint64, k int) uint64 { return vpn &^ (uint64(1)<<(3*uint(k)) - 1) }

// Predictor is GRIT's Neighboring-Aware Prediction (Section V-D, Fig. 15),
// the driver's background group check after a page's scheme changes. It
// rewrites host PTE scheme and group bits only: no migration, no GPU PTE,
// no TLB; a page takes its predicted scheme at its next fault, when the
// walk reads the host PTE (Section V-E).
//
// Groups are recorded in the group bits of their base page only: a level-k
// group (8^k pages, k = 1..3) has group code k at its base page and 00 at
// every other page, nested bases included, and all its pages share one
// scheme.
//
// Check(vpn, old, new), for a page whose scheme changed from old to new:
//
//  1. Degradation: if the page lies in a group, that group is split into
//     its eight subgroups, and the subgroup holding the page again, down to
//     single pages: a 64-page group becomes seven 8-page groups and eight
//     single pages (the eighth 8-page block, the page's).
//  2. Promotion, level k = 1, 2, 3: the eight members of the level-k block
//     holding the page are its level-(k-1) blocks (pages at k = 1); a
//     member agrees when it is a level-(k-1) group (a page, at k = 1)
//     whose scheme is new. When more than half agree (five of eight, the
//     page's own block included), every page of the block takes new and
//     the block's base records code k; then the next level is checked.
//
// No check runs when new equals old (Section V-D: it would undo schemes
// neighbours chose on their own).
type Predictor struct {
	pt PageTables
	// Promotions counts groups formed by level (index k-1), Degradations
	// groups split, Rewrites host PTEs whose scheme bits changed.
	Promotions   [MaxLevel]uint64
	Degradations uint64
	Rewrites     uint64
}

// NewPredictor makes a predictor over pt.
func NewPredictor(pt PageTables) *Predictor { return &Predictor{pt: pt} }

// Check runs the group check for vpn, whose scheme changed from old to
// newScheme (its host PTE already holds newScheme).
func (p *Predictor) Check(vpn uint64, old, newScheme pte.Scheme) {
	if old == newScheme {
		return
	}
	p.degrade(vpn)
	for k := 1; k <= MaxLevel; k++ {
		if !p.promote(vpn, k, newScheme) {
			return
		}
	}
}

// groupOf is the largest group holding vpn: its level, 0 when none.
func (p *Predictor) groupOf(vpn uint64) int {
	for k := MaxLevel; k >= 1; k-- {
		if e, ok := p.pt.HostPTE(groupBase(vpn, k)); ok && int(e.Group()) == k {
			return k
		}
	}
	return 0
}

// setGroup writes the group code of a base page.
func (p *Predictor) setGroup(base uint64, g pte.Group) {
	if e, ok := p.pt.HostPTE(base); ok && e.Group() != g {
		p.pt.SetHostPTE(base, e.WithGroup(g))
	}
}

// degrade splits the group holding vpn, level by level, down to single
// pages around vpn.
func (p *Predictor) degrade(vpn uint64) {
	k := p.groupOf(vpn)
	if k == 0 {
		return
	}
	for ; k >= 1; k-- {
		p.Degradations++
		base := groupBase(vpn, k)
		own := groupBase(vpn, k-1)
		sub := uint64(1) << (3 * uint(k-1))
		for i := range uint64(GroupFanout) {
			b := base + i*sub
			g := pte.Group(k - 1)
			if b == own {
				// split further at the next level, or a single page
				g = pte.Group1
			}
			p.setGroup(b, g)
		}
	}
}

// promote checks the level-k block holding vpn and reports whether it
// became a group.
func (p *Predictor) promote(vpn uint64, k int, s pte.Scheme) bool {
	base := groupBase(vpn, k)
	sub := uint64(1) << (3 * uint(k-1))
	agree := 0
	for i := range uint64(GroupFanout) {
		e, ok := p.pt.HostPTE(base + i*sub)
		if ok && int(e.Group()) == k-1 && SchemeOf(e) == s {
			agree++
		}
	}
	if 2*agree <= GroupFanout {
		return false
	}
	p.Promotions[k-1]++
	n := uint64(1) << (3 * uint(k))
	for v := base; v < base+n; v++ {
		e, ok := p.pt.HostPTE(v)
		if !ok {
			continue
		}
		next := e.WithScheme(s).WithGroup(pte.Group1)
		if v == base {
			next = next.WithGroup(pte.Group(k))
		}
		if e.Scheme() != s {
			p.Rewrites++
		}
		if next != e {
			p.pt.SetHostPTE(v, next)
		}
	}
	return true
}
