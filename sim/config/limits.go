package config

import (
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"strconv"

	"github.com/uvmmu/uvmmu/blocks/accessctr"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/blocks/mu"
	"github.com/uvmmu/uvmmu/blocks/pcie"
	"github.com/uvmmu/uvmmu/blocks/pme"
	"github.com/uvmmu/uvmmu/blocks/ptw"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/sim/gpu"
	"github.com/uvmmu/uvmmu/sim/uvm"
)

// A limit is the allowed values of a numeric key.
type limit interface {
	has(c *Config, v reflect.Value) bool
	allowed(c *Config) string
	bounds(c *Config) (lo, hi string)
}

// blockLimits are the ranges of the keys that set a block's parameter,
// named in the key's `limit` tag. Each is the range the block's own
// Config.Validate checks, so a value the configuration accepts is one the
// block accepts.
var blockLimits = map[string]limit{
	"pcie.ClockMHz":         ints{pcie.ClockMHzRange},
	"gpu.Warps":             ints{gpu.WarpsRange},
	"gpu.TranslateQueue":    ints{gpu.TranslateQueueRange},
	"tlb.Ways":              ints{tlb.WaysRange},
	"tlb.HitLatency":        ints{tlb.HitLatencyRange},
	"ptw.Walkers":           ints{ptw.WalkersRange},
	"ptw.QueueDepth":        ints{ptw.QueueDepthRange},
	"ptw.LevelLatency":      ints{ptw.LevelLatencyRange},
	"dram.Latency":          ints{dram.LatencyRange},
	"pcie.BandwidthMBps":    bandwidth{pcie.BandwidthMBpsRange},
	"pcie.RoundTripCycles":  roundTrip{pcie.RoundTripCyclesRange},
	"pcie.MaxPacketBytes":   ints{packetBytes},
	"dcq.Depth":             ints{dcq.DepthRange},
	"dcq.Threshold":         ints{rtl.Range{Min: 1, Max: dcq.MaxDepth}}, // and at most uvmmu.dcq_depth (Validate)
	"frab.WordBits":         ints{frab.WordBitsRange},
	"lfsr.Width":            ints{lfsr.WidthRange},
	"pme.SetupCycles":       ints{pme.SetupCyclesRange},
	"accessctr.Threshold":   ints{accessctr.ThresholdRange},
	"uvm.Penalty":           ints{uvm.PenaltyRange},
	"umdriver.FaultBuffer":  ints{uvm.FaultBufferRange},
	"mu.Requests":           ints{mu.RequestsRange},
	"uvm.FreeBufferPercent": floats{0, uvm.MaxFreeBufferPercent},
}

// packetBytes is the link's packet size as the PME sends it: a page's data
// packet is min(4 KB, pcie.packet_bytes) and must hold its 16-byte read
// request (pme.Config.RequestBytes).
var packetBytes = rtl.Range{Min: int64(pme.DefaultConfig().RequestBytes), Max: pcie.MaxPacketBytesRange.Max}

// limitOf is a field's limit: a block's range named by its `limit` tag, or
// the range in its `min` and `max` tags for a key no block bounds.
func limitOf(tag reflect.StructTag, kind reflect.Kind) limit {
	if name := tag.Get("limit"); name != "" {
		l, ok := blockLimits[name]
		if !ok {
			panic(fmt.Sprintf("config: limit %q is not in blockLimits", name))
		}
		return l
	}
	min, max := tag.Get("min"), tag.Get("max")
	if min == "" {
		return nil
	}
	if kind != reflect.Float64 {
		lo, _ := strconv.ParseInt(min, 10, 64)
		hi, _ := strconv.ParseInt(max, 10, 64)
		return ints{rtl.Range{Min: lo, Max: hi, Pow2: tag.Get("pow2") != ""}}
	}
	flo, _ := strconv.ParseFloat(min, 64)
	fhi, _ := strconv.ParseFloat(max, 64)
	return floats{flo, fhi}
}

// ints is a range of whole numbers.
type ints struct{ r rtl.Range }

func (l ints) has(_ *Config, v reflect.Value) bool {
	n, ok := asInt64(v)
	return ok && l.r.Has(n)
}
func (l ints) allowed(*Config) string { return l.r.String() }
func (l ints) bounds(*Config) (string, string) {
	lo, hi := l.r.Min, l.r.Max
	if l.r.Pow2 { // the powers of two nearest inside the range
		lo = int64(1) << bits.Len64(uint64(lo-1))
		hi = int64(1) << (bits.Len64(uint64(hi)) - 1)
	}
	return strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)
}

// floats is a closed interval of reals.
type floats struct{ min, max float64 }

func (l floats) has(_ *Config, v reflect.Value) bool {
	f := v.Float()
	return !math.IsNaN(f) && f >= l.min && f <= l.max
}
func (l floats) allowed(*Config) string { return formatFloat(l.min) + ".." + formatFloat(l.max) }
func (l floats) bounds(*Config) (string, string) {
	return tomlFloat(l.min), tomlFloat(l.max)
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// tomlFloat writes f as a TOML literal, which Set and a file take for a
// float key.
func tomlFloat(f float64) string { return formatFloat(f) }

// bandwidth is pcie.bandwidth_gbs: the link takes its bandwidth in whole
// MB/s, the key's GB/s times 1000 truncated (PCIe.MBps).
type bandwidth struct{ r rtl.Range }

func (l bandwidth) has(_ *Config, v reflect.Value) bool {
	f := v.Float()
	return !math.IsNaN(f) && f*1000 >= float64(l.r.Min) && f*1000 < float64(l.r.Max+1)
}
func (l bandwidth) allowed(*Config) string {
	return fmt.Sprintf("%s..%s (the link's %s MB/s)", formatFloat(float64(l.r.Min)/1000), formatFloat(float64(l.r.Max)/1000), l.r)
}
func (l bandwidth) bounds(*Config) (string, string) {
	return tomlFloat(float64(l.r.Min) / 1000), tomlFloat(float64(l.r.Max) / 1000)
}

// roundTrip is pcie.rtt_us: the link's round trip is counted in core
// cycles (Config.RoundTripCycles), so its range in microseconds follows
// gpu.clock_mhz.
type roundTrip struct{ r rtl.Range }

func (l roundTrip) has(c *Config, v reflect.Value) bool {
	us := v.Float()
	return !math.IsNaN(us) && us >= 0 && us*float64(c.GPU.ClockMHz) < float64(l.r.Max)+0.5 && l.r.Has(int64(c.Cycles(us)))
}
func (l roundTrip) allowed(c *Config) string {
	lo, hi := l.bounds(c)
	return fmt.Sprintf("%s cycles at gpu.clock_mhz = %d, %s..%s us (the link counts its round trip in core cycles, at least one each way)",
		l.r, c.GPU.ClockMHz, shortFloat(lo), shortFloat(hi))
}
func (l roundTrip) bounds(c *Config) (string, string) {
	clock := float64(c.GPU.ClockMHz)
	return tomlFloat(float64(l.r.Min) / clock), tomlFloat(float64(l.r.Max) / clock)
}

func shortFloat(s string) string {
	f, _ := strconv.ParseFloat(s, 64)
	return strconv.FormatFloat(f, 'g', 6, 64)
}
