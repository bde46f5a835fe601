package afm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/rtl"
)

// The AFM's cycle behaviour is tested with its DCQ, FrAB, LFSR and memory
// in blocks/da (directed, random and co-simulation testbenches); these
// tests cover its configuration.

func validConfig() Config {
	return Config{NFG: 1000, DCQ: dcq.DefaultConfig(), WordBits: 256, AddrBits: 40, LFSRWidth: 16}
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, validConfig().Validate())
	c := validConfig()
	c.NFG = 0
	assert.ErrorContains(t, c.Validate(), "NFG 0 outside 1..2^FGBits")
	c = validConfig()
	c.LFSRWidth = 9
	assert.ErrorContains(t, c.Validate(), "LFSRWidth 9 outside 10..64 (the picker needs 10 bits for NFG 1000)")
	c = validConfig()
	c.IPGTBase = 1<<40 - 8
	assert.ErrorContains(t, c.Validate(), "exceeds the 40-bit address space")
	c = validConfig()
	c.WordBits = 48
	assert.ErrorContains(t, c.Validate(), "WordBits 48")
	c = validConfig()
	c.DCQ.Threshold = 0
	assert.ErrorContains(t, c.Validate(), "Threshold 0")
	c = validConfig()
	c.Victims = 2
	assert.ErrorContains(t, c.Validate(), "Victims VictimSource(2) is not lfsr or external")
	_, err := New(rtl.New(rtl.Options{}), "afm", Config{}, Ports{})
	assert.Error(t, err)
	c = validConfig()
	c.Victims = VictimExternal
	_, err = New(rtl.New(rtl.Options{}), "afm", c, Ports{})
	assert.ErrorContains(t, err, "victim source external needs the victim port exactly when external")
}

func TestFrABGeometry(t *testing.T) {
	c := validConfig()
	f := c.FrAB()
	assert.Equal(t, 32, f.Regions, "ceil(1000/32)")
	assert.Equal(t, 32, f.WordWidth(), "a bitmap of 32 regions uses a 32-bit word")
	assert.Equal(t, 1, f.Words())
	c.NFG = 180224
	f = c.FrAB()
	assert.Equal(t, 5632, f.Regions)
	assert.Equal(t, 256, f.WordWidth())
	assert.Equal(t, 22, f.Words())
}
