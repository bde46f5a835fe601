package tb

import (
	"fmt"
	"math/rand/v2"

	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// ModuleDUT presents a Go block through the ports of its Verilog module,
// port by port from the block's description (rtl.Module), which names and
// sizes the Go wires and the Verilog ports alike: every port but clk and
// rst is the Go wire of the same name under the block's path, and rst
// resets the Go simulator. Building it fails when a port has no Go wire of
// its width.
type ModuleDUT struct {
	sim     *rtl.Sim
	ports   []cosim.Port
	in, out []rtl.AnyWire // nil for rst
	index   map[string]int
}

// NewModuleDUT maps top's ports at values onto the wires path.<port> of
// sim. validBy marks payload outputs compared only while a valid is high.
func NewModuleDUT(sim *rtl.Sim, top, path string, values gen.Values, validBy map[string]string) (*ModuleDUT, error) {
	d := &ModuleDUT{sim: sim, ports: cosimPorts(top, values, validBy), index: map[string]int{}}
	nIn, nOut := 0, 0
	for _, p := range d.ports {
		var w rtl.AnyWire
		if p.Name != cosim.ResetPort {
			var ok bool
			if w, ok = sim.WireNamed(path + "." + p.Name); !ok {
				return nil, fmt.Errorf("%s port %s: no Go wire %s.%s", top, p.Name, path, p.Name)
			}
			if w.Width() != p.Width {
				return nil, fmt.Errorf("%s port %s: %d bits, its Go wire %d", top, p.Name, p.Width, w.Width())
			}
		}
		if p.Dir == cosim.In {
			d.index[p.Name], nIn = nIn, nIn+1
			d.in = append(d.in, w)
		} else {
			d.index[p.Name], nOut = nOut, nOut+1
			d.out = append(d.out, w)
		}
	}
	return d, nil
}

// Ports are the module's ports without clk.
func (d *ModuleDUT) Ports() []cosim.Port { return d.ports }

// Index is the position of a port among the inputs or among the outputs.
func (d *ModuleDUT) Index(port string) int {
	i, ok := d.index[port]
	if !ok {
		panic("tb: no port " + port)
	}
	return i
}

// Outputs shows the Go wires of the outputs.
func (d *ModuleDUT) Outputs(out []uint64) {
	for i, w := range d.out {
		out[i] = w.Bits()
	}
}

// Clock resets the simulator when rst is high, else drives the inputs and
// steps the clock.
func (d *ModuleDUT) Clock(in []uint64) error {
	for i, w := range d.in {
		if w == nil && in[i] == 1 {
			d.sim.Reset()
			return nil
		}
	}
	for i, w := range d.in {
		if w != nil {
			w.SetBits(in[i])
		}
	}
	return d.sim.Step()
}

// NewFrAB builds the Go FrAB of cfg in its own checked simulator, presented
// through the ports of uvmmu_da_frab.
func NewFrAB(cfg frab.Config) (*ModuleDUT, error) {
	s := rtl.New(rtl.Options{Checked: true})
	p := frab.NewPorts(s, "frab", cfg)
	if _, err := frab.New(s, "frab", cfg, p); err != nil {
		return nil, err
	}
	s.Reset()
	return NewModuleDUT(s, "uvmmu_da_frab", "frab", gen.Values(cfg.Params()), map[string]string{"rsp_found": "rsp_valid", "rsp_region": "rsp_valid"})
}

// FrABStimulus is the AFM's side of the FrAB port with random commands:
// FIND, SET and CLEAR of random regions below regions, each held until
// cmd_ready takes it, offered at a rate that changes every 500 to 3,000
// cycles; about once every 5,000 cycles a reset restarts the sweep.
func FrABStimulus(d *ModuleDUT, regions int, seed uint64) cosim.Stimulus {
	r := rand.New(rand.NewPCG(seed, 0xfab))
	rst, valid, op, region := d.Index(cosim.ResetPort), d.Index("cmd_valid"), d.Index("cmd_op"), d.Index("cmd_region")
	ready := d.Index("cmd_ready")
	var (
		held       bool
		cmd        [2]uint64
		rate       int
		phaseEnd   uint64
		setPercent int
	)
	return func(cycle uint64, out, in []uint64) {
		if cycle >= phaseEnd {
			rate, setPercent = []int{5, 30, 100}[r.IntN(3)], []int{10, 50, 90}[r.IntN(3)]
			phaseEnd = cycle + 500 + uint64(r.IntN(2500))
		}
		if !held && r.IntN(100) < rate {
			o := frab.Find
			if x := r.IntN(100); x < setPercent/2 {
				o = frab.Set
			} else if x < setPercent {
				o = frab.Clear
			}
			cmd, held = [2]uint64{uint64(o), r.Uint64N(uint64(regions))}, true
		}
		reset := r.IntN(5000) == 0
		in[rst], in[valid], in[op], in[region] = b2u(reset), b2u(held), cmd[0], cmd[1]
		if held && (out[ready] == 1 || reset) {
			held = false
		}
	}
}
