// Package rtl is the modeling kernel every hardware block is written on:
// clocked registers, ready/valid ports, FIFOs, latency channels, SRAM macros,
// the lockstep scheduler with idle skipping, a checked mode for modeling
// errors, and VCD tracing. It knows nothing about GPUs.
//
// # Cycle semantics
//
// A Sim advances one global clock. Each executed cycle has three phases:
//
//  1. Drive: every awake block sets its output wires from its own registers
//     only (Moore outputs). Testbench code may also set input wires between
//     cycles; those writes belong to the cycle about to be evaluated.
//  2. Eval: every awake block reads its input wires and its registers' current
//     values (Q) and writes next values (D) with Reg.Set.
//  3. Commit: every register written in Eval takes its D value at once.
//
// Because outputs depend only on registers and registers change only at
// commit, the order in which blocks are driven or evaluated cannot change any
// result; the test suite proves it by shuffling the order (Sim.Shuffle).
//
// A Drive that would repeat the last one is skipped: a block whose
// registers and SRAMs took no write since its last Drive, whose SRAM reads
// land later, and whose last Drive did not read the time (Base.Now, as a
// delay line's head does) would set the same values again. Checked mode
// runs such a Drive anyway and reports a modeling error if it changes a
// wire, which catches a Drive that reads state other than registers.
//
// After Reset and after every Step the Drive phase of the next cycle has
// already run, so a testbench sees the current cycle's outputs, sets the
// inputs for that cycle, and calls Step to evaluate and commit it. This is
// the same loop a Verilator C++ testbench runs.
//
// # Idle skipping
//
// A block that wrote no register during Eval, read no time, and holds no
// in-flight SRAM read is at a fixed point: with the same inputs it would do
// the same nothing next cycle. The kernel puts such a block to sleep until
// one of its input wires changes value. A block whose behaviour depends on
// time (it called Base.Now) stays awake unless it calls Base.SleepUntil with
// the cycle at which it next has work. When every block sleeps, the clock
// jumps to the earliest wake time. Results are bit-identical with skipping on
// and off (Options.SkipIdle), which the test suite also proves.
//
// # Storage and commit
//
// A block's scalar registers of one type are allocated in contiguous
// chunks and a Vec's elements in one slice. A register's first write in a
// cycle records its address and the value written (D) in its block's
// dirty list for the size of its value; at the clock edge each evaluated
// block walks its lists once, storing each value in its register's Q
// (commit.go). A register keeps Q, a dirty flag and what the slow paths
// need to find its block and description: 24 bytes for a 64-bit value.
// Nothing is allocated per cycle.
//
// # Parallel evaluation
//
// With Options.Threads above one, the blocks of each Eval phase are spread
// over helper goroutines (see parallel.go). A block's Eval writes only its
// own state, so the result is the serial one bit for bit; the test suite
// compares traces at several thread counts. Drive and commit stay serial.
//
// # Checked mode
//
// With Options.Checked the kernel reports, as the error returned by Step, Run
// and RunUntil: a register written twice in one cycle, a register written
// outside Eval, a wire driven by two different blocks, a wire driven in Eval,
// a wire read during Drive (an output that is not Moore), and a Drive that
// changes a wire though the block's registers did not change.
package rtl
