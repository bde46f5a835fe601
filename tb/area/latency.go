package area

// Latency is one row of the per-operation latency table: how many core
// cycles an operation of a block takes from request to response, measured
// on the Go model (SPEC 9).
type Latency struct {
	Block     string  `json:"block"`
	Operation string  `json:"operation"`
	Cycles    float64 `json:"cycles"`
	// Note says how the number was measured (for example "DCQ not empty"
	// or "frame-groups per cycle" for a throughput row).
	Note string `json:"note,omitempty"`
}

var latencySources []func() ([]Latency, error)

// RegisterLatencies adds a function that measures latency rows by running
// a block's Go model; the area command prints every row it returns. Block
// owners register from an init function in a package tb/cmd/area imports.
func RegisterLatencies(f func() ([]Latency, error)) {
	latencySources = append(latencySources, f)
}

// Latencies runs every registered measurement, in registration order.
func Latencies() ([]Latency, error) {
	var rows []Latency
	for _, f := range latencySources {
		r, err := f()
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}
