package gen

import (
	"fmt"
	"math"
	"strings"

	"github.com/uvmmu/uvmmu/blocks/lfsr"
)

func init() {
	cfg := lfsr.DefaultConfig()
	Register(Emitter{
		Name: "uvmmu_lfsr",
		Doc:  "Galois LFSR of the victim picker (SPEC 5.2, 5.3)",
		Params: []Param{
			{Name: "WIDTH", Default: uint64(cfg.Width), Min: lfsr.MinWidth, Max: lfsr.MaxWidth, Doc: "register width; taps from blocks/lfsr"},
			{Name: "SEED", Default: cfg.Seed, Min: 1, Max: math.MaxUint64, Range: "1..2^WIDTH-1", TypeWidth: "WIDTH", Doc: "reset state, non-zero, below 2^WIDTH"},
		},
		Module:   lfsr.Module,
		Validate: func(v Values) error { return lfsrConfig(v).Validate() },
		Describe: func(Values) []string {
			return []string{"Galois LFSR of the UVMMU victim picker (UVMMU paper Section IV-D; SPEC 5.2, 5.3).",
				"Maximal-length taps from Xilinx XAPP052 Table 3, converted to Galois toggle masks by blocks/lfsr.Taps",
				"and selected by WIDTH; period 2^WIDTH-1, never zero for a non-zero SEED."}
		},
		Body: lfsrBody(),
	})
}

func lfsrConfig(v Values) lfsr.Config { return lfsr.Config{Width: int(v["WIDTH"]), Seed: v["SEED"]} }

// lfsrBody is uvmmu_lfsr's body (SPEC 5.3): a Galois LFSR that shifts
// right and XORs the toggle mask of blocks/lfsr.Taps in when the bit
// shifted out is 1, in every cycle where en is high; reset loads SEED. The
// mask table holds every width of blocks/lfsr's tap table.
func lfsrBody() string {
	var rows strings.Builder
	for w := lfsr.MinWidth; w <= lfsr.MaxWidth; w++ {
		taps, err := lfsr.Taps(w)
		if err != nil {
			panic(err) // the loop stays inside the table's range
		}
		fmt.Fprintf(&rows, "      %d: toggle_mask = 64'h%016x;\n", w, taps)
	}
	return `  // Galois toggle mask of each width (blocks/lfsr.Taps).
  function automatic [63:0] toggle_mask(input integer width);
    case (width)
` + rows.String() + `      default: toggle_mask = 64'd0;
    endcase
  endfunction

  localparam [WIDTH-1:0] TAPS = WIDTH'(toggle_mask(WIDTH));

  assign state = state_q;

  always @(posedge clk) begin
    if (rst) begin
` + resets(lfsr.Module, "      ") + `    end else if (en) begin
      state_q <= {1'b0, state_q[WIDTH-1:1]} ^ (state_q[0] ? TAPS : {WIDTH{1'b0}});
    end
  end
`
}
