package tb

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// rtlDir is the committed RTL, relative to this package.
const rtlDir = "../verilog/rtl"

func TestCommittedRTLMatchesGenerator(t *testing.T) {
	files, err := gen.DefaultFiles()
	require.NoError(t, err)
	diffs, err := gen.Compare(rtlDir, files)
	require.NoError(t, err)
	var msgs []string
	for _, d := range diffs {
		msgs = append(msgs, d.String())
	}
	require.Empty(t, msgs, "regenerate with: go run ./verilog/cmd/vgen -out verilog/rtl")
}

// TestLintCommittedRTL runs both linters on every committed module, each
// with the whole directory as its library so instantiated modules resolve.
func TestLintCommittedRTL(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(rtlDir, "*.v"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			text, err := os.ReadFile(path)
			require.NoError(t, err)
			lintSources(t, []cosim.Source{{Name: filepath.Base(path), Text: text}})
		})
	}
}

// lintSources lints the first source as the top, with the others and the
// committed RTL as libraries: Verilator -Wall and Icarus -Wall must print
// nothing at all.
func lintSources(t *testing.T, srcs []cosim.Source) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for _, s := range srcs {
		p := filepath.Join(dir, s.Name)
		require.NoError(t, os.WriteFile(p, s.Text, 0o644))
		files = append(files, p)
	}
	lib, err := filepath.Abs(rtlDir)
	require.NoError(t, err)
	top := strings.TrimSuffix(srcs[0].Name, ".v")
	for _, tool := range []struct {
		sim  cosim.Simulator
		argv []string
	}{
		{cosim.Verilator, append([]string{"verilator", "--lint-only", "-Wall", "--top-module", top, "-y", dir, "-y", lib}, files...)},
		{cosim.Icarus, append([]string{"iverilog", "-g2012", "-Wall", "-s", top, "-y", dir, "-y", lib, "-o", filepath.Join(dir, "lint.vvp")}, files...)},
	} {
		if missing := tool.sim.Available(); missing != nil {
			// A missing linter must not skip the co-simulation that called
			// this under the other simulator, so it is only logged here.
			if os.Getenv(cosim.RequireEnv) == "1" {
				t.Fatalf("%v (%s=1 makes this a failure)", missing, cosim.RequireEnv)
			}
			t.Logf("lint skipped: %v", missing)
			continue
		}
		out, err := exec.Command(tool.argv[0], tool.argv[1:]...).CombinedOutput()
		require.NoError(t, err, "%s:\n%s", strings.Join(tool.argv, " "), out)
		require.Empty(t, strings.TrimSpace(string(out)), "%s printed warnings", tool.argv[0])
	}
}

// lintUser lints a user's instantiation of e at values (gen.Emitter.Wrapper)
// with the committed RTL as the library: both linters must print nothing.
func lintUser(t *testing.T, e gen.Emitter, values gen.Values) {
	t.Helper()
	text, err := e.Wrapper(values)
	require.NoError(t, err)
	lintSources(t, []cosim.Source{{Name: "user_" + e.Name + ".v", Text: text}})
}
