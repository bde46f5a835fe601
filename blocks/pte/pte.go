// Package pte defines the page-table entry and the translation fields every
// translation block (TLBs, walkers, the page table, the migration policies)
// shares, so that their layouts are defined once.
//
// A PTE is 64 bits:
//
//	bit  0      valid
//	bit  1      aperture: 1 = remote (host memory or a peer GPU), 0 = local
//	bit  2      read-only: a write through the entry is refused by the TLB
//	bits 9-10   GRIT placement scheme (GRIT Table IV: 01 on-touch,
//	            10 access-counter, 11 duplication; 00 none)
//	bits 12-51  frame number (4 KB frames; local GPU frame or remote frame)
//	bits 52-53  GRIT neighbouring group size (GRIT Table V: 1, 8, 64, 512 pages)
//
// The GRIT bit positions are the paper's (Sections V-C and V-D, Figure
// 14); the frame field starts at bit 12 as a 4 KB-aligned physical address
// would.
package pte

// Widths of the translation fields.
const (
	// VPNBits is the virtual page number width: a 48-bit virtual address
	// space of 4 KB pages.
	VPNBits = 36
	// FrameBits is the frame number width.
	FrameBits = 40
	// RequesterBits is the width of a requester tag carried through a
	// translation (SM, warp or MSHR index; the system chooses).
	RequesterBits = 16
	// RequestBits is the packed width of a translation request: VPN,
	// requester tag and write bit.
	RequestBits = VPNBits + RequesterBits + 1
)

// writeLSB is the write bit's position in a packed request.
const writeLSB = VPNBits + RequesterBits

// PackRequest lays a translation request out as {write, requester, vpn}.
func PackRequest(vpn uint64, requester uint16, write bool) uint64 {
	p := vpn | uint64(requester)<<VPNBits
	if write {
		p |= 1 << writeLSB
	}
	return p
}

// UnpackRequest is the inverse of PackRequest.
func UnpackRequest(p uint64) (vpn uint64, requester uint16, write bool) {
	return p & (1<<VPNBits - 1), uint16(p >> VPNBits), p>>writeLSB&1 == 1
}

// Bit positions of the PTE fields.
const (
	validBit    = 0
	remoteBit   = 1
	readOnlyBit = 2
	schemeLSB   = 9
	frameLSB    = 12
	groupLSB    = 52
	frameMask   = 1<<FrameBits - 1
	twoBitMask  = 3
)

// PTE is a 64-bit page-table entry.
type PTE uint64

// Scheme is GRIT's per-page placement scheme (bits 9-10).
type Scheme uint8

// GRIT placement schemes, GRIT Table IV.
const (
	SchemeNone          Scheme = 0
	SchemeOnTouch       Scheme = 1
	SchemeAccessCounter Scheme = 2
	SchemeDuplication   Scheme = 3
)

// Group is GRIT's neighbouring-group size code (bits 52-53).
type Group uint8

// GRIT group sizes, GRIT Table V.
const (
	Group1   Group = 0
	Group8   Group = 1
	Group64  Group = 2
	Group512 Group = 3
)

// Pages is the number of 4 KB pages a group code covers.
func (g Group) Pages() int { return 1 << (3 * int(g)) }

// Local is a valid PTE mapping a local GPU frame.
func Local(frame uint64) PTE { return PTE(1<<validBit | (frame&frameMask)<<frameLSB) }

// Remote is a valid PTE mapping a remote frame.
func Remote(frame uint64) PTE { return Local(frame) | 1<<remoteBit }

// Valid reports whether the entry maps a frame.
func (p PTE) Valid() bool { return p>>validBit&1 == 1 }

// IsRemote reports whether the frame is remote.
func (p PTE) IsRemote() bool { return p>>remoteBit&1 == 1 }

// ReadOnly reports whether writes through the entry are refused: a TLB
// answers a store that hits it as a miss, so the store walks the page
// table and reaches whoever owns the page.
func (p PTE) ReadOnly() bool { return p>>readOnlyBit&1 == 1 }

// AsReadOnly returns p with its read-only bit set.
func (p PTE) AsReadOnly() PTE { return p | 1<<readOnlyBit }

// Frame is the frame number.
func (p PTE) Frame() uint64 { return uint64(p) >> frameLSB & frameMask }

// Scheme is the GRIT placement scheme.
func (p PTE) Scheme() Scheme { return Scheme(p >> schemeLSB & twoBitMask) }

// Group is the GRIT neighbouring-group size code.
func (p PTE) Group() Group { return Group(p >> groupLSB & twoBitMask) }

// WithScheme returns p with its scheme bits replaced.
func (p PTE) WithScheme(s Scheme) PTE {
	return p&^(twoBitMask<<schemeLSB) | PTE(s&twoBitMask)<<schemeLSB
}

// WithGroup returns p with its group bits replaced.
func (p PTE) WithGroup(g Group) PTE {
	return p&^(twoBitMask<<groupLSB) | PTE(g&twoBitMask)<<groupLSB
}
