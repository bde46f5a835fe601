// Package grit models GRIT, fine-grained dynamic page placement for
// multi-GPU systems (Wang et al., HPCA 2024; seed paper 003, Section V),
// as the host driver runs it: the Fault-Aware Initiator (Section V-B),
// the PA-Table in host memory and the PA-Cache in front of it (Section
// V-C, Fig. 12; the PA-Cache is blocks/pacache, whose Verilog is
// grit_pa_cache), the scheme decision written into the scheme bits of the
// host and GPU PTEs (Section V-C, Fig. 13, Table IV), and the
// Neighboring-Aware Prediction with the group bits of the host PTE
// (Section V-D, Fig. 15, Table V). SPEC section 8 states the same design.
//
// The PTE fields are blocks/pte's (scheme bits 9-10: 01 on-touch, 10
// access-counter, 11 duplication; group bits 52-53: 1, 8, 64, 512 pages);
// this package defines no bit position of its own but the PA-Table
// record's (Entry: {VPN 45, R/W 1, counter 2} = 48 bits at GRIT's
// configuration).
//
// # Blocks
//
//   - Initiator: counts local page faults and page protection faults per
//     page and interrupts the driver at Config.Threshold (default 4,
//     1..16). It runs a lockstep rtl simulation of the counter and the
//     PA-Table: the PA-Cache (Config.PACache) or, for GRIT Fig. 20's
//     "PA-Table only", the Counter, which reads and writes the record of
//     every fault.
//   - PATable: the records behind a host-memory port: every access takes
//     Config.Table.Latency cycles (default 100, one page-walk level of
//     GRIT Table I) and holds one of Config.Table.Ports ports (default 1:
//     accesses are served one at a time and queue).
//   - Decide: R/W 0 -> duplication, R/W 1 -> access-counter; on-touch is
//     every page's initial scheme (InitialScheme).
//   - Predictor: the background group check, promotion when more than
//     half of the eight members agree, degradation of a group a page
//     leaves, nothing when the scheme did not change.
//   - Engine: the above behind one entry point per fault.
//
// # How the multi-GPU host driver calls it
//
// The driver builds one Engine per run, New(cfg, pt), where pt implements
// PageTables over its centralized page table (host PTEs, read and written
// whole; GRIT changes only scheme and group bits) and the GPUs' local page
// tables (scheme bits only). For every local page fault and every page
// protection fault it receives, in the order they arrive:
//
//	d, err := engine.Fault(now, grit.Fault{GPU: g, VPN: vpn, Kind: kind, Write: write}, walk)
//
// where now is the cycle the fault reaches the driver and walk the cycles
// of the centralized page-table walk that resolves it. The lookup runs in
// parallel with the walk: the walk ends d.Cycles after now, which is
// max(walk, d.DecisionCycles) (d.WalkStall cycles later than the walk
// alone when GRIT is slower). The driver then:
//
//   - if d.LeaveDuplication: removes every replica of the page and
//     invalidates its PTE and TLB entries in every GPU first (Section V-F);
//   - resolves the fault under d.Scheme (pte.SchemeOnTouch: migrate to
//     the faulting GPU; pte.SchemeAccessCounter: map remotely and let the
//     access counters migrate; pte.SchemeDuplication: replicate, mapping
//     the replica read-only so that a write raises a protection fault),
//     keeping the scheme bits GRIT wrote into the GPU's PTE when it
//     installs the translation.
//
// The Engine has already written d.Scheme into the host PTE (on an
// interrupt) and into the faulting GPU's PTE. The group checks of the
// Neighboring-Aware Prediction run in the background, Config.PredictionCycles
// after the decision and one after another; Fault runs those due by now,
// and the driver calls Drain at the end of the run (or Advance(now) to run
// them between faults). A page takes a predicted scheme at its next fault
// (d.Adopted). Faults and PTE accesses the driver makes for other reasons
// do not touch the Engine; nor do access-counter migration requests, which
// are not faults (GRIT Section II-B2): the page keeps the scheme its host
// PTE holds.
//
// Statistics: Engine.Decisions, Adoptions, Stalls, StallCycles;
// Initiator.Faults, Interrupts; PATable.Reads, Writes; Predictor.Promotions,
// Degradations, Rewrites.
package grit
