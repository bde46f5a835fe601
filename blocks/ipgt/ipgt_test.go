package ipgt

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLayout(t *testing.T) {
	e := Entry{F: true, B: true, CID: 0xabc, VPgN: 0x1234_5678_9abc}
	assert.Equal(t, uint64(0x1234_5678_9abc_abc9), e.Pack())
	assert.Equal(t, e, Unpack(e.Pack()))
	assert.Equal(t, 64, VPgNLSB+VPgNWidth)
	assert.Equal(t, VPgNLSB, CIDLSB+CIDWidth)
	assert.Equal(t, uint64(0x100+8*3), Address(0x100, 3))
}

func TestPackUnpackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		w := rng.Uint64()
		assert.Equal(t, w, Unpack(w).Pack())
	}
}

func TestClassification(t *testing.T) {
	assert.True(t, Reservable(F))
	assert.True(t, Reservable(F|M|0xfff0))
	assert.False(t, Reservable(F|B))
	assert.False(t, Reservable(F|P))
	assert.True(t, Victim(M))
	assert.False(t, Victim(M|P))
	assert.False(t, Victim(M|B))
	assert.False(t, Victim(F))
	assert.Error(t, CheckAddrBits(3))
	assert.NoError(t, CheckAddrBits(DefaultAddrBits))
}
