package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/uvmmu/uvmmu/sim/config"
)

// TestValidateWritesEveryFile runs validate over no workloads: no
// simulation starts, and every file is still written with every row "not
// measured".
func TestValidateWritesEveryFile(t *testing.T) {
	dir := t.TempDir()
	p := testParams()
	p.Workloads = nil
	var stdout bytes.Buffer
	sum, err := RunExperiment(ValidateName, p, Options{Jobs: 1, Base: config.Default()}, dir, &stdout)
	require.NoError(t, err)
	require.NoError(t, sum.Failed)
	assert.Zero(t, sum.Runs)
	for _, f := range []string{ResultsCSV, ResultsJSON, ValidationFile, ValidationCSV, "fig1.csv", "fig4.json", "fig6.csv", "migration-latency.json",
		"fig1-reference.csv", "fig4-reference.json", "fig6-reference.csv", "migration-latency-reference.json"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	md, err := os.ReadFile(filepath.Join(dir, ValidationFile))
	require.NoError(t, err)
	assert.Equal(t, strings.Count(string(md), "| not measured / not measured |"), strings.Count(string(md), "\n| F")+strings.Count(string(md), "\n| M")+strings.Count(string(md), "\n| U")+strings.Count(string(md), "\n| I"))
	assert.Contains(t, stdout.String(), "| id | result | paper | paper's methodology | in-loop |")
	assert.Contains(t, stdout.String(), "[paper's methodology] fig4: Speedup over NVIDIA UM")
	assert.Contains(t, stdout.String(), "[in-loop] fig4: Speedup over NVIDIA UM")
}

func TestRunExperimentUnknownName(t *testing.T) {
	_, err := RunExperiment("fig2", testParams(), Options{Jobs: 1, Base: config.Default()}, t.TempDir(), &bytes.Buffer{})
	assert.ErrorContains(t, err, `experiment "fig2" unknown; allowed: fig1, fig4, fig5, fig6, migration-latency, incomplete, validate`)
}
