// Package pcie models the host link (PCIe 3.0 x16 by default, UVMMU paper
// Table I: 16 GB/s per direction, 1 us round trip) as two independent
// directions, each a packet arbiter, a serializer with a byte budget, and a
// propagation delay line.
//
// # Ports (per direction, Link.H2D and Link.D2H)
//
//	In[i]   ready/valid Packet{Tag, Bytes}, i in 0..Ports-1   client -> link
//	Out[i]  ready/valid Packet{Tag, Bytes, Source = i}        link -> receiver
//
// Port i of a direction connects one sender to one receiver: a packet sent
// on In[i] comes out of Out[i] (for example, port 0 of device-to-host
// carries the migration engine's requests to the host's DMA responder, and
// port 0 of host-to-device carries the answers back). Which client uses
// which index is the system's choice. The outputs share the delay line, so
// an output held not ready stalls the packets behind it on every port.
//
// # Timing
//
// Each input port has a one-packet input register (In.Ready is high while it
// is empty or being granted). A round-robin arbiter grants one whole packet
// at a time, starting after the last granted port, so a port waits at most
// one packet per other active port; with MaxPacketBytes = 4 KB a small
// request behind a migration stream waits at most one page time (380
// cycles). The serializer's byte budget is the exact ratio
// BandwidthMBps/ClockMHz (16000/1481 = 10.80 B/cycle): a token bucket that
// gains BandwidthMBps units per cycle where a byte costs ClockMHz units, so
// a back-to-back stream is exact over time (200 pages in 75,828 cycles) and
// a lone 4 KB packet takes ceil(379.14) = 380 cycles. A packet is valid on
// Out DelayCycles after the cycle its last byte left: device-to-host gets
// floor(RTT/2) = 740 cycles, host-to-device the rest, 741.
//
// A 4 KB packet offered on an idle host-to-device direction in cycle c is
// on Out in cycle c + 1 (grant) + 380 (wire) + 741 (delay) = c + 1122.
//
// The block sleeps between timed events (a packet leaving the wire, the
// delay line's head arriving), so long transfers cost a handful of
// evaluated cycles with idle skipping.
package pcie
