package parquetio

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/internal/arrowtest"
)

// parquetBytes writes the columns as a Parquet file whose first row group
// holds rows [0, at) and the second the rest.
func parquetBytes(t testing.TB, cols []arrowtest.Column, at int) []byte {
	t.Helper()
	n := len(cols[0].Vals)
	var buf bytes.Buffer
	first := arrowtest.Record(t, arrowtest.Rows(cols, 0, at)...)
	defer first.Release()
	w, err := NewWriter(&buf, first.Schema())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{0, at}, {at, n}} {
		if r[0] == r[1] {
			continue
		}
		rec := arrowtest.Record(t, arrowtest.Rows(cols, r[0], r[1])...)
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeParquet writes the columns to a file in a temporary directory.
func writeParquet(t *testing.T, cols []arrowtest.Column, at int) string {
	t.Helper()
	return arrowtest.WriteFile(t, "data.parquet", parquetBytes(t, cols, at))
}

// goodColumns is store/testdata/good.csv with an extra string column.
func goodColumns() []arrowtest.Column {
	return []arrowtest.Column{
		{Name: "name", Type: arrow.BinaryTypes.String, Vals: []string{"a", "b", "c", "d", "e", "f"}},
		{Name: "f1", Type: arrow.PrimitiveTypes.Float64, Vals: []string{"5.1", "4.9", "7.0", "6.4", "6.3", "5.8"}},
		{Name: "f2", Type: arrow.PrimitiveTypes.Float32, Vals: []string{"3.5", "3.0", "3.25", "3.25", "3.5", "2.75"}},
		{Name: "f3", Type: arrow.PrimitiveTypes.Int32, Vals: []string{"1", "1", "4", "4", "6", "5"}},
		{Name: "label", Type: arrow.BinaryTypes.String, Vals: []string{"setosa", "setosa", "versicolor", "versicolor", "virginica", "virginica"}},
	}
}

// plain returns t without the unexported state of a mapped table, for
// comparisons.
func plain(t *store.Table) store.Table {
	return store.Table{Features: t.Features, N: t.N, P: t.P, Names: t.Names, Labels: t.Labels, Classes: t.Classes, LabelName: t.LabelName}
}

func TestRead(t *testing.T) {
	good := &store.Table{
		Features: []float64{5.1, 3.5, 1, 4.9, 3.0, 1, 7.0, 3.25, 4, 6.4, 3.25, 4, 6.3, 3.5, 6, 5.8, 2.75, 5},
		N:        6, P: 3,
		Names:     []string{"f1", "f2", "f3"},
		Labels:    []int{0, 0, 1, 1, 2, 2},
		Classes:   []string{"setosa", "versicolor", "virginica"},
		LabelName: "label",
	}
	tests := []struct {
		name string
		cols []arrowtest.Column
		at   int
		opt  store.TableOptions
		want *store.Table
	}{
		{name: "two row groups", cols: goodColumns(), at: 4, opt: store.TableOptions{Features: []string{"f1", "f2", "f3"}}, want: good},
		{name: "one row group", cols: goodColumns(), at: 6, opt: store.TableOptions{Features: []string{"f1", "f2", "f3"}}, want: good},
		{
			name: "reorder, label by name, skip a column",
			cols: goodColumns(), at: 2,
			opt: store.TableOptions{Features: []string{"f3", "f1"}, Label: "name"},
			want: &store.Table{
				Features: []float64{1, 5.1, 1, 4.9, 4, 7.0, 4, 6.4, 6, 6.3, 5, 5.8},
				N:        6, P: 2,
				Names:     []string{"f3", "f1"},
				Labels:    []int{0, 1, 2, 3, 4, 5},
				Classes:   []string{"a", "b", "c", "d", "e", "f"},
				LabelName: "name",
			},
		},
		{
			name: "integer labels, no label default",
			cols: []arrowtest.Column{
				{Name: "x", Type: arrow.PrimitiveTypes.Int64, Vals: []string{"1", "2", "3"}},
				{Name: "y", Type: arrow.PrimitiveTypes.Uint8, Vals: []string{"10", "2", "10"}},
			},
			at: 1, opt: store.TableOptions{Label: "y"},
			want: &store.Table{Features: []float64{1, 2, 3}, N: 3, P: 1, Names: []string{"x"}, Labels: []int{1, 0, 1}, Classes: []string{"2", "10"}, LabelName: "y"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeParquet(t, tt.cols, tt.at)
			got, err := Read(path, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if g := plain(got); !reflect.DeepEqual(&g, tt.want) {
				t.Errorf("got  %+v\nwant %+v", &g, tt.want)
			}
			opt := tt.opt
			opt.MapDir = t.TempDir()
			mapped, err := Read(path, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer mapped.Close()
			if mapped.MappedPath() == "" {
				t.Error("features not mapped with MapDir")
			}
			if g := plain(mapped); !reflect.DeepEqual(&g, tt.want) {
				t.Errorf("mapped: got  %+v\nwant %+v", &g, tt.want)
			}
		})
	}
}

// TestReadManyBatches reads a file of several row groups and record
// batches, its columns one after the other and at once (Workers), and
// checks every value against what was written.
func TestReadManyBatches(t *testing.T) {
	n := 2*BatchRows + 1000
	rng := rand.New(rand.NewPCG(3, 4))
	x, y, lab := make([]string, n), make([]string, n), make([]string, n)
	want := make([]float64, 0, 2*n)
	for i := range n {
		a, b := rng.NormFloat64(), rng.IntN(1000)-500
		x[i], y[i], lab[i] = strconv.FormatFloat(a, 'g', -1, 64), strconv.Itoa(b), strconv.Itoa(i%7)
		want = append(want, a, float64(b))
	}
	cols := []arrowtest.Column{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Vals: x},
		{Name: "y", Type: arrow.PrimitiveTypes.Int16, Vals: y},
		{Name: "label", Type: arrow.PrimitiveTypes.Int32, Vals: lab},
	}
	path := writeParquet(t, cols, BatchRows+17)
	for _, workers := range []int{0, 3} {
		tab, err := Read(path, store.TableOptions{MapDir: t.TempDir(), Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Close()
		if tab.N != n || tab.P != 2 || !slices.Equal(tab.Features, want) {
			t.Fatalf("%d workers: read %d×%d, want %d×2; features equal: %v", workers, tab.N, tab.P, n, slices.Equal(tab.Features, want))
		}
		for i, c := range tab.Labels {
			if c != i%7 {
				t.Fatalf("%d workers: row %d: label %d, want %d", workers, i, c, i%7)
			}
		}
	}
}

func TestReadErrors(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	with := func(j int, c arrowtest.Column) []arrowtest.Column {
		cols := goodColumns()
		cols[j] = c
		return cols
	}
	feats := store.TableOptions{Features: []string{"f1", "f2", "f3"}}
	tests := []struct {
		name    string
		cols    []arrowtest.Column
		opt     store.TableOptions
		wantErr string
	}{
		{name: "null in the second row group", cols: with(1, arrowtest.Column{Name: "f1", Type: f64, Vals: []string{"1", "2", "3", "4", arrowtest.Null, "6"}}), opt: feats, wantErr: `row index 4: column "f1": null value`},
		{name: "NaN", cols: with(1, arrowtest.Column{Name: "f1", Type: f64, Vals: []string{"1", "NaN", "3", "4", "5", "6"}}), opt: feats, wantErr: `row index 1: column "f1": NaN is not a finite number`},
		{name: "Inf", cols: with(2, arrowtest.Column{Name: "f2", Type: arrow.PrimitiveTypes.Float32, Vals: []string{"1", "2", "3", "4", "5", "+Inf"}}), opt: feats, wantErr: `row index 5: column "f2": +Inf is not a finite number`},
		{name: "null label", cols: with(4, arrowtest.Column{Name: "label", Type: arrow.BinaryTypes.String, Vals: []string{"a", arrowtest.Null, "b", "c", "d", "e"}}), opt: feats, wantErr: `row index 1: column "label": null label`},
		{name: "string column as a feature", cols: goodColumns(), wantErr: `column "name": type utf8 is not numeric; choose the feature columns with -features`},
		{name: "list column", cols: with(0, arrowtest.Column{Name: "name", Type: arrow.ListOf(f64), Vals: []string{"[1]", "[2]", "[3]", "[4]", "[5]", "[6]"}}), wantErr: `column "name": type list<element: float64, nullable> is not numeric`},
		{name: "unknown column", cols: goodColumns(), opt: store.TableOptions{Features: []string{"f4"}}, wantErr: `unknown feature column "f4"; available columns: "name", "f1", "f2", "f3", "label"`},
		{name: "no rows", cols: []arrowtest.Column{{Name: "x", Type: f64, Vals: nil}}, wantErr: "no data rows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeParquet(t, tt.cols, min(3, len(tt.cols[0].Vals)))
			got, err := Read(path, tt.opt)
			if err == nil {
				t.Fatalf("succeeded with %+v, want error containing %q", got, tt.wantErr)
			}
			checkError(t, err, path, tt.wantErr)
		})
	}

	good := parquetBytes(t, goodColumns(), 3)
	for _, tt := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{name: "empty", data: nil, wantErr: "not a valid Parquet file"},
		{name: "CSV", data: []byte("a,b\n1,2\n"), wantErr: "not a valid Parquet file"},
		{name: "truncated", data: good[:len(good)-20], wantErr: "not a valid Parquet file"},
		{name: "cut in the data", data: append(slices.Clone(good[:40]), good[len(good)-200:]...), wantErr: "data.parquet: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := arrowtest.WriteFile(t, "data.parquet", tt.data)
			got, err := Read(path, store.TableOptions{Features: []string{"f1"}})
			if err == nil {
				t.Fatalf("succeeded with %+v, want error containing %q", got, tt.wantErr)
			}
			checkError(t, err, path, tt.wantErr)
		})
	}
}

// checkError checks that err is one line that starts with the input name
// and contains want.
func checkError(t *testing.T, err error, name, want string) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, name+":") || !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line starting with %q and containing %q", msg, name+":", want)
	}
}

// TestWriteMembership writes memberships and reads them back with
// Parquet's own reader: flat required columns of the Arrow types of
// store.MembershipSchema, bit for bit.
func TestWriteMembership(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, k int
	}{
		{name: "empty", n: 0, k: 2},
		{name: "k=1", n: 7, k: 1},
		{name: "two row groups", n: store.MembershipBatchRows + 5, k: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(tc.n)))
			W := make([]float64, tc.n*tc.k)
			for i := range W {
				W[i] = rng.Float64()
			}
			var buf bytes.Buffer
			if err := WriteMembership(&buf, W, tc.n, tc.k); err != nil {
				t.Fatal(err)
			}
			rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			defer rdr.Close()
			sc := rdr.MetaData().Schema
			if sc.NumColumns() != tc.k+3 {
				t.Fatalf("%d leaf columns, want %d", sc.NumColumns(), tc.k+3)
			}
			for c := range sc.NumColumns() {
				if col := sc.Column(c); col.MaxDefinitionLevel() != 0 || col.MaxRepetitionLevel() != 0 {
					t.Errorf("column %s is not a flat required column (def %d, rep %d)", col.Name(), col.MaxDefinitionLevel(), col.MaxRepetitionLevel())
				}
			}
			fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := fr.ReadTable(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Release()
			if !sameFields(tbl.Schema(), store.MembershipSchema(tc.k)) {
				t.Fatalf("schema %v, want %v", tbl.Schema(), store.MembershipSchema(tc.k))
			}
			if int(tbl.NumRows()) != tc.n {
				t.Fatalf("%d rows, want %d", tbl.NumRows(), tc.n)
			}
			tr := array.NewTableReader(tbl, 1000)
			defer tr.Release()
			row := 0
			for tr.Next() {
				rec := tr.RecordBatch()
				arrowtest.CheckMembership(t, rec, W, row, tc.k, store.Argmax)
				row += int(rec.NumRows())
			}
		})
	}
	if err := WriteMembership(&bytes.Buffer{}, make([]float64, 5), 2, 3); err == nil {
		t.Error("no error for a W of the wrong size")
	}
}

// sameFields reports whether two schemas have the same field names, types
// and nullability, whatever their metadata.
func sameFields(a, b *arrow.Schema) bool {
	return slices.EqualFunc(a.Fields(), b.Fields(), func(x, y arrow.Field) bool {
		return x.Name == y.Name && arrow.TypeEqual(x.Type, y.Type) && x.Nullable == y.Nullable
	})
}

// FuzzReadFrom checks that the Parquet reader never panics, that its
// errors are one line naming the input, and that tables it returns are
// consistent.
func FuzzReadFrom(f *testing.F) {
	f.Add(parquetBytes(f, goodColumns(), 3))
	f.Add(parquetBytes(f, goodColumns()[1:], 6))
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.parquet"
		tab, err := ReadFrom(bytes.NewReader(data), name, store.TableOptions{})
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, name+":") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q is not one line starting with the input name", msg)
			}
			return
		}
		if tab.N < 1 || tab.P < 1 || len(tab.Features) != tab.N*tab.P || len(tab.Names) != tab.P {
			t.Fatalf("inconsistent table: N=%d P=%d len(Features)=%d", tab.N, tab.P, len(tab.Features))
		}
		for i, v := range tab.Features {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("feature %d is %v", i, v)
			}
		}
		if tab.Labels != nil && len(tab.Labels) != tab.N {
			t.Fatalf("%d labels for %d rows", len(tab.Labels), tab.N)
		}
	})
}

// BenchmarkRead reads a Parquet file of 16 float64 features and an int32
// label into a mapped features file.
func BenchmarkRead(b *testing.B) {
	const rows = 1 << 18
	data := parquetBytes(b, arrowtest.BenchmarkColumns(rows), rows/2)
	dir := b.TempDir()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		tab, err := ReadFrom(bytes.NewReader(data), "bench.parquet", store.TableOptions{MapDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		tab.Close()
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
