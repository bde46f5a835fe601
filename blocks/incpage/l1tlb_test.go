package incpage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/pte"
	"github.com/uvmmu/uvmmu/blocks/tlb"
	"github.com/uvmmu/uvmmu/rtl"
)

// l1Harness drives an L1 TLB's wires from the testbench one cycle at a
// time, its response port always ready.
type l1Harness struct {
	t   *testing.T
	sim *rtl.Sim
	tlb *L1TLB
	tp  tlb.Ports
	l   Broadcast
}

func newL1Harness(t *testing.T, k int) *l1Harness {
	s := rtl.New(rtl.Options{Checked: true})
	tp := tlb.NewPorts(s, "l1")
	l := NewBroadcast(s, "landed")
	tl, err := NewL1TLB(s, "l1", L1Config{Entries: 4, HitLatency: 1, UnitShift: unitShiftTB, Ranges: k}, tp.Req, tp.Resp, NewFillPort(s, "l1.fill2m", k), l)
	require.NoError(t, err)
	s.Reset()
	h := &l1Harness{t: t, sim: s, tlb: tl, tp: tp, l: l}
	h.idle()
	return h
}

func (h *l1Harness) idle() {
	h.tp.Req.Valid.Set(false)
	h.tlb.Fill.Valid.Set(false)
	h.l.Valid.Set(false)
	h.tp.Resp.Ready.Set(true)
}

func (h *l1Harness) step() {
	require.NoError(h.t, h.sim.Step())
	h.idle()
}

// lookup sends a lookup of unit u of page and returns its status, which
// shows one cycle (HitLatency) later.
func (h *l1Harness) lookup(page uint64, u int) tlb.Status {
	h.tp.Req.Valid.Set(true)
	h.tp.Req.Bits.Set(tlb.Lookup{VPN: key(page, u), Requester: 7})
	h.step()
	require.True(h.t, h.tp.Resp.Valid.Get())
	r := h.tp.Resp.Bits.Get()
	require.Equal(h.t, key(page, u), r.VPN)
	h.step()
	return r.Status
}

func (h *l1Harness) fill(page uint64, spans ...Span) {
	h.tlb.Fill.Valid.Set(true)
	h.tlb.Fill.Bits.Set(page)
	h.tlb.Fill.PTE.Set(pte.Local(512))
	for i, w := range h.tlb.Fill.Spans {
		v := uint64(0)
		if i < len(spans) {
			v = spans[i].Pack()
		}
		w.Set(v)
	}
	h.step()
}

func (h *l1Harness) landed(page uint64, s Span) {
	h.l.Valid.Set(true)
	h.l.Bits.Set(Landed{Page: page, Span: s})
	h.step()
}

// The L1 TLB's two steps: a tag miss, a range hit, a range miss; a Landed
// broadcast turns the range miss into a hit.
func TestL1RangeHitAndMiss(t *testing.T) {
	h := newL1Harness(t, 2)
	p := uint64(basePage)
	assert.Equal(t, tlb.Miss, h.lookup(p, 7), "tag miss")
	h.fill(p, Span{5, 9})
	assert.Equal(t, tlb.Hit, h.lookup(p, 7), "range hit")
	assert.Equal(t, tlb.Miss, h.lookup(p, 10), "range miss")
	assert.Equal(t, tlb.Miss, h.lookup(p+1, 7), "another page: tag miss")
	h.landed(p, Span{10, 12})
	assert.Equal(t, tlb.Hit, h.lookup(p, 11))
	_, rec, ok := h.tlb.Probe(p)
	require.True(t, ok)
	assert.Equal(t, 1, rec.N, "5..9 and 10..12 touch: one span")
	assert.Equal(t, Span{5, 12}, rec.Spans[0])
	h.landed(p, Span{100, 100})
	h.landed(p, Span{200, 203})
	_, rec, _ = h.tlb.Probe(p)
	assert.Equal(t, []Span{{5, 12}, {200, 203}}, rec.Spans[:rec.N], "K = 2: the smallest older span goes")
	assert.Equal(t, L1Stats{Hits: 2, Misses: 2, RangeMisses: 1, Fills: 1, Updates: 3}, h.tlb.Stats())
}

func TestRecordInsertAndBitmap(t *testing.T) {
	var r Record
	r.Exact = true
	r.Insert(Span{10, 20}, 3)
	r.Insert(Span{30, 30}, 3)
	r.Insert(Span{21, 29}, 3)
	assert.Equal(t, []Span{{10, 30}}, r.Spans[:r.N])
	assert.True(t, r.Exact)
	r.Insert(Span{40, 40}, 1)
	assert.Equal(t, []Span{{40, 40}}, r.Spans[:r.N])
	assert.False(t, r.Exact)

	bm := make(Bitmap, 32)
	bm.Set(Span{0, 3})
	bm.Set(Span{60, 130})
	bm.Set(Span{2000, 2047})
	got := bm.RecordAround(1, 2)
	assert.Equal(t, []Span{{0, 3}, {60, 130}}, got.Spans[:got.N], "the run holding unit 1 and the largest other")
	assert.False(t, got.Exact)
	got = bm.RecordAround(500, 4)
	assert.Equal(t, []Span{{0, 3}, {60, 130}, {2000, 2047}}, got.Spans[:got.N])
	assert.True(t, got.Exact)
	assert.True(t, got.SubsetOf(bm))
	assert.False(t, (&Record{N: 1, Spans: [MaxRanges]Span{{3, 4}}}).SubsetOf(bm))
}

// The record storage the configuration reports: K = 4 spans of two 11-bit
// unit indexes and a valid bit, and the exact bit, per TLB entry; a
// 2,048-bit (256 B) bitmap per PTE.
func TestRecordStorage(t *testing.T) {
	c := testConfig()
	assert.Equal(t, 4*(2*11+1)+1, c.RecordBits())
	assert.Equal(t, 256, c.BitmapBytes())
}
