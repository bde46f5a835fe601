// Package tb checks the emitted Verilog against the Go blocks. It holds the
// DUT adapters that present a Go block through the ports of its Verilog
// module (for tb/cosim), the seeded random legal stimulus for each, and the
// tests that run on `go test ./tb/...`:
//
//   - every committed module in verilog/rtl matches the generator and passes
//     `verilator --lint-only -Wall` and `iverilog -g2012 -Wall` with no
//     output at all;
//   - every top is co-simulated against its Go model: at its default
//     parameters for 100,000 cycles under Icarus and Verilator, and at two
//     other parameter sets (regenerated and linted first) for 20,000 cycles
//     under Icarus, since a Verilator build costs tens of seconds; with
//     UVMMU_COSIM_CYCLES set (the long run uses 10,000,000) every set runs
//     that long under both simulators;
//   - the directed testbenches in tb/directed run the corner cases, by the
//     same rule for simulators.
//
// Missing simulators skip the tests with the Debian package to install,
// unless UVMMU_REQUIRE_SIM=1.
package tb
