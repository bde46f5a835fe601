package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	require.NoError(t, c.Validate())
}

// The derived cycle counts SPEC 2 states for the default 1481 MHz clock.
func TestDerivedCycles(t *testing.T) {
	c := Default()
	assert.Equal(t, uint64(1481), c.Cycles(1))
	assert.Equal(t, uint64(66645), c.FaultCycles())
	assert.Equal(t, uint64(741), c.OneWayCycles())
	assert.InDelta(t, 10.80, c.BytesPerCycle(16), 0.005)
	assert.Equal(t, uint64(379), c.WireCycles(4096, 16))
	assert.Equal(t, uint64(6066), c.WireCycles(65536, 16))
}

func TestSetOverridesByDottedKey(t *testing.T) {
	c := Default()
	require.NoError(t, c.Set("pcie.bandwidth_gbs=32"))
	require.NoError(t, c.Set("gpu.sms = 4"))
	require.NoError(t, c.Set("run.policy=um"))
	require.NoError(t, c.Set("check.invariants=true"))
	require.NoError(t, c.Set("run.seed=9223372036854775807"))
	assert.Equal(t, 32.0, c.PCIe.BandwidthGBs)
	assert.Equal(t, 4, c.GPU.SMs)
	assert.Equal(t, "um", c.Run.Policy)
	assert.True(t, c.Check.Invariants)
	assert.Equal(t, uint64(1<<63-1), c.Run.Seed)
}

// A seed is a TOML integer in a file and in an override alike: hex works
// in both, and neither takes a negative seed or one above 2^63-1 (the
// largest TOML integer) nor wraps it around.
func TestSeedIsOneTOMLIntegerEverywhere(t *testing.T) {
	dir := t.TempDir()
	load := func(text string) (Config, error) {
		path := filepath.Join(dir, "seed.toml")
		require.NoError(t, os.WriteFile(path, []byte("[run]\nseed = "+text+"\n"), 0o644))
		c := Default()
		return c, c.LoadFile(path)
	}
	set := func(text string) (Config, error) {
		c := Default()
		return c, c.Set("run.seed=" + text)
	}
	for _, text := range []string{"0x10", "16", "9223372036854775807", "0"} {
		fromFile, err := load(text)
		require.NoError(t, err, text)
		fromSet, err := set(text)
		require.NoError(t, err, text)
		assert.Equal(t, fromFile.Run.Seed, fromSet.Run.Seed, text)
		require.NoError(t, fromFile.Validate(), text)
	}
	for _, text := range []string{"-1", "18446744073709551615", "9223372036854775808", "1.5", "010"} {
		_, err := load(text)
		require.Error(t, err, text)
		_, err = set(text)
		require.Error(t, err, text)
	}
	_, err := load("-1")
	assert.ErrorContains(t, err, "run.seed = -1 out of range; allowed: 0..9223372036854775807")
	_, err = set("-1")
	assert.ErrorContains(t, err, "run.seed = -1 out of range; allowed: 0..9223372036854775807")
}

func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct{ set, want string }{
		{"gpu.smz=4", `unknown key "gpu.smz"`},
		{"gpu.sms=four", `gpu.sms = "four" is not a valid int; allowed: 1..63`},
		{"pcie.bandwidth_gbs=NaN", `pcie.bandwidth_gbs = "NaN" is not a valid float`},
		{"gpu.sms", `not of the form key=value`},
	}
	for _, tc := range cases {
		c := Default()
		err := c.Set(tc.set)
		require.Error(t, err, tc.set)
		assert.Contains(t, err.Error(), tc.want)
	}
	ranges := []struct{ set, want string }{
		{"gpu.sms=0", "gpu.sms = 0 out of range; allowed: 1..63"},
		{"gpu.line_bytes=100", "gpu.line_bytes = 100 out of range; allowed: 32..4096, a power of two"},
		{"run.policy=magic", `run.policy = "magic" out of range; allowed: one of ideal, um, uvmsmart, uvmmu`},
		{"uvmmu.dcq_threshold=65", "uvmmu.dcq_threshold = 65 must not exceed uvmmu.dcq_depth = 64"},
		{"run.oversub_pct=99", "run.oversub_pct = 99 out of range; allowed: 100..1000"},
	}
	for _, tc := range ranges {
		c := Default()
		require.NoError(t, c.Set(tc.set))
		err := c.Validate()
		require.Error(t, err, tc.set)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	require.NoError(t, os.WriteFile(good, []byte("[pcie]\nbandwidth_gbs = 32.0\nrtt_us = 2\n[um]\nfault_latency_us = 20.0\n"), 0o644))
	c := Default()
	require.NoError(t, c.LoadFile(good))
	assert.Equal(t, 32.0, c.PCIe.BandwidthGBs)
	assert.Equal(t, 2.0, c.PCIe.RTTUs)
	assert.Equal(t, uint64(29620), c.FaultCycles())
	assert.Equal(t, 28, c.GPU.SMs, "keys absent from the file keep their defaults")

	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[pcie]\nbandwith_gbs = 32.0\n"), 0o644))
	c = Default()
	err := c.LoadFile(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown key "pcie.bandwith_gbs"`)

	typed := filepath.Join(dir, "typed.toml")
	require.NoError(t, os.WriteFile(typed, []byte("[gpu]\nsms = \"many\"\n"), 0o644))
	c = Default()
	err = c.LoadFile(typed)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sms")
}

func TestKeysListEveryField(t *testing.T) {
	c := Default()
	names := map[string]bool{}
	for _, k := range Keys() {
		assert.False(t, names[k.Name], "duplicate key %s", k.Name)
		names[k.Name] = true
		assert.NotEmpty(t, k.Doc, k.Name)
		assert.NotEmpty(t, k.Value(&c), k.Name)
	}
	for _, want := range []string{"gpu.sms", "um.fault_latency_us", "uvmmu.dcq_depth", "pcie.packet_bytes", "check.watchdog_cycles"} {
		assert.True(t, names[want], want)
	}
}

func FuzzLoadTOML(f *testing.F) {
	f.Add([]byte("[gpu]\nsms = 4\n"))
	f.Add([]byte("[pcie]\nbandwidth_gbs = 1e400\n"))
	f.Add([]byte("x = ["))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		if c.LoadTOML("fuzz", data) == nil {
			_ = c.Validate()
		}
	})
}

func FuzzSet(f *testing.F) {
	f.Add("gpu.sms=4")
	f.Add("run.seed=-1")
	f.Add("pcie.rtt_us=1e309")
	f.Add("=")
	f.Fuzz(func(t *testing.T, assignment string) {
		c := Default()
		if c.Set(assignment) == nil {
			_ = c.Validate()
		}
	})
}
