// tb_uvmmu_lfsr_directed: directed checks of uvmmu_lfsr (SPEC 5.2, 5.3).
// The Go test passes WIDTH, SEED and TAPS (the Galois toggle mask from
// blocks/lfsr.Taps) as top-level overrides. Checks: reset loads SEED; en
// low holds the state; each enabled step is the Galois step; the state is
// never zero; and, when CHECK_PERIOD is 1, the state returns to SEED after
// exactly 2^WIDTH-1 steps and not before.
// Ends with "PASS" or stops with $fatal after printing "FAIL: <what>".

`default_nettype none

module tb_uvmmu_lfsr_directed #(
  parameter WIDTH = 32,
  parameter [WIDTH-1:0] SEED = 1,
  parameter [WIDTH-1:0] TAPS = 1,
  parameter CHECK_PERIOD = 0,
  parameter STEPS = 10000
);
  reg clk;
  reg rst;
  reg en;
  wire [WIDTH-1:0] state;
  reg [WIDTH-1:0] expected;
  integer i;

  uvmmu_lfsr #(.WIDTH(WIDTH), .SEED(SEED)) dut (.clk(clk), .rst(rst), .en(en), .state(state));

  task tick;
    begin
      #4 clk = 1'b1;
      #5 clk = 1'b0;
      #1;
    end
  endtask

  task fail(input [8*48-1:0] what);
    begin
      $display("FAIL: %0s (state=%h expected=%h)", what, state, expected);
      $fatal(1, "FAIL");
    end
  endtask

  initial begin
    clk = 1'b0;
    rst = 1'b1;
    en = 1'b1;
    expected = SEED;
    #1;
    tick;
    rst = 1'b0;
    if (state !== SEED) fail("reset does not load SEED");

    en = 1'b0;
    for (i = 0; i < 5; i = i + 1) begin
      tick;
      if (state !== SEED) fail("state moved with en low");
    end

    en = 1'b1;
    for (i = 0; i < STEPS; i = i + 1) begin
      expected = {1'b0, expected[WIDTH-1:1]} ^ (expected[0] ? TAPS : {WIDTH{1'b0}});
      tick;
      if (state !== expected) fail("enabled step is not the Galois step");
      if (state == {WIDTH{1'b0}}) fail("state reached zero");
      if (CHECK_PERIOD != 0 && state == SEED && i + 1 < (1 << WIDTH) - 1) fail("period shorter than 2^WIDTH-1");
    end
    if (CHECK_PERIOD != 0 && state !== SEED) fail("state is not SEED after 2^WIDTH-1 steps");

    rst = 1'b1;
    tick;
    rst = 1'b0;
    if (state !== SEED) fail("reset after running does not load SEED");

    $display("PASS");
    $finish;
  end
endmodule

`default_nettype wire
