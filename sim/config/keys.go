package config

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Key describes one configuration key: its dotted name, its allowed values
// and its documentation, all read from the struct tags.
type Key struct {
	Name    string // dotted TOML key, for example "pcie.bandwidth_gbs"
	Kind    string // "int", "uint", "float", "bool" or "string"
	Allowed string // human-readable allowed range or set
	Doc     string

	path []int // field indexes from Config down to the leaf
	tag  reflect.StructTag
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
		*keys = append(*keys, Key{Name: name, Kind: kindName(f.Type.Kind()), Allowed: allowed(f.Tag, f.Type.Kind()), Doc: f.Tag.Get("doc"), path: p, tag: f.Tag})
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

func allowed(tag reflect.StructTag, k reflect.Kind) string {
	if o := tag.Get("oneof"); o != "" {
		return "one of " + strings.ReplaceAll(o, ",", ", ")
	}
	if k == reflect.Bool {
		return "true or false"
	}
	min, max := tag.Get("min"), tag.Get("max")
	if min == "" {
		return "any"
	}
	r := "[" + min + ", " + max + "]"
	if tag.Get("pow2") != "" {
		r += ", a power of two"
	}
	return r
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

// Set applies one "key=value" override.
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
	v := k.field(c)
	bad := func() error {
		return fmt.Errorf("config: %s = %q is not a valid %s; allowed: %s", k.Name, value, k.Kind, k.Allowed)
	}
	switch v.Kind() {
	case reflect.Int:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return bad()
		}
		v.SetInt(n)
	case reflect.Uint64:
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return bad()
		}
		v.SetUint(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return bad()
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return bad()
		}
		v.SetBool(b)
	default:
		v.SetString(value)
	}
	return nil
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
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(c)
	if err != nil {
		return fmt.Errorf("config: %s: %w", name, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		return fmt.Errorf("config: %s: unknown key %q (uvmsim list shows every key)", name, un[0].String())
	}
	return nil
}

// validateTags checks every field against its min/max/pow2/oneof tags.
func validateTags(c *Config) error {
	for _, k := range Keys() {
		if err := k.check(c); err != nil {
			return err
		}
	}
	return nil
}

func (k *Key) check(c *Config) error {
	v := k.field(c)
	bad := func() error {
		return fmt.Errorf("config: %s = %s out of range; allowed: %s", k.Name, k.Value(c), k.Allowed)
	}
	if o := k.tag.Get("oneof"); o != "" {
		for _, s := range strings.Split(o, ",") {
			if v.String() == s {
				return nil
			}
		}
		return bad()
	}
	min, max := k.tag.Get("min"), k.tag.Get("max")
	if min == "" {
		return nil
	}
	switch v.Kind() {
	case reflect.Int:
		lo, _ := strconv.ParseInt(min, 10, 64)
		hi, _ := strconv.ParseInt(max, 10, 64)
		n := v.Int()
		if n < lo || n > hi || (k.tag.Get("pow2") != "" && n&(n-1) != 0) {
			return bad()
		}
	case reflect.Uint64:
		lo, _ := strconv.ParseUint(min, 10, 64)
		hi, _ := strconv.ParseUint(max, 10, 64)
		if n := v.Uint(); n < lo || n > hi {
			return bad()
		}
	case reflect.Float64:
		lo, _ := strconv.ParseFloat(min, 64)
		hi, _ := strconv.ParseFloat(max, 64)
		if f := v.Float(); math.IsNaN(f) || f < lo || f > hi {
			return bad()
		}
	}
	return nil
}
