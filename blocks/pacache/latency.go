package pacache

import (
	"fmt"

	"github.com/uvmmu/uvmmu/rtl"
)

// OpLatency is the measured timing of one kind of request.
type OpLatency struct {
	Operation string
	// Response is the number of cycles from the cycle the request is
	// accepted to the cycle its response is on resp.
	Response int
	// Occupancy is the number of cycles from the cycle the request is
	// accepted to the first cycle req_ready is high again: 1 for a
	// request that does not hold the next one back.
	Occupancy int
}

// MeasureLatency runs the Go model against a behavioural PA-Table with
// the given timing and measures each kind of request: a hit, a miss whose
// record is not in the PA-Table, a miss whose record is, a miss that evicts
// a dirty line, and a hit and a miss that reach the threshold. cfg needs a
// Threshold of at least 3 for every case to exist.
func MeasureLatency(cfg Config, table TableConfig) ([]OpLatency, error) {
	if cfg.Threshold < 3 {
		return nil, fmt.Errorf("pacache: latency measurement needs Threshold >= 3, got %d", cfg.Threshold)
	}
	s := rtl.New(rtl.Options{Checked: true})
	p := NewPorts(s, "pac", cfg)
	if _, err := New(s, "pac", cfg, p); err != nil {
		return nil, err
	}
	t, err := NewTable(s, "pat", table, p)
	if err != nil {
		return nil, err
	}
	s.Reset()
	measure := func(r Request) (OpLatency, error) {
		p.Req.Valid.Set(true)
		p.Req.Set(r)
		for !p.Req.Ready.Get() {
			if err := s.Step(); err != nil {
				return OpLatency{}, err
			}
		}
		accepted := s.Cycle()
		if err := s.Step(); err != nil {
			return OpLatency{}, err
		}
		p.Req.Valid.Set(false)
		var l OpLatency
		for l.Response == 0 || l.Occupancy == 0 {
			if n := int(s.Cycle() - accepted); n > table.Latency+1000 {
				return l, fmt.Errorf("pacache: no response %d cycles after request %+v", n, r)
			}
			if p.Resp.Valid.Get() && l.Response == 0 {
				l.Response = int(s.Cycle() - accepted)
			}
			if p.Req.Ready.Get() && l.Occupancy == 0 {
				l.Occupancy = int(s.Cycle() - accepted)
			}
			if err := s.Step(); err != nil {
				return l, err
			}
		}
		for p.TblReq.Valid.Get() {
			if err := s.Step(); err != nil {
				return l, err
			}
		}
		return l, nil
	}
	// Pages in set 0, one per way plus one.
	page := func(i int) uint64 { return cfg.VPN(uint64(i+1), 0) }
	t.Store(cfg.VPN(1, 1), Record{})
	t.Store(cfg.VPN(2, 1), Record{Count: uint8(cfg.Threshold - 2)})
	var rows []OpLatency
	steps := []struct {
		name string
		req  Request
	}{
		{"miss, no PA-Table record", Request{VPN: page(0)}},
		{"hit", Request{VPN: page(0)}},
		{"miss, PA-Table record found", Request{VPN: cfg.VPN(1, 1)}},
		{"miss reaching the threshold (delete)", Request{VPN: cfg.VPN(2, 1)}},
	}
	for _, st := range steps {
		l, err := measure(st.req)
		if err != nil {
			return nil, err
		}
		l.Operation = st.name
		rows = append(rows, l)
	}
	for i := 1; i < cfg.Ways; i++ {
		if _, err := measure(Request{VPN: page(i)}); err != nil {
			return nil, err
		}
	}
	l, err := measure(Request{VPN: page(cfg.Ways)})
	if err != nil {
		return nil, err
	}
	l.Operation = "miss evicting a dirty line (write-back)"
	rows = append(rows, l)
	for i := 2; i < cfg.Threshold; i++ {
		if _, err := measure(Request{VPN: page(cfg.Ways)}); err != nil {
			return nil, err
		}
	}
	l, err = measure(Request{VPN: page(cfg.Ways)})
	if err != nil {
		return nil, err
	}
	l.Operation = "hit reaching the threshold (delete)"
	return append(rows, l), nil
}
