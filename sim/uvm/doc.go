// Package uvm is the UVM driver's policy menu as the UVMSmart simulator
// (DebashisGanguly/gpgpu-sim_UVMSmart, src/gpgpu-sim/gpu-sim.cc, gmmu_t)
// and the UVMSmart adaptive paper (seed 001) define it: the software state
// and decisions a fault-based policy (`um`, `uvmsmart`) consults, with no
// notion of time.
//
//   - Space: the managed address space in 4 KB pages, 64 KB blocks and 2 MB
//     regions, the resident set against a capacity in pages, and pins for
//     pages with accesses in flight.
//   - Prefetcher: none, tree (default), seqlocal, random; a second one takes
//     over once memory has filled for the first time.
//   - Evictor: lru2m (default), lrutree, lru64k, random4k, lfu2m, lru4k, with
//     a free-page buffer kept by evicting ahead.
//   - Counters and the remote-access decision: off, adaptive (Eq. 1),
//     always, oversub; writes always migrate.
//
// # Calling sequence
//
// For every access the policy learns of (a TLB lookup), it calls Count.
// When the page is not resident it asks ShouldMigrate (or Decide): Remote
// means serve the access over the link from host memory; Migrate means
// raise a far fault. After the fault-handling latency it passes the
// batch's faulting pages to HandleFaults and carries out the Plan: write
// back Plan.Evict, migrate Plan.Fetch, raise Plan.Deferred again later.
// Pages with accesses in flight can be pinned in the Space so that no
// victim includes them.
//
// # The hardware access counters
//
// Counters is a functional mirror of blocks/accessctr configured with
// CountLocal (UVMSmart counts local and remote accesses): the same 27-bit
// count and 5-bit round-trip count per 64 KB block, the same saturating
// increments and the same halving of one field in every block when an
// update leaves it at its maximum. The correspondence is one to one:
//
//	Driver.Count(p, w)          accessctr Inc {Block: p/16, Remote: !resident}
//	eviction of a block         accessctr RoundTrip (HandleFaults does it here)
//	Counters.Get(b)             accessctr Peek(b), or the Notice's Counter
//	Driver.BaseThreshold()      accessctr SetThreshold
//	Driver.Decide(c, write)     the answer for a notified (or peeked) counter c
//
// A policy that drives the block instead keeps the block's threshold
// register at BaseThreshold (which moves with occupancy under adaptive
// mode) and calls Decide with the notified counter. The block notifies
// only reads that reach the register, and Eq. 1's per-block threshold is
// never below it, so a notification is a necessary condition and Decide
// settles it. Count is still called so that LFU and the recency lists see
// the access; its counting then merely duplicates the block's.
//
// # Where this differs from the simulator
//
// The simulator's round-trip field is read through a 6-bit mask and its
// round-trip halving halves the access counts; here both follow the paper
// (5 bits, halve the field that saturated), as blocks/accessctr does. The
// simulator adds a round trip to every block of a region whenever a
// write-back from it starts; here each block that lost pages gets one.
// Where the simulator would find no fully resident unit and evict nothing,
// the evictors fall back to a partial one. Decisions take effect at once:
// pages chosen for a batch count as resident and victims as gone, which
// folds the simulator's staging queues into the occupancy.
package uvm
