package tb

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/da"
	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// DA presents blocks/da through the ports of uvmmu_da, with its IPgT
// memory port served by a blocks/dram in the same simulator. The DRAM's
// outputs are the module's mem_req_ready and mem_resp_* inputs: the
// stimulus copies them into each vector row, so the Verilog sees exactly
// the memory the Go model saw.
type DA struct {
	sim *rtl.Sim
	p   da.Ports
	cfg da.Config
	mem *dram.DRAM
	blk *da.DA

	// What the stimulus exercised, counted at the handshakes.
	handed, victims, maps, ops uint64
}

// Indexes of uvmmu_da's inputs and outputs in the order of DA.Ports.
const (
	daInRst = iota
	daInDstReady
	daInMapValid
	daInMapPFgN
	daInMapVPgN
	daInMapCID
	daInSWValid
	daInSWOp
	daInSWPFgN
	daInMemReqReady
	daInMemRespValid
	daInMemRespData
	daInVictimValid
	daInVictimPFgN
)

const (
	daOutInitDone = iota
	daOutDstValid
	daOutDstPFgN
	daOutDstSwap
	daOutMapReady
	daOutSWReady
	daOutMemReqValid
	daOutMemReqWrite
	daOutMemReqAddr
	daOutMemReqWData
	daOutVictimReady
)

// NewDA builds the Go DA and its DRAM in a checked simulator, with the
// IPgT preloaded from table.
func NewDA(cfg da.Config, mc dram.Config, table []uint64) (*DA, error) {
	return newDAIn(cfg, mc, table, rtl.Options{Checked: true})
}

// newDAIn is NewDA in a simulator with the given options.
func newDAIn(cfg da.Config, mc dram.Config, table []uint64, opts rtl.Options) (*DA, error) {
	s := rtl.New(opts)
	p := da.NewPorts(s, "da", cfg)
	blk, err := da.New(s, "da", cfg, p)
	if err != nil {
		return nil, err
	}
	mc.Base, mc.Words, mc.AddrBits = cfg.IPGTBase, int(cfg.NFG), cfg.AddrBits
	m, err := dram.New(s, "dram", mc, p.Mem)
	if err != nil {
		return nil, err
	}
	for i, w := range table {
		m.Load(i, w)
	}
	s.Reset()
	return &DA{sim: s, p: p, cfg: cfg, mem: m, blk: blk}, nil
}

// Ports are uvmmu_da's ports in declaration order (SPEC 5.3). Payloads are
// compared while their valid is high.
func (d *DA) Ports() []cosim.Port {
	return cosimPorts("uvmmu_da", daValues(d.cfg), map[string]string{
		"dst_pfgn": "dst_valid", "dst_swap": "dst_valid",
		"mem_req_write": "mem_req_valid", "mem_req_addr": "mem_req_valid", "mem_req_wdata": "mem_req_valid",
	})
}

// daValues are uvmmu_da's parameters for a DA configuration.
func daValues(c da.Config) gen.Values { return gen.Values(c.Params()) }

// external reports the victim port of afm.VictimExternal (VICTIMS=1).
func (d *DA) external() bool { return d.cfg.Victims == afm.VictimExternal }

// Outputs shows the DA's outputs.
func (d *DA) Outputs(out []uint64) {
	p := d.p
	out[daOutInitDone] = b2u(p.InitDone.Get())
	out[daOutDstValid] = b2u(p.DstValid.Get())
	out[daOutDstPFgN] = p.DstPFgN.Get()
	out[daOutDstSwap] = b2u(p.DstSwap.Get())
	out[daOutMapReady] = b2u(p.Map.Ready.Get())
	out[daOutSWReady] = b2u(p.SW.Ready.Get())
	out[daOutMemReqValid] = b2u(p.Mem.ReqValid.Get())
	out[daOutMemReqWrite] = b2u(p.Mem.ReqWrite.Get())
	out[daOutMemReqAddr] = p.Mem.ReqAddr.Get()
	out[daOutMemReqWData] = p.Mem.ReqWData.Get()
	out[daOutVictimReady] = 0
	if d.external() {
		out[daOutVictimReady] = b2u(p.Victim.Ready.Get())
	}
}

// memoryOutputs copies the DRAM's outputs of this cycle into the module's
// inputs.
func (d *DA) memoryOutputs(in []uint64) {
	m := d.p.Mem
	in[daInMemReqReady] = b2u(m.ReqReady.Get())
	in[daInMemRespValid] = b2u(m.RespValid.Get())
	in[daInMemRespData] = m.RespData.Get()
}

// Clock applies the inputs and steps the clock; the memory inputs must be
// the DRAM's own outputs.
func (d *DA) Clock(in []uint64) error {
	if in[daInRst] == 1 {
		d.sim.Reset()
		return nil
	}
	var want [daInMemRespData + 1]uint64
	d.memoryOutputs(want[:])
	for i := daInMemReqReady; i <= daInMemRespData; i++ {
		if in[i] != want[i] {
			return fmt.Errorf("input %d is %#x but the DRAM drives %#x", i, in[i], want[i])
		}
	}
	p := d.p
	p.DstReady.Set(in[daInDstReady] == 1)
	p.Map.Valid.Set(in[daInMapValid] == 1)
	p.Map.PFgN.Set(in[daInMapPFgN])
	p.Map.VPgN.Set(in[daInMapVPgN])
	p.Map.CID.Set(uint16(in[daInMapCID]))
	p.SW.Valid.Set(in[daInSWValid] == 1)
	p.SW.Op.Set(uint8(in[daInSWOp]))
	p.SW.PFgN.Set(in[daInSWPFgN])
	if d.external() {
		p.Victim.Valid.Set(in[daInVictimValid] == 1)
		p.Victim.Bits.Set(in[daInVictimPFgN])
	}
	if p.DstFire() {
		d.handed++
		if p.DstSwap.Get() {
			d.victims++
		}
	}
	if p.Map.Fire() {
		d.maps++
	}
	if p.SW.Fire() {
		d.ops++
	}
	return d.sim.Step()
}

// daTable is a random initial IPgT: free, protected, mapped and busy
// entries and arbitrary bit patterns.
func daTable(seed, nfg uint64, pFree float64) []uint64 {
	r := rand.New(rand.NewPCG(seed, 0x7ab))
	t := make([]uint64, nfg)
	for i := range t {
		switch x := r.Float64(); {
		case x < pFree:
			t[i] = ipgt.F
		case x < pFree+0.1:
			t[i] = ipgt.Protected
		case x < 0.96:
			t[i] = ipgt.Mapped(uint16(r.IntN(1<<afm.CIDBits)), r.Uint64N(1<<afm.VPgNBits))
		case x < 0.98:
			t[i] = ipgt.Mapped(1, uint64(i)) | ipgt.B
		default:
			t[i] = r.Uint64()
		}
	}
	return t
}

// DAStimulus drives the DA as the system would: a consumer takes
// destinations (its dst_ready rate changes every 1,000 to 5,000 cycles) and
// maps each one 1 to 600 cycles later, or, one time in ten, has the driver
// PROTECT it; the driver also issues random FREE and UNPROTECT ops and the
// undefined op 3, some beyond NFG. Map and software requests are held until
// accepted. The memory inputs are the DRAM's outputs. About once every
// 40,000 cycles a reset restarts the DA (the IPgT, being memory, stays).
// With the victim port (afm.VictimExternal), an eviction-metadata source
// offers candidates at a rate that changes with the phases, some beyond
// NFG, each held until victim_ready takes it.
func DAStimulus(d *DA, seed uint64) cosim.Stimulus {
	r := rand.New(rand.NewPCG(seed, 0xda))
	type later struct {
		due, pfgn uint64
		protect   bool
	}
	var (
		todo             []later
		maps, sws        [][3]uint64
		mapHeld, swHeld  bool
		popRate, swRate  int
		phaseEnd         uint64
		curMap, curSW    [3]uint64
		victimHeld       bool
		victim           uint64
		victimRate       int
		nfg, fgMask, cid = d.cfg.NFG, cosim.Mask(d.cfg.FGBits), uint64(1)<<afm.CIDBits - 1
	)
	return func(cycle uint64, out, in []uint64) {
		if cycle >= phaseEnd {
			popRate = []int{0, 2, 20, 60, 100}[r.IntN(5)]
			swRate = []int{0, 1, 5}[r.IntN(3)]
			victimRate = []int{0, 10, 50, 100}[r.IntN(4)]
			phaseEnd = cycle + 1000 + uint64(r.IntN(4000))
		}
		reset := r.IntN(40000) == 0
		ready := r.IntN(100) < popRate
		in[daInDstReady] = b2u(ready)
		if ready && out[daOutDstValid] == 1 && !reset {
			todo = append(todo, later{due: cycle + 1 + uint64(r.IntN(600)), pfgn: out[daOutDstPFgN], protect: r.IntN(10) == 0})
		}
		for i := 0; i < len(todo); i++ {
			if todo[i].due > cycle {
				continue
			}
			if todo[i].protect {
				sws = append(sws, [3]uint64{uint64(afm.OpProtect), todo[i].pfgn})
			} else {
				maps = append(maps, [3]uint64{todo[i].pfgn, r.Uint64N(1 << afm.VPgNBits), r.Uint64() & cid})
			}
			todo = append(todo[:i], todo[i+1:]...)
			i--
		}
		if r.IntN(1000) < swRate {
			op := []uint64{uint64(afm.OpFree), uint64(afm.OpFree), uint64(afm.OpUnprotect), 3}[r.IntN(4)]
			sws = append(sws, [3]uint64{op, r.Uint64N(nfg+8) & fgMask})
		}
		if !mapHeld && len(maps) > 0 {
			curMap, maps, mapHeld = maps[0], maps[1:], true
		}
		if !swHeld && len(sws) > 0 {
			curSW, sws, swHeld = sws[0], sws[1:], true
		}
		in[daInMapValid] = b2u(mapHeld)
		in[daInMapPFgN], in[daInMapVPgN], in[daInMapCID] = curMap[0], curMap[1], curMap[2]
		in[daInSWValid] = b2u(swHeld)
		in[daInSWOp], in[daInSWPFgN] = curSW[0], curSW[1]
		d.memoryOutputs(in)
		in[daInRst] = b2u(reset)
		if mapHeld && (out[daOutMapReady] == 1 || reset) {
			mapHeld = false
		}
		if swHeld && (out[daOutSWReady] == 1 || reset) {
			swHeld = false
		}
		if d.external() {
			if !victimHeld && r.IntN(100) < victimRate {
				victim, victimHeld = r.Uint64N(nfg+8)&fgMask, true
			}
			in[daInVictimValid], in[daInVictimPFgN] = b2u(victimHeld), victim
			if victimHeld && (out[daOutVictimReady] == 1 || reset) {
				victimHeld = false
			}
		}
		if reset {
			todo, maps, sws = todo[:0], maps[:0], sws[:0]
		}
	}
}

// daParamSet is one parameter set of the DA co-simulation with its memory.
type daParamSet struct {
	paramSet
	mem   dram.Config
	pFree float64
	// victims: the run must reach victim mode. At the default NFG it
	// cannot: the first FrAB pass alone visits 5,632 regions.
	victims bool
}

// emitDA returns uvmmu_da and every committed module as sources, top
// first, after linting a user's instantiation of uvmmu_da at values.
func emitDA(t *testing.T, values gen.Values) []cosim.Source {
	t.Helper()
	srcs := []cosim.Source{emit(t, "uvmmu_da", values)}
	files, err := gen.DefaultFiles()
	require.NoError(t, err)
	for _, f := range files {
		if f.Name != srcs[0].Name {
			srcs = append(srcs, cosim.Source{Name: f.Name, Text: f.Text})
		}
	}
	return srcs
}

// daConfigOf is the Go configuration of a uvmmu_da parameter set.
func daConfigOf(t *testing.T, values gen.Values) da.Config {
	e, err := gen.Lookup("uvmmu_da")
	require.NoError(t, err)
	v, err := e.Resolve(values)
	require.NoError(t, err)
	return da.Config{NFG: v["NFG"], DCQDepth: int(v["DCQ_DEPTH"]), DCQThreshold: int(v["DCQ_THRESHOLD"]), FrABWord: int(v["FRAB_WORD"]),
		FGBits: int(v["FG_BITS"]), AddrBits: int(v["ADDR_W"]), IPGTBase: v["IPGT_BASE"], LFSRWidth: int(v["LFSR_WIDTH"]), LFSRSeed: v["LFSR_SEED"],
		Victims: afm.VictimSource(v["VICTIMS"])}
}

func TestCosimDA(t *testing.T) {
	mem := func(latency int, bw float64) dram.Config {
		m := dram.DefaultConfig(1)
		m.Latency, m.BytesPerCycle = latency, bw
		return m
	}
	for _, ps := range []daParamSet{
		{paramSet{"default", nil, defaultCycles}, mem(100, 484e9/1481e6), 0.05, false},
		{paramSet{"nfg1000_dcq8_word32", gen.Values{"NFG": 1000, "DCQ_DEPTH": 8, "DCQ_THRESHOLD": 3, "FRAB_WORD": 32, "FG_BITS": 16,
			"ADDR_W": 24, "IPGT_BASE": 0x1000, "LFSR_WIDTH": 12, "LFSR_SEED": 0x5a5}, sweepCycles}, mem(17, 3), 0.3, true},
		{paramSet{"nfg3000_dcq16_word64", gen.Values{"NFG": 3000, "DCQ_DEPTH": 16, "DCQ_THRESHOLD": 16, "FRAB_WORD": 64, "FG_BITS": 20,
			"ADDR_W": 32, "IPGT_BASE": 0x80000, "LFSR_WIDTH": 24, "LFSR_SEED": 0xabcde}, sweepCycles}, mem(60, 8), 0.02, true},
		// NFG = 2^FG_BITS and a power of two (no op is out of range, no draw
		// is rejected); the 64 regions fit one narrowed FrAB word.
		// Victim candidates from the victim port (VICTIMS=1).
		{paramSet{"nfg1500_external_victims", gen.Values{"NFG": 1500, "DCQ_DEPTH": 8, "DCQ_THRESHOLD": 4, "FRAB_WORD": 64, "FG_BITS": 16,
			"ADDR_W": 24, "LFSR_WIDTH": 12, "LFSR_SEED": 0x3c3, "VICTIMS": 1}, sweepCycles}, mem(20, 4), 0.2, true},
		{paramSet{"nfg2048_fg11_oneword", gen.Values{"NFG": 2048, "DCQ_DEPTH": 4, "DCQ_THRESHOLD": 2, "FRAB_WORD": 512, "FG_BITS": 11,
			"ADDR_W": 14, "IPGT_BASE": 0, "LFSR_WIDTH": 11, "LFSR_SEED": 0x581}, sweepCycles}, mem(5, 40), 0.1, true},
	} {
		t.Run(ps.name, func(t *testing.T) {
			srcs := emitDA(t, ps.values)
			cfg := daConfigOf(t, ps.values)
			dut, err := NewDA(cfg, ps.mem, daTable(7, cfg.NFG, ps.pFree))
			require.NoError(t, err)
			cosim.Run(t, cosim.Case{
				Top: "uvmmu_da", Sources: srcs, Params: overrides(t, "uvmmu_da", ps.values), DUT: dut,
				Stim: DAStimulus(dut, 11), Cycles: cosim.Cycles(t, ps.cycles), Simulators: ps.simulators(),
			})
			require.NoError(t, dut.mem.Err())
			t.Logf("%d destinations (%d victims), %d maps, %d software ops", dut.handed, dut.victims, dut.maps, dut.ops)
			if ps.victims {
				require.Positive(t, dut.victims, "the stimulus must reach victim mode")
			}
			require.Positive(t, dut.handed-dut.victims, "the stimulus must hand out free frame-groups")
			require.Positive(t, dut.ops)
		})
	}
}
