// Package arrowtest builds the Arrow inputs of the tests of store and
// store/parquetio and checks the membership outputs they write back.
//
// An input is a list of [Column]s whose values are written as strings (with
// [Null] for a missing one), so that a test table reads like the data it
// stands for; [Rows] cuts rows out of them, [Record] turns them into an
// Arrow record batch that a test then encodes as an IPC or Parquet file,
// [BenchmarkColumns] is the input of the readers' benchmarks and
// [WriteFile] puts encoded bytes where a reader can open them. On the way
// out, [CheckMembership] checks a record batch of a membership file against
// the matrix that was written.
//
// It is test support, like the standard library's internal/testenv: only
// _test.go files import it. It does not import store, so that store's own
// (internal) tests can use it.
package arrowtest

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Null marks a missing value in the Vals of a [Column].
const Null = "<null>"

// Column is a named column of a test record batch.
type Column struct {
	Name string
	Type arrow.DataType
	Vals []string // parsed by the builder's AppendValueFromString; Null for a null
}

// Record builds a record batch of the columns, which must have equal
// lengths; every field is nullable. A value that the column's type cannot
// parse fails the test. The caller releases the batch.
func Record(t testing.TB, cols ...Column) arrow.RecordBatch {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for j, c := range cols {
		fields[j] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: true}
		b := array.NewBuilder(memory.DefaultAllocator, c.Type)
		for _, v := range c.Vals {
			if v == Null {
				b.AppendNull()
			} else if err := b.AppendValueFromString(v); err != nil {
				t.Fatalf("column %s: %q: %v", c.Name, v, err)
			}
		}
		arrs[j] = b.NewArray()
		b.Release()
	}
	rows := 0
	if len(cols) > 0 {
		rows = len(cols[0].Vals)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(rows))
}

// Rows returns rows [lo, hi) of every column of cols. The values are
// shared with cols.
func Rows(cols []Column, lo, hi int) []Column {
	part := make([]Column, len(cols))
	for j, c := range cols {
		part[j] = Column{Name: c.Name, Type: c.Type, Vals: c.Vals[lo:hi]}
	}
	return part
}

// BenchmarkColumns returns rows rows of 16 float64 features f0..f15 and an
// int32 label of 10 classes, as columns: the input of the readers'
// benchmarks.
func BenchmarkColumns(rows int) []Column {
	cols := make([]Column, 17)
	for j := range 16 {
		vals := make([]string, rows)
		for i := range vals {
			vals[i] = strconv.FormatFloat(float64(i*16+j)/7, 'g', -1, 64)
		}
		cols[j] = Column{Name: "f" + strconv.Itoa(j), Type: arrow.PrimitiveTypes.Float64, Vals: vals}
	}
	labels := make([]string, rows)
	for i := range labels {
		labels[i] = strconv.Itoa(i % 10)
	}
	cols[16] = Column{Name: "label", Type: arrow.PrimitiveTypes.Int32, Vals: labels}
	return cols
}

// WriteFile writes data to a file called name in a new temporary directory
// of t and returns its path.
func WriteFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// CheckMembership checks that rec holds rows [row, row+rec.NumRows()) of
// the memberships W (k values a row, row-major) as a membership file stores
// them: no column has nulls, id is the row index, w1..wk are the row of W
// bit for bit, cluster is argmax of the row and confidence the row's
// entry there. The caller has checked that
// rec has the columns of store.MembershipSchema(k), and passes store.Argmax
// as argmax (this package cannot import store, whose own tests use it).
func CheckMembership(t testing.TB, rec arrow.RecordBatch, W []float64, row, k int, argmax func([]float64) int) {
	t.Helper()
	m := int(rec.NumRows())
	for c := range rec.NumCols() {
		if rec.Column(int(c)).NullN() != 0 {
			t.Fatalf("column %s has nulls", rec.ColumnName(int(c)))
		}
	}
	id := rec.Column(0).(*array.Int64)
	for i := range m {
		if id.Value(i) != int64(row+i) {
			t.Fatalf("row %d has id %d", row+i, id.Value(i))
		}
	}
	for j := range k {
		col := rec.Column(1 + j).(*array.Float64)
		for i := range m {
			if math.Float64bits(col.Value(i)) != math.Float64bits(W[(row+i)*k+j]) {
				t.Fatalf("row %d w%d = %v, wrote %v", row+i, j+1, col.Value(i), W[(row+i)*k+j])
			}
		}
	}
	cl := rec.Column(k + 1).(*array.Int32)
	conf := rec.Column(k + 2).(*array.Float64)
	for i := range m {
		w := W[(row+i)*k : (row+i+1)*k]
		want := argmax(w)
		if int(cl.Value(i)) != want {
			t.Fatalf("row %d cluster %d, want %d", row+i, cl.Value(i), want)
		}
		if math.Float64bits(conf.Value(i)) != math.Float64bits(w[want]) {
			t.Fatalf("row %d confidence %v, want %v", row+i, conf.Value(i), w[want])
		}
	}
}
