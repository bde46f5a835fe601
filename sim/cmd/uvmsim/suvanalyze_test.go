package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSUVAnalyzePrintsClasses(t *testing.T) {
	code, out, stderr := run("suv-analyze", "--workload", "fdtd", "--kernels")
	require.Equal(t, exitOK, code, stderr)
	// _fict_[t] is read at the host iteration t: Iterative, 4 B per step.
	assert.Regexp(t, regexp.MustCompile(`(?m)^_fict_ +20 I,D +300 +20 +4 +5$`), out)
	assert.Regexp(t, regexp.MustCompile(`(?m)^hz +5760000 D `), out)
	assert.Regexp(t, regexp.MustCompile(`(?m)^14 +fdtd_step3_kernel +hz +Density `), out)
}

// The Table I rows: the paper's types, the analysis's, and the
// structures'.
func TestSUVAnalyzeTableI(t *testing.T) {
	code, out, stderr := run("suv-analyze", "--table")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "| DTG | doitgen | I, D | I, D | yes | A I,D; C4 D; sum I,D |\n")
	assert.Contains(t, out, "| GMM | gemm | D, T | D, T | yes | A T; B D; C T |\n")
	assert.Contains(t, out, "| MM | mm | D, T | D | no | A D; B D; C D |\n")
	assert.Equal(t, 2+12, len(regexp.MustCompile(`(?m)^\|`).FindAllString(out, -1)), "a header, a rule and 12 rows")
}

func TestSUVAnalyzeErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"suv-analyze"}, "--workload is required"},
		{[]string{"suv-analyze", "--workload", "hotspotx"}, `"hotspotx" has no static description`},
		{[]string{"suv-analyze", "--workload", "ra", "--sms", "0"}, "GPU.SMs = 0, must be >= 1"},
		{[]string{"suv-analyze", "--workload", "ra", "--scale", "-1"}, "Params.Scale = -1 out of range"},
	} {
		code, _, stderr := run(tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, stderr, tc.msg, tc.args)
	}
}
