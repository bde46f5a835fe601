// Package tlb models a translation lookaside buffer usable as the per-SM L1
// TLB (DefaultL1Config: 128 entries, fully associative, LRU, UVMMU Table I)
// or as a shared, set-associative L2 TLB (GRITL2Config: 512 entries,
// 16-way, 10-cycle lookup, GRIT Table I).
//
// # Ports
//
//	Req       in   ready/valid Lookup{VPN, Requester, Write}; Ready while
//	               the response ring has room (always, for a ready consumer)
//	Resp      out  ready/valid Response{VPN, Requester, Write, Status} + PTE
//	               wire, exactly HitLatency cycles after the lookup was
//	               accepted
//	Fill      in   ready/valid VPN + PTE wire; always ready
//	Inval     in   ready/valid Invalidate{VPN, All}; Ready while no
//	               acknowledgement is pending
//	InvalAck  out  ready/valid Invalidate, the cycle after the shootdown,
//	               with the entry already gone
//	Frozen    in   while high, a lookup that misses answers Refused
//
// The TLB does not chase misses itself: a Miss response sends the
// requester to the next level (L2 TLB or GMMU walker), which fills the TLB.
//
// The Write bit of a lookup (a store) comes back in its response, for the
// requester's walk and the access counters that tap the responses. A
// store whose VPN hits a read-only entry (pte.PTE.ReadOnly) answers Miss
// and counts as a miss: the entry stays and keeps serving loads, and the
// store's walk reaches the policy, which decides what a write to that page
// does (the zero-copy mappings of the um driver are read-only, since a
// write migrates the page, UVMSmart Section III-C).
//
// Freezing follows the UM baseline of the UVMMU paper (Section II-A): after a
// far fault the SM's L1 TLB is frozen and new translations stall until the
// faults are resolved. The paper does not say whether hits are stalled
// too; here hits keep answering and only misses are refused (answered
// Refused, for the requester to retry once unfrozen), because a hit needs
// no page-table access and cannot observe the PTEs being changed.
//
// # Timing and replacement
//
// One lookup, one fill and one shootdown per cycle. A lookup reads the
// entries as they were at the start of its cycle. Replacement is true LRU
// per set, kept as a last-use stamp per way: a hit or fill stamps its way,
// and a fill into a full set replaces the way with the oldest stamp (the
// same order an age matrix keeps); an invalid way is used first. A fill of
// a resident VPN updates it in place. A shootdown cancels a fill of the
// same VPN (any fill, for All) in the same cycle, since that fill carries
// the translation being changed.
//
// The parallel tag compare across all ways is evaluated as a lookup from
// VPN to way that is derived from the tag registers and checked against
// them, so a lookup costs the same for 128 ways as for 4.
package tlb
