package tb

import (
	"fmt"

	"github.com/uvmmu/uvmmu/tb/cosim"
	"github.com/uvmmu/uvmmu/verilog/gen"
)

// cosimPorts are the ports of the emitted module top at values, as the
// generator declares them (verilog/gen), without clk: the port list a DUT
// adapter presents, so that the adapters, the module headers and a user's
// wrapper share one description. validBy marks payload outputs compared
// only while the named valid output is high. The values are a DUT's own
// configuration, already valid, so an error is a programming error.
func cosimPorts(top string, values gen.Values, validBy map[string]string) []cosim.Port {
	e, err := gen.Lookup(top)
	if err != nil {
		panic(err)
	}
	v, err := e.Check(values)
	if err != nil {
		panic(fmt.Sprintf("%s: the DUT's configuration is not a legal parameter point: %v", top, err))
	}
	var ports []cosim.Port
	for _, p := range e.Ports {
		if p.Name == "clk" {
			continue
		}
		dir := cosim.In
		if p.Dir == gen.Out {
			dir = cosim.Out
		}
		ports = append(ports, cosim.Port{Name: p.Name, Width: p.BitsAt(v), Dir: dir, ValidBy: validBy[p.Name]})
	}
	return ports
}
