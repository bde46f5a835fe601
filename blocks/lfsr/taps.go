// Package lfsr is the Galois linear-feedback shift register of the
// Destination Allocator (SPEC 5.2, UVMMU paper Section IV-D: "It utilizes a
// pseudo-random number generator to select a random victim") and the victim
// picker draw built on it. The Verilog module uvmmu_lfsr (SPEC 5.3) is
// generated from the tap table in this package.
package lfsr

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// MinWidth and MaxWidth bound the register width: the tap table covers
// every width in between.
const (
	MinWidth = 8
	MaxWidth = 64
)

// WidthRange is the Width Config.Validate allows.
var WidthRange = rtl.Range{Min: MinWidth, Max: MaxWidth}

// fibonacciTaps lists, for each width MinWidth..MaxWidth, the taps of a
// maximal-length XNOR/XOR Fibonacci LFSR from Xilinx XAPP052 (P. Alfke,
// "Efficient Shift Registers, LFSR Counters, and Long Pseudo-Random Sequence
// Generators", 1996), Table 3. Taps are numbered 1..n as in the table; the
// first tap is always n. Each row is the polynomial
// x^n + x^t2 + ... + x^tk + 1, which is primitive; TestTapsArePrimitive
// re-checks every row.
var fibonacciTaps = [MaxWidth - MinWidth + 1][]uint{
	{8, 6, 5, 4},
	{9, 5},
	{10, 7},
	{11, 9},
	{12, 6, 4, 1},
	{13, 4, 3, 1},
	{14, 5, 3, 1},
	{15, 14},
	{16, 15, 13, 4},
	{17, 14},
	{18, 11},
	{19, 6, 2, 1},
	{20, 17},
	{21, 19},
	{22, 21},
	{23, 18},
	{24, 23, 22, 17},
	{25, 22},
	{26, 6, 2, 1},
	{27, 5, 2, 1},
	{28, 25},
	{29, 27},
	{30, 6, 4, 1},
	{31, 28},
	{32, 22, 2, 1},
	{33, 20},
	{34, 27, 2, 1},
	{35, 33},
	{36, 25},
	{37, 5, 4, 3, 2, 1},
	{38, 6, 5, 1},
	{39, 35},
	{40, 38, 21, 19},
	{41, 38},
	{42, 41, 20, 19},
	{43, 42, 38, 37},
	{44, 43, 18, 17},
	{45, 44, 42, 41},
	{46, 45, 26, 25},
	{47, 42},
	{48, 47, 21, 20},
	{49, 40},
	{50, 49, 24, 23},
	{51, 50, 36, 35},
	{52, 49},
	{53, 52, 38, 37},
	{54, 53, 18, 17},
	{55, 31},
	{56, 55, 35, 34},
	{57, 50},
	{58, 39},
	{59, 58, 38, 37},
	{60, 59},
	{61, 60, 46, 45},
	{62, 61, 6, 5},
	{63, 62},
	{64, 63, 61, 60},
}

// Taps returns the Galois toggle mask for a width: bit t-1 is set for every
// tap t of the XAPP052 row. The Galois register shifts right; when the bit
// shifted out is 1 the mask is XORed into the shifted state (Step). This is
// the standard conversion from a Fibonacci tap list: the Galois register
// with mask sum(2^(t-1)) realises the reciprocal of the Fibonacci
// polynomial, and the reciprocal of a primitive polynomial is primitive, so
// the period stays 2^width-1.
func Taps(width int) (uint64, error) {
	if width < MinWidth || width > MaxWidth {
		return 0, fmt.Errorf("lfsr: width %d outside %d..%d", width, MinWidth, MaxWidth)
	}
	var mask uint64
	for _, t := range fibonacciTaps[width-MinWidth] {
		mask |= 1 << (t - 1)
	}
	return mask, nil
}

// Step is one Galois shift: the next state after s under toggle mask taps.
// The Verilog is `state <= {1'b0, state[W-1:1]} ^ (state[0] ? TAPS : 0)`.
func Step(s, taps uint64) uint64 {
	if s&1 != 0 {
		return s>>1 ^ taps
	}
	return s >> 1
}
