package main

import (
	"errors"
	"io"

	"github.com/uvmmu/uvmmu/tb/area"
)

// areaCmd prints the Yosys area and logic-depth report of the emitted
// modules, the analytic SRAM estimates and the per-operation latencies of
// the Go models: the report of go run ./tb/cmd/area, from tb/area.
func areaCmd(args []string, stdout, stderr io.Writer) error {
	err := area.Command("uvmsim area", args, stdout, stderr)
	if ue := (area.UsageError{}); errors.As(err, &ue) {
		return usageError{ue}
	}
	return err
}
