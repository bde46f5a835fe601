package pcie

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

const page = 4096

func stream(n int, bytes uint16, tagBase uint64) []offer {
	o := make([]offer, n)
	for i := range o {
		o[i] = offer{Packet: Packet{Tag: tagBase + uint64(i), Bytes: bytes}}
	}
	return o
}

func TestDefaultConfigFigures(t *testing.T) {
	cfg := DefaultConfig()
	require.NoError(t, cfg.Validate())
	assert.Equal(t, uint64(740), cfg.DeviceToHostDelay())
	assert.Equal(t, uint64(741), cfg.HostToDeviceDelay())
	// 4096 B * 1481 / 16000 B per cycle = 379.14 cycles, rounded up for a
	// lone packet; 64 KB: 6066.18 -> 6067.
	assert.Equal(t, uint64(380), cfg.SerializationCycles(page))
	assert.Equal(t, uint64(6067), cfg.SerializationCycles(16*page))
}

func TestLonePacketArrival(t *testing.T) {
	for _, skip := range []bool{false, true} {
		b, err := newBench(DefaultConfig(), skip,
			[][]offer{stream(1, page, 7)}, [][]offer{nil, stream(1, page, 9)})
		require.NoError(t, err)
		ok, err := b.sim.RunUntil(func() bool { return len(b.atDevice.got) == 1 && len(b.atHost.got) == 1 }, 5000)
		require.NoError(t, err)
		require.True(t, ok)
		// Offered and latched in cycle 0, granted in cycle 1, on the wire in
		// cycles 2..381 (380 cycles), last byte sent in 381; host to device
		// delay 741: valid on Out in 381+741 = 1122. Device to host: 1121.
		assert.Equal(t, []arrival{{1122, Packet{Tag: 7, Bytes: page, Source: 0}}}, b.atDevice.got)
		assert.Equal(t, []arrival{{1121, Packet{Tag: 9, Bytes: page, Source: 1}}}, b.atHost.got)
	}
}

// streamArrival is where packet n of a back-to-back stream of one size,
// granted first in cycle 1, arrives: the wire has carried n+1 packets once
// the bucket holds (n+1)*bytes*ClockMHz units, which it does after
// ceil((n+1)*bytes*ClockMHz/BandwidthMBps) cycles.
func streamArrival(cfg Config, n int, bytes uint16, delay uint64) uint64 {
	need := uint64(n+1) * uint64(bytes) * cfg.ClockMHz
	return 1 + (need+cfg.BandwidthMBps-1)/cfg.BandwidthMBps + delay
}

func TestBothDirectionsStreamAtBudget(t *testing.T) {
	cfg := DefaultConfig()
	const n = 200
	b, err := newBench(cfg, true, [][]offer{stream(n, page, 0)}, [][]offer{nil, nil, stream(n, page, 1000)})
	require.NoError(t, err)
	ok, err := b.sim.RunUntil(func() bool { return len(b.atDevice.got) == n && len(b.atHost.got) == n }, 200000)
	require.NoError(t, err)
	require.True(t, ok)
	for i := range n {
		require.Equal(t, streamArrival(cfg, i, page, 741), b.atDevice.got[i].Cycle, "h2d packet %d", i)
		require.Equal(t, streamArrival(cfg, i, page, 740), b.atHost.got[i].Cycle, "d2h packet %d", i)
		require.Equal(t, uint64(i), b.atDevice.got[i].Packet.Tag)
		require.Equal(t, uint8(2), b.atHost.got[i].Packet.Source)
	}
	// 200 pages of 4096 B at 16000/1481 B per cycle: 75828 cycles of wire.
	span := b.atDevice.got[n-1].Cycle - (1 + 741)
	assert.Equal(t, uint64(75828), span)
	want := Stats{Packets: n, Bytes: n * page, WireCycles: span}
	assert.Equal(t, want, b.link.H2D.Stats())
	assert.Equal(t, want, b.link.D2H.Stats())
}

func TestSmallRequestWaitsAtMostOnePacket(t *testing.T) {
	cfg := DefaultConfig()
	// Port 0 streams pages; port 3 offers a 32 B request in cycle 1000,
	// while page 2 (granted in 760, leaves in 1138) is on the wire.
	small := []offer{{At: 1000, Packet: Packet{Tag: 99, Bytes: 32}}}
	b, err := newBench(cfg, false, [][]offer{stream(10, page, 0), nil, nil, small}, nil)
	require.NoError(t, err)
	ok, err := b.sim.RunUntil(func() bool { return len(b.atDevice.got) == 11 }, 20000)
	require.NoError(t, err)
	require.True(t, ok)
	var order []uint64
	for _, a := range b.atDevice.got {
		order = append(order, a.Packet.Tag)
	}
	// The small request takes the wire right after the page in flight.
	assert.Equal(t, []uint64{0, 1, 2, 99, 3, 4, 5, 6, 7, 8, 9}, order)
	// Page 2 leaves in 1 + ceil(3*4096*1481/16000) = 1 + 1138 = 1139 with
	// 1138*16000 - 3*4096*1481 = 9472 units left in the bucket; the 32 B
	// request then needs ceil((32*1481 - 9472)/16000) = 3 cycles, so it
	// leaves in 1142 and arrives 741 cycles later.
	assert.Equal(t, uint64(1142+741), b.atDevice.got[3].Cycle)
	wait := b.atDevice.got[3].Cycle - 741 - small[0].At
	assert.LessOrEqual(t, wait, cfg.SerializationCycles(page)+cfg.SerializationCycles(32))
}

func TestRoundRobinAlternatesStreams(t *testing.T) {
	b, err := newBench(DefaultConfig(), true, [][]offer{stream(5, page, 0), stream(5, 512, 100)}, nil)
	require.NoError(t, err)
	ok, err := b.sim.RunUntil(func() bool { return len(b.atDevice.got) == 10 }, 20000)
	require.NoError(t, err)
	require.True(t, ok)
	var sources []uint8
	for _, a := range b.atDevice.got {
		sources = append(sources, a.Packet.Source)
	}
	assert.Equal(t, []uint8{0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, sources)
}

func TestMalformedPacketIsReported(t *testing.T) {
	bad := []offer{{Packet: Packet{Tag: 5, Bytes: 0}}, {Packet: Packet{Tag: 6, Bytes: 5000}}}
	b, err := newBench(DefaultConfig(), true, nil, [][]offer{nil, bad})
	require.NoError(t, err)
	require.NoError(t, b.sim.Run(3000))
	assert.Empty(t, b.atHost.got)
	require.EqualError(t, b.link.Err(), "pcie: pcie.d2h port 1 sent a packet of 0 bytes (tag 0x5); Bytes must be in 1..4096")
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.BandwidthMBps = 0 }, "pcie: BandwidthMBps 0 outside 1..1048576"},
		{func(c *Config) { c.ClockMHz = 1 << 17 }, "pcie: ClockMHz 131072 outside 1..65536"},
		{func(c *Config) { c.RoundTripCycles = 1 }, "pcie: RoundTripCycles 1 outside 2..131072"},
		{func(c *Config) { c.MaxPacketBytes = 70000 }, "pcie: MaxPacketBytes 70000 outside 1..65535"},
		{func(c *Config) { c.Ports = 0 }, "pcie: Ports 0 outside 1..256"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		require.EqualError(t, cfg.Validate(), tc.want)
		_, err := New(rtl.New(rtl.Options{}), "pcie", cfg, Ports{})
		require.EqualError(t, err, tc.want)
	}
	s := rtl.New(rtl.Options{})
	cfg := DefaultConfig()
	cfg.Ports = 2
	_, err := New(s, "pcie", DefaultConfig(), NewPorts(s, "pcie", cfg))
	require.EqualError(t, err, "pcie: 2 input and 2 output ports for a link of 4 ports")
}

// randomTraffic is bursts of packets of random sizes and gaps on every port
// of both directions.
func randomTraffic(rng *rand.Rand, ports, perPort int) [][]offer {
	out := make([][]offer, ports)
	for p := range out {
		at := uint64(rng.IntN(500))
		for i := range perPort {
			if rng.IntN(4) == 0 {
				at += uint64(rng.IntN(5000))
			}
			bytes := uint16(1 + rng.IntN(page))
			if rng.IntN(3) == 0 {
				bytes = page
			}
			out[p] = append(out[p], offer{At: at, Packet: Packet{Tag: uint64(p<<20 | i), Bytes: bytes}})
		}
	}
	return out
}

// checkDeliveries holds the link's invariants over one direction's log:
// every packet delivered once and in order per port, no sooner than its
// serialization plus the delay, and never more bytes than the budget allows
// (a window of deliveries shares its first cycle with the packet before it,
// whose unused remainder it may inherit).
func checkDeliveries(t *testing.T, cfg Config, delay uint64, sent [][]offer, clients []*client, got []arrival) {
	next := make([]int, len(sent))
	for j, a := range got {
		p := int(a.Packet.Source)
		require.Less(t, next[p], len(sent[p]))
		want := sent[p][next[p]].Packet
		want.Source = uint8(p)
		require.Equal(t, want, a.Packet)
		earliest := clients[p].sentAt[next[p]] + 1 + cfg.SerializationCycles(int(want.Bytes)) + delay
		require.GreaterOrEqual(t, a.Cycle, earliest, "packet %v", want)
		next[p]++
		var bytes uint64
		for i := j; i > 0 && j-i < 50; i-- {
			bytes += uint64(got[i].Packet.Bytes)
			require.LessOrEqual(t, bytes*cfg.ClockMHz, (a.Cycle-got[i-1].Cycle+1)*cfg.BandwidthMBps,
				"deliveries %d..%d exceed the budget", i, j)
		}
	}
	for p := range sent {
		require.Equal(t, len(sent[p]), next[p], "port %d delivered %d of %d", p, next[p], len(sent[p]))
	}
}

func TestRandomTrafficInvariantsAndIdleSkipping(t *testing.T) {
	cfg := DefaultConfig()
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 1))
		h2d, d2h := randomTraffic(rng, cfg.Ports, 40), randomTraffic(rng, cfg.Ports, 40)
		var logs [2][2][]arrival
		for mode, skip := range []bool{false, true} {
			b, err := newBench(cfg, skip, h2d, d2h)
			require.NoError(t, err)
			if skip {
				b.sim.Shuffle(rand.New(rand.NewPCG(seed, 2)))
			}
			ok, err := b.sim.RunUntil(func() bool {
				return len(b.atDevice.got) == 4*40 && len(b.atHost.got) == 4*40
			}, 2_000_000)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, b.link.Err())
			require.Zero(t, b.atDevice.misrouted+b.atHost.misrouted)
			checkDeliveries(t, cfg, 741, h2d, b.h2d, b.atDevice.got)
			checkDeliveries(t, cfg, 740, d2h, b.d2h, b.atHost.got)
			logs[mode] = [2][]arrival{b.atDevice.got, b.atHost.got}
			if skip {
				assert.Less(t, b.sim.Executed(), b.sim.Cycle()/10, "an idle link must sleep")
			}
		}
		require.Empty(t, cmp.Diff(logs[0], logs[1]), "idle skipping changed the deliveries (seed %d)", seed)
	}
}
