package lfsr

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/rtl"
)

// TestPeriodIsMaximal walks the whole sequence for every width 8..20: it
// returns to the seed after exactly 2^W-1 steps and never reaches zero.
func TestPeriodIsMaximal(t *testing.T) {
	for w := MinWidth; w <= 20; w++ {
		taps, err := Taps(w)
		require.NoError(t, err)
		want := uint64(1)<<w - 1
		s := uint64(1)
		var n uint64
		for {
			s = Step(s, taps)
			n++
			if s == 0 || bits.Len64(s) > w {
				t.Fatalf("width %d: state %#x after %d steps is zero or too wide", w, s, n)
			}
			if s == 1 || n > want {
				break
			}
		}
		assert.Equal(t, want, n, "period of width %d", w)
	}
}

// TestTapsArePrimitive proves maximal length for every width 8..64 without
// walking the sequence: the state transition A returns state 1 to itself
// after 2^W-1 steps and after no (2^W-1)/q steps for any prime q dividing
// 2^W-1, so the orbit of 1 holds every non-zero state.
func TestTapsArePrimitive(t *testing.T) {
	for w := MinWidth; w <= MaxWidth; w++ {
		taps, err := Taps(w)
		require.NoError(t, err)
		period := ^uint64(0) >> (64 - w)
		require.Equal(t, uint64(1), applyPower(taps, w, period, 1), "width %d: A^(2^W-1) does not fix state 1", w)
		for _, q := range primeFactors(period) {
			require.NotEqual(t, uint64(1), applyPower(taps, w, period/q, 1), "width %d: period divides (2^W-1)/%d", w, q)
		}
	}
}

// matrix holds the images of the unit vectors under a linear map on GF(2)^w.
type matrix [64]uint64

func (m *matrix) apply(v uint64) uint64 {
	var r uint64
	for v != 0 {
		i := bits.TrailingZeros64(v)
		r ^= m[i]
		v &= v - 1
	}
	return r
}

func (m *matrix) mul(b *matrix, w int) matrix {
	var c matrix
	for j := range w {
		c[j] = m.apply(b[j])
	}
	return c
}

// applyPower returns A^e v for the Galois step A of the given taps.
func applyPower(taps uint64, w int, e, v uint64) uint64 {
	var a matrix
	for j := range w {
		a[j] = Step(1<<j, taps)
	}
	for e != 0 {
		if e&1 != 0 {
			v = a.apply(v)
		}
		a = a.mul(&a, w)
		e >>= 1
	}
	return v
}

func mulMod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return bits.Rem64(hi, lo, m)
}

func powMod(a, e, m uint64) uint64 {
	r := uint64(1) % m
	for ; e != 0; e >>= 1 {
		if e&1 != 0 {
			r = mulMod(r, a, m)
		}
		a = mulMod(a, a, m)
	}
	return r
}

// isPrime is Miller-Rabin with the bases that are deterministic below 2^64.
func isPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	bases := []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}
	for _, p := range bases {
		if n%p == 0 {
			return n == p
		}
	}
	d, r := n-1, 0
	for d%2 == 0 {
		d, r = d/2, r+1
	}
	for _, a := range bases {
		x := powMod(a, d, n)
		if x == 1 || x == n-1 {
			continue
		}
		composite := true
		for range r - 1 {
			x = mulMod(x, x, n)
			if x == n-1 {
				composite = false
				break
			}
		}
		if composite {
			return false
		}
	}
	return true
}

// rho finds a non-trivial factor of the odd composite n (Pollard-Brent).
func rho(n uint64) uint64 {
	for c := uint64(1); ; c++ {
		x, y, d := uint64(2), uint64(2), uint64(1)
		for d == 1 {
			x = (mulMod(x, x, n) + c) % n
			y = (mulMod(y, y, n) + c) % n
			y = (mulMod(y, y, n) + c) % n
			d = gcd(x-y+n, n)
			if x >= y {
				d = gcd(x-y, n)
			}
		}
		if d != n {
			return d
		}
	}
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// primeFactors lists the distinct prime factors of n, ascending.
func primeFactors(n uint64) []uint64 {
	var out []uint64
	var split func(uint64)
	split = func(m uint64) {
		switch {
		case m == 1:
		case isPrime(m):
			out = append(out, m)
		case m%2 == 0:
			out = append(out, 2)
			split(m / 2)
		default:
			d := rho(m)
			split(d)
			split(m / d)
		}
	}
	for n%2 == 0 && n > 1 {
		out = append(out, 2)
		n /= 2
	}
	split(n)
	slices.Sort(out)
	return slices.Compact(out)
}

func TestPrimeFactorsKnownValues(t *testing.T) {
	assert.Equal(t, []uint64{3, 5, 17, 257, 641, 65537, 6700417}, primeFactors(^uint64(0)))
	assert.Equal(t, []uint64{2147483647}, primeFactors(1<<31-1))
	assert.Equal(t, []uint64{3, 715827883, 2147483647}, primeFactors(1<<62-1))
}

func TestTapsMask(t *testing.T) {
	m, err := Taps(16)
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<15|1<<14|1<<12|1<<3), m, "XAPP052 row 16: taps 16,15,13,4")
	for _, w := range []int{0, 7, 65} {
		_, err := Taps(w)
		assert.ErrorContains(t, err, "outside 8..64")
	}
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	assert.ErrorContains(t, Config{Width: 7, Seed: 1}.Validate(), "Width 7 outside 8..64")
	assert.ErrorContains(t, Config{Width: 8, Seed: 0}.Validate(), "Seed 0x0 outside 1..2^8-1")
	assert.ErrorContains(t, Config{Width: 8, Seed: 256}.Validate(), "Seed 0x100 outside 1..2^8-1")
}

// TestBlockFirstStates steps the block with en held high, then low, and
// checks the exact states of the width-8 register from seed 1 (taps
// 8,6,5,4 give mask 0xb8).
func TestBlockFirstStates(t *testing.T) {
	s := rtl.New(rtl.Options{Checked: true})
	p := NewPorts(s, "lfsr", 8)
	_, err := New(s, "lfsr", Config{Width: 8, Seed: 1}, p)
	require.NoError(t, err)
	s.Reset()
	var got []uint64
	en := []bool{true, true, true, true, true, false, false, true, true}
	for _, e := range en {
		got = append(got, p.State.Get())
		p.En.Set(e)
		require.NoError(t, s.Step())
	}
	got = append(got, p.State.Get())
	want := []uint64{0x01, 0xb8, 0x5c, 0x2e, 0x17, 0xb3, 0xb3, 0xb3, 0xe1, 0xc8}
	require.Empty(t, cmp.Diff(want, got))
}

// TestBlockMatchesStep drives a random enable pattern and compares the block
// with the Step function cycle by cycle, with idle skipping on.
func TestBlockMatchesStep(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 3))
		w := MinWidth + rng.IntN(MaxWidth-MinWidth+1)
		cfg := Config{Width: w, Seed: 1 + rng.Uint64N(^uint64(0)>>(64-w))}
		s := rtl.New(rtl.Options{Checked: true, SkipIdle: true})
		p := NewPorts(s, "lfsr", w)
		_, err := New(s, "lfsr", cfg, p)
		require.NoError(t, err)
		s.Reset()
		taps, _ := Taps(w)
		ref := cfg.Seed
		for c := range 5000 {
			require.Equal(t, ref, p.State.Get(), "cycle %d width %d", c, w)
			e := rng.IntN(3) == 0
			p.En.Set(e)
			require.NoError(t, s.Step())
			if e {
				ref = Step(ref, taps)
			}
		}
	}
}

func TestPick(t *testing.T) {
	assert.Equal(t, 18, PickWidth(180224), "default NFG (SPEC 5.3) needs 18 bits")
	assert.Equal(t, 1, PickWidth(1))
	assert.Equal(t, 1, PickWidth(2))
	assert.Equal(t, 2, PickWidth(3))
	assert.Equal(t, 10, PickWidth(1024))
	v, ok := Pick(0x3_ffff, 32, 180224)
	assert.False(t, ok, "0x3ffff is beyond NFG")
	assert.Equal(t, uint64(1<<18-1), v)
	v, ok = Pick(0x1234_5678, 32, 180224)
	assert.True(t, ok)
	assert.Equal(t, uint64(0x1234_5678&(1<<18-1)^0x1234_5678>>18), v, "low 18 bits XOR the upper 14")
	v, _ = Pick(0b1011_0110, 8, 5)
	assert.Equal(t, uint64(0b110^0b110^0b10), v, "3-bit slices 110, 110, 10")
	// Over a whole period of a 20-bit LFSR every value in range is drawn and
	// fewer than half of the draws are rejected.
	for _, nfg := range []uint64{5, 1000, 1025, 180224 >> 3} {
		taps, _ := Taps(20)
		seen := make([]bool, nfg)
		s, rejected, draws := uint64(1), 0, 0
		for range 1<<20 - 1 {
			v, ok := Pick(s, 20, nfg)
			draws++
			if ok {
				seen[v] = true
			} else {
				rejected++
			}
			s = Step(s, taps)
		}
		assert.NotContains(t, seen, false, "nfg %d: some frame-group never drawn", nfg)
		assert.Less(t, rejected*2, draws, "nfg %d: rejection rate", nfg)
	}
}
