package ipgt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/dram"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
	"github.com/uvmmu/uvmmu/rtl"
)

// Two requesters share the IPgT DRAM through the mux: with random offers,
// every write lands, every read returns the word as it was when the DRAM
// took it, each requester's reads come back in order and only to it.
func TestIPGTMuxRandom(t *testing.T) {
	const words = 64
	rng := rand.New(rand.NewPCG(11, 4))
	s := rtl.New(rtl.Options{Checked: true})
	da := ipgt.NewMemPorts(s, "da", ipgt.DefaultAddrBits)
	unit := ipgt.NewMemPorts(s, "unit", ipgt.DefaultAddrBits)
	mem := ipgt.NewMemPorts(s, "mem", ipgt.DefaultAddrBits)
	ipgt.NewMux(s, "mux", da, unit, mem, ipgt.DefaultAddrBits)
	cfg := dram.DefaultConfig(words)
	cfg.Latency = 7
	d, err := dram.New(s, "dram", cfg, mem)
	require.NoError(t, err)
	s.Reset()
	model := make([]uint64, words)
	ports := [2]ipgt.MemPorts{da, unit}
	type req struct {
		write      bool
		addr, data uint64
	}
	var cur [2]*req
	var expect [2][]uint64
	var got [2][]uint64
	// The mux holds a request, then offers it to the DRAM; reads see the
	// memory as the DRAM finds it, so the reference applies each request
	// when the DRAM takes it.
	var order [][2]int
	for cycle := 0; cycle < 4000; cycle++ {
		for i, p := range ports {
			if cur[i] == nil && rng.IntN(2) == 0 {
				cur[i] = &req{write: rng.IntN(2) == 0, addr: uint64(rng.IntN(words)) * ipgt.EntryBytes, data: rng.Uint64()}
			}
			p.ReqValid.Set(cur[i] != nil)
			if cur[i] != nil {
				p.ReqWrite.Set(cur[i].write)
				p.ReqAddr.Set(cur[i].addr)
				p.ReqWData.Set(cur[i].data)
			}
		}
		for i, p := range ports {
			if p.RespValid.Get() {
				got[i] = append(got[i], p.RespData.Get())
			}
		}
		taken := [2]bool{}
		for i, p := range ports {
			taken[i] = cur[i] != nil && p.ReqReady.Get()
		}
		if mem.ReqValid.Get() && mem.ReqReady.Get() {
			a := mem.ReqAddr.Get() / ipgt.EntryBytes
			if mem.ReqWrite.Get() {
				model[a] = mem.ReqWData.Get()
			} else {
				order = append(order, [2]int{int(a), 0})
				expect[0] = append(expect[0], model[a])
			}
		}
		for i := range ports {
			if taken[i] {
				if !cur[i].write {
					expect[1] = append(expect[1], uint64(i))
				}
				cur[i] = nil
			}
		}
		require.NoError(t, s.Step())
	}
	for _, p := range ports {
		p.ReqValid.Set(false)
	}
	for cycle := 0; cycle < 50; cycle++ {
		for i, p := range ports {
			if p.RespValid.Get() {
				got[i] = append(got[i], p.RespData.Get())
			}
		}
		require.NoError(t, s.Step())
	}
	// Reads leave the DRAM in the order it took them; split that stream
	// by requester (expect[1] holds the requester of each accepted read in
	// acceptance order; the DRAM's budget takes a request every cycle, so
	// the mux forwards in that order, the DA first within a cycle).
	var want [2][]uint64
	for k, v := range expect[0] {
		want[expect[1][k]] = append(want[expect[1][k]], v)
	}
	assert.Equal(t, want[0], got[0], "DA reads")
	assert.Equal(t, want[1], got[1], "unit reads")
	for a := 0; a < words; a++ {
		assert.Equal(t, model[a], d.Peek(a), "word %d", a)
	}
}
