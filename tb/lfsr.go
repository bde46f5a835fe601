package tb

import (
	"math/rand/v2"

	"github.com/uvmmu/uvmmu/blocks/lfsr"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// LFSR presents blocks/lfsr through the ports of uvmmu_lfsr.
type LFSR struct {
	sim   *rtl.Sim
	ports lfsr.Ports
	width int
	seed  uint64
}

// NewLFSR builds the Go LFSR in its own checked simulator.
func NewLFSR(cfg lfsr.Config) (*LFSR, error) {
	s := rtl.New(rtl.Options{Checked: true})
	p := lfsr.NewPorts(s, "lfsr", cfg.Width)
	if _, err := lfsr.New(s, "lfsr", cfg, p); err != nil {
		return nil, err
	}
	s.Reset()
	return &LFSR{sim: s, ports: p, width: cfg.Width, seed: cfg.Seed}, nil
}

// Ports are uvmmu_lfsr's ports in declaration order.
func (d *LFSR) Ports() []cosim.Port {
	return cosimPorts("uvmmu_lfsr", gen.Values{"WIDTH": uint64(d.width), "SEED": d.seed}, nil)
}

// Outputs shows the state.
func (d *LFSR) Outputs(out []uint64) { out[0] = d.ports.State.Get() }

// Clock applies rst and en and steps the clock.
func (d *LFSR) Clock(in []uint64) error {
	if in[0] == 1 {
		d.sim.Reset()
		return nil
	}
	d.ports.En.Set(in[1] == 1)
	return d.sim.Step()
}

// LFSRStimulus enables the register in about seven cycles of eight and
// resets it about once every 5,000 cycles.
func LFSRStimulus(seed uint64) cosim.Stimulus {
	r := rand.New(rand.NewPCG(seed, 0x1f5))
	return func(_ uint64, _, in []uint64) {
		in[0] = b2u(r.IntN(5000) == 0)
		in[1] = b2u(r.IntN(8) != 0)
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
