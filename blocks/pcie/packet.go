package pcie

// Field widths of a Packet on the link's ports.
const (
	TagBits    = 40
	bytesBits  = 16
	sourceBits = 8
	// PacketBits is the packed width of a Packet.
	PacketBits = TagBits + bytesBits + sourceBits
)

// Packet is one transfer on the link: a client-defined tag, its size, and
// the index of the input port it entered on. Clients leave Source zero; the
// link fills it in, so the receiver can route the packet back to its client.
type Packet struct {
	Tag    uint64 // client-defined, TagBits wide
	Bytes  uint16 // 1..Config.MaxPacketBytes
	Source uint8  // input port index, set by the link
}

// Pack lays the packet out as {Source, Bytes, Tag} from the top bit down.
func (p Packet) Pack() uint64 {
	return p.Tag | uint64(p.Bytes)<<TagBits | uint64(p.Source)<<(TagBits+bytesBits)
}
