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

// Packed layout of an Entry in the Go model's registers, least significant
// bit first. The fixed-width fields sit at the bottom so their positions do
// not depend on the tag width; the counter field is FaultCounterBits wide,
// the widest CNT_W (THRESHOLD 16), and the tag fills the bits from TagLo up
// (Config.EntryBits in all). grit_pa_cache's line has the same fields in
// the same order with a counter of Config.CountBits.
const (
	ValidBit         = 0
	DirtyBit         = 1
	WriteBit         = 2
	FaultsLo         = 3
	FaultCounterBits = 4
	TagLo            = FaultsLo + FaultCounterBits
)

// Pack is the entry as a bit vector of the layout above.
func (e Entry) Pack() uint64 {
	return b2u(e.Valid)<<ValidBit | b2u(e.Dirty)<<DirtyBit | b2u(e.Write)<<WriteBit |
		uint64(e.Faults)<<FaultsLo | e.Tag<<TagLo
}

// UnpackEntry is the inverse of Entry.Pack.
func UnpackEntry(v uint64) Entry {
	return Entry{
		Valid:  v>>ValidBit&1 == 1,
		Dirty:  v>>DirtyBit&1 == 1,
		Write:  v>>WriteBit&1 == 1,
		Faults: uint8(v >> FaultsLo & (1<<FaultCounterBits - 1)),
		Tag:    v >> TagLo,
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
