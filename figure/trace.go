// Package figure draws convergence figures from solver traces: it reads the
// trace CSV files that "ssnmf solve -trace" writes (one row per iterate:
// iter, seconds, objective, gap, step_size, passes) and plots any two of
// their columns against each other, one curve per trace and one panel per
// group of traces, on linear or logarithmic axes, as PNG or SVG with
// gonum.org/v1/plot. The paper's Fig. 2 (log seconds against log objective)
// and Fig. 3 (log seconds against log(f - f*)) are such figures.
package figure

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

// Columns are the columns of a trace file, in order.
var Columns = []string{"iter", "seconds", "objective", "gap", "step_size", "passes"}

// Excess is the name of a derived column: f - f*, the objective minus the
// smallest objective of the trace (the paper's log(f - f*) plots).
const Excess = "excess"

// Trace is one run's trace: column name to values, one per iterate.
type Trace struct {
	Name string               // a label for the run, such as the file's base name
	cols map[string][]float64 // the columns of the file
}

// Len returns the number of iterates.
func (t *Trace) Len() int { return len(t.cols["iter"]) }

// Column returns the values of the named column, one of Columns or Excess.
// The slice must not be modified.
func (t *Trace) Column(name string) ([]float64, error) {
	if name == Excess {
		f := t.cols["objective"]
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

// ReadTraceFile reads a trace CSV file, naming the trace by the file's base
// name without its extension.
func ReadTraceFile(path string) (*Trace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	t, err := ReadTrace(bytes.NewReader(b), path)
	if err != nil {
		return nil, err
	}
	t.Name = name
	return t, nil
}

// ReadTrace reads a trace in CSV from r; source names it in errors and
// becomes its Name. The header must hold the columns of Columns, in any
// order (other columns are ignored); every value must be a finite number,
// iterations and passes whole numbers. Errors name the line and column.
func ReadTrace(r io.Reader, source string) (*Trace, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file, want a header %s", source, strings.Join(Columns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	index := make(map[string]int)
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if slices.Contains(Columns, h) {
			if _, dup := index[h]; dup {
				return nil, fmt.Errorf("%s: line 1: column %q appears twice", source, h)
			}
			index[h] = i
		}
	}
	for _, c := range Columns {
		if _, ok := index[c]; !ok {
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
		for _, c := range Columns {
			s := strings.TrimSpace(rec[index[c]])
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: line %d, column %q: %q is not a finite number", source, line, c, s)
			}
			if (c == "iter" || c == "passes") && (v != math.Trunc(v) || v < 0) {
				return nil, fmt.Errorf("%s: line %d, column %q: %q is not a whole number >= 0", source, line, c, s)
			}
			t.cols[c] = append(t.cols[c], v)
		}
	}
	if t.Len() == 0 {
		return nil, fmt.Errorf("%s: no rows after the header", source)
	}
	return t, nil
}
