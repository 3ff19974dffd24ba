package store

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ssnmf/ssnmf/store/internal/arrowtest"
)

// TestCSVWriter writes record batches of each column type, and batches
// it refuses, and checks the lines.
func TestCSVWriter(t *testing.T) {
	f64 := func(name string, vals ...string) arrowtest.Column {
		return arrowtest.Column{Name: name, Type: arrow.PrimitiveTypes.Float64, Vals: vals}
	}
	for _, tc := range []struct {
		name    string
		batches [][]arrowtest.Column
		want    string // the file, or the error's text
	}{
		{name: "types", batches: [][]arrowtest.Column{{
			f64("x", "0.1", "-2.5e-300", "1e+21"),
			{Name: "n", Type: arrow.PrimitiveTypes.Int32, Vals: []string{"-7", "0", "2147483647"}},
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Vals: []string{"0", "1", "9007199254740993"}},
		}}, want: "x,n,id\n0.1,-7,0\n-2.5e-300,0,1\n1e+21,2147483647,9007199254740993\n"},
		{name: "two batches", batches: [][]arrowtest.Column{{f64("a", "1"), f64("b", "2")}, {f64("a", "3"), f64("b", "4")}},
			want: "a,b\n1,2\n3,4\n"},
		{name: "no batch", want: "a\n"},
		{name: "comma", batches: [][]arrowtest.Column{{f64("a,b", "1")}}, want: `column name "a,b" needs quoting`},
		{name: "null", batches: [][]arrowtest.Column{{f64("a", "1", arrowtest.Null)}}, want: `column "a" has nulls`},
		{name: "string", batches: [][]arrowtest.Column{{{Name: "a", Type: arrow.BinaryTypes.String, Vals: []string{"x"}}}},
			want: `column "a" of type utf8, want float64, int32 or int64`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
			var recs []arrow.RecordBatch
			for _, cols := range tc.batches {
				rec := arrowtest.Record(t, cols...)
				defer rec.Release()
				recs = append(recs, rec)
				schema = rec.Schema()
			}
			var buf bytes.Buffer
			w := NewCSVWriter(&buf, schema)
			for _, rec := range recs {
				if err := w.Write(rec); err != nil {
					if !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("error %q, want %q", err, tc.want)
					}
					return
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Errorf("wrote %q, want %q", buf.String(), tc.want)
			}
		})
	}
}
