//go:build !unix

package experiment

// ProcessCPUSeconds cannot measure the process's CPU time here.
func ProcessCPUSeconds() (float64, bool) { return 0, false }
