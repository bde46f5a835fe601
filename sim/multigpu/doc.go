// Package multigpu is GRIT's multi-GPU system (SPEC 8; GRIT, seed 003,
// Sections II-III and Table I): N GPUs (multigpu.gpus, 2..16; the grit
// preset sets 4), each built from the single-GPU blocks, a host driver
// holding the centralized page table, and the uniform page placement
// schemes GRIT starts from, all on one rtl simulator stepped in lockstep.
//
//	            ┌──────────────── GPU g (x N) ─────────────────┐
//	dispatcher ─► SM[i] ◄─► L1 TLB[i] ── misses ─► walk arbiter ─► L2 TLB ─► GMMU
//	 (GPU first)  │  ▲          │ hits (tapped)                (hits ┐)  (local table,
//	              │  │          ▼                                      4 levels, PWC)
//	              │  │      counters ── promotions ─┐              │
//	              │  └─ fill + replay ── router ◄── protection check
//	              │                        │ remote, not present,  │
//	              │                        │ protection            │
//	              ▼                        ▼                       │
//	        DRAM / caches       host driver (centralized table) ───┘ PTE writes
//	        remote lines ──►    NVLink (all-to-all) · PCIe per GPU   TLB shootdowns
//	        (RemoteLines)
//
// Each GPU (System.GPUs) has its SMs (sim/gpu), a per-SM L1 TLB
// (blocks/tlb), the walk arbiter and a GMMU with its local page table
// (blocks/ptw, GRIT Table I's ptw.GRITConfig: four levels at
// gpu.walk_cycles each, a 128-entry page-walk cache, gpu.walkers walkers,
// gpu.walk_queue entries), the router, DRAM (gpu.Memory), the L1/L2 data
// caches (gpu.Caches, cache.*), and two blocks of its own here: the
// ProtectionCheck stage after the GMMU, which turns a store's walk to a
// read-only replica into a protection fault for the driver, and the
// Counters tap on the L1 TLBs' responses, which counts local and remote
// accesses and, under ac, raises promotions. L1 misses go to the shared L2
// TLB (L2TLB: the blocks/tlb block at GRIT Table I's 512 entries, 16
// ways, 10 cycles; multigpu.l2_tlb), its misses to the GMMU.
//
// # Topology and links
//
// Every link is an instance of the single-GPU system's link block
// (blocks/pcie: per direction an input register, an arbiter, a serializer
// with an exact byte budget and a delay line), with the driver's copies
// on port 0 of each direction (System.newLinks, ChannelIndex) and, on
// NVLink, the remote lines on LinePort:
//
//	     host
//	PCIe │ │ │ │   one link per GPU: pcie.bandwidth_gbs each way,
//	   GPU0 ─ GPU1      pcie.rtt_us round trip (half each way)
//	     │ ╳ │     NVLink: one link per GPU pair, all-to-all:
//	   GPU2 ─ GPU3      multigpu.nvlink_gbs each way,
//	                    multigpu.nvlink_latency_cycles each way
//
// GRIT Table I's 300 GB/s NVLink-v2 is read as each direction of each
// pair's link, so copies between different pairs never queue behind one
// another. A page copy is one 4 KB packet: the driver offers it on the
// link's input, it is granted the next cycle, crosses the wire and the
// delay line, and the driver takes it at the far end; the copies of one
// prefetch batch follow one another on a link without a gap. Each GPU
// has its own PCIe link to the host (GRIT Table I's PCIe-v4 32 GB/s): a
// cold page and an evicted page cross it.
//
// # Remote lines
//
// A load through a remote mapping reads its lines from the owner at line
// granularity over NVLink (GRIT II-B2), on the links the page copies use.
// Every NVLink direction has two input ports: port 0 carries the driver's
// copies, LinePort the line packets, and the direction's round-robin
// arbiter grants one packet at a time between them, so a line waits for
// a copy on the wire and a copy for a line (TestRemoteLineWaitsForACopy,
// TestCopyWaitsForRemoteLines).
//
//	SM ── hit on a remote PTE: RemoteReq{warp, owner, lines} ──► RemoteLines (requester)
//	      ── a 16 B read request per line, port LinePort ──► NVLink to the owner
//	RemoteLines (owner) ── a line of data per request ──► NVLink back ──► RemoteLines (requester)
//	      ── RemoteResp{warp, lines} ──► SM: the warp waits for these and its local lines
//
// The SM reads the owner from the PTE its L1 TLB hit returns (a remote
// frame holds the owner above the frame number, gpu.RemoteOwnerShift)
// and sends each remote page's lines of an instruction as one request,
// the rest of the instruction's lines to its own caches or DRAM; a warp
// whose instruction touches pages of several owners sends one request
// per page, each to its owner's link. Each GPU's RemoteLines unit
// offers, for each peer, one packet per line: a read request of
// LineRequestBytes (one NVLink header flit), or for a store a written
// line of the line's bytes, posted (the warp does not wait for it). The
// owner's unit answers a read with a packet of the line's bytes on the
// direction back. Line and copy packets carry their payload alone: the
// link block models no header on a copy. Credit flow control
// (LineCredits: enough reads outstanding per peer to cover a lone read's
// round trip) keeps the owner's answer queue from ever refusing a
// request, so requests and answers, which share each direction's one
// delivery line, cannot wait on each other. The bytes of every line
// packet a GPU receives count in its NVLink bytes, with the page copies.
//
// What remains simplified: the owner answers from its memory at once
// (its DRAM and caches are not timed for a remote read), remote lines
// are not cached at the requester, the link block grants at most one
// packet a cycle (so a stream of 128 B lines moves at most 128 B a cycle
// on a 300 B-a-cycle link), and no remote mapping points at host memory
// (a page in host memory moves to its first requester), so PCIe carries
// page copies alone.
//
// # Memory
//
// GRIT Table I configures DRAM "to 70% of application's memory footprint".
// The model reads it per GPU: each GPU holds multigpu.memory_pct of the
// footprint (every allocation, in 4 KB pages), so four GPUs hold 280% of
// it between them, and a GPU fills up when the thread-block placement
// concentrates its pages there or duplication replicates them. A full
// GPU evicts its least recently placed page (LRU over the driver's
// placements and faults: the driver sees faults, not hits); the last copy
// of a page goes back to host memory over PCIe, and every GPU mapping it
// remotely is invalidated first. The ideal policy never fills.
//
// # Thread blocks
//
// Dispatcher places thread blocks round robin over one GPU's SMs and moves
// to the next GPU only when the GPU cannot take more (GRIT III-B).
//
// # The host driver
//
// Driver serves every GPU's faults: a walk that ends at a not-present PTE
// (a local fault), a store's walk that ends at a read-only replica (a
// protection fault), and an access-counter promotion. Each GPU has a
// 256-entry fault buffer and a 256-entry promotion buffer
// (PromotionQueue); a served promotion clears its group's counter
// (Counters). The driver works in batches: when a batch is
// used up it takes the requests waiting at that cycle in every GPU's
// buffer, up to multigpu.fault_batch of them (each GPU's in full, in GPU
// order from the one served next, until the batch is full; a request
// arriving later waits for the next batch), pays
// multigpu.fault_latency_us once (the handling time GRIT does not give:
// a key, swept in docs/grit.md), then serves the batch's requests one
// after the other, round robin over the GPUs: for each it asks the
// Decider for the page's scheme, builds a plan on the centralized table
// and carries its steps out: page-table writes in the GPUs' GMMUs (their
// caches drop the page's lines as its PTE leaves local memory), TLB
// shootdowns with their acknowledgements, evictions, the page copy, the
// requester's new PTE and the answer to its walk. Faults on one page in
// a batch merge: the first is planned, and a later one its plan has
// satisfied (another walk of the same GPU, which the GMMU answered not
// present as well) is answered at once, with no plan and no copy; a
// later fault of another GPU on the page is served by its scheme from
// where the first plan left the page. A plan after the batch's first
// still waits for its decision when the Decider is slower than the host's
// walk (Staller: GRIT's PA-Table), as a step of its own
// (TestGritStallWithoutTheBatchLatency). A walk to a page its GPU already
// maps (a remote mapping, or a copy just installed) is answered from the
// GPU's side without the fault path.
//
// The batch is NVIDIA's UVM driver's: its bottom half fetches up to
// uvm_perf_fault_batch_count entries (default 256, range 1 to the fault
// buffer's entries: UVM_PERF_FAULT_BATCH_COUNT_DEFAULT and
// fault_buffer_init_replayable_faults in
// NVIDIA/open-gpu-kernel-modules
// kernel-open/nvidia-uvm/uvm_gpu_replayable_faults.c) and services them
// together, coalescing the faults on one page (uvm_perf_fault_coalesce),
// so the fixed software cost is per batch, not per fault. GRIT describes
// its baseline as that UVM driver (GRIT II-A, II-B). Batches here span
// every GPU's buffer, since one host driver serves them all (NVIDIA's
// services each GPU's buffer in its own batches); faults of different
// GPUs on one page are not coalesced, as there. The default is therefore
// batching at 256 with multigpu.fault_latency_us per batch.
// multigpu.fault_batch = 1 serves one request at a time, each paying the
// latency: the driver before batching (its results are reproduced
// exactly), and the per-fault latency of the UVMSmart simulator that
// sim/umdriver follows (gpgpu-sim_UVMSmart src/gpgpu-sim/gpu-sim.cc:
// 3331-3409 gathers a cycle's faulting walks by page, 3716-3723 queues a
// PAGE_FAULT entry per faulting page, 3305-3307 holds it for
// page_fault_latency times its pages). TestBatchPaysOneLatency,
// TestBatchSplitsAtItsSize and TestBatchMergesFaultsOnOnePage time both.
//
// # MGPUSim's flow
//
// GRIT was evaluated on MGPUSim, whose driver has no software latency at
// all: multigpu.fault_flow = mgpusim times faults its way. MGPUSim's MMU
// (one for all GPUs) walks a translation, queues it in a 4,096-entry
// migration queue when the page lives on another device (akita v4.0.0
// mem/vm/mmu/mmu.go:103-128, builder.go:91), sends the driver one
// single-page migration at a time (mmu.go:169-215, 349-372) and answers a
// queued request whose page has meanwhile come to its device without
// another migration (mmu.go:184-193); the driver takes the request at
// once (sarchlab/mgpusim amd/driver/driver.go:530-551), drains RDMA on
// every GPU (553-574), shoots down the GPUs that accessed the page
// (576-605), copies the page (607-649, 699-732) and restarts the GPUs
// (734-805). Here that is: one request at a time with no latency
// (fault_latency_us and fault_batch do not apply), the rest of the plan
// as in the uvm flow, and MGPUSim's shootdown: it drains the GPUs' CU
// pipelines and flushes and invalidates every line of their L1 and L2
// caches before it flushes the page's TLB entries
// (amd/timing/cp/ctrlMiddleware.go:164-240, the TLB flush 280-291), as
// GRIT II-B1 describes. A shootdown step of this flow raises each
// reached GPU's SM hold (gpu.SMPorts.Hold: no new issue, the instructions
// in flight complete) and offers its caches a flush (gpu.Caches, "Flush":
// the caches drain their queues, then walk every set of every L1 and L2
// slice, one set per cycle per array through the tag pipeline, so
// max(L1 sets, L2 sets) + 1 cycles, and wait for the dirty sectors to
// leave over the slices' DRAM channels); the step ends when the page's
// TLB entries are acknowledged and the flush has answered, and the hold
// falls the cycle after the answer. The TLB shootdown runs alongside the
// flush rather than after it, and MGPUSim's L1 instruction and scalar
// caches, which the model does not have, are not flushed.
//
// # Schemes and the Decider interface
//
// Names lists the policies: ot (on-touch migration), ot-prefetch
// (on-touch with the tree-based neighborhood prefetcher, prefetch.go),
// first-touch, ideal
// (GRIT's), ac (access-counter migration, GRIT Table I's threshold 256 per
// 64 KB group, multigpu.ac_threshold) and dup (duplication with write
// collapse). The driver applies a scheme per fault, not per run: at every
// local fault, protection fault and promotion it calls
//
//	Decider.Decide(f Fault, p Page, cycle uint64) pte.Scheme
//
// with the fault (kind, GPU, page, VPN, store or load) and the page's
// centralized entry (holders, remote mappings, owner, writable, the scheme
// bits of its previous fault, data version), and applies the scheme it
// returns: pte.SchemeOnTouch migrates the page to the requester,
// pte.SchemeAccessCounter maps it remotely at its owner (a page in host
// memory moves to its first requester; a promotion migrates it with the
// other pages of its 64 KB group held only at its owner, planner's
// promotionBatch),
// pte.SchemeDuplication replicates it read-only on a load and collapses the
// other replicas on a store. The scheme is stored in the page's entry
// (Page.Scheme) and in bits 9-10 of every PTE the driver writes for the
// page (GRIT Table IV), so a per-page policy reads its earlier decisions
// back from either. The uniform policies are Uniform deciders; GRIT's
// fault-aware initiator, PA-Table, PA-Cache and neighbouring-aware
// prediction plug in as a Decider of their own, set in Policy.Decider, with
// the counters (Policy.Counters) on so that access-counter pages can
// promote. Decide runs inside the driver block's Eval, once per fault
// served and at most once per cycle, so a decider may keep its own state
// and count time by the cycle argument.
//
// # Invariants
//
// System.Check (every test; uvmsim run --check) verifies between cycles
// that each page is in one place or replicated read-only with every replica
// at the page's version (Table.Check), that no write proceeds while
// another replica exists (replicas are read-only in every GPU's table),
// that no frame of any GPU holds two pages, and that every GPU's local
// page table agrees with the centralized table for every page the driver
// is not changing at that moment. The ideal policy alone keeps writable
// copies on several GPUs, as GRIT defines it. The watchdog names every SM
// holding warps and the driver's step and buffers when nothing moves for
// check.watchdog_cycles.
package multigpu
