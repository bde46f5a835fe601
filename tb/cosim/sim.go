package cosim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Source is one Verilog file given to a simulator.
type Source struct {
	Name string // base file name, such as uvmmu_dcq.v
	Text []byte
}

// Simulator builds Verilog sources into a runnable simulation.
type Simulator struct {
	// Name is "icarus" or "verilator".
	Name string
	// Package is the Debian package that provides the simulator.
	Package string
	tools   []string
	// build compiles files in dir; argv is the command that runs a build
	// kept in dir.
	build func(dir, top string, params, files []string, trace bool) error
	argv  func(dir string) []string
	// versionFlag prints the simulator's version banner.
	versionFlag string
	// needsTraceBuild is true when only a separate build can dump VCD.
	needsTraceBuild bool
}

// Icarus is Icarus Verilog: iverilog -g2012 to compile, vvp to run.
var Icarus = Simulator{Name: "icarus", Package: "iverilog", tools: []string{"iverilog", "vvp"}, build: buildIcarus,
	argv:        func(dir string) []string { return []string{"vvp", "-n", filepath.Join(dir, "sim.vvp")} },
	versionFlag: "-V"}

// Verilator builds a C++ simulation with verilator --binary (at most two
// compile jobs) and runs the binary.
var Verilator = Simulator{Name: "verilator", Package: "verilator", tools: []string{"verilator"}, build: buildVerilator,
	argv:        func(dir string) []string { return []string{filepath.Join(dir, "obj", "sim")} },
	versionFlag: "--version", needsTraceBuild: true}

// VerilatorSpeed builds a Verilator model for speed measurement rather
// than checking: verilator --cc --exe -O3 --x-assign fast --x-initial fast
// with a C++ main from Harness among the sources, and the C++ compiled
// with -O3. Its executable is run with Executable.RunSpeed.
var VerilatorSpeed = Simulator{Name: "verilator-speed", Package: "verilator", tools: []string{"verilator"}, build: buildVerilatorSpeed,
	argv:        func(dir string) []string { return []string{filepath.Join(dir, "obj", "speed")} },
	versionFlag: "--version"}

// Simulators lists both, in the order tests run them.
var Simulators = []Simulator{Icarus, Verilator}

// RequireEnv is the environment variable that turns a missing simulator
// from a skipped test into a failure (CI sets it to 1).
const RequireEnv = "UVMMU_REQUIRE_SIM"

// Available reports why the simulator cannot run, or nil.
func (s Simulator) Available() error {
	for _, t := range s.tools {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("%s not found on PATH: install the Debian package %s", t, s.Package)
		}
	}
	return nil
}

// Require skips t when the simulator is missing, or fails it when
// UVMMU_REQUIRE_SIM=1.
func (s Simulator) Require(t testing.TB) {
	t.Helper()
	RequireTool(t, s.Available())
}

// RequireTool skips or fails t for a missing tool, as Simulator.Require.
func RequireTool(t testing.TB, missing error) {
	t.Helper()
	if missing == nil {
		return
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%v (%s=1 makes this a failure)", missing, RequireEnv)
	}
	t.Skipf("%v", missing)
}

// buildIcarus compiles with iverilog; Icarus dumps VCD without a special
// build, so trace is ignored.
func buildIcarus(dir, top string, params, files []string, _ bool) error {
	args := []string{"-g2012", "-Wall", "-s", top, "-o", filepath.Join(dir, "sim.vvp")}
	for _, p := range params {
		args = append(args, "-P"+top+"."+p)
	}
	args = append(args, files...)
	if msg, err := exec.Command("iverilog", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("iverilog %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return nil
}

// buildVerilator builds the testbench with Verilator's --binary options
// (--main --exe --timing) and at most two compile jobs. The C++ is compiled
// without optimisation: the builds dominate the test time, and the
// simulations they run are short. Only a traced build can dump VCD, and
// tracing slows the build, so it is built on demand.
func buildVerilator(dir, top string, params, files []string, trace bool) error {
	args := []string{"--cc", "--main", "--exe", "--timing", "--top-module", top, "-o", "sim"}
	if trace {
		args = append(args, "--trace")
	}
	return verilate(dir, top, args, params, files, []string{"OPT_FAST=-O0", "OPT_SLOW=-O0", "OPT_GLOBAL=-O0"})
}

// buildVerilatorSpeed builds the optimised model and its harness. Verilator's
// own -O3 and the C++ compiler's -O3 for the model's hot code (OPT_FAST) are
// the settings of the speed comparison; the rarely run setup code (OPT_SLOW)
// is compiled at -O1 to save build time.
func buildVerilatorSpeed(dir, top string, params, files []string, _ bool) error {
	args := []string{"--cc", "--exe", "-O3", "--x-assign", "fast", "--x-initial", "fast", "--top-module", top, "-o", "speed"}
	return verilate(dir, top, args, params, files, []string{"OPT_FAST=-O3", "OPT_SLOW=-O1", "OPT_GLOBAL=-O2"})
}

// verilate runs verilator with args into dir/obj, then make with at most two
// jobs and makeVars. Verilator's runtime library (verilated.o and the other
// objects its makefile lists as VM_GLOBAL_*) is the same for every design
// built with the same Verilator, make variables and VM_* settings, and
// compiling it takes about half of a small build, so it is compiled once,
// kept in CacheDir, and copied into later builds; make then finds those
// objects newer than their sources and the makefile and keeps them.
func verilate(dir, top string, args, params, files, makeVars []string) error {
	obj := filepath.Join(dir, "obj")
	args = append(args, "-Mdir", obj)
	for _, p := range params {
		args = append(args, "-G"+p)
	}
	args = append(args, files...)
	cmd := exec.Command("verilator", args...)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("verilator %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	prefix := "V" + top
	classes, err := os.ReadFile(filepath.Join(obj, prefix+"_classes.mk"))
	if err != nil {
		return err
	}
	settings, runtime := runtimeObjects(string(classes))
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", toolVersion("verilator", "--version"), strings.Join(makeVars, " "), settings)
	shared := filepath.Join(CacheDir(), "verilator-runtime-"+hex.EncodeToString(h.Sum(nil))[:16])
	reused := copyFiles(shared, obj, runtime) == nil
	mk := append([]string{"-C", obj, "-f", prefix + ".mk", "-j", "2"}, makeVars...)
	if msg, err := exec.Command("make", mk...).CombinedOutput(); err != nil {
		return fmt.Errorf("make %s: %v\n%s", strings.Join(mk, " "), err, msg)
	}
	if !reused {
		tmp, err := os.MkdirTemp(CacheDir(), filepath.Base(shared)+".build-")
		if err != nil {
			return err
		}
		if err := copyFiles(obj, tmp, runtime); err != nil || os.Rename(tmp, shared) != nil {
			os.RemoveAll(tmp)
		}
	}
	return nil
}

// runtimeObjects reads a Verilator _classes.mk: the VM_* settings that
// shape how the runtime is compiled (one "NAME = VALUE" line each) and the
// runtime's object files (the VM_GLOBAL_FAST and VM_GLOBAL_SLOW lists).
func runtimeObjects(classes string) (settings string, objects []string) {
	var set []string
	inGlobal := false
	for _, line := range strings.Split(classes, "\n") {
		switch {
		case strings.HasPrefix(line, "VM_GLOBAL_"):
			inGlobal = true
		case inGlobal && strings.HasPrefix(line, "\t"):
			objects = append(objects, strings.TrimSpace(strings.TrimSuffix(line, "\\"))+".o")
		case strings.HasPrefix(line, "VM_") && strings.Contains(line, " = "):
			set = append(set, line)
			inGlobal = false
		default:
			inGlobal = false
		}
	}
	return strings.Join(set, "\n"), objects
}

// copyFiles copies the named files from one directory to another; the
// copies get the current time as their modification time.
func copyFiles(from, to string, names []string) error {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, n), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Executable is a built simulation.
type Executable struct {
	Sim  string
	Top  string
	argv []string
	// traced builds the same design able to dump VCD (itself for Icarus).
	traced func() (*Executable, error)
}

var (
	buildMu  sync.Mutex
	versions sync.Map
)

// version is the simulator's version banner, part of the build cache key
// so an upgraded simulator never reuses an old build.
func (s Simulator) version() string { return toolVersion(s.tools[0], s.versionFlag) }

// toolVersion is the first line tool prints with flag, remembered per tool.
func toolVersion(tool, flag string) string {
	if v, ok := versions.Load(tool); ok {
		return v.(string)
	}
	out, _ := exec.Command(tool, flag).Output()
	line, _, _ := strings.Cut(string(out), "\n")
	versions.Store(tool, line)
	return line
}

// CacheDir is where builds are kept and reused: $UVMMU_COSIM_CACHE, or
// uvmmu-cosim under the user's cache directory.
func CacheDir() string {
	if d := os.Getenv("UVMMU_COSIM_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "uvmmu-cosim")
	}
	return filepath.Join(os.TempDir(), "uvmmu-cosim")
}

// Build compiles sources with top as the top module. params override
// parameters of the top module ("NAME=VALUE", VALUE a Verilog constant such
// as 128 or 61'h1f). A build with the
// same simulator, top, parameters and source texts is reused from CacheDir,
// so a Verilator binary is compiled once and then run on any number of
// vector sets.
func (s Simulator) Build(top string, params []string, sources []Source) (*Executable, error) {
	e, err := s.buildCached(top, params, sources, false)
	if err != nil {
		return nil, err
	}
	e.traced = func() (*Executable, error) {
		if !s.needsTraceBuild {
			return e, nil
		}
		return s.buildCached(top, params, sources, true)
	}
	return e, nil
}

func (s Simulator) buildCached(top string, params []string, sources []Source, trace bool) (*Executable, error) {
	if err := s.Available(); err != nil {
		return nil, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%t\x00%s\x00", s.Name, s.version(), top, trace, strings.Join(params, "\x00"))
	for _, src := range sources {
		fmt.Fprintf(h, "%s\x00%d\x00", src.Name, len(src.Text))
		h.Write(src.Text)
	}
	key := s.Name + "-" + top + "-" + hex.EncodeToString(h.Sum(nil))[:16]
	dir := filepath.Join(CacheDir(), key)
	done := filepath.Join(dir, "done")

	buildMu.Lock()
	defer buildMu.Unlock()
	if _, err := os.Stat(done); err == nil {
		return &Executable{Sim: s.Name, Top: top, argv: s.argv(dir)}, nil
	}
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		return nil, err
	}
	// Build beside the final directory and rename it into place, so a
	// concurrent test process never runs a half-built simulation.
	tmp, err := os.MkdirTemp(CacheDir(), key+".build-")
	if err != nil {
		return nil, err
	}
	files := make([]string, len(sources))
	for i, src := range sources {
		files[i] = filepath.Join(tmp, src.Name)
		if err := os.WriteFile(files[i], src.Text, 0o644); err != nil {
			return nil, err
		}
	}
	if err := s.build(tmp, top, params, files, trace); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, statErr := os.Stat(done); statErr != nil {
			return nil, err
		}
	}
	return &Executable{Sim: s.Name, Top: top, argv: s.argv(dir)}, nil
}

// Run runs the simulation with plusargs ("vectors=...", "cycles=...") and
// returns its output. A non-zero exit is returned as an error together with
// the output.
func (e *Executable) Run(plusargs ...string) (string, error) {
	args := append([]string(nil), e.argv[1:]...)
	for _, p := range plusargs {
		args = append(args, "+"+p)
	}
	out, err := exec.Command(e.argv[0], args...).CombinedOutput()
	return string(out), err
}

// Check applies recorded vectors. On a mismatch it runs the simulation
// again up to the failing cycle with a VCD dump, keeps the VCD, and returns
// an error with the mismatch lines and the VCD path.
func (e *Executable) Check(v Vectors) error {
	out, runErr := e.Run("vectors="+v.Prefix, fmt.Sprintf("cycles=%d", v.Cycles))
	if runErr == nil && strings.Contains(out, fmt.Sprintf("PASS %d cycles", v.Cycles)) {
		return nil
	}
	var mismatches []string
	failCycle := uint64(0)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "cycle ") {
			mismatches = append(mismatches, line)
			fmt.Sscanf(line, "cycle %d", &failCycle)
		}
	}
	if len(mismatches) == 0 {
		return fmt.Errorf("%s: %s did not complete (%v):\n%s", e.Sim, e.Top, runErr, out)
	}
	keep, err := os.MkdirTemp("", "uvmmu-cosim-fail-")
	if err != nil {
		return errors.Join(fmt.Errorf("%s: %s mismatch:\n%s", e.Sim, e.Top, strings.Join(mismatches, "\n")), err)
	}
	vcd := filepath.Join(keep, fmt.Sprintf("%s_%s.vcd", e.Top, e.Sim))
	traced, err := e.traced()
	if err != nil {
		vcd = "(no VCD: building a traced simulation failed: " + err.Error() + ")"
	} else {
		traced.Run("vectors="+v.Prefix, fmt.Sprintf("cycles=%d", failCycle+1), "vcd="+vcd)
		if _, statErr := os.Stat(vcd); statErr != nil {
			vcd = "(no VCD: the re-run wrote none: " + statErr.Error() + ")"
		}
	}
	return fmt.Errorf("%s: %s differs from the Go model:\n%s\nVCD of the run up to the failing cycle: %s",
		e.Sim, e.Top, strings.Join(mismatches, "\n"), vcd)
}
