package tb

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pacache"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// PACache presents blocks/pacache through the ports of grit_pa_cache, with
// its PA-Table port served by the behavioural pacache.Table in the same
// simulator. The table's outputs are the module's tbl_req_ready and tbl_resp
// inputs: the stimulus copies them into each vector row, so the Verilog
// sees exactly the PA-Table the Go model saw.
type PACache struct {
	sim   *rtl.Sim
	ports pacache.Ports
	cfg   pacache.Config
	table *pacache.Table
	want  []uint64 // the PA-Table's outputs, checked against the inputs
}

// pacPort is a port's index among grit_pa_cache's inputs (rst first) or
// among its outputs, in pacache.PortList's order: the layout of the vectors
// cosimPorts describes.
func pacPort(name string) int {
	in, out := 1, 0
	for _, p := range pacache.PortList {
		if p.Name == name {
			if p.Out {
				return out
			}
			return in
		}
		if p.Out {
			out++
		} else {
			in++
		}
	}
	panic("grit_pa_cache has no port " + name)
}

// Vector positions of grit_pa_cache's ports.
var (
	pacInReqValid     = pacPort(pacache.PortReqValid)
	pacInReqVPN       = pacPort(pacache.PortReqVPN)
	pacInReqWrite     = pacPort(pacache.PortReqWrite)
	pacInTblReqReady  = pacPort(pacache.PortTblReqReady)
	pacInTblRespValid = pacPort(pacache.PortTblRespValid)
	pacInTblRespFound = pacPort(pacache.PortTblRespFound)
	pacInTblRespRW    = pacPort(pacache.PortTblRespRW)
	pacInTblRespCount = pacPort(pacache.PortTblRespCount)

	pacOutReqReady    = pacPort(pacache.PortReqReady)
	pacOutRespValid   = pacPort(pacache.PortRespValid)
	pacOutRespTrigger = pacPort(pacache.PortRespTrigger)
	pacOutRespWrite   = pacPort(pacache.PortRespWrite)
	pacOutRespCount   = pacPort(pacache.PortRespCount)
	pacOutTblReqValid = pacPort(pacache.PortTblReqValid)
	pacOutTblReqOp    = pacPort(pacache.PortTblReqOp)
	pacOutTblReqVPN   = pacPort(pacache.PortTblReqVPN)
	pacOutTblReqRW    = pacPort(pacache.PortTblReqRW)
	pacOutTblReqCount = pacPort(pacache.PortTblReqCount)
)

// pacInRst is rst's position, the first input.
const pacInRst = 0

// pacTableInputs are the module inputs the PA-Table drives.
var pacTableInputs = []int{pacInTblReqReady, pacInTblRespValid, pacInTblRespFound, pacInTblRespRW, pacInTblRespCount}

// NewPACache builds the Go PA-Cache and PA-Table in a checked simulator.
func NewPACache(cfg pacache.Config, tcfg pacache.TableConfig) (*PACache, error) {
	return newPACacheIn(cfg, tcfg, rtl.Options{Checked: true})
}

// newPACacheIn is NewPACache in a simulator with the given options.
func newPACacheIn(cfg pacache.Config, tcfg pacache.TableConfig, opts rtl.Options) (*PACache, error) {
	s := rtl.New(opts)
	p := pacache.NewPorts(s, "pac", cfg)
	if _, err := pacache.New(s, "pac", cfg, p); err != nil {
		return nil, err
	}
	tbl, err := pacache.NewTable(s, "pat", tcfg, p)
	if err != nil {
		return nil, err
	}
	s.Reset()
	return &PACache{sim: s, ports: p, cfg: cfg, table: tbl}, nil
}

// Ports are grit_pa_cache's ports in declaration order (SPEC 8.3). Every
// output is compared in every cycle, payloads included.
func (d *PACache) Ports() []cosim.Port {
	c := d.cfg
	return cosimPorts("grit_pa_cache", gen.Values{"SETS": uint64(c.Sets), "WAYS": uint64(c.Ways), "VPN_BITS": uint64(c.VPNBits), "THRESHOLD": uint64(c.Threshold)}, nil)
}

// Outputs shows the cache's outputs.
func (d *PACache) Outputs(out []uint64) {
	p := d.ports
	r, t := p.Resp.Get(), p.TblReq.Get()
	out[pacOutReqReady] = b2u(p.Req.Ready.Get())
	out[pacOutRespValid] = b2u(p.Resp.Valid.Get())
	out[pacOutRespTrigger] = b2u(r.Trigger)
	out[pacOutRespWrite] = b2u(r.Write)
	out[pacOutRespCount] = uint64(r.Count)
	out[pacOutTblReqValid] = b2u(p.TblReq.Valid.Get())
	out[pacOutTblReqOp] = uint64(t.Op)
	out[pacOutTblReqVPN] = t.VPN
	out[pacOutTblReqRW] = b2u(t.RW)
	out[pacOutTblReqCount] = uint64(t.Count)
}

// tableOutputs copies the PA-Table's outputs of this cycle into the
// module's inputs.
func (d *PACache) tableOutputs(in []uint64) {
	p := d.ports
	a := p.TblResp.Get()
	in[pacInTblReqReady] = b2u(p.TblReq.Ready.Get())
	in[pacInTblRespValid] = b2u(p.TblResp.Valid.Get())
	in[pacInTblRespFound] = b2u(a.Found)
	in[pacInTblRespRW] = b2u(a.RW)
	in[pacInTblRespCount] = uint64(a.Count)
}

// Clock applies the request inputs and steps the clock; the PA-Table
// inputs must be the table's own outputs.
func (d *PACache) Clock(in []uint64) error {
	if in[pacInRst] == 1 {
		d.sim.Reset()
		return nil
	}
	if len(d.want) != len(in) {
		d.want = make([]uint64, len(in))
	}
	want := d.want
	d.tableOutputs(want)
	for _, i := range pacTableInputs {
		if in[i] != want[i] {
			return fmt.Errorf("input %d is %d but the PA-Table drives %d", i, in[i], want[i])
		}
	}
	p := d.ports
	p.Req.Valid.Set(in[pacInReqValid] == 1)
	p.Req.Set(pacache.Request{VPN: in[pacInReqVPN], Write: in[pacInReqWrite] == 1})
	return d.sim.Step()
}

// PACacheStimulus is a legal fault source for the PA-Cache. It holds
// req_valid and its request until req_ready, as a ready/valid source must.
// Faults fall on a pool of pages crowding four sets, so lines are evicted,
// written back, found again in the PA-Table and pushed to the threshold;
// one fault in sixteen is to a fresh random page. The offer rate changes
// every 500 to 2,000 cycles between bursts and trickles. About once every
// 40,000 cycles a reset clears the cache (the PA-Table, being memory,
// keeps its records).
func PACacheStimulus(d *PACache, seed uint64) cosim.Stimulus {
	cfg := d.cfg
	r := rand.New(rand.NewPCG(seed, 0x9ac))
	pool := make([]uint64, 3*cfg.Ways*4)
	for i := range pool {
		set := uint64(r.IntN(min(4, cfg.Sets)))
		pool[i] = cfg.VPN(r.Uint64()&cosim.Mask(cfg.TagBits()), int(set))
	}
	var (
		valid, write bool
		vpn          uint64
		rate         int
		phaseEnd     uint64
	)
	return func(cycle uint64, out, in []uint64) {
		if cycle >= phaseEnd {
			rate = []int{100, 90, 50, 10}[r.IntN(4)]
			phaseEnd = cycle + 500 + uint64(r.IntN(1500))
		}
		if !valid && r.IntN(100) < rate {
			valid, write = true, r.IntN(3) == 0
			vpn = pool[r.IntN(len(pool))]
			if r.IntN(16) == 0 {
				vpn = r.Uint64() & cosim.Mask(cfg.VPNBits)
			}
		}
		in[pacInReqValid] = b2u(valid)
		in[pacInReqVPN] = vpn
		in[pacInReqWrite] = b2u(write)
		d.tableOutputs(in)
		reset := r.IntN(40000) == 0
		in[pacInRst] = b2u(reset)
		if valid && (out[pacOutReqReady] == 1 || reset) {
			valid = false
		}
	}
}

func TestCosimPACache(t *testing.T) {
	for _, tc := range []struct {
		paramSet
		table pacache.TableConfig
	}{
		{paramSet{"default", nil, defaultCycles}, pacache.TableConfig{Latency: 3, StallSeed: 0xbeef}},
		{paramSet{"sets32_ways2_vpn20_thr2", gen.Values{"SETS": 32, "WAYS": 2, "VPN_BITS": 20, "THRESHOLD": 2}, sweepCycles},
			pacache.TableConfig{Latency: 1}},
		{paramSet{"sets8_ways8_vpn52_thr5", gen.Values{"SETS": 8, "WAYS": 8, "VPN_BITS": 52, "THRESHOLD": 5}, sweepCycles},
			pacache.TableConfig{Latency: 6, StallSeed: 0x1234}},
		{paramSet{"sets2_ways3_vpn5_thr3", gen.Values{"SETS": 2, "WAYS": 3, "VPN_BITS": 5, "THRESHOLD": 3}, sweepCycles},
			pacache.TableConfig{Latency: 2, StallSeed: 0x77}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := emit(t, "grit_pa_cache", tc.values)
			e, err := gen.Lookup("grit_pa_cache")
			require.NoError(t, err)
			v, err := e.Resolve(tc.values)
			require.NoError(t, err)
			cfg := pacache.Config{Sets: int(v["SETS"]), Ways: int(v["WAYS"]), VPNBits: int(v["VPN_BITS"]), Threshold: int(v["THRESHOLD"])}
			dut, err := NewPACache(cfg, tc.table)
			require.NoError(t, err)
			cosim.Run(t, cosim.Case{
				Top: "grit_pa_cache", Sources: []cosim.Source{src}, Params: overrides(t, "grit_pa_cache", tc.values), DUT: dut,
				Stim: PACacheStimulus(dut, 5), Cycles: cosim.Cycles(t, tc.cycles), Simulators: tc.simulators(),
			})
			require.Positive(t, dut.table.WriteBacks, "the stimulus must evict dirty lines")
			require.Positive(t, dut.table.Deletes, "the stimulus must reach the threshold")
		})
	}
}

// TestCosimPACacheThresholds co-simulates grit_pa_cache at the thresholds
// of GRIT's study (Section VI-B1, Fig. 21: 2, 4, 8, 16) with GRIT's
// geometry (64 entries, 4-way, 45-bit VPN; Section V-C), in Icarus and
// Verilator, a user's instantiation at each point linted first. The
// counter and count ports are CNT_W and RESP_W wide at each (SPEC 8.3:
// 1/2, 2/3, 3/4 and 4/5 bits).
func TestCosimPACacheThresholds(t *testing.T) {
	for _, threshold := range []uint64{2, 4, 8, 16} {
		t.Run(fmt.Sprintf("threshold%d", threshold), func(t *testing.T) {
			values := gen.Values{"SETS": 16, "WAYS": 4, "VPN_BITS": 45, "THRESHOLD": threshold}
			src := emit(t, "grit_pa_cache", values)
			cfg := pacache.Config{Sets: 16, Ways: 4, VPNBits: 45, Threshold: int(threshold)}
			dut, err := NewPACache(cfg, pacache.TableConfig{Latency: 4, StallSeed: 0x5a5a})
			require.NoError(t, err)
			cosim.Run(t, cosim.Case{
				Top: "grit_pa_cache", Sources: []cosim.Source{src}, Params: overrides(t, "grit_pa_cache", values), DUT: dut,
				Stim: PACacheStimulus(dut, threshold), Cycles: cosim.Cycles(t, sweepCycles), Simulators: cosim.Simulators,
			})
			require.Positive(t, dut.table.WriteBacks, "the stimulus must evict dirty lines")
			require.Positive(t, dut.table.Deletes, "the stimulus must reach the threshold")
		})
	}
}
