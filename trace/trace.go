// Package trace is the trace format of ssnmf: the CSV file of one row per
// iterate that "ssnmf solve -trace" and the scripts write (through Writer),
// and "ssnmf plot" and package figure read (through Read).
//
// A trace is CSV with a header row,
//
//	iter,seconds,objective,gap,step_size,passes,start,moved,model
//
// then one row per iterate W_t of a run, in order. The columns are
//
//   - iter: t, the 0-based iteration (a whole number);
//   - seconds: the time since the solver began, when f and the gap at W_t
//     were known (fw.Iteration.Elapsed);
//   - objective: f(W_t) = 1/4 ||P - W_t W_tᵀ||_F^2;
//   - gap: the Frank-Wolfe gap at W_t;
//   - step_size: the step taken from W_t (for a row-wise method, the mass
//     moved per row in the sweep); 0 on the final row of a start;
//   - passes: the tile passes over P so far, including the one that gave
//     this row (a whole number);
//   - start: the 0-based start the row belongs to, for a run from several
//     starts (-restarts); each start's rows follow the previous start's,
//     and their iter begins again at 0 (a whole number);
//   - moved: the rows whose cluster (largest membership) the step from W_t
//     changed; 0 on the final row (a whole number);
//   - model: ¼||W_tᵀW_t||_F², the objective's term in W alone, against
//     which -mtol measures the gap.
//
// The last row of each start is the iterate the solver stopped at
// (fw.Iteration.Final): it takes no step, so its step_size is 0, and its
// objective and gap are those the run reports. Numbers are written in the
// shortest form that reads back as the same float64.
//
// Read takes the columns in any order and ignores columns it does not know.
// Traces written before the start, moved and model columns existed have
// only the first six, seven or eight columns; Read takes the missing ones
// to be 0.
package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ssnmf/ssnmf/fw"
)

// The names of the columns of a trace.
const (
	Iter      = "iter"      // the 0-based iteration
	Seconds   = "seconds"   // seconds since the solver began
	Objective = "objective" // f at the iterate
	Gap       = "gap"       // the Frank-Wolfe gap at the iterate
	StepSize  = "step_size" // the step taken from the iterate; 0 on the final row
	Passes    = "passes"    // tile passes so far
	Start     = "start"     // the 0-based start of a run from several starts
	Moved     = "moved"     // rows whose cluster the step changed
	Model     = "model"     // ¼||WᵀW||_F² at the iterate
)

// Columns are the columns of a trace, in the order Writer writes them.
var Columns = []string{Iter, Seconds, Objective, Gap, StepSize, Passes, Start, Moved, Model}

// header is the first line of a trace.
var header = strings.Join(Columns, ",") + "\n"

// Writer writes a trace: the header, then a row for every Record. It keeps
// everything it has written, for a checkpoint to save (Bytes) and a resumed
// run to take up again (Restore).
type Writer struct {
	// Start is the start that the next rows belong to; a run from several
	// starts sets it before each start's first row.
	Start int

	w   io.Writer // nil: the trace is only kept
	buf []byte    // the header and every row so far; empty before the first row
}

// NewWriter returns a Writer that writes each row to w as it is recorded.
// With w nil, the trace is only kept, for Bytes.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Record appends the row of the iterate it, after the header if it is the
// first row, and writes them to the underlying writer; it serves as a
// solver's recorder of iterations. The row is kept even if the write fails.
func (t *Writer) Record(it fw.Iteration) error {
	from := len(t.buf)
	if from == 0 {
		t.buf = append(t.buf, header...)
	}
	t.buf = appendRow(t.buf, []float64{float64(it.Iter), it.Elapsed.Seconds(), it.Objective, it.Gap, it.Step,
		float64(it.Passes), float64(t.Start), float64(it.Moved), it.Model})
	return t.write(t.buf[from:])
}

// Bytes returns the trace so far: the header and every row, or nothing
// before the first row. It is valid until the next Record or Restore and
// must not be modified.
func (t *Writer) Bytes() []byte {
	return t.buf
}

// Restore makes saved, the Bytes of an earlier Writer (the trace in a
// checkpoint), the beginning of this trace, and writes it to the
// underlying writer. A trace of an older version, without some of the
// columns, is rewritten with them (as Read takes them, 0), so that one
// header serves the whole file. It must come before the first Record.
func (t *Writer) Restore(saved []byte) error {
	if len(t.buf) > 0 {
		return errRestore
	}
	if len(saved) > 0 && !bytes.HasPrefix(saved, []byte(header)) {
		// A checkpoint of an older version, whose trace has fewer columns:
		// its rows in this format, so that the rows to come match them.
		old, err := Read(bytes.NewReader(saved), "the checkpoint's trace")
		if err != nil {
			return fmt.Errorf("trace: %w", err)
		}
		t.buf = append(t.buf, header...)
		vals := make([]float64, len(Columns))
		for i := range old.Len() {
			for j, c := range Columns {
				vals[j] = old.cols[c][i]
			}
			t.buf = appendRow(t.buf, vals)
		}
		return t.write(t.buf)
	}
	t.buf = append(t.buf, saved...)
	return t.write(t.buf)
}

// appendRow appends a row of values in the order of Columns and its line
// end: the whole-number columns as integers, the others in the shortest
// form that reads back as the same float64.
func appendRow(b []byte, vals []float64) []byte {
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		if slices.Contains(whole, Columns[i]) {
			b = strconv.AppendInt(b, int64(v), 10)
		} else {
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
	}
	return append(b, '\n')
}

// errRestore is Restore's error after a row was recorded.
var errRestore = errors.New("trace: Restore after the first row")

// write writes b to the underlying writer, if any.
func (t *Writer) write(b []byte) error {
	if t.w == nil || len(b) == 0 {
		return nil
	}
	_, err := t.w.Write(b)
	return err
}
