package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
)

// TestOpenInput reads one data set from files of every format and name,
// with and without a work directory, and checks the format choice.
func TestOpenInput(t *testing.T) {
	dir := t.TempDir()
	gens := map[string]string{} // file → format gen wrote
	for _, name := range []string{"d.parquet", "d.arrow", "d.csv", "d.csv.gz"} {
		runGen(t, "-n", "300", "-p", "2", "-k", "3", "-seed", "4", "-q", "-o", filepath.Join(dir, name))
	}
	gens["d.parquet"], gens["d.arrow"], gens["d.csv"], gens["d.csv.gz"] = "parquet", "arrow", "csv", "csv"
	// The same bytes under names that do not say their format.
	for from, to := range map[string]string{"d.parquet": "parquet.data", "d.arrow": "arrow.csv", "d.csv": "plain.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
		gens[to] = gens[from]
	}
	want, err := store.ReadCSV(filepath.Join(dir, "d.csv"), store.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, format := range gens {
		path := filepath.Join(dir, name)
		if got, err := input.Detect(path); err != nil || got != format {
			t.Errorf("Detect(%s) = %q, %v; want %q", name, got, err, format)
		}
		for _, workdir := range []string{"", t.TempDir()} {
			tab, err := input.Open(path, "auto", store.TableOptions{}, workdir)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if (tab.MappedPath() != "") != (workdir != "") {
				t.Errorf("%s, workdir %q: features mapped at %q", name, workdir, tab.MappedPath())
			}
			if workdir != "" && tab.MappedPath() != filepath.Join(workdir, store.FeaturesFile) {
				t.Errorf("%s: features at %s, want in the work directory", name, tab.MappedPath())
			}
			if a, b := tableView(tab), tableView(want); !reflect.DeepEqual(a, b) {
				t.Errorf("%s, workdir %q: table differs from the CSV's", name, workdir)
			}
			if err := tab.Close(); err != nil {
				t.Error(err)
			}
		}
	}

	stream := filepath.Join(dir, "s.arrows")
	writeStream(t, stream)
	if f, err := input.Detect(stream); f != "arrow" || err != nil {
		t.Errorf("Detect(s.arrows) = %q, %v", f, err)
	}
	tab, err := input.Open(stream, "", store.TableOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if wantTab := (store.Table{Features: []float64{3, 1, 2}, N: 3, P: 1, Names: []string{"a"}, Labels: []int{0, 1, 0}, Classes: []string{"u", "v"}, LabelName: "label"}); !reflect.DeepEqual(tableView(tab), wantTab) {
		t.Errorf("stream: got %+v, want %+v", tableView(tab), wantTab)
	}

	// -format overrides the bytes and the name, and -features applies to
	// every format.
	for _, tc := range []struct {
		file, format string
		opt          store.TableOptions
		want         string
	}{
		{file: "d.csv", format: "parquet", want: "d.csv: not a valid Parquet file"},
		{file: "d.parquet", format: "csv", want: "d.parquet:"},
		{file: "d.csv", format: "arrow", want: "d.csv: not a valid Arrow IPC stream"},
		{file: "d.arrow", format: "yaml", want: `unknown format "yaml", want auto, csv, arrow or parquet`},
		{file: "d.arrow", opt: store.TableOptions{Features: []string{"x3"}}, want: `d.arrow: unknown feature column "x3"; available columns: "x1", "x2", "label"`},
		{file: "missing.parquet", want: "missing.parquet"},
	} {
		_, err := input.Open(filepath.Join(dir, tc.file), tc.format, tc.opt, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s as %q: error %v, want one line containing %q", tc.file, tc.format, err, tc.want)
		}
	}
}

// writeStream writes a small Arrow IPC stream with columns a (int64) and
// label (utf8).
func writeStream(t *testing.T, path string) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "label", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{3, 1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"u", "v", "u"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := ipc.NewWriter(f, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
