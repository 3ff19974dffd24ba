package arrowtest

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestRecord builds a batch of a cut of two columns, one with a null.
func TestRecord(t *testing.T) {
	cols := []Column{
		{Name: "x", Type: arrow.PrimitiveTypes.Int32, Vals: []string{"1", Null, "3", "4"}},
		{Name: "s", Type: arrow.BinaryTypes.String, Vals: []string{"a", "b", Null, "d"}},
	}
	rec := Record(t, Rows(cols, 1, 3)...)
	defer rec.Release()
	if rec.NumRows() != 2 || rec.NumCols() != 2 || rec.ColumnName(0) != "x" || rec.ColumnName(1) != "s" {
		t.Fatalf("got %d×%d batch %v", rec.NumRows(), rec.NumCols(), rec.Schema())
	}
	x, s := rec.Column(0).(*array.Int32), rec.Column(1).(*array.String)
	if !x.IsNull(0) || x.Value(1) != 3 || s.Value(0) != "b" || !s.IsNull(1) {
		t.Errorf("got x = %v, s = %v", x, s)
	}
	empty := Record(t)
	defer empty.Release()
	if empty.NumRows() != 0 || empty.NumCols() != 0 {
		t.Errorf("no columns: %d×%d batch", empty.NumRows(), empty.NumCols())
	}
}
