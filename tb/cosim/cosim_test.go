package cosim

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counterModule is an 8-bit counter with enable and a valid-qualified
// output, small enough to exercise the harness on its own.
func counterModule(t *testing.T) Source {
	t.Helper()
	return Source{Name: "cosim_counter.v", Text: []byte(counterVerilog)}
}

const counterVerilog = "`default_nettype none\n" + `module cosim_counter (
  input  wire clk,
  input  wire rst,
  input  wire en,
  output wire odd,
  output wire [6:0] half
);
  reg [7:0] count_q;

  assign odd = count_q[0];
  assign half = count_q[7:1];

  always @(posedge clk) begin
    if (rst) begin
      count_q <= 8'd0;
    end else if (en) begin
      count_q <= count_q + 8'd1;
    end
  end
endmodule
` + "`default_nettype wire\n"

// counter is the Go reference; step is the amount added per enabled cycle,
// so a step of 3 is a deliberately wrong model.
type counter struct {
	q    uint64
	step uint64
}

func (c *counter) Ports() []Port {
	return []Port{
		{Name: "rst", Width: 1, Dir: In},
		{Name: "en", Width: 1, Dir: In},
		{Name: "odd", Width: 1, Dir: Out},
		{Name: "half", Width: 7, Dir: Out, ValidBy: "odd"},
	}
}

func (c *counter) Outputs(out []uint64) { out[0], out[1] = c.q&1, c.q>>1 }

func (c *counter) Clock(in []uint64) error {
	switch {
	case in[0] == 1:
		c.q = 0
	case in[1] == 1:
		c.q = (c.q + c.step) & 0xff
	}
	return nil
}

func randomEnable(seed uint64) Stimulus {
	r := rand.New(rand.NewPCG(seed, 1))
	return func(cycle uint64, out, in []uint64) {
		in[1] = r.Uint64() & 1
		if r.IntN(1000) == 0 {
			in[0] = 1
		}
	}
}

func TestLayoutAndPacking(t *testing.T) {
	l, err := NewLayout((&counter{}).Ports())
	require.NoError(t, err)
	require.Equal(t, 1+2+8, l.RowWidth())
	p := newPacker(l)
	// Bits 10..0 are check, rst, en, odd, half[6:0]: 1 0 1 1 1010101.
	assert.Equal(t, "5d5", string(p.row(true, []uint64{0, 1}, []uint64{1, 0x55})))
	assert.Equal(t, "200", string(p.row(false, []uint64{1, 0}, []uint64{0, 0})))

	wide, err := NewLayout([]Port{{Name: "rst", Width: 1}, {Name: "d", Width: 64, Dir: Out}, {Name: "e", Width: 3, Dir: Out}})
	require.NoError(t, err)
	p = newPacker(wide)
	assert.Equal(t, "17fffffffffffffffd", string(p.row(true, []uint64{0}, []uint64{^uint64(0), 5})))
}

func TestLayoutErrors(t *testing.T) {
	for _, tc := range []struct {
		ports []Port
		want  string
	}{
		{[]Port{{Name: "en", Width: 1}}, "one-bit input rst"},
		{[]Port{{Name: "rst", Width: 1}, {Name: "d", Width: 65, Dir: Out}}, "port d: width 65 outside 1..64"},
		{[]Port{{Name: "rst", Width: 1}, {Name: "d", Width: 4, Dir: Out, ValidBy: "v"}}, "ValidBy v is not a one-bit output"},
		{[]Port{{Name: "rst", Width: 1}, {Name: "rst", Width: 1}}, "listed twice"},
	} {
		_, err := NewLayout(tc.ports)
		require.ErrorContains(t, err, tc.want)
	}
}

func TestCounterCosim(t *testing.T) {
	src := counterModule(t)
	tb, err := Testbench("cosim_counter", "", mustLayout(t))
	require.NoError(t, err)
	for _, sim := range Simulators {
		t.Run(sim.Name, func(t *testing.T) {
			sim.Require(t)
			exe, err := sim.Build(TestbenchTop("cosim_counter"), nil, []Source{{Name: "tb_cosim_counter.v", Text: tb}, src})
			require.NoError(t, err)

			// Vectors spanning two chunk files.
			good, err := Record(&counter{step: 1}, randomEnable(1), DefaultChunkRows+100, t.TempDir(), "good")
			require.NoError(t, err)
			require.NoError(t, exe.Check(good))

			missing := good
			missing.Prefix += ".absent"
			require.ErrorContains(t, exe.Check(missing), "cannot open vector file")

			bad, err := Record(&counter{step: 3}, randomEnable(2), 1000, t.TempDir(), "bad")
			require.NoError(t, err)
			err = exe.Check(bad)
			require.Error(t, err)
			msg := err.Error()
			assert.Regexp(t, `cycle \d+ port (odd|half) expected [0-9a-f]+ got [0-9a-f]+`, msg)
			i := strings.Index(msg, "VCD of the run up to the failing cycle: ")
			require.GreaterOrEqual(t, i, 0, msg)
			vcd := strings.TrimSpace(msg[i+len("VCD of the run up to the failing cycle: "):])
			st, err := os.Stat(vcd)
			require.NoError(t, err, msg)
			assert.Positive(t, st.Size())
			os.RemoveAll(strings.TrimSuffix(vcd, "/cosim_counter_"+sim.Name+".vcd"))
		})
	}
}

func mustLayout(t *testing.T) Layout {
	l, err := NewLayout((&counter{}).Ports())
	require.NoError(t, err)
	return l
}

// TestPackerAllocatesNothing keeps the per-cycle recording path free of
// allocations.
func TestPackerAllocatesNothing(t *testing.T) {
	p := newPacker(mustLayout(t))
	in, out := []uint64{0, 1}, []uint64{1, 0x2a}
	assert.Zero(t, testing.AllocsPerRun(100, func() { p.row(true, in, out) }))
}

func BenchmarkRecord(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Record(&counter{step: 1}, randomEnable(1), 10_000, dir, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
