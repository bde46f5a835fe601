package main

import (
	"io"

	"github.com/uvmmu/uvmmu/tb/area"
)

// areaCmd prints the Yosys area and logic-depth report of the emitted
// modules, the analytic SRAM estimates and the per-operation latencies of
// the Go models: the report of go run ./tb/cmd/area, from tb/area.
func areaCmd(args []string, stdout, stderr io.Writer) error {
	return area.Command("uvmsim area", args, stdout, stderr)
}
