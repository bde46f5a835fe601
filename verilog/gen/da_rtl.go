package gen

import (
	"fmt"
	"strings"

	"github.com/uvmmu/uvmmu/blocks/afm"
	"github.com/uvmmu/uvmmu/blocks/dcq"
	"github.com/uvmmu/uvmmu/blocks/frab"
	"github.com/uvmmu/uvmmu/blocks/ipgt"
)

// connect prints the named connections of an instance, port name to the
// signal of the same name unless rename maps it.
func connect(ports []Port, rename map[string]string) string {
	var b strings.Builder
	for i, p := range ports {
		sig := p.Name
		if r, ok := rename[p.Name]; ok {
			sig = r
		}
		sep := ","
		if i == len(ports)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    .%s(%s)%s\n", p.Name, sig, sep)
	}
	return b.String()
}

// daBody wires uvmmu_da (SPEC 5.3): the DCQ, the LFSR, the FrAB and the
// AFM as in docs/da.md. The allocation port is the DCQ's pop side and
// init_done is the FrAB's.
var daBody = `  localparam integer RB = ` + frab.RegionBitsExpr + `;
  localparam integer CW = $clog2(DCQ_DEPTH + 1);

  wire push_valid;
  wire push_ready;
  wire [FG_BITS-1:0] push_pfgn;
  wire push_swap;
  wire [CW-1:0] dcq_count;
  wire dcq_refill;
  wire frab_cmd_valid;
  wire frab_cmd_ready;
  wire [1:0] frab_cmd_op;
  wire [RB-1:0] frab_cmd_region;
  wire frab_rsp_valid;
  wire frab_rsp_found;
  wire [RB-1:0] frab_rsp_region;
  wire lfsr_en;
  wire [LFSR_WIDTH-1:0] lfsr_state;

  uvmmu_dcq #(.DEPTH(DCQ_DEPTH), .THRESHOLD(DCQ_THRESHOLD), .FG_BITS(FG_BITS)) u_dcq (
` + connect(modulePorts(dcq.Module),
	map[string]string{"pop_valid": "dst_valid", "pop_ready": "dst_ready", "pop_pfgn": "dst_pfgn", "pop_swap": "dst_swap", "count": "dcq_count", "refill": "dcq_refill"}) + `  );

  uvmmu_lfsr #(.WIDTH(LFSR_WIDTH), .SEED(LFSR_SEED)) u_lfsr (
    .clk(clk),
    .rst(rst),
    .en(lfsr_en),
    .state(lfsr_state)
  );

  uvmmu_da_frab #(.NFG(NFG), .FRAB_WORD(FRAB_WORD)) u_frab (
    .clk(clk),
    .rst(rst),
    .cmd_valid(frab_cmd_valid),
    .cmd_ready(frab_cmd_ready),
    .cmd_op(frab_cmd_op),
    .cmd_region(frab_cmd_region),
    .rsp_valid(frab_rsp_valid),
    .rsp_found(frab_rsp_found),
    .rsp_region(frab_rsp_region),
    .init_done(init_done)
  );

  uvmmu_da_afm #(.NFG(NFG), .DCQ_DEPTH(DCQ_DEPTH), .FRAB_WORD(FRAB_WORD), .FG_BITS(FG_BITS), .ADDR_W(ADDR_W), .IPGT_BASE(IPGT_BASE), .LFSR_WIDTH(LFSR_WIDTH), .VICTIMS(VICTIMS)) u_afm (
` + connect(modulePorts(afm.Module), map[string]string{"count": "dcq_count", "refill": "dcq_refill",
	"cmd_valid": "frab_cmd_valid", "cmd_ready": "frab_cmd_ready", "cmd_op": "frab_cmd_op", "cmd_region": "frab_cmd_region",
	"rsp_valid": "frab_rsp_valid", "rsp_found": "frab_rsp_found", "rsp_region": "frab_rsp_region"}) + `  );
`

// frabSRAMBody is uvmmu_da_frab_sram: the FrAB's single-port SRAM (SPEC
// 5.1: one read/write port, 1-cycle read latency, registered read data).
// A memory has at least two words; with one, word 1 is never addressed.
const frabSRAMBody = `  localparam integer DEPTH = WORDS > 2 ? WORDS : 2;

  reg [WIDTH-1:0] mem_q [0:DEPTH-1];
  reg [WIDTH-1:0] rdata_q;

  assign rdata = rdata_q;

  always @(posedge clk) begin
    if (we) begin
      mem_q[addr] <= wdata;
    end
    if (re) begin
      rdata_q <= mem_q[addr];
    end
  end
`

// prioBody is uvmmu_da_prio, the priority encoder of frab.FirstSetFrom:
// the bits of word below from are masked, then log2(WIDTH) levels of 2:1
// nodes each carry (any bit set, index of the first set bit), taking the
// lower half's index when the lower half has a set bit.
const prioBody = `  localparam integer LW = $clog2(WIDTH);

  genvar l, i;

  // word bits at or after the start position; every start position is at
  // or below the top bit
  wire [WIDTH-1:0] masked;
  generate
    for (i = 0; i < WIDTH - 1; i = i + 1) begin : g_mask
      assign masked[i] = word[i] & (from <= LW'(i));
    end
  endgenerate
  assign masked[WIDTH-1] = word[WIDTH-1];

  // level l has WIDTH>>l nodes; node i covers bits [i<<l, (i+1)<<l) and
  // carries any (a bit is set) and idx (l bits: the first set bit)
  generate
    for (l = 1; l <= LW; l = l + 1) begin : g_lvl
      wire [(WIDTH >> l)-1:0] any;
      wire [(WIDTH >> l)*l-1:0] idx;
      for (i = 0; i < (WIDTH >> l); i = i + 1) begin : g_node
        if (l == 1) begin : g_leaf
          assign any[i] = masked[2*i] | masked[2*i+1];
          assign idx[i] = ~masked[2*i];
        end else begin : g_inner
          assign any[i] = g_lvl[l-1].any[2*i] | g_lvl[l-1].any[2*i+1];
          assign idx[i*l +: l] = g_lvl[l-1].any[2*i] ? {1'b0, g_lvl[l-1].idx[2*i*(l-1) +: l-1]}
                                                     : {1'b1, g_lvl[l-1].idx[(2*i+1)*(l-1) +: l-1]};
        end
      end
    end
  endgenerate

  assign found = g_lvl[LW].any[0];
  assign index = g_lvl[LW].idx;
`

// pickerBody is uvmmu_da_picker, the victim picker's draw (lfsr.Pick): the
// XOR of the LFSR state's PW-bit slices, the last one zero-extended, and
// whether it is below NFG.
const pickerBody = `  localparam integer PW = ` + daPickBits + `;
  localparam integer SLICES = (LFSR_WIDTH + PW - 1) / PW;
  localparam integer PADDED_W = SLICES * PW;

  genvar i;

  // the state zero-extended to whole slices, and the running XOR of the
  // slices up to each one
  wire [PADDED_W-1:0] padded;
  assign padded = PADDED_W'(state);
  generate
    for (i = 0; i < SLICES; i = i + 1) begin : g_fold
      wire [PW-1:0] acc;
      if (i == 0) begin : g_first
        assign acc = padded[PW-1:0];
      end else begin : g_next
        assign acc = g_fold[i-1].acc ^ padded[i*PW +: PW];
      end
    end
  endgenerate
  assign draw = g_fold[SLICES-1].acc;

  generate
    if (64'(NFG) >= (64'd1 << PW)) begin : g_every_draw
      // NFG is a power of two: every draw is a frame-group
      assign ok = 1'b1;
    end else begin : g_below_nfg
      assign ok = draw < PW'(NFG);
    end
  endgenerate
`

// frabBody is uvmmu_da_frab: the bitmap SRAM (one port, registered read
// data), the initialisation sweep and the FIND/SET/CLEAR FSM of
// blocks/frab.
func frabBody() string {
	return `  // the last word's bits beyond the last region stay clear
  localparam integer SAW = AW > 0 ? AW : 1;
  localparam [SW-1:0] SWEEP_LAST = SW'(NW - 1);
  localparam integer LAST_BITS = NR - (NW - 1) * FW;
  localparam [FW-1:0] LAST_WORD = {FW{1'b1}} >> (FW - LAST_BITS);

  wire sram_we;
  wire sram_re;
  wire [SAW-1:0] sram_addr;
  wire [FW-1:0] sram_wdata;
  // the macro's registered read data
  wire [FW-1:0] sram_rdata;
  // bit of the command's region within its word
  wire [LW-1:0] pos;
  wire enc_found;
  wire [LW-1:0] enc_index;
  wire [FW-1:0] onehot;
  wire [SAW-1:0] sweep_word;
  wire [SAW-1:0] cmd_word;
  wire [SAW-1:0] addr_word;
  wire [RB-1:0] found_region;

  assign cmd_ready = state_q == 2'd1;
  assign init_done = state_q != 2'd0;
  assign rsp_valid = rsp_valid_q;
  assign rsp_found = rsp_found_q;
  assign rsp_region = rsp_region_q;
  assign pos = addr_q[LW-1:0];
  assign onehot = FW'(1) << pos;

  generate
    if (AW > 0) begin : g_words
      assign sweep_word = sweep_q[SAW-1:0];
      assign cmd_word = cmd_region[RB-1:LW];
      assign addr_word = addr_q[RB-1:LW];
      assign found_region = {addr_q[RB-1:LW], enc_index};
    end else begin : g_one_word
      assign sweep_word = 1'b0;
      assign cmd_word = 1'b0;
      assign addr_word = 1'b0;
      assign found_region = enc_index;
    end
  endgenerate

  uvmmu_da_prio #(.WIDTH(FW)) u_prio (
    .word(sram_rdata),
    .from(pos),
    .found(enc_found),
    .index(enc_index)
  );

  // the macro's one port: the sweep and SET/CLEAR write, an accepted command reads
  assign sram_we = (state_q == 2'd0) || ((state_q == 2'd2) && ((op_q == 2'd1) || (op_q == 2'd2)));
  assign sram_re = (state_q == 2'd1) && cmd_valid;
  assign sram_addr = (state_q == 2'd0) ? sweep_word : ((state_q == 2'd1) ? cmd_word : addr_word);
  assign sram_wdata = (state_q == 2'd0) ? ((sweep_q == SWEEP_LAST) ? LAST_WORD : {FW{1'b1}}) : ((op_q == 2'd1) ? (sram_rdata | onehot) : (sram_rdata & ~onehot));

  uvmmu_da_frab_sram #(.WORDS(NW), .WIDTH(FW)) u_sram (
    .clk(clk),
    .we(sram_we),
    .re(sram_re),
    .addr(sram_addr),
    .wdata(sram_wdata),
    .rdata(sram_rdata)
  );

  always @(posedge clk) begin
    if (rst) begin
` + resets(frab.Module, "      ") + `    end else begin
      if (rsp_valid_q) begin
        rsp_valid_q <= 1'b0;
      end
      case (state_q)
        2'd0: begin
          sweep_q <= sweep_q + SW'(1);
          if (sweep_q == SWEEP_LAST) begin
            state_q <= 2'd1;
          end
        end
        2'd1: begin
          if (cmd_valid) begin
            op_q <= cmd_op;
            addr_q <= cmd_region;
            state_q <= 2'd2;
          end
        end
        2'd2: begin
          case (op_q)
            2'd0: begin
              rsp_valid_q <= 1'b1;
              rsp_found_q <= enc_found;
              if (enc_found) begin
                rsp_region_q <= found_region;
              end
            end
            default: begin
            end
          endcase
          state_q <= 2'd1;
        end
        default: begin
        end
      endcase
    end
  end
`
}

// afmBody is uvmmu_da_afm: the AFM, victim picker and IPgT sequencer of
// blocks/afm, state for state (docs/da.md, "AFM and sequencer"). The IPgT
// flag words come from blocks/ipgt.
func afmBody() string {
	hex := func(x uint64) string { return fmt.Sprintf("64'h%016x", x) }
	flags := fmt.Sprintf(`  // IPgT entry flags and the words the sequencer writes (blocks/ipgt)
  localparam [63:0] FLAG_F = %s;
  localparam [63:0] FLAG_B = %s;
  localparam [63:0] RESERVABLE_MASK = %s;
  localparam [63:0] VICTIM_MASK = %s;
  localparam [63:0] WORD_FREED = %s;
  localparam [63:0] WORD_FREED_BUSY = %s;
  localparam [63:0] WORD_PROTECTED = %s;
  localparam [3:0] MAPPED_FLAGS = 4'd%d;
`, hex(ipgt.F), hex(ipgt.B), hex(ipgt.F|ipgt.P|ipgt.B), hex(ipgt.M|ipgt.P|ipgt.B), hex(ipgt.Freed), hex(ipgt.FreedBusy), hex(ipgt.Protected), ipgt.M)
	return `  localparam integer PW = ` + daPickBits + `;
  localparam integer CW = $clog2(DCQ_DEPTH + 1);
  localparam integer CW1 = CW + 1;
  // frame-groups in the last region
  localparam integer LAST = NFG - (NR - 1) * 32;
  localparam [CW:0] DEPTH_Q = CW1'(DCQ_DEPTH);
  localparam [RB-1:0] LAST_REGION = RB'(NR - 1);
  localparam [5:0] LAST_SIZE = 6'(LAST);
  localparam [FB-1:0] SWEEP_FINDS = FB'(NW);
  // victim candidates from the victim port rather than the LFSR picker
  localparam [0:0] EXTERNAL = VICTIMS == 1;
` + flags + `
  wire mem_free;
  wire mem_fire;
  wire cmd_free;
  wire cmd_fire;
  wire [CW:0] in_queue;
  wire space;
  wire refill_wanted;
  wire sel_map;
  wire sel_sw;
  wire sel_refill;
  wire map_beyond;
  wire sw_beyond;
  wire map_drop;
  wire sw_drop;
  wire last_region;
  wire [5:0] region_size;
  wire [FG_BITS-1:0] fetch_pfgn;
  wire [ADDR_W-1:0] fetch_addr;
  wire [ADDR_W-1:0] cur_addr;
  wire [ADDR_W-1:0] map_addr;
  wire rsv_found;
  wire [4:0] rsv_index;
  wire [FG_BITS-1:0] rsv_pfgn;
  wire [ADDR_W-1:0] rsv_addr;
  wire [63:0] rsv_entry;
  wire [63:0] reserved_word;
  wire resp_reservable;
  wire resp_victim;
  wire resp_busy;
  wire [63:0] mapped_word;
  wire set_bit;
  wire [RB-1:0] cur_region;
  wire [RB-1:0] next_word;
  wire [RB-1:0] next_region;
  wire [PW-1:0] pick_draw;
  wire pick_ok;
  wire victim_beyond;
  // the victim-mode candidate of this cycle: the picker's draw, or the
  // victim port's offer (a frame-group beyond NFG, or none, ends the step)
  wire draw_ok;
  wire [FG_BITS-1:0] draw_pfgn;

  // Moore outputs
  assign map_ready = ~map_full_q;
  assign sw_ready = ~sw_full_q;
  assign mem_req_valid = req_valid_q;
  assign mem_req_write = req_write_q;
  assign mem_req_addr = req_addr_q;
  assign mem_req_wdata = req_wdata_q;
  assign push_valid = push_valid_q;
  assign push_pfgn = push_pfgn_q;
  assign push_swap = push_swap_q;
  assign cmd_valid = cmd_valid_q;
  assign cmd_op = cmd_op_q;
  assign cmd_region = cmd_region_q;
  assign lfsr_en = lfsr_en_q;
  assign victim_ready = EXTERNAL && (state_q == 4'd10);
  assign mem_free = !req_valid_q || mem_req_ready;
  assign mem_fire = req_valid_q && mem_req_ready;
  assign cmd_free = !cmd_valid_q || cmd_ready;
  assign cmd_fire = cmd_valid_q && cmd_ready;
  assign in_queue = {1'b0, count} + {{CW{1'b0}}, push_valid_q};
  assign space = push_ready && (in_queue < DEPTH_Q);
  assign refill_wanted = refill && !push_valid_q;

  // round-robin among the map buffer, the sw buffer and a refill step, after the one served last
  assign sel_map = (((last_q == 2'd2) && map_full_q) || (((last_q == 2'd1) && map_full_q) && !refill_wanted)) || (((((last_q == 2'd0) || (last_q == 2'd3)) && map_full_q) && !sw_full_q) && !refill_wanted);
  assign sel_sw = ((((last_q == 2'd0) || (last_q == 2'd3)) && sw_full_q) || (((last_q == 2'd2) && sw_full_q) && !map_full_q)) || ((((last_q == 2'd1) && sw_full_q) && !refill_wanted) && !map_full_q);
  assign sel_refill = (((last_q == 2'd1) && refill_wanted) || ((((last_q == 2'd0) || (last_q == 2'd3)) && refill_wanted) && !sw_full_q)) || ((((last_q == 2'd2) && refill_wanted) && !map_full_q) && !sw_full_q);

  // a map or software op naming a frame-group at or beyond NFG is dropped
  generate
    if (64'(NFG) >= (64'd1 << FG_BITS)) begin : g_every_pfgn
      assign map_beyond = 1'b0;
      assign sw_beyond = 1'b0;
      assign victim_beyond = 1'b0;
    end else begin : g_pfgn_limit
      assign map_beyond = map_pfgn_q >= FG_BITS'(NFG);
      assign sw_beyond = sw_pfgn_q >= FG_BITS'(NFG);
      assign victim_beyond = victim_pfgn >= FG_BITS'(NFG);
    end
  endgenerate
  assign map_drop = map_beyond;
  assign sw_drop = sw_beyond || (sw_op_q > 2'd2);
  assign last_region = region_q == LAST_REGION;
  assign region_size = last_region ? LAST_SIZE : 6'd32;
  assign fetch_pfgn = FG_BITS'({region_q, issued_q[4:0]});
  assign fetch_addr = IPGT_BASE + ADDR_W'({fetch_pfgn, 3'd0});
  assign cur_addr = IPGT_BASE + ADDR_W'({cur_q, 3'd0});
  assign map_addr = IPGT_BASE + ADDR_W'({map_pfgn_q, 3'd0});

  // the first reservable entry of the region
  uvmmu_da_prio #(.WIDTH(32)) u_rsv_prio (
    .word(rsv_q),
    .from(5'd0),
    .found(rsv_found),
    .index(rsv_index)
  );

  assign rsv_pfgn = FG_BITS'({region_q, rsv_index});
  assign rsv_addr = IPGT_BASE + ADDR_W'({rsv_pfgn, 3'd0});
  assign rsv_entry = entry_q[rsv_index];
  assign reserved_word = (rsv_entry & ~FLAG_F) | FLAG_B;
  assign resp_reservable = (mem_resp_data & RESERVABLE_MASK) == FLAG_F;
  assign resp_victim = (mem_resp_data & VICTIM_MASK) == {60'd0, MAPPED_FLAGS};
  assign resp_busy = (mem_resp_data & FLAG_B) != 64'd0;
  assign mapped_word = {map_vpgn_q, map_cid_q, MAPPED_FLAGS};
  assign set_bit = cur_word_q == WORD_FREED;
  assign cur_region = cur_q[RB+4:5];
  generate
    if (AW > 0) begin : g_next_word
      assign next_word = (ptr_q[RB-1:LW] == AW'(NW - 1)) ? {RB{1'b0}} : {ptr_q[RB-1:LW] + AW'(1), {LW{1'b0}}};
    end else begin : g_one_word
      assign next_word = {RB{1'b0}};
    end
  endgenerate
  assign next_region = last_region ? {RB{1'b0}} : (region_q + RB'(1));

  uvmmu_da_picker #(.NFG(NFG), .LFSR_WIDTH(LFSR_WIDTH)) u_picker (
    .state(lfsr_state),
    .draw(pick_draw),
    .ok(pick_ok)
  );
  assign draw_ok = EXTERNAL ? (victim_valid && !victim_beyond) : pick_ok;
  assign draw_pfgn = EXTERNAL ? victim_pfgn : FG_BITS'(pick_draw);

  always @(posedge clk) begin
    if (rst) begin
` + resets(afm.Module, "      ") + `    end else begin
      if (mem_fire) begin
        req_valid_q <= 1'b0;
      end
      if (push_valid_q) begin
        push_valid_q <= 1'b0;
      end
      if (cmd_fire) begin
        cmd_valid_q <= 1'b0;
      end
      lfsr_en_q <= 1'b0;
      if (map_valid && !map_full_q) begin
        map_full_q <= 1'b1;
        map_pfgn_q <= map_pfgn;
        map_vpgn_q <= map_vpgn;
        map_cid_q <= map_cid;
      end
      if (sw_valid && !sw_full_q) begin
        sw_full_q <= 1'b1;
        sw_op_q <= sw_op;
        sw_pfgn_q <= sw_pfgn;
      end
      case (state_q)
        4'd0: begin
          if (init_done) begin
            state_q <= 4'd1;
          end
        end
        4'd1: begin
          if (sel_map) begin
            last_q <= 2'd0;
            if (map_drop) begin
              map_full_q <= 1'b0;
            end else begin
              state_q <= 4'd2;
            end
          end else if (sel_sw) begin
            last_q <= 2'd1;
            if (sw_drop) begin
              sw_full_q <= 1'b0;
            end else begin
              cur_q <= sw_pfgn_q;
              if (sw_op_q == 2'd1) begin
                cur_word_q <= WORD_PROTECTED;
                state_q <= 4'd5;
              end else begin
                state_q <= 4'd3;
              end
            end
          end else if (sel_refill) begin
            last_q <= 2'd2;
            if (hint_q) begin
              finds_q <= {FB{1'b0}};
              state_q <= 4'd6;
            end else begin
              lfsr_en_q <= !EXTERNAL;
              state_q <= 4'd10;
            end
          end
        end
        4'd2: begin
          if (mem_free) begin
            req_valid_q <= 1'b1;
            req_write_q <= 1'b1;
            req_addr_q <= map_addr;
            req_wdata_q <= mapped_word;
            map_full_q <= 1'b0;
            state_q <= 4'd1;
          end
        end
        4'd3: begin
          if (mem_free) begin
            req_valid_q <= 1'b1;
            req_write_q <= 1'b0;
            req_addr_q <= cur_addr;
            req_wdata_q <= 64'd0;
            state_q <= 4'd4;
          end
        end
        4'd4: begin
          if (mem_resp_valid) begin
            cur_word_q <= resp_busy ? WORD_FREED_BUSY : WORD_FREED;
            state_q <= 4'd5;
          end
        end
        4'd5: begin
          if (mem_free && (!set_bit || cmd_free)) begin
            req_valid_q <= 1'b1;
            req_write_q <= 1'b1;
            req_addr_q <= cur_addr;
            req_wdata_q <= cur_word_q;
            if (set_bit) begin
              cmd_valid_q <= 1'b1;
              cmd_op_q <= 2'd1;
              cmd_region_q <= cur_region;
              hint_q <= 1'b1;
            end
            sw_full_q <= 1'b0;
            state_q <= 4'd1;
          end
        end
        4'd6: begin
          if (cmd_free) begin
            cmd_valid_q <= 1'b1;
            cmd_op_q <= 2'd0;
            cmd_region_q <= ptr_q;
            finds_q <= finds_q + FB'(1);
            state_q <= 4'd7;
          end
        end
        4'd7: begin
          if (rsp_valid) begin
            if (rsp_found) begin
              region_q <= rsp_region;
              issued_q <= 6'd0;
              arrived_q <= 6'd0;
              rsv_q <= 32'd0;
              state_q <= 4'd8;
            end else if (finds_q > SWEEP_FINDS) begin
              hint_q <= 1'b0;
              state_q <= 4'd1;
            end else begin
              ptr_q <= next_word;
              state_q <= 4'd6;
            end
          end
        end
        4'd8: begin
          if (mem_free && (issued_q < region_size)) begin
            req_valid_q <= 1'b1;
            req_write_q <= 1'b0;
            req_addr_q <= fetch_addr;
            req_wdata_q <= 64'd0;
            issued_q <= issued_q + 6'd1;
          end
          if (mem_resp_valid) begin
            entry_q[arrived_q[4:0]] <= mem_resp_data;
            if (resp_reservable) begin
              rsv_q[arrived_q[4:0]] <= 1'b1;
            end
            arrived_q <= arrived_q + 6'd1;
            if ((arrived_q + 6'd1) == region_size) begin
              state_q <= 4'd9;
            end
          end
        end
        4'd9: begin
          if (!rsv_found) begin
            if (cmd_free) begin
              cmd_valid_q <= 1'b1;
              cmd_op_q <= 2'd2;
              cmd_region_q <= region_q;
              ptr_q <= next_region;
              state_q <= 4'd1;
            end
          end else if (!space) begin
            ptr_q <= region_q;
            state_q <= 4'd1;
          end else if (mem_free) begin
            push_valid_q <= 1'b1;
            push_pfgn_q <= rsv_pfgn;
            push_swap_q <= 1'b0;
            req_valid_q <= 1'b1;
            req_write_q <= 1'b1;
            req_addr_q <= rsv_addr;
            req_wdata_q <= reserved_word;
            rsv_q[rsv_index] <= 1'b0;
          end
        end
        4'd10: begin
          if (draw_ok) begin
            cur_q <= draw_pfgn;
            state_q <= 4'd11;
          end else if (EXTERNAL) begin
            state_q <= 4'd1;
          end else begin
            lfsr_en_q <= 1'b1;
          end
        end
        4'd11: begin
          if (mem_free) begin
            req_valid_q <= 1'b1;
            req_write_q <= 1'b0;
            req_addr_q <= cur_addr;
            req_wdata_q <= 64'd0;
            state_q <= 4'd12;
          end
        end
        4'd12: begin
          if (mem_resp_valid) begin
            if (resp_victim) begin
              cur_word_q <= mem_resp_data;
              state_q <= 4'd13;
            end else begin
              state_q <= 4'd1;
            end
          end
        end
        4'd13: begin
          if (mem_free && space) begin
            push_valid_q <= 1'b1;
            push_pfgn_q <= cur_q;
            push_swap_q <= 1'b1;
            req_valid_q <= 1'b1;
            req_write_q <= 1'b1;
            req_addr_q <= cur_addr;
            req_wdata_q <= cur_word_q | FLAG_B;
            state_q <= 4'd1;
          end
        end
        default: begin
        end
      endcase
    end
  end
`
}
