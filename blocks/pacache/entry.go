package pacache

// Entry is one PA-Cache line (SPEC 8.3: {valid, tag, R/W bit, fault
// counter of CNT_W bits, dirty}; GRIT Section V-C and Fig. 12).
//
// Faults holds the number of faults on the page since its record was last
// deleted, minus one: a record is created by its first fault with the
// counter at 00 (GRIT Section V-C: "fault counter (2 bits, initialized to
// 00)"), and a record never holds a count that has reached the threshold,
// because that fault deletes it. The resp_count of the port is therefore
// Faults+2 on a hit.
//
// Dirty marks a line that differs from its PA-Table record. Every fill is
// followed by the fault's update (write-allocate), so a valid line is
// always dirty under SPEC 8.3's policy and every eviction of a valid line
// writes it back; the bit is kept because the line format of SPEC 8.3
// carries it, and the eviction path tests it rather than assuming it.
type Entry struct {
	Valid  bool
	Dirty  bool
	Write  bool  // R/W bit: the OR of the write bits of the counted faults
	Faults uint8 // count-1, Config.CountBits wide
	Tag    uint64
}

// Layout of a line, least significant bit first, the same in the Go
// model's registers and in grit_pa_cache: valid, dirty, write, the fault
// counter (Config.CountBits wide, CNT_W) and the tag (Config.TagBits) from
// Config.TagLo up; Config.LineBits in all (LINE_W).
const (
	ValidBit = 0
	DirtyBit = 1
	WriteBit = 2
	FaultsLo = 3
	// FaultCounterBits is the widest counter, CNT_W at THRESHOLD 16: the
	// width of the count fields of the Go port structs.
	FaultCounterBits = 4
)

// TagLo is the tag's lowest bit in a line: 3 + CNT_W.
func (c Config) TagLo() int { return FaultsLo + c.CountBits() }

// LineBits is the width of a line, LINE_W.
func (c Config) LineBits() int { return c.TagLo() + c.TagBits() }

// PackLine is e as a line of the layout above.
func (c Config) PackLine(e Entry) uint64 {
	return b2u(e.Valid)<<ValidBit | b2u(e.Dirty)<<DirtyBit | b2u(e.Write)<<WriteBit |
		uint64(e.Faults)<<FaultsLo | e.Tag<<uint(c.TagLo())
}

// UnpackLine is the inverse of PackLine.
func (c Config) UnpackLine(v uint64) Entry {
	return Entry{
		Valid:  v>>ValidBit&1 == 1,
		Dirty:  v>>DirtyBit&1 == 1,
		Write:  v>>WriteBit&1 == 1,
		Faults: uint8(v >> FaultsLo & (1<<uint(c.CountBits()) - 1)),
		Tag:    v >> uint(c.TagLo()),
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
