// Command vgen emits the project's Verilog modules from the Go generator.
//
//	vgen -out verilog/rtl               write every module at its default parameters
//	vgen -check verilog/rtl             exit 1 with a summary if the committed files differ
//	vgen -list                          list the modules and their parameters
//	vgen -top uvmmu_dcq -set DEPTH=128 -set THRESHOLD=100 -out /tmp/rtl
//	                                    write one module with other parameter defaults (the body is
//	                                    the same: a design may instead set the parameters at instantiation)
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/uvmmu/uvmmu/verilog/gen"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory to write the emitted modules into")
	check := fs.String("check", "", "directory of committed modules to compare with the generator's output")
	list := fs.Bool("list", false, "list the registered modules and their parameters")
	top := fs.String("top", "", "emit only this module (with -out)")
	var sets multiFlag
	fs.Var(&sets, "set", "NAME=VALUE parameter override for -top (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "vgen:", err)
		return 2
	}
	switch {
	case *list:
		for _, e := range gen.Emitters() {
			fmt.Fprintf(stdout, "%s: %s\n", e.Name, e.Doc)
			for _, p := range e.Params {
				fmt.Fprintf(stdout, "  %-14s default %-8d range %s  %s\n", p.Name, p.Default, p.RangeText(), p.Doc)
			}
		}
		return 0
	case *check != "":
		if *top != "" || len(sets) > 0 {
			return fail(fmt.Errorf("-check compares the default modules; it takes no -top or -set"))
		}
		files, err := gen.DefaultFiles()
		if err != nil {
			return fail(err)
		}
		diffs, err := gen.Compare(*check, files)
		if err != nil {
			return fail(err)
		}
		if len(diffs) == 0 {
			fmt.Fprintf(stdout, "vgen: %d modules in %s match the generator\n", len(files), *check)
			return 0
		}
		fmt.Fprintf(stderr, "vgen: %d of the files in %s differ from the generator's output:\n", len(diffs), *check)
		for _, d := range diffs {
			fmt.Fprintln(stderr, "  "+strings.ReplaceAll(d.String(), "\n", "\n  "))
		}
		fmt.Fprintf(stderr, "regenerate with: go run ./verilog/cmd/vgen -out %s\n", *check)
		return 1
	case *out != "" && *top != "":
		e, err := gen.Lookup(*top)
		if err != nil {
			return fail(err)
		}
		values, err := gen.ParseValues(sets)
		if err != nil {
			return fail(err)
		}
		text, err := e.Text(values)
		if err != nil {
			return fail(err)
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(filepath.Join(*out, e.Name+".v"), text, 0o644); err != nil {
			return fail(err)
		}
		return 0
	case *out != "":
		if len(sets) > 0 {
			return fail(fmt.Errorf("-set needs -top: verilog/rtl holds the default modules only"))
		}
		files, err := gen.DefaultFiles()
		if err != nil {
			return fail(err)
		}
		if err := gen.WriteDir(*out, files); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "vgen: wrote %d modules to %s\n", len(files), *out)
		return 0
	}
	fs.Usage()
	return 2
}
