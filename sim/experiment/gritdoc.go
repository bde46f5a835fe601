package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/uvmmu/uvmmu/sim/config"
	"github.com/uvmmu/uvmmu/sim/workload/characterize"
)

// GritFaultLatencyName sweeps the host driver's fault-handling latency
// (multigpu.fault_latency_us, which GRIT does not give) under the uniform
// schemes: the sensitivity of the scheme comparison to it.
const GritFaultLatencyName = "grit-fault-latency"

// GritFaultLatencies are the latencies in us grit-fault-latency sweeps
// unless told otherwise: none, two below the default, the default (20)
// and one above.
var GritFaultLatencies = []float64{0, 5, 20, 50}

// GritMarkdown is the file name of a GRIT experiment's Markdown table
// under its output directory: NAME.md, the text uvmsim experiment NAME
// --doc puts between the page's markers (DocMarkers).
func GritMarkdown(name string) string { return name + ".md" }

// GritSweep is what a GRIT experiment's output directory holds the runs
// of (its experiment.json): the command line, the runs' parameters, the
// machine and the speed. With the records in runs/ (or, for
// grit-characterize, results.json) it is all the experiment's Markdown
// is made from, so that a test regenerates the Markdown without
// simulating.
type GritSweep struct {
	Command     string    `json:"command"`      // the experiment's name
	CommandLine string    `json:"command_line"` // as it was typed, from "uvmsim"
	Workloads   []string  `json:"workloads"`
	Schemes     []string  `json:"schemes,omitempty"`
	LatenciesUs []float64 `json:"fault_latencies_us,omitempty"`
	// Base are the overrides of the defaults every run starts from
	// (Overrides: the preset and --set), Scale and Seed the workloads'.
	Base  map[string]string `json:"base"`
	Scale float64           `json:"scale"`
	Seed  uint64            `json:"seed"`
	// Placement is grit-characterize's thread-block placement.
	Placement *characterize.Placement `json:"placement,omitempty"`
	Host      Host                    `json:"host"`
	Speed     GritSpeed               `json:"speed"`
}

// GritSpeed is how long the command that stored the runs took.
type GritSpeed struct {
	// Simulated runs were simulated by the command; the others it read
	// back from records stored before.
	Simulated   int     `json:"simulated"`
	Jobs        int     `json:"jobs"`
	WallSeconds float64 `json:"wall_seconds"`
	// CPUSeconds is the process's user and system time, 0 when the
	// platform cannot measure it.
	CPUSeconds float64 `json:"cpu_seconds"`
}

// NewGritSweep describes the command name run with args (what follows
// "uvmsim experiment NAME") from base.
func NewGritSweep(name string, args []string, base *config.Config, workloads []string) GritSweep {
	line := []string{"uvmsim", "experiment", name}
	for _, a := range args {
		line = append(line, shellQuote(a))
	}
	return GritSweep{Command: name, CommandLine: strings.Join(line, " "), Workloads: workloads,
		Base: Overrides(base), Scale: base.Run.Scale, Seed: base.Run.Seed, Host: CurrentHost()}
}

// shellQuote quotes a for a POSIX shell when it needs it.
func shellQuote(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// BaseConfig is the configuration every run of the sweep starts from.
func (s *GritSweep) BaseConfig() (config.Config, error) {
	cfg := config.Default()
	if err := applyOverrides(&cfg, s.Base); err != nil {
		return cfg, err
	}
	cfg.Run.Scale, cfg.Run.Seed = s.Scale, s.Seed
	return cfg, cfg.Validate()
}

// Options are the sweep's runs, stored in (or read back from) dir.
func (s *GritSweep) Options(dir string, storedOnly bool) (GritOptions, error) {
	base, err := s.BaseConfig()
	return GritOptions{Base: base, Workloads: s.Workloads, Schemes: s.Schemes, LatenciesUs: s.LatenciesUs,
		Dir: dir, StoredOnly: storedOnly, Jobs: 1}, err
}

// WriteJSON writes s as experiment.json holds it.
func (s *GritSweep) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// SameRuns reports whether s and o describe the same runs (their command
// lines, machines and speeds aside).
func (s *GritSweep) SameRuns(o *GritSweep) bool {
	a, b := *s, *o
	a.CommandLine, a.Host, a.Speed = "", Host{}, GritSpeed{}
	b.CommandLine, b.Host, b.Speed = "", Host{}, GritSpeed{}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// ReadGritSweep reads dir/experiment.json.
func ReadGritSweep(dir string) (GritSweep, error) {
	var s GritSweep
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return s, nil
}

// gritMadeBy is the line under a GRIT table that says how it was made:
// the command line, the simulated system and the machine.
func gritMadeBy(w io.Writer, s *GritSweep, system string) {
	fmt.Fprintf(w, "Made by `%s` on %s. System: %s.\n\n", s.CommandLine, hostText(s.Host), system)
}

// hostText describes the build and machine of h.
func hostText(h Host) string {
	build := "uvmmu"
	if h.Commit != "" {
		build += " " + h.Commit
	}
	text := fmt.Sprintf("%s (%s), %d CPUs", build, h.GoVersion, h.CPUs)
	if h.CPU != "" {
		text += " (" + h.CPU + ")"
	}
	if h.LoadAverage != "" {
		text += ", load average " + h.LoadAverage + " at the start"
	}
	return text
}

// gritSystem describes the simulated multi-GPU system of cfg: its preset,
// the keys set apart from it, and the figures that decide the runs.
func gritSystem(cfg *config.Config) string {
	from := config.Default()
	preset := "the defaults"
	if p := Overrides(cfg)[presetKey]; p != "" {
		if err := from.ApplyPreset(p); err == nil {
			preset = "preset `" + p + "`"
		}
	}
	var set []string
	for _, k := range config.Keys() {
		if v := k.Value(cfg); v != k.Value(&from) && k.Name != presetKey && !slices.Contains(runKeys, k.Name) {
			set = append(set, k.Name+"="+setValue(&k, v))
		}
	}
	if len(set) > 0 {
		preset += " with " + strings.Join(set, ", ")
	}
	faults := fmt.Sprintf("faults in batches of up to %d at %s us per batch", cfg.MultiGPU.FaultBatch, num(cfg.MultiGPU.FaultLatencyUs))
	if cfg.MultiGPU.FaultFlow == "mgpusim" {
		faults = "faults one at a time without software latency (MGPUSim's flow)"
	}
	return fmt.Sprintf("%s: %d GPUs of %d SMs (%d warps each) at %d MHz, %s, "+
		"access-counter threshold %d, GPU memory %d%% of the footprint; workloads at scale %s, seed %d",
		preset, cfg.MultiGPU.GPUs, cfg.GPU.SMs, cfg.GPU.WarpsPerSM, cfg.GPU.ClockMHz, faults,
		cfg.MultiGPU.AccessThreshold, cfg.MultiGPU.MemoryPct, num(cfg.Run.Scale), cfg.Run.Seed)
}

// num formats v in the shortest form that reads back as v.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// gritRecordAt is the record of workload wi, latency li and scheme si in
// RunGritSchemes' order.
func gritRecordAt(recs []GritRecord, o *GritSweep, wi, li, si int) *GritRecord {
	i := (wi*max(len(o.LatenciesUs), 1)+li)*len(o.Schemes) + si
	if i >= len(recs) || recs[i].Result.Cycles == 0 {
		return nil
	}
	return &recs[i]
}

// gritCounters are the counts the scheme table shows for each scheme,
// the ones that explain its time (GRIT Section II-B).
func gritCounters(scheme string, r *GritRecord) string {
	if r == nil {
		return "n/a"
	}
	t := r.Result.Total
	all := t.LocalAccesses + t.RemoteAccesses
	remote := thousands(t.RemoteAccesses) + " / " + thousands(all)
	switch scheme {
	case "ot":
		return thousands(t.LocalFaults)
	case "ac":
		return strings.Join([]string{thousands(t.LocalFaults), thousands(t.Promotions), remote}, ", ")
	case "dup":
		return strings.Join([]string{thousands(t.LocalFaults), thousands(t.ProtectionFaults), thousands(t.ReplicasMade), thousands(t.ReplicasCollapse)}, ", ")
	}
	return strings.Join([]string{thousands(t.LocalFaults), thousands(t.Migrations), remote}, ", ")
}

// gritCounterNames names gritCounters' columns.
func gritCounterNames(scheme string) string {
	switch scheme {
	case "ot":
		return "ot faults"
	case "ac":
		return "ac: faults, promotions, remote / all accesses"
	case "dup":
		return "dup: faults, protection faults, replicas, collapses"
	}
	return scheme + ": faults, migrations, remote / all accesses"
}

// ratioText formats a performance ratio, n/a when missing.
func ratioText(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}

// gritStored counts the records that hold a run.
func gritStored(recs []GritRecord) int {
	n := 0
	for _, r := range recs {
		if r.Result.Cycles > 0 {
			n++
		}
	}
	return n
}

// WriteGritSchemesMarkdown writes grit-schemes' table: per workload the
// reference scheme's cycles, every other scheme's performance relative to
// it (reference cycles over the scheme's) with the geomean, and each
// scheme's counters; then how it was made and the speed of its runs.
func WriteGritSchemesMarkdown(w io.Writer, s *GritSweep, recs []GritRecord) error {
	cfg, err := s.BaseConfig()
	if err != nil {
		return err
	}
	ref := s.Schemes[0]
	fmt.Fprintf(w, "Uniform schemes on %d GPUs (GRIT Fig. 1): each scheme's performance relative to `%s` (`%s` cycles over the scheme's), from %d of the %d runs.\n\n",
		cfg.MultiGPU.GPUs, ref, ref, gritStored(recs), len(s.Workloads)*len(s.Schemes))
	gritMadeBy(w, s, gritSystem(&cfg))
	head := []string{"workload", ref + " cycles"}
	for _, sc := range s.Schemes[1:] {
		head = append(head, sc)
	}
	for _, sc := range s.Schemes {
		head = append(head, gritCounterNames(sc))
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	ratios := make([][]float64, len(s.Schemes))
	for wi, wl := range s.Workloads {
		row := []string{wl, "n/a"}
		r0 := gritRecordAt(recs, s, wi, 0, 0)
		if r0 != nil {
			row[1] = thousands(r0.Result.Cycles)
		}
		for si := 1; si < len(s.Schemes); si++ {
			v := math.NaN()
			if r := gritRecordAt(recs, s, wi, 0, si); r != nil && r0 != nil {
				v = Ratio(r0.Result.Cycles, r.Result.Cycles)
			}
			ratios[si] = append(ratios[si], v)
			row = append(row, ratioText(v))
		}
		for si, sc := range s.Schemes {
			row = append(row, gritCounters(sc, gritRecordAt(recs, s, wi, 0, si)))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	geo := []string{GeomeanGroup, ""}
	for si := 1; si < len(s.Schemes); si++ {
		g, n := Geomean(ratios[si])
		text := ratioText(g)
		if n < len(s.Workloads) && n > 0 {
			text += fmt.Sprintf(" (%d of %d)", n, len(s.Workloads))
		}
		geo = append(geo, text)
	}
	for range s.Schemes {
		geo = append(geo, "")
	}
	fmt.Fprintf(w, "| %s |\n\n", strings.Join(geo, " | "))
	return writeGritSpeed(w, s, recs)
}

// WriteGritFaultLatencyMarkdown writes grit-fault-latency's table: per
// fault-handling latency, the reference scheme's cycles on each workload
// and every other scheme's geomean performance relative to it; then how
// it was made and the speed of its runs.
func WriteGritFaultLatencyMarkdown(w io.Writer, s *GritSweep, recs []GritRecord) error {
	cfg, err := s.BaseConfig()
	if err != nil {
		return err
	}
	ref := s.Schemes[0]
	fmt.Fprintf(w, "Fault-handling latency (`multigpu.fault_latency_us`) on %d GPUs: each scheme's performance relative to `%s`, geomean over %s, from %d of the %d runs.\n\n",
		cfg.MultiGPU.GPUs, ref, strings.Join(s.Workloads, ", "), gritStored(recs), len(s.Workloads)*len(s.LatenciesUs)*len(s.Schemes))
	gritMadeBy(w, s, gritSystem(&cfg))
	head := []string{"fault latency"}
	for _, wl := range s.Workloads {
		head = append(head, ref+" cycles, "+wl)
	}
	for _, sc := range s.Schemes[1:] {
		head = append(head, sc)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for li, lat := range s.LatenciesUs {
		row := []string{num(lat) + " us"}
		for wi := range s.Workloads {
			cell := "n/a"
			if r := gritRecordAt(recs, s, wi, li, 0); r != nil {
				cell = thousands(r.Result.Cycles)
			}
			row = append(row, cell)
		}
		for si := 1; si < len(s.Schemes); si++ {
			var v []float64
			for wi := range s.Workloads {
				r0, r := gritRecordAt(recs, s, wi, li, 0), gritRecordAt(recs, s, wi, li, si)
				if r0 != nil && r != nil {
					v = append(v, Ratio(r0.Result.Cycles, r.Result.Cycles))
				}
			}
			g, n := Geomean(v)
			text := ratioText(g)
			if n < len(s.Workloads) && n > 0 {
				text += fmt.Sprintf(" (%d of %d)", n, len(s.Workloads))
			}
			row = append(row, text)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(w)
	return writeGritSpeed(w, s, recs)
}

// writeGritSpeed writes the speed line of a sweep: its runs, the wall and
// CPU time of the command that simulated them, the simulated cycles and
// each run's simulated cycles per second of its own wall time.
func writeGritSpeed(w io.Writer, s *GritSweep, recs []GritRecord) error {
	var cycles, evaluated uint64
	var rates []float64
	for _, r := range recs {
		if r.Result.Cycles == 0 {
			continue
		}
		cycles += r.Result.Cycles
		evaluated += r.Result.EvaluatedCycles
		rates = append(rates, r.Result.SimCyclesPerSecond)
	}
	slices.Sort(rates)
	sp := s.Speed
	fmt.Fprintf(w, "Speed: %d runs", len(rates))
	if sp.Simulated < len(rates) {
		fmt.Fprintf(w, " (%d of them simulated by the command, the others read back from earlier runs)", sp.Simulated)
	}
	fmt.Fprintf(w, " with `--jobs %d`: %s s of wall time", sp.Jobs, strconv.FormatFloat(sp.WallSeconds, 'f', 1, 64))
	if sp.CPUSeconds > 0 {
		fmt.Fprintf(w, ", %s s of CPU time (user and system)", strconv.FormatFloat(sp.CPUSeconds, 'f', 1, 64))
	}
	fmt.Fprintf(w, "; %s simulated cycles (%s of them evaluated, the others skipped while every block slept)", thousands(cycles), thousands(evaluated))
	if sp.WallSeconds > 0 && sp.Simulated == len(rates) {
		fmt.Fprintf(w, ", %s million per second of wall time", millions(float64(cycles)/sp.WallSeconds))
	}
	if len(rates) > 0 {
		fmt.Fprintf(w, "; per run %s / %s / %s million simulated cycles per second of its wall time (min / median / max)",
			millions(rates[0]), millions(median(rates)), millions(rates[len(rates)-1]))
	}
	_, err := fmt.Fprintln(w, ".")
	return err
}

// millions formats a rate in millions with three significant digits.
func millions(v float64) string { return strconv.FormatFloat(v/1e6, 'g', 3, 64) }

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// GritPlacement is the thread-block placement grit-characterize
// classifies pages under: the system's GPUs, with sms SMs of warps warps
// each.
func GritPlacement(cfg *config.Config, sms, warps int) characterize.Placement {
	return characterize.Placement{GPUs: max(cfg.MultiGPU.GPUs, 1), SMs: sms, WarpsPerSM: warps}
}

// gritSharingText is what GRIT's text says of each workload's pages
// (Section III-B, Fig. 4, and the shares Section VI quotes).
var gritSharingText = map[string]string{
	"grit-fir":  "almost all private",
	"grit-sc":   "almost all private",
	"grit-st":   "almost all shared; 99% shared read-write (Sec. VI)",
	"grit-c2d":  "mixed; 42% shared read-write (Sec. VI)",
	"grit-mm":   "mixed; about half shared, read (Sec. VI)",
	"grit-gemm": "about half shared, read; outputs private (Sec. III-C, VI)",
	"grit-bfs":  "almost all shared, few accesses to them",
	"grit-bs":   "extensively shared; 56% shared read-write (Sec. VI)",
}

// WriteGritCharacterizeMarkdown writes grit-characterize's table: per
// workload its pages, the shares of private, shared, shared read-only and
// shared read-write pages and of accesses to shared pages, beside what
// GRIT's text says; then how it was made and how long it took.
func WriteGritCharacterizeMarkdown(w io.Writer, s *GritSweep, res []characterize.Result) error {
	p := s.Placement
	if p == nil {
		return fmt.Errorf("%s: no placement", ManifestFile)
	}
	fmt.Fprintf(w, "Page sharing (GRIT Fig. 4) on %d GPUs of %d SMs, %d warps per SM, thread blocks placed as GRIT III-B says; workloads at scale %s, seed %d.\n\n",
		p.GPUs, p.SMs, p.WarpsPerSM, num(s.Scale), s.Seed)
	fmt.Fprintf(w, "Made by `%s` on %s", s.CommandLine, hostText(s.Host))
	fmt.Fprintf(w, ": %s s of wall time", strconv.FormatFloat(s.Speed.WallSeconds, 'f', 1, 64))
	if s.Speed.CPUSeconds > 0 {
		fmt.Fprintf(w, ", %s s of CPU time", strconv.FormatFloat(s.Speed.CPUSeconds, 'f', 1, 64))
	}
	fmt.Fprint(w, ".\n\n| workload | pages | private % | shared % | shared RO % | shared RW % | accesses to shared % | GRIT's text |\n|---|---|---|---|---|---|---|---|\n")
	pct := func(n, total int) string { return strconv.FormatFloat(characterize.Pct(n, total), 'f', 1, 64) }
	for _, r := range res {
		c := r.Counts
		_, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Workload, thousands(uint64(c.Pages)),
			pct(c.Private, c.Pages), pct(c.Shared(), c.Pages), pct(c.SharedRO, c.Pages), pct(c.SharedRW, c.Pages),
			strconv.FormatFloat(characterize.Pct(c.SharedAccesses(), c.Accesses), 'f', 1, 64), gritSharingText[r.Workload])
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadGritCharacterization reads the results grit-characterize stored in
// dir/results.json.
func ReadGritCharacterization(dir string) ([]characterize.Result, error) {
	data, err := os.ReadFile(filepath.Join(dir, ResultsJSON))
	if err != nil {
		return nil, err
	}
	var res []characterize.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultsJSON), err)
	}
	return res, nil
}

// GritFaultLatencyFigure is grit-fault-latency's figure: a panel per
// fault-handling latency with each scheme's performance relative to the
// reference per workload and the geomean.
func GritFaultLatencyFigure(s *GritSweep, recs []GritRecord, gpus int) *Figure {
	fig := &Figure{ID: GritFaultLatencyName, Title: fmt.Sprintf("Uniform schemes on %d GPUs at each fault-handling latency", gpus),
		YLabel: "performance relative to " + s.Schemes[0], Reference: s.Schemes[0]}
	for li, lat := range s.LatenciesUs {
		var series []Series
		for si, sc := range s.Schemes {
			v := make([]float64, len(s.Workloads))
			for wi := range s.Workloads {
				v[wi] = math.NaN()
				if r0, r := gritRecordAt(recs, s, wi, li, 0), gritRecordAt(recs, s, wi, li, si); r0 != nil && r != nil {
					v[wi] = Ratio(r0.Result.Cycles, r.Result.Cycles)
				}
			}
			series = append(series, Series{Name: sc, Values: v})
		}
		fig.Panels = append(fig.Panels, withGeomean(fig, num(lat)+" us", s.Workloads, series))
	}
	return fig
}
