// Command area synthesizes every emitted module with Yosys and prints cell
// counts, transistors, NAND2-equivalents, flip-flops, logic depth and an
// area estimate, the analytic area of the SRAM macros, and the per-operation
// latencies measured on the Go models (tb/area.Command; uvmsim area is the
// same report).
//
//	go run ./tb/cmd/area                       generic flow, all modules
//	go run ./tb/cmd/area --top uvmmu_dcq       one module
//	go run ./tb/cmd/area --liberty my.lib      also map to a Liberty library
//	go run ./tb/cmd/area --json area.json      also write the report as JSON
package main

import (
	"errors"
	"fmt"
	"os"

	flag "github.com/spf13/pflag"

	"github.com/uvmmu/uvmmu/tb/area"
)

func main() {
	err := area.Command("area", os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, new(area.UsageError)):
		fmt.Fprintln(os.Stderr, "area:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "area:", err)
		os.Exit(1)
	}
}
