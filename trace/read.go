package trace

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Excess is the name of a derived column: f - f*, the objective minus the
// smallest objective of the trace (the paper's log(f - f*) plots).
const Excess = "excess"

// Trace is one run's trace as read: column name to values, one per row.
type Trace struct {
	Name string               // a label for the run, such as the file's base name
	cols map[string][]float64 // every column of Columns
}

// Len returns the number of rows.
func (t *Trace) Len() int { return len(t.cols[Iter]) }

// Column returns the values of the named column, one of Columns or Excess.
// The slice must not be modified.
func (t *Trace) Column(name string) ([]float64, error) {
	if name == Excess {
		f := t.cols[Objective]
		if len(f) == 0 {
			return nil, nil
		}
		best := slices.Min(f)
		out := make([]float64, len(f))
		for i, v := range f {
			out[i] = v - best
		}
		return out, nil
	}
	c, ok := t.cols[name]
	if !ok {
		return nil, fmt.Errorf("unknown column %q (want one of %s or %s)", name, strings.Join(Columns, ", "), Excess)
	}
	return c, nil
}

// ReadFile reads a trace file, naming the trace by the file's base name
// without its extension.
func ReadFile(path string) (*Trace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Read(bytes.NewReader(b), path)
	if err != nil {
		return nil, err
	}
	t.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return t, nil
}

// optional are the columns a trace may lack; they are then 0 in every row.
var optional = []string{Start, Moved, Model}

// whole are the columns of whole numbers >= 0.
var whole = []string{Iter, Passes, Start, Moved}

// Read reads a trace in CSV from r; source names it in errors and becomes
// its Name. The header must hold the columns of Columns (start, moved and
// model may be missing) in any order; other columns are ignored. Every value must be a
// finite number, and iter, passes and start whole numbers >= 0. Errors
// name the line and column.
func Read(r io.Reader, source string) (*Trace, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file, want a header %s", source, strings.Join(Columns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	index := make(map[string]int)
	for i, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if slices.Contains(Columns, h) {
			if _, dup := index[h]; dup {
				return nil, fmt.Errorf("%s: line 1: column %q appears twice", source, h)
			}
			index[h] = i
		}
	}
	var present []string // the columns of the file, in the order of Columns
	for _, c := range Columns {
		_, ok := index[c]
		switch {
		case ok:
			present = append(present, c)
		case !slices.Contains(optional, c):
			return nil, fmt.Errorf("%s: line 1: no column %q (a trace has %s)", source, c, strings.Join(Columns, ","))
		}
	}
	t := &Trace{Name: source, cols: make(map[string][]float64, len(Columns))}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		line, _ := cr.FieldPos(0)
		for _, c := range present {
			s := strings.TrimSpace(rec[index[c]])
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: line %d, column %q: %q is not a finite number", source, line, c, s)
			}
			if slices.Contains(whole, c) && (v != math.Trunc(v) || v < 0) {
				return nil, fmt.Errorf("%s: line %d, column %q: %q is not a whole number >= 0", source, line, c, s)
			}
			t.cols[c] = append(t.cols[c], v)
		}
	}
	if t.Len() == 0 {
		return nil, fmt.Errorf("%s: no rows after the header", source)
	}
	for _, c := range optional {
		if _, ok := index[c]; !ok {
			t.cols[c] = make([]float64, t.Len())
		}
	}
	return t, nil
}
