package pcie

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// Config sizes one host link. Both directions share it.
type Config struct {
	// BandwidthMBps is each direction's bandwidth in 10^6 bytes per second.
	BandwidthMBps uint64
	// ClockMHz is the core clock every latency is counted in. The byte budget
	// per cycle is the exact ratio BandwidthMBps/ClockMHz.
	ClockMHz uint64
	// RoundTripCycles is the round-trip propagation time. Device-to-host gets
	// the floor of half of it and host-to-device the rest, so an odd count
	// (1481) gives 740 cycles up and 741 cycles down and a request-response
	// pair sees exactly the round trip.
	RoundTripCycles uint64
	// MaxPacketBytes is the largest packet a client may send; larger
	// transfers are split by the sender, which bounds how long one packet
	// can hold the wire in front of another port's packet.
	MaxPacketBytes int
	// Ports is the number of client input ports per direction.
	Ports int
}

// Limits on the configuration, fixed by the port and register widths. The
// delay line holds one register entry per cycle of delay, which bounds the
// round trip (2^17 cycles is 88 us at 1481 MHz).
const (
	MaxBandwidthMBps   = 1 << 20 // 1 TB/s
	MaxClockMHz        = 1 << 16
	MaxRoundTripCycles = 1 << 17
	MaxPacketLimit     = 1<<bytesBits - 1
	MaxPorts           = 1 << sourceBits
)

// The ranges Validate checks, for configuration layers that set these
// parameters from their own keys.
var (
	BandwidthMBpsRange   = rtl.Range{Min: 1, Max: MaxBandwidthMBps}
	ClockMHzRange        = rtl.Range{Min: 1, Max: MaxClockMHz}
	RoundTripCyclesRange = rtl.Range{Min: 2, Max: MaxRoundTripCycles} // at least one cycle each way
	MaxPacketBytesRange  = rtl.Range{Min: 1, Max: MaxPacketLimit}
)

// DefaultConfig is PCIe 3.0 x16 as in the UVMMU paper's Table I: 16 GB/s
// per direction and a 1 us round trip at the 1481 MHz core clock, with 4 KB
// packets (one page) and four clients per direction.
func DefaultConfig() Config {
	return Config{
		BandwidthMBps:   16000,
		ClockMHz:        1481,
		RoundTripCycles: 1481,
		MaxPacketBytes:  4096,
		Ports:           4,
	}
}

// Validate reports the first field outside its allowed range.
func (c Config) Validate() error {
	switch {
	case !BandwidthMBpsRange.Has(int64(c.BandwidthMBps)):
		return fmt.Errorf("pcie: BandwidthMBps %d outside %s", c.BandwidthMBps, BandwidthMBpsRange)
	case !ClockMHzRange.Has(int64(c.ClockMHz)):
		return fmt.Errorf("pcie: ClockMHz %d outside %s", c.ClockMHz, ClockMHzRange)
	case !RoundTripCyclesRange.Has(int64(c.RoundTripCycles)):
		return fmt.Errorf("pcie: RoundTripCycles %d outside %s", c.RoundTripCycles, RoundTripCyclesRange)
	case !MaxPacketBytesRange.Has(int64(c.MaxPacketBytes)):
		return MaxPacketBytesRange.Check("pcie: MaxPacketBytes", int64(c.MaxPacketBytes))
	case c.Ports < 1 || c.Ports > MaxPorts:
		return fmt.Errorf("pcie: Ports %d outside 1..%d", c.Ports, MaxPorts)
	}
	return nil
}

// DeviceToHostDelay is the propagation delay of the device-to-host direction.
func (c Config) DeviceToHostDelay() uint64 { return c.RoundTripCycles / 2 }

// HostToDeviceDelay is the propagation delay of the host-to-device direction.
func (c Config) HostToDeviceDelay() uint64 { return c.RoundTripCycles - c.RoundTripCycles/2 }

// SerializationCycles is how many cycles a lone packet of the given size
// occupies the wire: the byte budget per cycle is BandwidthMBps/ClockMHz, so
// it is ceil(bytes*ClockMHz/BandwidthMBps). Back-to-back packets carry the
// fractional remainder over, so a stream runs at exactly the budget.
func (c Config) SerializationCycles(bytes int) uint64 {
	need := uint64(bytes) * c.ClockMHz
	return (need + c.BandwidthMBps - 1) / c.BandwidthMBps
}
