package gen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/blocks/pacache"
)

func init() {
	cfg := pacache.DefaultConfig()
	ports := []Port{{Name: "clk", Dir: In}, {Name: "rst", Dir: In}}
	for _, d := range pacache.PortList {
		bits := d.Bits
		p := Port{Name: d.Name, Dir: In, Width: d.Width, Bits: func(v Values) int { return bits(paConfig(v)) }}
		if d.Out {
			p.Dir = Out
		}
		ports = append(ports, p)
	}
	Register(Emitter{
		Name: "grit_pa_cache",
		Doc:  "GRIT page attribute cache: fault counting in front of the PA-Table (SPEC 8.3)",
		Params: []Param{
			{Name: "SETS", Default: uint64(cfg.Sets), Min: pacache.MinSets, Max: pacache.MaxSets, Doc: "sets, a power of two; index = low log2(SETS) VPN bits"},
			{Name: "WAYS", Default: uint64(cfg.Ways), Min: pacache.MinWays, Max: pacache.MaxWays, Doc: "ways per set, true LRU"},
			{Name: "VPN_BITS", Default: uint64(cfg.VPNBits), Min: 2, Max: pacache.MaxVPNBits, Range: "log2(SETS)+1.." + fmt.Sprint(pacache.MaxVPNBits), Doc: "virtual page number width; above log2(SETS)"},
			{Name: "THRESHOLD", Default: uint64(cfg.Threshold), Min: pacache.MinThreshold, Max: pacache.MaxThreshold, Doc: "fault threshold that triggers a scheme change"},
		},
		Ports: ports,
		Checks: []Check{
			{Label: "sets_pow2", Cond: "(SETS & (SETS - 1)) != 0", Msg: "grit_pa_cache: SETS = %0d is not a power of two", Args: []string{"SETS"}},
			{Label: "tag_bits", Cond: "VPN_BITS < $clog2(SETS) + 1",
				Msg: "grit_pa_cache: VPN_BITS = %0d leaves no tag bit above the %0d index bits", Args: []string{"VPN_BITS", "$clog2(SETS)"}},
		},
		Validate: func(v Values) error { return paConfig(v).Validate() },
		Describe: func(Values) []string {
			return []string{"Page attribute cache of GRIT (GRIT Section V-C, Fig. 12; SPEC 8.3), the Verilog of blocks/pacache.",
				"Set-associative, true LRU, write-allocate, write-back to the PA-Table; hit latency 1 cycle,",
				"miss latency PA-Table latency + 2 cycles (docs/pacache.md). The fault counter is",
				"CNT_W = max(1, $clog2(THRESHOLD)) bits and resp_count RESP_W = $clog2(THRESHOLD+1) bits (SPEC 8.3)."}
		},
		Body: paCacheBody(),
	})
}

// Widths of SPEC 8.3 that follow THRESHOLD, as in pacache.Config.
const (
	paCountBits = pacache.CountWidthExpr
	paRespBits  = pacache.RespWidthExpr
)

// paRegs declares the controller's registers of pacache.RegList, each
// after its comment.
func paRegs() string {
	var b strings.Builder
	for _, r := range pacache.RegList {
		if r.Doc != "" {
			fmt.Fprintf(&b, "  // %s\n", r.Doc)
		}
		rng := ""
		if r.Width != "" {
			if n, err := strconv.Atoi(r.Width); err == nil {
				rng = fmt.Sprintf("[%d:0] ", n-1)
			} else {
				rng = "[" + r.Width + "-1:0] "
			}
		}
		fmt.Fprintf(&b, "  reg %s%s;\n", rng, r.Name)
	}
	return b.String()
}

// paResets are the reset assignments of pacache.RegList.
func paResets() string {
	var b strings.Builder
	for _, r := range pacache.RegList {
		fmt.Fprintf(&b, "      %s <= %s;\n", r.Name, r.Reset)
	}
	return b.String()
}

func paConfig(v Values) pacache.Config {
	return pacache.Config{Sets: int(v["SETS"]), Ways: int(v["WAYS"]), VPNBits: int(v["VPN_BITS"]), Threshold: int(v["THRESHOLD"])}
}

// paCacheBody is grit_pa_cache, the Verilog of blocks/pacache: the same
// controller, line layout, LRU ages and timing (docs/pacache.md), checked
// against the Go model cycle for cycle by tb/. The tag store is one
// register array per way (a generate loop over the ways) indexed by set and
// read asynchronously, with the valid bits in a flop vector per way that
// reset clears (the rest of a line is not reset: no output looks at an
// invalid line); the LRU ages of every set are one vector. Every output is
// a register or a function of the state register. Where several ways
// qualify (a hit, an invalid way, the oldest way) the lowest wins, through
// a chain along the ways.
func paCacheBody() string {
	if pacache.ValidBit != 0 || pacache.DirtyBit != 1 || pacache.WriteBit != 2 || pacache.FaultsLo != 3 {
		panic("blocks/pacache line layout changed; grit_pa_cache packs {tag, faults, write, dirty, valid}")
	}
	if pacache.StateIdle != 0 || pacache.StateTblReq != 1 || pacache.StateTblWait != 2 || pacache.TableOpBits != 2 ||
		pacache.OpLookup != 0 || pacache.OpWriteBack != 1 || pacache.OpDelete != 2 {
		panic("blocks/pacache state or PA-Table op encoding changed")
	}
	return `  localparam integer IB = $clog2(SETS);
  localparam integer TB = VPN_BITS - IB;
  localparam integer CNT_W = ` + paCountBits + `;
  localparam integer RESP_W = ` + paRespBits + `;
  localparam integer AB = $clog2(WAYS);
  // line = {tag, faults, write, dirty, valid} (blocks/pacache.Entry)
  localparam integer TAG_LO = 3 + CNT_W;
  localparam integer LINE_W = TAG_LO + TB;
  localparam [RESP_W-1:0] TRIGGER_AT = RESP_W'(THRESHOLD);
  localparam [AB-1:0] OLDEST = AB'(WAYS - 1);

  localparam integer AGES_W = WAYS * AB;

  genvar w;

  // per set, one LRU age per way, way 0 lowest: ways used more recently
  reg [SETS*AGES_W-1:0] ages_q;
` + paRegs() + `  wire req_fire;
  wire [IB-1:0] req_set;
  wire [TB-1:0] req_tag;
  wire [WAYS-1:0] hit_w;
  wire hit;
  wire [AB-1:0] hit_way;
  wire [CNT_W-1:0] hit_faults;
  wire hit_write;
  wire [RESP_W-1:0] hit_count;
  wire hit_trigger;
  wire [LINE_W-1:0] hit_line;
  wire [AGES_W-1:0] set_ages;
  wire [AB-1:0] hit_way_age;
  wire [AGES_W-1:0] hit_ages;
  wire [AB-1:0] victim_way;
  wire [LINE_W-1:0] victim_line;
  wire [IB-1:0] fill_set;
  wire [RESP_W-1:0] fill_count;
  wire fill_write;
  wire fill_trigger;
  wire [CNT_W-1:0] fill_faults;
  wire [LINE_W-1:0] fill_line;
  wire [AGES_W-1:0] fill_old_ages;
  wire [AB-1:0] fill_way_age;
  wire [AGES_W-1:0] fill_ages;
  wire [AGES_W-1:0] reset_ages;
  wire victim_dirty;
  wire fill_fire;
  // the one line write of a cycle: a hit's update or a fill
  wire [WAYS-1:0] line_we;
  wire [IB-1:0] line_set;
  wire [LINE_W-1:0] line_wdata;

  // Moore outputs: functions of the registers only
  assign req_ready = state_q == 2'd0;
  assign resp_valid = resp_valid_q;
  assign resp_trigger = resp_trigger_q;
  assign resp_write = resp_write_q;
  assign resp_count = resp_count_q;
  assign tbl_req_valid = state_q == 2'd1;
  assign tbl_req_op = tbl_op_q;
  assign tbl_req_vpn = tbl_vpn_q;
  assign tbl_req_rw = tbl_rw_q;
  assign tbl_req_count = tbl_count_q;

  // lookup of the offered request in its set
  assign req_fire = req_valid && (state_q == 2'd0);
  assign req_set = req_vpn[IB-1:0];
  assign req_tag = req_vpn[VPN_BITS-1:IB];
  assign set_ages = ages_q[req_set*AGES_W +: AGES_W];
  assign fill_set = miss_vpn_q[IB-1:0];
  assign fill_old_ages = ages_q[fill_set*AGES_W +: AGES_W];

  // per way: the tag store, the lookup, the new ages, and the chains that
  // pick the lowest qualifying way (each chain's value at the last way is
  // the answer)
  generate
    for (w = 0; w < WAYS; w = w + 1) begin : g_way
      // line without its valid bit, and the valid bits of every set
      reg [LINE_W-1:1] line_q [0:SETS-1];
      reg [SETS-1:0] valid_q;
      wire [LINE_W-1:0] set_line;
      // way J = WAYS-1-w, for the chain that runs from the top way down
      localparam integer J = WAYS - 1 - w;
      wire [AB-1:0] age_j;
      wire [AB-1:0] age;
      wire [AB-1:0] fill_age;
      wire hit_seen;
      wire [AB-1:0] hit_way_c;
      wire [CNT_W-1:0] hit_faults_c;
      wire hit_write_c;
      wire [AB-1:0] hit_age_c;
      wire [AB-1:0] oldest_c;
      wire invalid_seen;
      wire [AB-1:0] invalid_c;
      wire [LINE_W-1:0] victim_line_c;
      wire [AB-1:0] fill_age_c;

      assign set_line = {line_q[req_set], valid_q[req_set]};
      assign age_j = set_ages[J*AB +: AB];
      assign hit_w[w] = set_line[0] && (set_line[LINE_W-1:TAG_LO] == req_tag);
      assign age = set_ages[w*AB +: AB];
      assign fill_age = fill_old_ages[w*AB +: AB];
      assign reset_ages[w*AB +: AB] = AB'(w);
      assign hit_ages[w*AB +: AB] = (hit_way == AB'(w)) ? {AB{1'b0}} : ((age < hit_way_age) ? (age + AB'(1)) : age);
      assign fill_ages[w*AB +: AB] = (victim_way_q == AB'(w)) ? {AB{1'b0}} : ((fill_age < fill_way_age) ? (fill_age + AB'(1)) : fill_age);
      if (w == 0) begin : g_first
        assign hit_seen = hit_w[w];
        assign hit_way_c = {AB{1'b0}};
        assign hit_faults_c = hit_w[w] ? set_line[TAG_LO-1:3] : {CNT_W{1'b0}};
        assign hit_write_c = hit_w[w] && set_line[2];
        assign hit_age_c = (hit_way == AB'(w)) ? age : {AB{1'b0}};
        assign oldest_c = (age_j == OLDEST) ? AB'(J) : {AB{1'b0}};
        assign invalid_seen = !set_line[0];
        assign invalid_c = {AB{1'b0}};
        assign victim_line_c = (victim_way == AB'(w)) ? set_line : {LINE_W{1'b0}};
        assign fill_age_c = (victim_way_q == AB'(w)) ? fill_age : {AB{1'b0}};
      end else begin : g_next
        assign hit_seen = g_way[w-1].hit_seen || hit_w[w];
        assign hit_way_c = g_way[w-1].hit_seen ? g_way[w-1].hit_way_c : (hit_w[w] ? AB'(w) : {AB{1'b0}});
        assign hit_faults_c = g_way[w-1].hit_seen ? g_way[w-1].hit_faults_c : (hit_w[w] ? set_line[TAG_LO-1:3] : {CNT_W{1'b0}});
        assign hit_write_c = g_way[w-1].hit_seen ? g_way[w-1].hit_write_c : (hit_w[w] && set_line[2]);
        assign hit_age_c = (hit_way == AB'(w)) ? age : g_way[w-1].hit_age_c;
        assign oldest_c = (age_j == OLDEST) ? AB'(J) : g_way[w-1].oldest_c;
        assign invalid_seen = g_way[w-1].invalid_seen || !set_line[0];
        assign invalid_c = g_way[w-1].invalid_seen ? g_way[w-1].invalid_c : (!set_line[0] ? AB'(w) : {AB{1'b0}});
        assign victim_line_c = (victim_way == AB'(w)) ? set_line : g_way[w-1].victim_line_c;
        assign fill_age_c = (victim_way_q == AB'(w)) ? fill_age : g_way[w-1].fill_age_c;
      end
      assign line_we[w] = (req_fire && hit_w[w]) || (fill_fire && !fill_trigger && (victim_way_q == AB'(w)));

      always @(posedge clk) begin
        if (rst) begin
          valid_q <= {SETS{1'b0}};
        end else if (line_we[w]) begin
          valid_q[line_set] <= line_wdata[0];
        end
      end
      always @(posedge clk) begin
        if (line_we[w]) begin
          line_q[line_set] <= line_wdata[LINE_W-1:1];
        end
      end
    end
  endgenerate

  assign hit = g_way[WAYS-1].hit_seen;
  assign hit_way = g_way[WAYS-1].hit_way_c;
  assign hit_faults = g_way[WAYS-1].hit_faults_c;
  assign hit_write = g_way[WAYS-1].hit_write_c || req_write;
  assign hit_count = RESP_W'(hit_faults) + RESP_W'(2);
  assign hit_trigger = hit_count >= TRIGGER_AT;
  assign hit_line = {req_tag, hit_faults + CNT_W'(1), hit_write, 1'b1, 1'b1};
  assign hit_way_age = g_way[WAYS-1].hit_age_c;

  // victim: the lowest invalid way, else the way of age WAYS-1
  assign victim_way = g_way[WAYS-1].invalid_seen ? g_way[WAYS-1].invalid_c : g_way[WAYS-1].oldest_c;
  assign victim_line = g_way[WAYS-1].victim_line_c;

  // fill of a miss with the PA-Table's answer
  assign fill_count = tbl_resp_found ? (RESP_W'(tbl_resp_count) + RESP_W'(2)) : RESP_W'(1);
  assign fill_write = miss_write_q || (tbl_resp_found && tbl_resp_rw);
  assign fill_trigger = fill_count >= TRIGGER_AT;
  assign fill_faults = tbl_resp_found ? (tbl_resp_count + CNT_W'(1)) : {CNT_W{1'b0}};
  assign fill_line = {miss_vpn_q[VPN_BITS-1:IB], fill_faults, fill_write, 1'b1, 1'b1};
  assign fill_way_age = g_way[WAYS-1].fill_age_c;
  assign victim_dirty = victim_line_q[0] && victim_line_q[1];
  assign fill_fire = (state_q == 2'd2) && tbl_resp_valid;
  assign line_set = (state_q == 2'd0) ? req_set : fill_set;
  assign line_wdata = (state_q == 2'd0) ? (hit_trigger ? {LINE_W{1'b0}} : hit_line) : fill_line;

  // controller
  always @(posedge clk) begin
    if (rst) begin
      ages_q <= {SETS{reset_ages}};
` + paResets() + `    end else begin
      resp_valid_q <= (req_fire && hit) || fill_fire;
      case (state_q)
        2'd0: begin
          if (req_fire) begin
            if (hit) begin
              resp_trigger_q <= hit_trigger;
              resp_write_q <= hit_write;
              resp_count_q <= hit_count;
              if (hit_trigger) begin
                tbl_op_q <= 2'd2;
                tbl_vpn_q <= req_vpn;
                tbl_rw_q <= 1'b0;
                tbl_count_q <= {CNT_W{1'b0}};
                state_q <= 2'd1;
              end else begin
                ages_q[req_set*AGES_W +: AGES_W] <= hit_ages;
              end
            end else begin
              miss_vpn_q <= req_vpn;
              miss_write_q <= req_write;
              victim_way_q <= victim_way;
              // an invalid line is captured as zeros, as the Go model
              // holds it: the unreset bits of a never-written line
              // stay out of the register
              victim_line_q <= victim_line[0] ? victim_line : {LINE_W{1'b0}};
              tbl_op_q <= 2'd0;
              tbl_vpn_q <= req_vpn;
              tbl_rw_q <= 1'b0;
              tbl_count_q <= {CNT_W{1'b0}};
              state_q <= 2'd1;
            end
          end
        end
        2'd1: begin
          if (tbl_req_ready) begin
            state_q <= (tbl_op_q == 2'd0) ? 2'd2 : 2'd0;
          end
        end
        2'd2: begin
          if (tbl_resp_valid) begin
            resp_trigger_q <= fill_trigger;
            resp_write_q <= fill_write;
            resp_count_q <= fill_count;
            if (fill_trigger) begin
              if (tbl_resp_found) begin
                tbl_op_q <= 2'd2;
                tbl_vpn_q <= miss_vpn_q;
                tbl_rw_q <= 1'b0;
                tbl_count_q <= {CNT_W{1'b0}};
                state_q <= 2'd1;
              end else begin
                state_q <= 2'd0;
              end
            end else begin
              ages_q[fill_set*AGES_W +: AGES_W] <= fill_ages;
              if (victim_dirty) begin
                tbl_op_q <= 2'd1;
                tbl_vpn_q <= {victim_line_q[LINE_W-1:TAG_LO], fill_set};
                tbl_rw_q <= victim_line_q[2];
                tbl_count_q <= victim_line_q[TAG_LO-1:3];
                state_q <= 2'd1;
              end else begin
                state_q <= 2'd0;
              end
            end
          end
        end
        default: begin
        end
      endcase
    end
  end
`
}
