package pcie

import "github.com/uvmmu/uvmmu/rtl"

// Link is the host link: two independent directions with the same
// configuration and the round trip split between them.
type Link struct {
	H2D *Direction // host to device, HostToDeviceDelay
	D2H *Direction // device to host, DeviceToHostDelay
	cfg Config
}

// New builds a link under path (directions at path.h2d and path.d2h).
func New(s *rtl.Sim, path string, cfg Config) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Link{
		H2D: newDirection(s, path+".h2d", cfg, cfg.HostToDeviceDelay()),
		D2H: newDirection(s, path+".d2h", cfg, cfg.DeviceToHostDelay()),
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
