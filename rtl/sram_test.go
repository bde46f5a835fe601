package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// sramUser issues the SRAM operations a testbench puts on its input wires
// and shows the read data on its outputs.
type sramUser struct {
	rtl.Base
	Op     *rtl.Wire[uint8] // 0 idle, 1 read, 2 write, 3 read port 0 and write port 1
	Addr   *rtl.Wire[uint8]
	WData  *rtl.Wire[uint32]
	RData  *rtl.Wire[uint32]
	RValid *rtl.Wire[bool]

	mem    *rtl.SRAM[uint32]
	rdata  *rtl.Reg[uint32]
	rvalid *rtl.Reg[bool]
}

func newSRAMUser(s *rtl.Sim, cfg rtl.SRAMConfig) *sramUser {
	u := &sramUser{
		Op: rtl.NewWire[uint8](s, "op", 2), Addr: rtl.NewWire[uint8](s, "addr", 8),
		WData: rtl.NewWire[uint32](s, "wdata", 32), RData: rtl.NewWire[uint32](s, "rdata", 32),
		RValid: rtl.NewBit(s, "rvalid"),
	}
	s.Add(u, "user")
	u.mem = rtl.NewSRAM[uint32](&u.Base, "mem", cfg)
	u.rdata = rtl.NewReg[uint32](&u.Base, "rdata", 32, 0)
	u.rvalid = rtl.NewFlag(&u.Base, "rvalid", false)
	u.Listen(u.Op, u.Addr, u.WData)
	return u
}

func (u *sramUser) Drive() {
	u.RData.Set(u.rdata.Q())
	u.RValid.Set(u.rvalid.Q())
}

func (u *sramUser) Eval() {
	addr := int(u.Addr.Get())
	switch u.Op.Get() {
	case 1:
		u.mem.Read(0, addr)
	case 2:
		u.mem.Write(0, addr, u.WData.Get())
	case 3:
		u.mem.Read(0, addr)
		u.mem.Write(1, addr, u.WData.Get())
	}
	landed := u.mem.RValid(0)
	if landed != u.rvalid.Q() {
		u.rvalid.Set(landed)
	}
	if landed {
		u.rdata.Set(u.mem.RData(0))
	}
}

func TestSRAMReadLatencyAndReadFirst(t *testing.T) {
	for _, latency := range []int{1, 3} {
		for _, skip := range []bool{false, true} {
			s := rtl.New(rtl.Options{Checked: true, SkipIdle: skip})
			u := newSRAMUser(s, rtl.SRAMConfig{Depth: 16, Width: 32, Ports: 2, ReadLatency: latency})
			s.Reset()
			step := func(op, addr uint8, data uint32) {
				u.Op.Set(op)
				u.Addr.Set(addr)
				u.WData.Set(data)
				require.NoError(t, s.Step())
			}
			step(2, 5, 111) // cycle 0: write
			step(3, 5, 222) // cycle 1: read (sees 111) and write 222 on port 1
			step(0, 0, 0)   // cycle 2
			for range 6 {   // idle cycles; the read lands at 1+latency
				step(0, 0, 0)
			}
			require.Equal(t, uint32(111), u.rdata.Q(), "read-first: the read sees the old word")
			step(1, 5, 0)
			for range latency + 1 {
				step(0, 0, 0)
			}
			require.Equal(t, uint32(222), u.rdata.Q())
			require.Equal(t, uint64(2), u.mem.Reads)
			require.Equal(t, uint64(2), u.mem.Writes)
			require.Equal(t, uint32(222), u.mem.Peek(5))
		}
	}
}

func TestSRAMLandsExactlyAfterLatency(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
	u := newSRAMUser(s, rtl.SRAMConfig{Depth: 4, Width: 32, ReadLatency: 4})
	s.Reset()
	u.mem.Load(2, 77)
	u.Op.Set(1)
	u.Addr.Set(2)
	require.NoError(t, s.Step()) // read issued in cycle 0
	u.Op.Set(0)
	var seen []uint64
	for range 8 {
		if u.RValid.Get() {
			seen = append(seen, s.Cycle())
		}
		require.NoError(t, s.Step())
	}
	// The data lands in cycle 4; the user registers it, so its output
	// shows it in cycle 5 only.
	require.Equal(t, []uint64{5}, seen)
	require.Equal(t, uint32(77), u.RData.Get())
}

// overReader reads its SRAM's one port three times a cycle, a modeling
// error that checked mode reports, and notes what the port shows.
type overReader struct {
	rtl.Base
	mem  *rtl.SRAM[uint32]
	seen []uint32
	ok   []bool
}

func (o *overReader) Drive() {}

func (o *overReader) Eval() {
	o.seen = append(o.seen, o.mem.RData(0))
	o.ok = append(o.ok, o.mem.RValid(0))
	c := int(o.Now())
	for i := range 3 {
		o.mem.Read(0, (3*c+i)%8)
	}
}

// TestUncheckedSRAMOverReadLandsEveryRead covers a port read more often
// than once a cycle in fast mode: every read still lands after the
// latency, the last one issued in a cycle on top.
func TestUncheckedSRAMOverReadLandsEveryRead(t *testing.T) {
	s := rtl.New(rtl.Options{})
	o := &overReader{}
	s.Add(o, "o")
	o.mem = rtl.NewSRAM[uint32](&o.Base, "mem", rtl.SRAMConfig{Depth: 8, Width: 32, ReadLatency: 2})
	for i := range 8 {
		o.mem.Load(i, uint32(100+i))
	}
	s.Reset()
	require.NoError(t, s.Run(10))
	for c := range 10 {
		want, valid := uint32(0), c >= 2
		if valid {
			// The reads of cycle c-2 land now; the last was of word
			// (3(c-2)+2) mod 8.
			want = uint32(100 + (3*(c-2)+2)%8)
		}
		require.Equal(t, want, o.seen[c], "cycle %d", c)
		require.Equal(t, valid, o.ok[c], "cycle %d", c)
	}
}
