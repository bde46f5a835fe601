package gen

import (
	"fmt"

	"github.com/uvmmu/uvmmu/blocks/dcq"
)

func init() {
	cfg := dcq.DefaultConfig()
	Register(Emitter{
		Name: "uvmmu_dcq",
		Doc:  "destination candidate queue, first-word fall-through FIFO (SPEC 5.3)",
		Params: []Param{
			{Name: "DEPTH", Default: uint64(cfg.Depth), Min: dcq.MinDepth, Max: dcq.MaxDepth, Doc: "entries"},
			{Name: "THRESHOLD", Default: uint64(cfg.Threshold), Min: 1, Max: dcq.MaxDepth, Range: "1..DEPTH", Doc: "refill while count < THRESHOLD; at most DEPTH"},
			{Name: "FG_BITS", Default: uint64(cfg.FGBits), Min: 1, Max: dcq.MaxFGBits, Doc: "frame-group number width"},
		},
		Module: dcq.Module,
		Checks: []Check{{Label: "threshold_depth", Cond: "THRESHOLD > DEPTH",
			Msg: "uvmmu_dcq: THRESHOLD = %0d is outside 1..DEPTH (%0d)", Args: []string{"THRESHOLD", "DEPTH"}}},
		Validate: func(v Values) error { return dcqConfig(v).Validate() },
		Describe: func(Values) []string {
			return []string{"Destination candidate queue of the UVMMU Destination Allocator (UVMMU paper Section IV-C; SPEC 5.1, 5.3).",
				"First-word fall-through FIFO of {PFgN, S} entries; Moore outputs; refill = count < THRESHOLD."}
		},
		Body: dcqBody(),
	})
}

func dcqConfig(v Values) dcq.Config {
	return dcq.Config{Depth: int(v["DEPTH"]), Threshold: int(v["THRESHOLD"]), FGBits: int(v["FG_BITS"])}
}

// dcqBody is uvmmu_dcq's body (SPEC 5.3): the destination candidate
// queue, a first-word fall-through FIFO of {PFgN, S} entries. Every output
// is Moore: pop_* show the head entry whenever pop_valid, push_ready is
// count < DEPTH and refill is count < THRESHOLD, all from registers. A push
// and a pop may fire in the same cycle; a push into a full queue waits for
// push_ready even if a pop fires in that cycle, because push_ready does not
// look at pop_ready. Entries are not reset (the queue is an array, like an
// SRAM); only the pointers and the count are. The localparams and registers
// are those of dcq.Module.
func dcqBody() string {
	if dcq.SwapBit != 0 || dcq.PFgNLSB != 1 {
		panic(fmt.Sprintf("blocks/dcq stores entries with S at bit %d and PFgN from bit %d; uvmmu_dcq packs {PFgN, S}", dcq.SwapBit, dcq.PFgNLSB))
	}
	return `  localparam [COUNT_W-1:0] FULL = COUNT_W'(DEPTH);
  localparam [COUNT_W-1:0] REFILL_BELOW = COUNT_W'(THRESHOLD);
  localparam [PTR_W-1:0] LAST = PTR_W'(DEPTH - 1);

  wire [FG_BITS:0] head_entry;
  wire not_full;
  wire not_empty;
  wire push_fire;
  wire pop_fire;

  assign not_full = mem_fill < FULL;
  assign not_empty = mem_fill != {COUNT_W{1'b0}};
  assign push_fire = push_valid && not_full;
  assign pop_fire = pop_ready && not_empty;
  assign head_entry = mem[mem_head];

  // Moore outputs: functions of the registers only
  assign push_ready = not_full;
  assign pop_valid = not_empty;
  assign pop_pfgn = head_entry[FG_BITS:1];
  assign pop_swap = head_entry[0];
  assign count = mem_fill;
  assign refill = mem_fill < REFILL_BELOW;

  always @(posedge clk) begin
    if (rst) begin
` + resets(dcq.Module, "      ") + `    end else begin
      if (push_fire) begin
        mem[mem_tail] <= {push_pfgn, push_swap};
        mem_tail <= (mem_tail == LAST) ? {PTR_W{1'b0}} : (mem_tail + PTR_W'(1));
      end
      if (pop_fire) begin
        mem_head <= (mem_head == LAST) ? {PTR_W{1'b0}} : (mem_head + PTR_W'(1));
      end
      if (push_fire && !pop_fire) begin
        mem_fill <= mem_fill + COUNT_W'(1);
      end else if (pop_fire && !push_fire) begin
        mem_fill <= mem_fill - COUNT_W'(1);
      end
    end
  end
`
}
