// Package ptw models the GMMU: the walk queue, the pool of page-table
// walkers, an optional page-walk cache, and the GPU page table they walk.
// Defaults: 64 walkers (UVMMU Table I), 100 cycles per walk (UVMSmart
// Table I), 64-entry queue; GRITConfig: 8 walkers, four levels of 100
// cycles, a 128-entry page-walk cache (GRIT Table I).
//
// # Ports
//
//	Req     in   ready/valid Walk{VPN, Requester, Write}; Ready while the
//	             queue has a free entry
//	Resp    out  ready/valid Walk + PTE wire: the request and its leaf PTE
//	Update  in   ready/valid VPN + PTE wire: one page-table write per
//	             cycle, always ready; this is how the migration policies
//	             change PTEs during a run, so every change is cycle-accounted
//
// Read gives invariant checkers the table's contents between cycles; Load
// builds the initial mapping before a run.
//
// # Timing
//
// A request accepted in cycle c enters the queue; the oldest waiting
// request is dispatched to a free walker each cycle (c+1 at the earliest).
// A walk dispatched in cycle d reads its leaf PTE from the table in cycle
// d+WalkCycles-1 and the result is on Resp from d+WalkCycles: an
// uncontended walk answers in 1+100 cycles with the defaults. The result
// stage holds one result; when several are ready the oldest request goes
// first and the others wait. A walker is free again the cycle its result
// is on Resp, so with every walker busy a queued request starts exactly
// when the first walk's result appears.
//
// WalkCycles is Levels*LevelLatency, or LevelLatency alone when the
// page-walk cache holds the pointer to the VPN's leaf table (one per 2 MB
// region, LRU). The cache is looked up and filled at dispatch, so a walk
// dispatched while an earlier walk of the same region is still under way
// already hits: the earlier walk fetches the pointer within its first
// levels.
//
// # Merging
//
// Walks for the same VPN are merged, as MSHRs do: a request whose VPN is
// queued or being walked does not take a walker; when that walk reads its
// PTE, the merged requests are answered, one per cycle through the result
// stage, each reading the PTE as it goes out. At most one walk per VPN is
// pending at any time. Each request keeps its own Requester and Write in
// its queue entry, so every result carries its own request's bits: a
// store merged into a load's walk is answered as a store, and the load as
// a load.
//
// # Page table
//
// One PTE (package pte) per 4 KB page of the managed range BaseVPN ..
// BaseVPN+Pages-1, in a two-port table SRAM: port 0 reads leaf PTEs for
// results, port 1 takes updates. A read and an update of the same PTE in
// one cycle read the old value from the table, but the result stage
// forwards every update of its result's VPN from the cycle of the read
// on, so a result never carries a PTE the update port replaced before the
// cycle the result is taken; an update in that cycle is for the consumer
// to see on the update port. A walk outside the range answers PTE 0
// (invalid); an update outside it is dropped and reported by Err.
package ptw
