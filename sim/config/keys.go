package config

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Key describes one configuration key: its dotted name, its allowed values
// and its documentation, all read from the struct tags.
type Key struct {
	Name string // dotted TOML key, for example "pcie.bandwidth_gbs"
	Kind string // "int", "uint", "float", "bool" or "string"
	Doc  string

	limit limit // allowed values of a numeric key; nil for the others
	path  []int // field indexes from Config down to the leaf
	tag   reflect.StructTag
}

// Keys lists every configuration key in declaration order.
func Keys() []Key {
	var keys []Key
	walk(reflect.TypeOf(Config{}), "", nil, &keys)
	return keys
}

func walk(t reflect.Type, prefix string, path []int, keys *[]Key) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("toml")
		if prefix != "" {
			name = prefix + "." + name
		}
		p := append(append([]int(nil), path...), i)
		if f.Type.Kind() == reflect.Struct {
			walk(f.Type, name, p, keys)
			continue
		}
		*keys = append(*keys, Key{Name: name, Kind: kindName(f.Type.Kind()), Doc: f.Tag.Get("doc"), limit: limitOf(f.Tag, f.Type.Kind()), path: p, tag: f.Tag})
	}
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Int:
		return "int"
	case reflect.Uint64:
		return "uint"
	case reflect.Float64:
		return "float"
	case reflect.Bool:
		return "bool"
	}
	return "string"
}

// Allowed is the key's allowed values under configuration c, as `uvmsim
// list` and the error messages show them. Only a range given in another
// key's unit (pcie.rtt_us in core cycles) depends on c.
func (k *Key) Allowed(c *Config) string {
	if names := k.oneOf(); names != nil {
		return "one of " + strings.Join(names, ", ")
	}
	if k.Kind == "bool" {
		return "true or false"
	}
	if k.limit == nil {
		return "any"
	}
	return k.limit.allowed(c)
}

// oneOf lists a name key's allowed values: its `oneof` tag, or the
// preset names for the tag value "presets" (Presets is their one list).
func (k *Key) oneOf() []string {
	switch o := k.tag.Get("oneof"); o {
	case "":
		return nil
	case "presets":
		return PresetNames()
	default:
		return strings.Split(o, ",")
	}
}

// Bounds are the smallest and the largest value the key may take under c
// (every other key as in c), as TOML literals.
func (k *Key) Bounds(c *Config) (lo, hi string, ok bool) {
	if k.limit == nil {
		return "", "", false
	}
	lo, hi = k.limit.bounds(c)
	return lo, hi, true
}

func (k *Key) field(c *Config) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for _, i := range k.path {
		v = v.Field(i)
	}
	return v
}

// Value formats the key's current value in c.
func (k *Key) Value(c *Config) string {
	v := k.field(c)
	switch v.Kind() {
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.String:
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface())
}

// LookupKey finds a key by its dotted name.
func LookupKey(name string) (Key, error) {
	for _, k := range Keys() {
		if k.Name == name {
			return k, nil
		}
	}
	return Key{}, fmt.Errorf("config: unknown key %q (uvmsim list shows every key)", name)
}

// Set applies one "key=value" override. The value is read as the same
// key would be in a TOML file (a string may be left unquoted), so an
// override, a file and the flags that set a key accept the same literals:
// run.seed=0x10 is 16 everywhere, and a negative or larger than 2^63-1
// seed is refused everywhere.
func (c *Config) Set(assignment string) error {
	name, value, ok := strings.Cut(assignment, "=")
	if !ok {
		return fmt.Errorf("config: override %q is not of the form key=value", assignment)
	}
	k, err := LookupKey(strings.TrimSpace(name))
	if err != nil {
		return err
	}
	value = strings.TrimSpace(value)
	literal := value
	if k.Kind == "string" && !strings.HasPrefix(value, `"`) {
		literal = strconv.Quote(value)
	}
	section, leaf, _ := strings.Cut(k.Name, ".")
	var raw map[string]any
	if _, err := toml.Decode(leaf+" = "+literal, &raw); err != nil || len(raw) != 1 || !kindMatches(k.Kind, raw[leaf]) {
		return fmt.Errorf("config: %s = %q is not a valid %s; allowed: %s", k.Name, value, k.Kind, k.Allowed(c))
	}
	if err := c.checkUnsigned(map[string]any{section: raw}); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if k.Name == presetKey {
		return c.ApplyPreset(raw[leaf].(string))
	}
	_, err = toml.Decode("["+section+"]\n"+leaf+" = "+literal, c)
	return err
}

// presetKey is the key whose assignment applies a whole preset.
const presetKey = "run.preset"

// kindMatches reports whether a decoded TOML value fits a key of the
// given kind (an integer fits a float key, as in a file).
func kindMatches(kind string, v any) bool {
	switch v.(type) {
	case int64:
		return kind == "int" || kind == "uint" || kind == "float"
	case float64:
		return kind == "float"
	case bool:
		return kind == "bool"
	case string:
		return kind == "string"
	}
	return false
}

// LoadFile reads a TOML file over c. A key the configuration does not have
// is an error that names it.
func (c *Config) LoadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return c.LoadTOML(path, data)
}

// LoadTOML decodes TOML text over c; name labels errors.
func (c *Config) LoadTOML(name string, data []byte) error {
	var raw map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil {
		return fmt.Errorf("config: %s: %w", name, err)
	}
	if err := c.checkUnsigned(raw); err != nil {
		return fmt.Errorf("config: %s: %w", name, err)
	}
	// A file's preset goes under every key the file sets, wherever in
	// its [run] table the preset is written.
	if run, ok := raw["run"].(map[string]any); ok {
		if preset, ok := run["preset"].(string); ok {
			if err := c.ApplyPreset(preset); err != nil {
				return fmt.Errorf("config: %s: %w", name, err)
			}
		}
	}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(c)
	if err != nil {
		return fmt.Errorf("config: %s: %w", name, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		return fmt.Errorf("config: %s: unknown key %q (uvmsim list shows every key)", name, un[0].String())
	}
	return nil
}

// checkUnsigned refuses a negative integer for an unsigned key, with the
// value as written, before the decoder would wrap it around to 2^64-n.
func (c *Config) checkUnsigned(raw map[string]any) error {
	for _, k := range Keys() {
		if k.Kind != "uint" {
			continue
		}
		section, leaf, _ := strings.Cut(k.Name, ".")
		if t, ok := raw[section].(map[string]any); ok {
			if n, ok := t[leaf].(int64); ok && n < 0 {
				return fmt.Errorf("%s = %d out of range; allowed: %s", k.Name, n, k.Allowed(c))
			}
		}
	}
	return nil
}

// validateKeys checks every key against its allowed values.
func validateKeys(c *Config) error {
	for _, k := range Keys() {
		if err := k.check(c); err != nil {
			return err
		}
	}
	return nil
}

func (k *Key) check(c *Config) error {
	v := k.field(c)
	ok := true
	if names := k.oneOf(); names != nil {
		ok = slices.Contains(names, v.String())
	} else if k.limit != nil {
		ok = k.limit.has(c, v)
	}
	if !ok {
		return fmt.Errorf("config: %s = %s out of range; allowed: %s", k.Name, k.Value(c), k.Allowed(c))
	}
	return nil
}

// asInt64 is an integer key's value as an int64, false when an unsigned
// value does not fit one.
func asInt64(v reflect.Value) (int64, bool) {
	switch v.Kind() {
	case reflect.Int:
		return v.Int(), true
	case reflect.Uint64:
		return int64(v.Uint()), v.Uint() <= math.MaxInt64
	}
	return 0, false
}
