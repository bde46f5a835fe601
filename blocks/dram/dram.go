// Package dram is a GPU-DRAM responder: it serves the IPgT memory port
// (package ipgt) with a fixed access latency and a bandwidth budget, over a
// backing store of 64-bit words. The DA testbenches use it as the memory
// behind uvmmu_da, and the system model as the GPU memory the DA reads and
// writes its table in.
package dram

import (
	"fmt"
	"math"

	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

// Config sets the timing and the size of the memory.
type Config struct {
	// Latency is the number of cycles from an accepted read to its response
	// (1..MaxLatency).
	Latency int
	// BytesPerCycle is the bandwidth budget; every request costs
	// ipgt.EntryBytes. It must be at least 1/256 byte per cycle.
	BytesPerCycle float64
	// Base is the byte address of word 0; Words is the number of 64-bit
	// words (1..1<<32). Requests outside [Base, Base+8*Words) or not 8-byte
	// aligned are a fault (see Err).
	Base  uint64
	Words int
	// AddrBits is the width of the request address.
	AddrBits int
}

// DefaultConfig is local GPU DRAM at the default clock: 100 cycles per
// access (UVMSmart adaptive paper Table I, SPEC 2) and 484 GB/s at 1481 MHz
// = 326.8 bytes per cycle (UVMMU paper Table I, SPEC 2), holding words
// 64-bit words from address 0.
func DefaultConfig(words int) Config {
	return Config{Latency: 100, BytesPerCycle: 484e9 / 1481e6, Words: words, AddrBits: ipgt.DefaultAddrBits}
}

// MaxLatency bounds Latency: the block keeps one register per read in
// flight, and at most Latency reads are in flight.
const MaxLatency = 1 << 16

// LatencyRange is the Latency Validate allows.
var LatencyRange = rtl.Range{Min: 1, Max: MaxLatency}

// creditScale is the token bucket's fixed-point unit: 1/256 byte.
const creditScale = 256

// Validate names the first field outside its range.
func (c Config) Validate() error {
	switch {
	case !LatencyRange.Has(int64(c.Latency)):
		return LatencyRange.Check("dram: Latency", int64(c.Latency))
	case !(c.BytesPerCycle >= 1.0/creditScale) || c.BytesPerCycle > 1<<20:
		return fmt.Errorf("dram: BytesPerCycle %g outside 1/%d..%d", c.BytesPerCycle, creditScale, 1<<20)
	case c.Words < 1 || c.Words > 1<<32:
		return fmt.Errorf("dram: Words %d outside 1..%d", c.Words, 1<<32)
	}
	if err := ipgt.CheckAddrBits(c.AddrBits); err != nil {
		return err
	}
	if c.AddrBits < 64 && c.Base+ipgt.EntryBytes*uint64(c.Words) > 1<<c.AddrBits {
		return fmt.Errorf("dram: Base %#x + 8*Words (%d) exceeds the %d-bit address space", c.Base, c.Words, c.AddrBits)
	}
	return nil
}

// DRAM accepts one request per cycle while its token bucket holds the cost
// of a request, applies writes at acceptance and returns read data Latency
// cycles later, in order. The backing store is an SRAM macro whose read
// latency is the access latency: a pipelined array with no back-pressure.
type DRAM struct {
	rtl.Base
	Port ipgt.MemPorts

	cfg    Config
	rate   uint64 // credits added per cycle
	cost   uint64 // credits per request
	bucket uint64 // bucket capacity in credits

	store  *rtl.SRAM[uint64]
	tokens *rtl.Reg[uint64]
	// The landing cycles of the reads in flight, oldest first: a ring of
	// Latency+1 entries, so that the block can sleep until the next one.
	due       *rtl.Ring[uint64]
	fault     *rtl.Reg[bool]
	faultAddr *rtl.Reg[uint64]
}

// New adds a DRAM to s under path, serving port p.
func New(s *rtl.Sim, path string, cfg Config, p ipgt.MemPorts) (*DRAM, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &DRAM{Port: p, cfg: cfg, cost: ipgt.EntryBytes * creditScale}
	d.rate = uint64(math.Round(cfg.BytesPerCycle * creditScale))
	d.bucket = max(d.rate, d.cost)
	s.Add(d, path)
	d.store = rtl.NewSRAM[uint64](&d.Base, "store", rtl.SRAMConfig{Depth: cfg.Words, Width: 64, Ports: 1, ReadLatency: cfg.Latency})
	d.tokens = rtl.NewReg(&d.Base, "tokens", 64, d.bucket)
	d.due = rtl.NewRing[uint64](&d.Base, "due", cfg.Latency+1, 64, false)
	d.fault = rtl.NewFlag(&d.Base, "fault", false)
	d.faultAddr = rtl.NewReg[uint64](&d.Base, "fault_addr", 64, 0)
	d.Listen(p.ReqValid, p.ReqWrite, p.ReqAddr, p.ReqWData)
	return d, nil
}

// Drive shows whether a request can be taken and the read data landing in
// this cycle.
func (d *DRAM) Drive() {
	d.Port.ReqReady.Set(d.tokens.Q() >= d.cost)
	landing := d.store.RValid(0)
	d.Port.RespValid.Set(landing)
	if landing {
		d.Port.RespData.Set(d.store.RData(0))
	}
}

// Eval refills the bucket and performs an accepted request.
func (d *DRAM) Eval() {
	now := d.Now()
	tokens, inFlight := d.tokens.Q(), d.due.Len()
	read := false
	if d.Port.ReqFire() {
		tokens -= d.cost
		if !d.access(d.Port.ReqWrite.Get(), d.Port.ReqAddr.Get(), d.Port.ReqWData.Get()) {
			read = true
			inFlight++
		}
	}
	landing := d.store.RValid(0)
	if landing {
		inFlight--
	}
	d.due.Update(read, now+uint64(d.cfg.Latency), 0, landing)
	tokens = min(tokens+d.rate, d.bucket)
	if tokens != d.tokens.Q() {
		d.tokens.Set(tokens)
	}
	switch {
	case landing || d.Port.ReqValid.Get() || tokens < d.bucket:
		// Next cycle mem_resp_valid falls, a request is (or may still be)
		// shown, or the bucket refills.
		d.SleepUntil(now + 1)
	case inFlight > 0: // none lands this cycle: the head is the next to land
		d.SleepUntil(d.due.Head())
	default:
		d.Sleep()
	}
}

// access performs a request and reports whether it was a write.
func (d *DRAM) access(write bool, addr, wdata uint64) bool {
	i, ok := d.index(addr)
	if !ok {
		if !d.fault.Q() {
			d.fault.Set(true)
			d.faultAddr.Set(addr)
		}
		i = 0
		write = false
	}
	if write {
		d.store.Write(0, i, wdata)
	} else {
		d.store.Read(0, i)
	}
	return write
}

func (d *DRAM) index(addr uint64) (int, bool) {
	off := addr - d.cfg.Base
	if addr < d.cfg.Base || off%ipgt.EntryBytes != 0 || off/ipgt.EntryBytes >= uint64(d.cfg.Words) {
		return 0, false
	}
	return int(off / ipgt.EntryBytes), true
}

// Err reports the first request to an address outside the memory; such a
// read returns word 0 and such a write is dropped.
func (d *DRAM) Err() error {
	if d.fault.Q() {
		return fmt.Errorf("dram %s: request to address %#x outside [%#x, %#x) or not 8-byte aligned",
			d.Path(), d.faultAddr.Q(), d.cfg.Base, d.cfg.Base+ipgt.EntryBytes*uint64(d.cfg.Words))
	}
	return nil
}

// Load writes word i of the backing store directly (testbench backdoor).
func (d *DRAM) Load(i int, w uint64) { d.store.Load(i, w) }

// Peek reads word i of the backing store directly (testbench backdoor).
func (d *DRAM) Peek(i int) uint64 { return d.store.Peek(i) }

// Config returns the memory's configuration.
func (d *DRAM) Config() Config { return d.cfg }
