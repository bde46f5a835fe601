package experiment

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Host is the machine and build a command ran on, kept with its results
// so that a table states where its speed figures come from.
type Host struct {
	// Commit is the uvmmu revision the binary was built from ("+dirty"
	// when its tree had changes), empty when the build carries none.
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go"`
	CPU       string `json:"cpu,omitempty"` // /proc/cpuinfo's model name
	CPUs      int    `json:"cpus"`
	// LoadAverage is /proc/loadavg's 1, 5 and 15 minute load when the
	// command started: other work on the machine slows the wall time.
	LoadAverage string `json:"load_average,omitempty"`
}

// CurrentHost describes this machine and binary.
func CurrentHost() Host {
	h := Host{GoVersion: runtime.Version(), CPUs: runtime.NumCPU()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				rev = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "+dirty"
			}
		}
		if rev != "" {
			h.Commit = rev[:min(len(rev), 12)] + dirty
		}
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			h.LoadAverage = strings.Join(f[:3], " ")
		}
	}
	return h
}
