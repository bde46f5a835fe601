package tb

import (
	"math/rand/v2"

	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// DCQ presents blocks/dcq through the ports of uvmmu_dcq.
type DCQ struct {
	sim   *rtl.Sim
	ports dcq.Ports
	cfg   dcq.Config
}

// Indexes of the DCQ's inputs and outputs in the order of DCQ.Ports.
const (
	dcqInRst = iota
	dcqInPushValid
	dcqInPushPFgN
	dcqInPushSwap
	dcqInPopReady
)

const (
	dcqOutPushReady = iota
	dcqOutPopValid
	dcqOutPopPFgN
	dcqOutPopSwap
	dcqOutCount
	dcqOutRefill
)

// NewDCQ builds the Go DCQ in its own checked simulator.
func NewDCQ(cfg dcq.Config) (*DCQ, error) { return NewDCQIn(cfg, rtl.Options{Checked: true}) }

// NewDCQIn builds the Go DCQ in a simulator with the given options: the
// speed comparison runs it unchecked too.
func NewDCQIn(cfg dcq.Config, opts rtl.Options) (*DCQ, error) {
	s := rtl.New(opts)
	p := dcq.NewPorts(s, "dcq", cfg)
	if _, err := dcq.New(s, "dcq", cfg, p); err != nil {
		return nil, err
	}
	s.Reset()
	return &DCQ{sim: s, ports: p, cfg: cfg}, nil
}

// Ports are uvmmu_dcq's ports in declaration order (SPEC 5.3). The head
// entry is compared only while pop_valid is high.
func (d *DCQ) Ports() []cosim.Port {
	return cosimPorts("uvmmu_dcq", gen.Values{"DEPTH": uint64(d.cfg.Depth), "THRESHOLD": uint64(d.cfg.Threshold), "FG_BITS": uint64(d.cfg.FGBits)},
		map[string]string{"pop_pfgn": "pop_valid", "pop_swap": "pop_valid"})
}

// Outputs shows the flow flags, the head entry and the occupancy.
func (d *DCQ) Outputs(out []uint64) {
	p := d.ports
	out[dcqOutPushReady] = b2u(p.PushReady.Get())
	out[dcqOutPopValid] = b2u(p.PopValid.Get())
	out[dcqOutPopPFgN] = p.PopPFgN.Get()
	out[dcqOutPopSwap] = b2u(p.PopSwap.Get())
	out[dcqOutCount] = uint64(p.Count.Get())
	out[dcqOutRefill] = b2u(p.Refill.Get())
}

// Clock applies the inputs and steps the clock.
func (d *DCQ) Clock(in []uint64) error {
	if in[dcqInRst] == 1 {
		d.sim.Reset()
		return nil
	}
	p := d.ports
	p.PushValid.Set(in[dcqInPushValid] == 1)
	p.PushPFgN.Set(in[dcqInPushPFgN])
	p.PushSwap.Set(in[dcqInPushSwap] == 1)
	p.PopReady.Set(in[dcqInPopReady] == 1)
	return d.sim.Step()
}

// DCQStimulus is a legal producer and consumer for the DCQ. The producer
// holds push_valid and its entry until the queue takes it, as a ready/valid
// source must; the consumer's pop_ready is free. The push and pop rates
// change every 1,000 to 4,000 cycles among fill-heavy, drain-heavy and
// balanced phases, so the queue spends long stretches full and empty and
// crosses its refill threshold often. About once every 5,000 cycles a
// reset clears it.
func DCQStimulus(seed uint64, fgBits int) cosim.Stimulus {
	r := rand.New(rand.NewPCG(seed, 0xdc9))
	var (
		valid, swap bool
		pfgn        uint64
		pushP, popP int
		phaseEnd    uint64
	)
	return func(cycle uint64, out, in []uint64) {
		if cycle >= phaseEnd {
			phases := [][2]int{{90, 20}, {20, 90}, {50, 50}, {100, 100}, {95, 0}, {0, 95}}
			ph := phases[r.IntN(len(phases))]
			pushP, popP = ph[0], ph[1]
			phaseEnd = cycle + 1000 + uint64(r.IntN(3000))
		}
		if !valid && r.IntN(100) < pushP {
			valid, swap, pfgn = true, r.IntN(2) == 1, r.Uint64()&cosim.Mask(fgBits)
		}
		in[dcqInPushValid] = b2u(valid)
		in[dcqInPushPFgN] = pfgn
		in[dcqInPushSwap] = b2u(swap)
		in[dcqInPopReady] = b2u(r.IntN(100) < popP)
		reset := r.IntN(5000) == 0
		in[dcqInRst] = b2u(reset)
		// push_ready is Moore: the value seen now decides whether the offer
		// is taken at this cycle's edge.
		if valid && (out[dcqOutPushReady] == 1 || reset) {
			valid = false
		}
	}
}
