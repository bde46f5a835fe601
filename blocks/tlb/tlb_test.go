package tlb

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/rtl"
)

// harness drives a TLB's ports from the testbench, one cycle at a time,
// with its response and acknowledgement ports always ready.
type harness struct {
	t   *testing.T
	sim *rtl.Sim
	tlb *TLB
}

func newHarness(t *testing.T, cfg Config) *harness {
	return newHarnessWith(t, cfg, true)
}

func newHarnessWith(t *testing.T, cfg Config, skip bool) *harness {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
	tl, err := New(s, "tlb", cfg, NewPorts(s, "tlb"))
	require.NoError(t, err)
	s.Reset()
	h := &harness{t: t, sim: s, tlb: tl}
	h.idle()
	return h
}

// idle clears every input for the coming cycle.
func (h *harness) idle() {
	h.tlb.Req.Valid.Set(false)
	h.tlb.Fill.Valid.Set(false)
	h.tlb.Inval.Valid.Set(false)
	h.tlb.Resp.Ready.Set(true)
	h.tlb.InvalAck.Ready.Set(true)
}

func (h *harness) lookup(vpn uint64, who uint16) { h.send(Lookup{VPN: vpn, Requester: who}) }

func (h *harness) send(l Lookup) {
	require.True(h.t, h.tlb.Req.Ready.Get())
	h.tlb.Req.Valid.Set(true)
	h.tlb.Req.Bits.Set(l)
}

func (h *harness) fill(vpn uint64, e pte.PTE) {
	h.tlb.Fill.Valid.Set(true)
	h.tlb.Fill.Bits.Set(vpn)
	h.tlb.Fill.PTE.Set(e)
}

func (h *harness) shoot(v Invalidate) {
	require.True(h.t, h.tlb.Inval.Ready.Get())
	h.tlb.Inval.Valid.Set(true)
	h.tlb.Inval.Bits.Set(v)
}

// step evaluates the current cycle and clears the inputs.
func (h *harness) step() {
	require.NoError(h.t, h.sim.Step())
	h.idle()
}

// resp is the response on the port in the current cycle, if any.
func (h *harness) resp() (Response, pte.PTE, bool) {
	if !h.tlb.Resp.Valid.Get() {
		return Response{}, 0, false
	}
	return h.tlb.Resp.Bits.Get(), h.tlb.Resp.PTE.Get(), true
}

// ask looks vpn up and returns the response, checking it arrives exactly
// HitLatency cycles after the lookup.
func (h *harness) ask(vpn uint64) (Status, pte.PTE) {
	r, e := h.askWrite(vpn, false)
	return r.Status, e
}

// askWrite is ask for a load (write false) or a store (write true),
// returning the whole response, whose write bit it checks.
func (h *harness) askWrite(vpn uint64, write bool) (Response, pte.PTE) {
	h.send(Lookup{VPN: vpn, Requester: 7, Write: write})
	start := h.sim.Cycle()
	for range h.tlb.cfg.HitLatency {
		_, _, ok := h.resp()
		require.False(h.t, ok, "response before its latency")
		h.step()
	}
	r, e, ok := h.resp()
	require.True(h.t, ok, "no response %d cycles after the lookup in cycle %d", h.tlb.cfg.HitLatency, start)
	require.Equal(h.t, vpn, r.VPN)
	require.Equal(h.t, uint16(7), r.Requester)
	require.Equal(h.t, write, r.Write, "the response carries the lookup's write bit")
	h.step()
	return r, e
}

func TestHitAndMissLatency(t *testing.T) {
	for _, cfg := range []Config{DefaultL1Config(), GRITL2Config()} {
		h := newHarness(t, cfg)
		st, _ := h.ask(0x123)
		assert.Equal(t, Miss, st)
		h.fill(0x123, pte.Local(42))
		h.step()
		st, e := h.ask(0x123)
		assert.Equal(t, Hit, st)
		assert.Equal(t, pte.Local(42), e)
		assert.Equal(t, Stats{Hits: 1, Misses: 1, Fills: 1}, h.tlb.Stats())
	}
}

func TestBackToBackLookupsOnePerCycle(t *testing.T) {
	h := newHarness(t, GRITL2Config())
	h.fill(5, pte.Local(1))
	h.step()
	var got []Response
	for c := range 40 {
		if c < 20 {
			h.lookup(uint64(c%10), uint16(c))
		}
		if r, _, ok := h.resp(); ok {
			got = append(got, r)
			assert.Equal(t, uint64(c), uint64(r.Requester)+10, "response %d not 10 cycles after its lookup", r.Requester)
		}
		h.step()
	}
	require.Len(t, got, 20)
	assert.Equal(t, Hit, got[5].Status)
	assert.Equal(t, Miss, got[6].Status)
}

func TestLRUReplacementOrder(t *testing.T) {
	h := newHarness(t, Config{Sets: 1, Ways: 4, HitLatency: 1})
	for v := uint64(1); v <= 4; v++ {
		h.fill(v, pte.Local(v))
		h.step()
	}
	st, _ := h.ask(1) // order, oldest first: 2 3 4 1
	require.Equal(t, Hit, st)
	h.fill(5, pte.Local(5)) // evicts 2
	h.step()
	h.fill(3, pte.Local(33)) // refreshes 3: 4 1 5 3
	h.step()
	h.fill(6, pte.Local(6)) // evicts 4
	h.step()
	present := func() []uint64 {
		var p []uint64
		for v := uint64(1); v <= 6; v++ {
			if _, ok := h.tlb.Probe(v); ok {
				p = append(p, v)
			}
		}
		return p
	}
	assert.Equal(t, []uint64{1, 3, 5, 6}, present())
	e, _ := h.tlb.Probe(3)
	assert.Equal(t, pte.Local(33), e)
	assert.Equal(t, uint64(2), h.tlb.Stats().Evictions)
}

func TestSetIndexIsLowVPNBits(t *testing.T) {
	h := newHarness(t, Config{Sets: 2, Ways: 2, HitLatency: 1})
	// 0, 2, 4 share set 0; 1 sits alone in set 1.
	for _, v := range []uint64{0, 1, 2, 4} {
		h.fill(v, pte.Local(v))
		h.step()
	}
	for v, want := range map[uint64]bool{0: false, 1: true, 2: true, 4: true} {
		_, ok := h.tlb.Probe(v)
		assert.Equal(t, want, ok, "vpn %d", v)
	}
}

func TestShootdown(t *testing.T) {
	h := newHarness(t, DefaultL1Config())
	for v := uint64(10); v < 14; v++ {
		h.fill(v, pte.Remote(v))
		h.step()
	}
	h.shoot(Invalidate{VPN: 11})
	h.step()
	// Acknowledged the cycle after, with the entry already gone.
	require.True(t, h.tlb.InvalAck.Valid.Get())
	assert.Equal(t, Invalidate{VPN: 11}, h.tlb.InvalAck.Bits.Get())
	assert.False(t, h.tlb.Inval.Ready.Get(), "one shootdown outstanding at a time")
	_, ok := h.tlb.Probe(11)
	assert.False(t, ok)
	h.step()
	assert.False(t, h.tlb.InvalAck.Valid.Get())
	st, _ := h.ask(11)
	assert.Equal(t, Miss, st)

	// A fill of the VPN being shot down in the same cycle is dropped.
	h.fill(12, pte.Local(99))
	h.shoot(Invalidate{VPN: 12})
	h.step()
	_, ok = h.tlb.Probe(12)
	assert.False(t, ok)
	h.step()

	h.shoot(Invalidate{All: true})
	h.step()
	for v := uint64(10); v < 14; v++ {
		_, ok := h.tlb.Probe(v)
		assert.False(t, ok, "vpn %d survived a full flush", v)
	}
	assert.Equal(t, uint64(4), h.tlb.Stats().Invalidations)
}

func TestFrozenRefusesMissesButAnswersHits(t *testing.T) {
	h := newHarness(t, DefaultL1Config())
	h.fill(1, pte.Local(8))
	h.step()
	h.tlb.Frozen.Set(true)
	st, e := h.ask(1)
	assert.Equal(t, Hit, st)
	assert.Equal(t, pte.Local(8), e)
	st, _ = h.ask(2)
	assert.Equal(t, Refused, st)
	h.tlb.Frozen.Set(false)
	st, _ = h.ask(2)
	assert.Equal(t, Miss, st)
	assert.Equal(t, Stats{Hits: 1, Misses: 1, Refused: 1, Fills: 1}, h.tlb.Stats())
}

// A store's lookup carries its write bit to the response, and a store that
// hits a read-only entry answers Miss (counted as a miss) while loads keep
// hitting it; the entry stays. Frozen, that store is refused like any miss.
// L1 defaults: every response 1 cycle after its lookup.
func TestWriteBitAndReadOnlyEntries(t *testing.T) {
	h := newHarness(t, DefaultL1Config())
	ro := pte.Remote(9).AsReadOnly()
	h.fill(1, pte.Local(8))
	h.step()
	h.fill(2, ro)
	h.step()
	type answer struct {
		Resp Response
		PTE  pte.PTE
	}
	var got []answer
	for _, a := range []struct {
		vpn    uint64
		write  bool
		frozen bool
	}{{1, true, false}, {2, false, false}, {2, true, false}, {2, true, true}, {2, false, true}, {3, true, false}} {
		h.tlb.Frozen.Set(a.frozen)
		r, e := h.askWrite(a.vpn, a.write)
		got = append(got, answer{r, e})
	}
	want := []answer{
		{Response{VPN: 1, Requester: 7, Write: true, Status: Hit}, pte.Local(8)},
		{Response{VPN: 2, Requester: 7, Write: false, Status: Hit}, ro},
		{Response{VPN: 2, Requester: 7, Write: true, Status: Miss}, 0},
		{Response{VPN: 2, Requester: 7, Write: true, Status: Refused}, 0},
		{Response{VPN: 2, Requester: 7, Write: false, Status: Hit}, ro},
		{Response{VPN: 3, Requester: 7, Write: true, Status: Miss}, 0},
	}
	assert.Empty(t, cmp.Diff(want, got))
	assert.Equal(t, uint64(2*6+2), h.sim.Cycle(), "two fills, then six lookups of one cycle plus the response cycle")
	e, ok := h.tlb.Probe(2)
	assert.True(t, ok)
	assert.Equal(t, ro, e)
	assert.Equal(t, Stats{Hits: 3, Misses: 2, Refused: 1, Fills: 2}, h.tlb.Stats())
}

// The packed lookup and response keep the write bit above the requester,
// as pte.PackRequest lays it out.
func TestPackedWriteBit(t *testing.T) {
	l := Lookup{VPN: 0xF_FFFF_FFFF, Requester: 0xFFFF, Write: true}
	assert.Equal(t, uint64(1)<<52|uint64(0xFFFF)<<36|0xF_FFFF_FFFF, l.Pack())
	assert.Equal(t, l, UnpackLookup(l.Pack()))
	assert.Equal(t, Lookup{VPN: 5, Requester: 3}, UnpackLookup(Lookup{VPN: 5, Requester: 3}.Pack()))
	r := Response{VPN: 5, Requester: 3, Write: true, Status: Refused}
	assert.Equal(t, uint64(Refused)<<53|1<<52|3<<36|5, r.Pack())
	assert.Equal(t, 53, LookupBits)
	assert.Equal(t, 55, ResponseBits)
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Sets: 3, Ways: 4, HitLatency: 1}, "tlb: Sets 3 must be a power of two in 1..65536"},
		{Config{Sets: 1, Ways: 0, HitLatency: 1}, "tlb: Ways 0 outside 1..1024"},
		{Config{Sets: 1, Ways: 4, HitLatency: 0}, "tlb: HitLatency 0 outside 1..1024"},
		{Config{Sets: 1024, Ways: 128, HitLatency: 1}, "tlb: Sets 1024 x Ways 128 = 131072 entries exceeds 65536"},
	} {
		require.EqualError(t, tc.cfg.Validate(), tc.want)
		_, err := New(rtl.New(rtl.Options{}), "tlb", tc.cfg, Ports{})
		require.EqualError(t, err, tc.want)
	}
	for _, c := range []Config{DefaultL1Config(), GRITL1Config(), GRITL2Config()} {
		require.NoError(t, c.Validate())
	}
	assert.Equal(t, 128, DefaultL1Config().Entries())
	assert.Equal(t, 512, GRITL2Config().Entries())
}

// refEntry is one translation in the reference model.
type refEntry struct {
	VPN   uint64
	PTE   pte.PTE
	Stamp uint64
}

// refTLB is the reference: per set, the resident translations with their
// last-use order; each cycle reads the state at its start.
type refTLB struct {
	cfg   Config
	sets  [][]refEntry
	clock uint64
}

func (r *refTLB) set(vpn uint64) int { return int(vpn % uint64(r.cfg.Sets)) }

func (r *refTLB) index(vpn uint64) int {
	for i, e := range r.sets[r.set(vpn)] {
		if e.VPN == vpn {
			return i
		}
	}
	return -1
}

// cycle applies one cycle's lookup, fill and shootdown and returns the
// lookup's status and PTE.
func (r *refTLB) cycle(look *Lookup, frozen bool, fill *refEntry, shot *Invalidate) (Status, pte.PTE) {
	st, e := Miss, pte.PTE(0)
	hitVPN := ^uint64(0)
	if look != nil {
		switch i := r.index(look.VPN); {
		case i >= 0 && !(look.Write && r.sets[r.set(look.VPN)][i].PTE.ReadOnly()):
			st, e, hitVPN = Hit, r.sets[r.set(look.VPN)][i].PTE, look.VPN
		case frozen:
			st = Refused
		}
	}
	if fill != nil && shot != nil && (shot.All || shot.VPN == fill.VPN) {
		fill = nil
	}
	if fill != nil {
		s := r.set(fill.VPN)
		ent := refEntry{fill.VPN, fill.PTE, r.clock + 1}
		switch i := r.index(fill.VPN); {
		case i >= 0:
			r.sets[s][i] = ent
		case len(r.sets[s]) < r.cfg.Ways:
			r.sets[s] = append(r.sets[s], ent)
		default:
			lru := 0
			for j, x := range r.sets[s] {
				if x.Stamp < r.sets[s][lru].Stamp {
					lru = j
				}
			}
			r.sets[s][lru] = ent
		}
	}
	if hitVPN != ^uint64(0) && (fill == nil || fill.VPN != hitVPN) {
		if i := r.index(hitVPN); i >= 0 {
			r.sets[r.set(hitVPN)][i].Stamp = r.clock
		}
	}
	if st == Hit || fill != nil {
		r.clock += 2
	}
	if shot != nil {
		for s := range r.sets {
			keep := r.sets[s][:0]
			for _, x := range r.sets[s] {
				if !(shot.All && (fill == nil || x.VPN != fill.VPN)) && (shot.All || x.VPN != shot.VPN) {
					keep = append(keep, x)
				}
			}
			r.sets[s] = keep
		}
	}
	return st, e
}

func TestRandomAgainstReferenceLRU(t *testing.T) {
	for i, cfg := range []Config{{Sets: 1, Ways: 8, HitLatency: 1}, {Sets: 4, Ways: 4, HitLatency: 3}, DefaultL1Config(), GRITL2Config()} {
		rng := rand.New(rand.NewPCG(uint64(cfg.Entries()), 3))
		h := newHarnessWith(t, cfg, i%2 == 0)
		ref := &refTLB{cfg: cfg, sets: make([][]refEntry, cfg.Sets), clock: 1}
		type due struct {
			at   uint64
			resp Response
			pte  pte.PTE
		}
		var pending []due
		span := uint64(cfg.Entries() * 2)
		for c := range 20000 {
			now := h.sim.Cycle()
			var look *Lookup
			var fill *refEntry
			var shot *Invalidate
			if rng.IntN(3) > 0 && h.tlb.Req.Ready.Get() {
				look = &Lookup{VPN: rng.Uint64N(span), Requester: uint16(c), Write: rng.IntN(4) == 0}
				h.send(*look)
			}
			if rng.IntN(3) == 0 {
				fill = &refEntry{VPN: rng.Uint64N(span), PTE: pte.Local(rng.Uint64N(1 << 20))}
				if rng.IntN(4) == 0 {
					fill.PTE = pte.Remote(fill.PTE.Frame()).AsReadOnly()
				}
				h.fill(fill.VPN, fill.PTE)
			}
			if rng.IntN(40) == 0 && h.tlb.Inval.Ready.Get() {
				shot = &Invalidate{VPN: rng.Uint64N(span), All: rng.IntN(20) == 0}
				h.shoot(*shot)
			}
			frozen := rng.IntN(10) == 0
			h.tlb.Frozen.Set(frozen)
			st, e := ref.cycle(look, frozen, fill, shot)
			if look != nil {
				pending = append(pending, due{now + uint64(cfg.HitLatency), Response{VPN: look.VPN, Requester: look.Requester, Write: look.Write, Status: st}, e})
			}
			if r, e, ok := h.resp(); ok {
				require.NotEmpty(t, pending)
				require.Equal(t, pending[0].at, now, "response timing")
				require.Empty(t, cmp.Diff(pending[0].resp, r), "cycle %d", now)
				require.Equal(t, pending[0].pte, e)
				pending = pending[1:]
			} else {
				require.True(t, len(pending) == 0 || pending[0].at > now, "response missing in cycle %d", now)
			}
			h.step()
			if c%1000 == 0 {
				checkMatch(t, h.tlb)
			}
		}
		for s := range ref.sets {
			for _, x := range ref.sets[s] {
				e, ok := h.tlb.Probe(x.VPN)
				require.True(t, ok)
				require.Equal(t, x.PTE, e)
			}
		}
		checkMatch(t, h.tlb)
	}
}

// checkMatch holds the tag compare to the tag registers: every valid way is
// found under its VPN.
func checkMatch(t *testing.T, tl *TLB) {
	valid := 0
	for w := range tl.tag.Len() {
		if tag := tl.tag.At(w).Q(); tag&validTag != 0 {
			valid++
			require.Equal(t, w, tl.find(tag&^validTag), "way %d", w)
		}
	}
	found := 0
	for v := range tl.match.vpns() {
		if tl.find(v) >= 0 {
			found++
		}
	}
	require.Equal(t, valid, found)
}

func TestResetClearsEntries(t *testing.T) {
	h := newHarness(t, DefaultL1Config())
	h.fill(3, pte.Local(3))
	h.step()
	_, ok := h.tlb.Probe(3)
	require.True(t, ok)
	h.sim.Reset()
	h.idle()
	_, ok = h.tlb.Probe(3)
	assert.False(t, ok)
	st, _ := h.ask(3)
	assert.Equal(t, Miss, st)
	checkMatch(t, h.tlb)
}
