// Package pme models the Page Migration Engine (UVMMU paper Sections II-A
// and IV-A, step 5 of Figure 2; SPEC 6.3) and the host-side DMA responder
// it talks to over the PCIe link (package pcie).
//
// # Ports
//
// Engine (GPU side):
//
//	Cmd       in   ready/valid Command{Tag, Op, Pages, First}; Ready while
//	               one of Slots command slots is free
//	Events    out  ready/valid Event{Tag, Page, Critical, Last, Victim}
//	ToHost    out  pcie.Packet to a device-to-host input port
//	FromHost  in   pcie.Packet from the matching host-to-device output; always ready
//
// HostDMA (host side): In from the device-to-host output of the engine's
// port, Out to the host-to-device input of the same port index.
//
// # Behaviour
//
// A Fetch moves Pages pages host to device, critical page first and
// wrapping around (First, First+1, ..., First-1). The engine is a DMA
// master: it sends a read request (RequestBytes) per page, the host answers
// each with the page's data (PageBytes), so a page's latency is the whole
// round trip plus its serialization. A Swap does the same and, at once,
// writes the pages it overwrites (the victim page-group) device to host on
// the other direction, then sends a flush whose answer tells the engine the
// victim is in host memory. An Evict is the write half alone (the UM
// baseline's eviction). Events: one per landed page in order (the first
// marked Critical, the last Last), and one Victim event once the flush is
// answered.
//
// Reads go out before victim writes, across all commands, so fetches keep
// the host-to-device direction busy while victims stream the other way;
// commands are otherwise served oldest first, each in its own page order.
// At most ReadTags reads and flushes are outstanding (32, the PCIe tag
// space), which covers the link's round trip. In a swap, fetched page n
// overwrites victim page n, so page n is reported (written to its frame)
// only once victim page n has left for the host; until then it waits in the
// engine's receive buffer. Separate commands are not ordered against each
// other's data: an issuer that evicts frames with one command and refills
// them with another sends the refill after the eviction's Victim event, or
// uses one Swap.
//
// # Timing (defaults, idle link)
//
// Command accepted in cycle c; first read on ToHost in c+8 (SetupCycles);
// on the link: latched c+8, granted c+9, 2 cycles of wire, 740 cycles up;
// host answers in c+752; page granted c+753, 380 cycles of wire, 741 down;
// received c+1874, Critical event c+1875 (1.27 us). Page n of a run is
// reported in c+753+ceil((n+1)*379.14)+742: the 16th page of a page-group
// in c+7562. A swap's victim event follows the fetch's last page by 25
// cycles (the flush's own trip); back-to-back commands keep the
// host-to-device wire full.
//
// # DRAM traffic
//
// The DMA's reads of victim pages from GPU DRAM and writes of landed pages
// into it are not modelled: the link moves 10.8 B/cycle, GPU DRAM 327
// B/cycle (484 GB/s, UVMMU Table I), so a page's DRAM copy (13 cycles of
// bandwidth) hides under its 380 cycles on the wire. The one exposed cost,
// a DRAM access latency (100 cycles, UVMSmart Table I) before a page is
// readable, is left out of the landed-page events; it is small next to the
// 1874-cycle round trip and the UVMMU paper's ~1.3 us figure omits it too.
package pme
