package rtl

import (
	"fmt"
	"strconv"
)

// Range is the allowed values of an integer block parameter: Min..Max, and
// only powers of two when Pow2 is set. A block exports the Range of each
// parameter its Config.Validate checks and checks it with the same value,
// so that the configuration layer lists and checks exactly the values the
// block accepts.
type Range struct {
	Min, Max int64
	Pow2     bool
}

// Has reports whether v is allowed.
func (r Range) Has(v int64) bool {
	return v >= r.Min && v <= r.Max && (!r.Pow2 || v > 0 && v&(v-1) == 0)
}

// String is the range as messages and listings show it: "32..512, a power
// of two".
func (r Range) String() string {
	s := strconv.FormatInt(r.Min, 10) + ".." + strconv.FormatInt(r.Max, 10)
	if r.Pow2 {
		s += ", a power of two"
	}
	return s
}

// Check returns nil when v is allowed and otherwise an error naming the
// parameter (for example "frab: WordBits"), its value and the range.
func (r Range) Check(name string, v int64) error {
	if r.Has(v) {
		return nil
	}
	return fmt.Errorf("%s %d outside %s", name, v, r)
}
