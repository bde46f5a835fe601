package area

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/tb/cosim"
)

// An 8-bit register with synchronous reset and enable: 8 flip-flops, and
// per bit a reset gate and an enable mux once flip-flops are legalised.
const register = "`default_nettype none\n" + `module reg8 (input wire clk, input wire rst, input wire en, input wire [7:0] d, output reg [7:0] q);
  always @(posedge clk) begin
    if (rst) q <= 8'd0;
    else if (en) q <= d;
  end
endmodule
`

const latch = `module latchy (input wire en, input wire d, output reg q);
  always @(*) if (en) q = d;
endmodule
`

func TestGenericFlow(t *testing.T) {
	cosim.RequireTool(t, Available())
	r, err := Generic("reg8", "none", []Source{{Name: "reg8.v", Text: []byte(register)}}, nil)
	require.NoError(t, err)
	assert.Equal(t, 8, r.FlipFlops)
	assert.Equal(t, 8, r.CellsByType["$_DFF_P_"])
	assert.Greater(t, r.Cells, 8)
	assert.Greater(t, r.Transistors, 8*16, "8 flip-flops at 16 transistors plus the reset/enable logic")
	assert.InDelta(t, float64(r.Transistors)/4, r.NAND2Eq, 1e-9)
	assert.InDelta(t, r.NAND2Eq*NAND2Area, r.AreaUM2, 1e-9)
	assert.GreaterOrEqual(t, r.LogicDepth, 1)
}

// A wrapper around reg8 with reg8 as a black-box macro has no cells of its
// own left to count.
const wrapper = "`default_nettype none\n" + `module wrap (input wire clk, input wire [7:0] d, output wire [7:0] q);
  reg8 u (.clk(clk), .rst(1'b0), .en(1'b1), .d(d), .q(q));
endmodule
`

func TestMacrosAreBlackBoxes(t *testing.T) {
	cosim.RequireTool(t, Available())
	src := []Source{{Name: "reg8.v", Text: []byte(register)}, {Name: "wrap.v", Text: []byte(wrapper)}}
	whole, err := Generic("wrap", "none", src, nil)
	require.NoError(t, err)
	assert.Equal(t, 8, whole.FlipFlops)
	boxed, err := Generic("wrap", "none", src, []string{"reg8"})
	require.NoError(t, err)
	assert.Zero(t, boxed.FlipFlops)
	assert.Zero(t, boxed.Cells)
}

func TestLatchFails(t *testing.T) {
	cosim.RequireTool(t, Available())
	_, err := Generic("latchy", "none", []Source{{Name: "latchy.v", Text: []byte(latch)}}, nil)
	require.ErrorContains(t, err, "yosys inferred latches")
}

func TestLibertyFlow(t *testing.T) {
	cosim.RequireTool(t, Available())
	const gz = "/work/shared/pdk/asap7/asap7sc7p5t_rvt_tt.lib.gz"
	lib := os.Getenv("UVMMU_LIBERTY")
	if lib == "" {
		f, err := os.Open(gz)
		if err != nil {
			t.Skipf("no Liberty file: set UVMMU_LIBERTY or provide %s", gz)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		require.NoError(t, err)
		lib = filepath.Join(t.TempDir(), "asap7.lib")
		out, err := os.Create(lib)
		require.NoError(t, err)
		_, err = io.Copy(out, zr)
		require.NoError(t, err)
		require.NoError(t, out.Close())
	}
	src := []Source{{Name: "reg8.v", Text: []byte(register)}}
	r, err := Generic("reg8", "none", src, nil)
	require.NoError(t, err)
	require.NoError(t, WithLiberty(&r, src, nil, lib))
	assert.Greater(t, r.LibertyAreaUM2, 0.0)
	assert.Greater(t, r.LibertyDelayPS, 0.0)
	assert.GreaterOrEqual(t, r.LibertyCells, 8)
	var buf bytes.Buffer
	require.NoError(t, NewReport([]Result{r}, nil, nil).WriteTable(&buf))
	assert.Contains(t, buf.String(), "lib area um^2")
}

func TestSRAMEstimate(t *testing.T) {
	s, err := SRAM{Name: "frab", Words: 160, Bits: 256}.Estimate()
	require.NoError(t, err)
	assert.Equal(t, 40960, s.TotalBits)
	assert.InDelta(t, 40960*0.027/0.5, s.AreaUM2, 1e-9)
	_, err = SRAM{Name: "frab", Words: 0, Bits: 256}.Estimate()
	require.ErrorContains(t, err, "SRAM frab: words 0")
}

func TestReportTable(t *testing.T) {
	r := NewReport([]Result{{Module: "m", Params: "A=1", Cells: 3, Transistors: 40, NAND2Eq: 10, FlipFlops: 1, LogicDepth: 2, AreaUM2: 0.5832}},
		[]SRAMResult{{SRAM: SRAM{Name: "frab", Words: 2, Bits: 4, Source: "test"}, TotalBits: 8, AreaUM2: 0.432}},
		[]Latency{{Block: "dcq", Operation: "pop", Cycles: 1}})
	var buf bytes.Buffer
	require.NoError(t, r.WriteTable(&buf))
	for _, want := range []string{"NAND2-eq", "0.6", "frab", "dcq", "pop", "5,800 um^2"} {
		assert.Contains(t, buf.String(), want)
	}
	buf.Reset()
	require.NoError(t, r.WriteJSON(&buf))
	assert.Contains(t, buf.String(), `"nand2_area_um2": 0.05832`)
}
