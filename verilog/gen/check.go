package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Difference is one way a directory of committed RTL differs from what the
// generator emits.
type Difference struct {
	File string
	// What is "missing", "stale" (a .v file no emitter produces) or
	// "changed".
	What string
	// Line is the first differing line of a changed file (1-based), with the
	// committed and generated text of that line.
	Line           int
	Committed, Now string
}

func (d Difference) String() string {
	switch d.What {
	case "changed":
		return fmt.Sprintf("%s: changed at line %d\n  committed: %s\n  generated: %s", d.File, d.Line, d.Committed, d.Now)
	case "missing":
		return d.File + ": missing (the generator emits it)"
	default:
		return d.File + ": stale (no emitter produces it)"
	}
}

// Compare checks dir against the default files.
func Compare(dir string, files []File) ([]Difference, error) {
	var diffs []Difference
	want := map[string]bool{}
	for _, f := range files {
		want[f.Name] = true
		got, err := os.ReadFile(filepath.Join(dir, f.Name))
		if errors.Is(err, fs.ErrNotExist) {
			diffs = append(diffs, Difference{File: f.Name, What: "missing"})
			continue
		}
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(got, f.Text) {
			d := Difference{File: f.Name, What: "changed"}
			d.Line, d.Committed, d.Now = firstDiff(string(got), string(f.Text))
			diffs = append(diffs, d)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var stale []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".v") && !want[e.Name()] {
			stale = append(stale, e.Name())
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		diffs = append(diffs, Difference{File: s, What: "stale"})
	}
	return diffs, nil
}

func firstDiff(a, b string) (int, string, string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		} else {
			x = "<end of file>"
		}
		if i < len(bl) {
			y = bl[i]
		} else {
			y = "<end of file>"
		}
		if x != y {
			return i + 1, x, y
		}
	}
	return 0, "", ""
}

// WriteDir writes files into dir (created if needed) and removes .v files
// there that no emitter produces.
func WriteDir(dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	diffs, err := Compare(dir, files)
	if err != nil {
		return err
	}
	for _, d := range diffs {
		if d.What == "stale" {
			if err := os.Remove(filepath.Join(dir, d.File)); err != nil {
				return err
			}
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Text, 0o644); err != nil {
			return err
		}
	}
	return nil
}
