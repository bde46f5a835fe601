package experiment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/policy"
	"github.com/uvmmu/uvmmu/sim/workload"
)

// Spec is one simulation: the run section of the configuration plus the
// key=value overrides applied over the base configuration before it.
type Spec struct {
	Workload   string   `json:"workload"`
	Policy     string   `json:"policy"`
	OversubPct int      `json:"oversub_pct"`
	Scale      float64  `json:"scale"`
	Seed       uint64   `json:"seed"`
	Sets       []string `json:"sets,omitempty"`
	// Latencies keeps the policy's per-migration latency samples
	// (MigrationLatencyRecorder); only the runs that plot them hold them.
	Latencies bool `json:"latencies,omitempty"`
}

// Key identifies a spec: two specs with the same key are the same run
// (whether it keeps latency samples does not change the run).
func (s Spec) Key() string {
	return strings.Join(append([]string{s.Workload, s.Policy, strconv.Itoa(s.OversubPct),
		strconv.FormatFloat(s.Scale, 'g', -1, 64), strconv.FormatUint(s.Seed, 10)}, s.Sets...), "|")
}

// String names the spec for progress and error messages.
func (s Spec) String() string {
	str := fmt.Sprintf("%s/%s/%d%%", s.Workload, s.Policy, s.OversubPct)
	if len(s.Sets) > 0 {
		str += " " + strings.Join(s.Sets, " ")
	}
	return str
}

// Config layers the spec over base: the overrides first, then the run
// fields, then validation. The error names the offending key or field and
// its allowed values.
func (s Spec) Config(base config.Config) (config.Config, error) {
	cfg := base
	for _, set := range s.Sets {
		if err := cfg.Set(set); err != nil {
			return cfg, err
		}
	}
	if err := workload.CheckName(s.Workload); err != nil {
		return cfg, err
	}
	if !slices.Contains(policy.Names(), s.Policy) {
		return cfg, fmt.Errorf("policy %q is not registered; allowed: %s", s.Policy, strings.Join(policy.Names(), ", "))
	}
	cfg.Run.Workload, cfg.Run.Policy = s.Workload, s.Policy
	cfg.Run.OversubPct, cfg.Run.Scale, cfg.Run.Seed = s.OversubPct, s.Scale, s.Seed
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// Dedupe drops repeated specs, keeping the first of each key in order;
// the kept spec keeps latency samples if any of its repeats asked for them.
func Dedupe(specs []Spec) []Spec {
	index := make(map[string]int, len(specs))
	var out []Spec
	for _, s := range specs {
		k := s.Key()
		if i, ok := index[k]; ok {
			out[i].Latencies = out[i].Latencies || s.Latencies
			continue
		}
		index[k] = len(out)
		out = append(out, s)
	}
	return out
}

// Grid is the cross product workloads x policies x oversubscription ratios,
// in that nesting order (the workload varies slowest), at one scale and
// seed with the same overrides.
func Grid(workloads, policies []string, oversub []int, scale float64, seed uint64, sets []string) []Spec {
	var specs []Spec
	for _, w := range workloads {
		for _, p := range policies {
			for _, r := range oversub {
				specs = append(specs, Spec{Workload: w, Policy: p, OversubPct: r, Scale: scale, Seed: seed, Sets: sets})
			}
		}
	}
	return specs
}
