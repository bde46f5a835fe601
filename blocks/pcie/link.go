package pcie

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// Link is the host link: two independent directions with the same
// configuration and the round trip split between them.
type Link struct {
	H2D *Direction // host to device, HostToDeviceDelay
	D2H *Direction // device to host, DeviceToHostDelay
	cfg Config
}

// Ports are the link's client ports, one set per direction.
type Ports struct {
	H2D, D2H DirectionPorts
}

// DirectionPorts are one direction's client ports: In[i] from the sender
// on port i, Out[i] to its receiver, i in 0..Config.Ports-1.
type DirectionPorts struct {
	In  []*rtl.Decoupled[Packet]
	Out []*rtl.Decoupled[Packet]
}

// NewPorts makes the wires of a link named path: path.h2d.in<i>,
// path.h2d.out<i>, path.d2h.in<i> and path.d2h.out<i> for each of the
// cfg.Ports ports.
func NewPorts(s *rtl.Sim, path string, cfg Config) Ports {
	return Ports{H2D: newDirectionPorts(s, path+".h2d", cfg.Ports), D2H: newDirectionPorts(s, path+".d2h", cfg.Ports)}
}

func newDirectionPorts(s *rtl.Sim, path string, ports int) DirectionPorts {
	var p DirectionPorts
	for i := range ports {
		p.In = append(p.In, rtl.NewDecoupledOf[Packet](s, fmt.Sprintf("%s.in%d", path, i), PacketBits))
		p.Out = append(p.Out, rtl.NewDecoupledOf[Packet](s, fmt.Sprintf("%s.out%d", path, i), PacketBits))
	}
	return p
}

// New builds a link under path (directions at path.h2d and path.d2h) on
// ports p, which has cfg.Ports ports per direction.
func New(s *rtl.Sim, path string, cfg Config, p Ports) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, d := range []DirectionPorts{p.H2D, p.D2H} {
		if len(d.In) != cfg.Ports || len(d.Out) != cfg.Ports {
			return nil, fmt.Errorf("pcie: %d input and %d output ports for a link of %d ports", len(d.In), len(d.Out), cfg.Ports)
		}
	}
	return &Link{
		H2D: newDirection(s, path+".h2d", cfg, cfg.HostToDeviceDelay(), p.H2D),
		D2H: newDirection(s, path+".d2h", cfg, cfg.DeviceToHostDelay(), p.D2H),
		cfg: cfg,
	}, nil
}

// Config returns the link's configuration.
func (l *Link) Config() Config { return l.cfg }

// Err reports the first malformed packet either direction dropped.
func (l *Link) Err() error {
	if err := l.H2D.Err(); err != nil {
		return err
	}
	return l.D2H.Err()
}
