package pme

// Op is what a command moves.
type Op uint8

const (
	// Fetch copies Pages pages from host to device.
	Fetch Op = iota
	// Swap fetches as Fetch does and at the same time writes the pages it
	// overwrites (the victim) from device to host, on the other direction.
	Swap
	// Evict writes Pages pages from device to host only.
	Evict
)

func (o Op) fetches() bool { return o == Fetch || o == Swap }
func (o Op) evicts() bool  { return o == Swap || o == Evict }

func (o Op) String() string { return [...]string{"fetch", "swap", "evict", "op3"}[o&3] }

// Field widths of commands, events and link tags.
const (
	tagBits  = 16
	opBits   = 2
	posBits  = 9 // page position within a command: 0..511
	slotBits = 8
)

// Command asks for one transfer of a run of pages. Pages are moved in the
// order First, First+1, ..., Pages-1, 0, ..., First-1: the critical page
// first and wrapping around (UVMMU paper Section IV-D). A UVMMU migration is
// Pages 16 (a 64 KB page-group) with First the critical page's index; a UM
// driver batch is a run of up to MaxPages pages (a 2 MB large page is 512)
// in the order the driver wants, one command per contiguous run.
//
// The command carries no frame numbers: the model moves no data, and the
// issuer owns the frames and the PTE updates. What sets the timing is the
// page count, the order and the directions.
type Command struct {
	Tag   uint16 // the issuer's; returned on every event
	Op    Op
	Pages uint16 // 1..Config.MaxPages
	First uint16 // 0..Pages-1
}

// CommandBits is the packed width of a Command.
const CommandBits = tagBits + opBits + 2*(posBits+1)

// Pack lays the command out as {First, Pages, Op, Tag}.
func (c Command) Pack() uint64 {
	return uint64(c.Tag) | uint64(c.Op)<<tagBits | uint64(c.Pages)<<(tagBits+opBits) |
		uint64(c.First)<<(tagBits+opBits+posBits+1)
}

// Event reports progress of the command with Tag. A page event (Victim
// false) says Page has landed in device memory: Critical marks the
// command's first landed page (the requested one) and Last its final one
// (the whole run is in). A victim event says every evicted page has
// reached host memory.
type Event struct {
	Tag      uint16
	Page     uint16 // page index within the command's run
	Critical bool
	Last     bool
	Victim   bool
}

// EventBits is the packed width of an Event.
const EventBits = tagBits + posBits + 3

// Pack lays the event out as {Victim, Last, Critical, Page, Tag}.
func (e Event) Pack() uint64 {
	return uint64(e.Tag) | uint64(e.Page)<<tagBits | bit(e.Critical)<<(tagBits+posBits) |
		bit(e.Last)<<(tagBits+posBits+1) | bit(e.Victim)<<(tagBits+posBits+2)
}

func bit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Link packet kinds, the low bits of a pcie.Packet tag. The host answers a
// read with the page's data and a flush with a short acknowledgement, each
// under the request's own tag.
const (
	kindRead  = 0 // engine -> host: read one page
	kindWrite = 1 // engine -> host: one page of data, posted (no answer)
	kindFlush = 2 // engine -> host: answered after every earlier write
	kindBits  = 2
)

// linkTag is {position, slot, kind} in a pcie.Packet tag.
func linkTag(kind, slot, pos int) uint64 {
	return uint64(kind) | uint64(slot)<<kindBits | uint64(pos)<<(kindBits+slotBits)
}

// lastTagBit marks the last packet of a page's data (and the only packet
// of a request or a flush answer): a page of PageBytes travels as
// PageBytes/PacketBytes packets under one tag.
const lastTagBit = kindBits + slotBits + posBits

// withLast sets the last-packet mark of tag t when last.
func withLast(t uint64, last bool) uint64 {
	if last {
		t |= 1 << lastTagBit
	}
	return t
}

// isLast reports the last-packet mark of tag t.
func isLast(t uint64) bool { return t>>lastTagBit&1 != 0 }

func splitTag(t uint64) (kind, slot, pos int) {
	return int(t & (1<<kindBits - 1)), int(t >> kindBits & (1<<slotBits - 1)), int(t >> (kindBits + slotBits) & (1<<posBits - 1))
}
