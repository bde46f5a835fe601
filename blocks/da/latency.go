package da

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

// Figures are the DA's latency and throughput, measured by cycle-stepping
// the model against a DRAM of the given latency and the default bandwidth
// (SPEC 9: latency estimates per block come from the Go model).
type Figures struct {
	MemLatency int // IPgT access latency in cycles

	// ResetToFirst is the number of cycles from reset to the first cycle
	// with dst_valid high, every frame-group free: the FrAB sweep, one FIND
	// and one region fetch.
	ResetToFirst uint64
	// Handshake is the number of cycles from raising dst_ready to the
	// transfer while the DCQ is not empty; 0 means the transfer happens in
	// the cycle dst_ready rises (the DCQ head is always on the port).
	Handshake uint64
	// BackToBack is the cycles per destination while a consumer holds
	// dst_ready high and the DCQ holds entries.
	BackToBack float64
	// RefillFree is the AFM refill throughput in frame-groups per cycle when
	// every region has free frame-groups, with a consumer that takes every
	// destination at once.
	RefillFree float64
	// RefillVictim is the same in victim mode: no free frame-group, every
	// frame-group mapped (NFG = VictimNFG).
	RefillVictim float64
}

// VictimNFG is the memory size of the victim-mode measurement: 64 regions,
// a power of two so that the picker rejects no draw.
const VictimNFG = 64 * 32

// measured is a DA with its memory for one measurement.
type measured struct {
	sim *rtl.Sim
	p   Ports
	da  *DA
}

func newMeasured(cfg Config, memLatency int, entry uint64) (*measured, error) {
	s := rtl.New(rtl.Options{SkipIdle: true})
	p := NewPorts(s, "da", cfg)
	d, err := New(s, "da", cfg, p)
	if err != nil {
		return nil, err
	}
	mc := dram.DefaultConfig(int(cfg.NFG))
	mc.Latency, mc.Base, mc.AddrBits = memLatency, cfg.IPGTBase, cfg.AddrBits
	m, err := dram.New(s, "dram", mc, p.Mem)
	if err != nil {
		return nil, err
	}
	for i := range int(cfg.NFG) {
		m.Load(i, entry)
	}
	s.Reset()
	return &measured{sim: s, p: p, da: d}, nil
}

// until steps until cond holds and returns the cycles stepped.
func (m *measured) until(cond func() bool, limit uint64) (uint64, error) {
	start := m.sim.Cycle()
	ok, err := m.sim.RunUntil(cond, limit)
	if err == nil && !ok {
		err = fmt.Errorf("da: measurement did not finish within %d cycles", limit)
	}
	return m.sim.Cycle() - start, err
}

// rate holds dst_ready high and returns destinations per cycle between the
// first destination and the n+1st.
func (m *measured) rate(n int) (float64, error) {
	m.p.DstReady.Set(true)
	if _, err := m.until(m.p.DstValid.Get, 10_000_000); err != nil {
		return 0, err
	}
	start, got := m.sim.Cycle(), 0
	for got < n {
		if m.p.DstValid.Get() {
			got++
		}
		if err := m.sim.Step(); err != nil {
			return 0, err
		}
		if m.sim.Cycle()-start > 100_000_000 {
			return 0, fmt.Errorf("da: %d destinations did not arrive", n)
		}
	}
	return float64(n) / float64(m.sim.Cycle()-start), nil
}

// Measure returns the DA's figures for configuration cfg with an IPgT
// memory of the given latency.
func Measure(cfg Config, memLatency int) (Figures, error) {
	f := Figures{MemLatency: memLatency}
	m, err := newMeasured(cfg, memLatency, ipgt.F)
	if err != nil {
		return f, err
	}
	if f.ResetToFirst, err = m.until(m.p.DstValid.Get, 1_000_000); err != nil {
		return f, err
	}
	// Wait for the queue to fill, then time a handshake and a burst.
	if _, err = m.until(func() bool { return m.da.DCQ.Len() >= cfg.DCQThreshold }, 1_000_000); err != nil {
		return f, err
	}
	m.p.DstReady.Set(true)
	for !m.p.DstValid.Get() || !m.p.DstReady.Get() {
		f.Handshake++
		if err = m.sim.Step(); err != nil {
			return f, err
		}
	}
	burst := cfg.DCQThreshold
	start := m.sim.Cycle()
	for range burst {
		if !m.p.DstValid.Get() {
			return f, fmt.Errorf("da: DCQ ran dry during the burst")
		}
		if err = m.sim.Step(); err != nil {
			return f, err
		}
	}
	f.BackToBack = float64(m.sim.Cycle()-start) / float64(burst)
	if f.RefillFree, err = m.rate(1000); err != nil {
		return f, err
	}

	vc := cfg
	vc.NFG = VictimNFG
	mv, err := newMeasured(vc, memLatency, ipgt.Mapped(1, 1))
	if err != nil {
		return f, err
	}
	f.RefillVictim, err = mv.rate(100)
	return f, err
}
