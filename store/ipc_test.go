package store

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ssnmf/ssnmf/store/internal/arrowtest"
)

// arrowBytes encodes batches, which share a schema, as an IPC file or
// stream.
func arrowBytes(t testing.TB, stream bool, batches ...arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	schema := batches[0].Schema()
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(&buf, ipc.WithSchema(schema))
	} else {
		fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	}
	for _, rec := range batches {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// goodColumns is testdata/good.csv as columns.
func goodColumns() []arrowtest.Column {
	return []arrowtest.Column{
		{Name: "f1", Type: arrow.PrimitiveTypes.Float64, Vals: []string{"5.1", "4.9", "7.0", "6.4", "6.3", "5.8"}},
		{Name: "f2", Type: arrow.PrimitiveTypes.Float64, Vals: []string{"3.5", "3.0", "3.2", "3.2", "3.3", "2.7"}},
		{Name: "f3", Type: arrow.PrimitiveTypes.Float64, Vals: []string{"1.4", "1.4", "4.7", "4.5", "6.0", "5.1"}},
		{Name: "label", Type: arrow.BinaryTypes.String, Vals: []string{"setosa", "setosa", "versicolor", "versicolor", "virginica", "virginica"}},
	}
}

// writeArrow writes the columns, split into two batches after row at, as an
// IPC file or stream in a temporary directory and returns its path.
func writeArrow(t *testing.T, stream bool, cols []arrowtest.Column, at int) string {
	t.Helper()
	ra := arrowtest.Record(t, arrowtest.Rows(cols, 0, at)...)
	rb := arrowtest.Record(t, arrowtest.Rows(cols, at, len(cols[0].Vals))...)
	defer ra.Release()
	defer rb.Release()
	return arrowtest.WriteFile(t, "data.arrow", arrowBytes(t, stream, ra, rb))
}

// sameTable compares tables, ignoring where the features are kept.
func sameTable(t *testing.T, got, want *Table) {
	t.Helper()
	g, w := *got, *want
	g.mat, w.mat = nil, nil
	if !reflect.DeepEqual(&g, &w) {
		t.Errorf("got  %+v\nwant %+v", &g, &w)
	}
}

// TestReadArrow reads the same data as testdata/good.csv from IPC files and
// streams, in memory and mapped, and other column types and selections.
func TestReadArrow(t *testing.T) {
	ints := []arrowtest.Column{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Vals: []string{"-128", "127", "0"}},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Vals: []string{"-32768", "1", "2"}},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Vals: []string{"7", "-7", "0"}},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Vals: []string{"9007199254740993", "-1", "5"}},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Vals: []string{"255", "0", "1"}},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Vals: []string{"65535", "0", "1"}},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Vals: []string{"4294967295", "0", "1"}},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Vals: []string{"18446744073709551615", "0", "1"}},
		{Name: "h", Type: arrow.FixedWidthTypes.Float16, Vals: []string{"0.5", "-2", "65504"}},
		{Name: "s", Type: arrow.PrimitiveTypes.Float32, Vals: []string{"0.1", "-3.5", "1e30"}},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Vals: []string{"10", "2", "10"}},
	}
	intsWant := &Table{
		Features: []float64{
			-128, -32768, 7, 9007199254740992, 255, 65535, 4294967295, 18446744073709551615, 0.5, float64(float32(0.1)), // 2^53+1 rounds to 2^53
			127, 1, -7, -1, 0, 0, 0, 0, -2, -3.5,
			0, 2, 0, 5, 1, 1, 1, 1, 65504, float64(float32(1e30)),
		},
		N: 3, P: 10,
		Names:     []string{"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "h", "s"},
		Labels:    []int{1, 0, 1},
		Classes:   []string{"2", "10"}, // numeric order
		LabelName: "label",
	}
	tests := []struct {
		name   string
		cols   []arrowtest.Column
		at     int // first batch holds rows [0, at)
		opt    TableOptions
		want   *Table
		stream bool
	}{
		{name: "good as file", cols: goodColumns(), at: 4, want: goodTable},
		{name: "good as stream", cols: goodColumns(), at: 2, want: goodTable, stream: true},
		{name: "empty first batch", cols: goodColumns(), at: 0, want: goodTable, stream: true},
		{name: "every numeric type", cols: ints, at: 1, want: intsWant},
		{
			name: "select, reorder, other label",
			cols: goodColumns(), at: 3,
			opt: TableOptions{Features: []string{"f3", "f1"}, Label: "f2"},
			want: &Table{
				Features: []float64{1.4, 5.1, 1.4, 4.9, 4.7, 7.0, 4.5, 6.4, 6.0, 6.3, 5.1, 5.8},
				N:        6, P: 2,
				Names:     []string{"f3", "f1"},
				Labels:    []int{4, 1, 2, 2, 3, 0},
				Classes:   []string{"2.7", "3", "3.2", "3.3", "3.5"},
				LabelName: "f2",
			},
		},
		{
			name: "no label column",
			cols: goodColumns()[:2], at: 5,
			want: &Table{
				Features: []float64{5.1, 3.5, 4.9, 3.0, 7.0, 3.2, 6.4, 3.2, 6.3, 3.3, 5.8, 2.7},
				N:        6, P: 2, Names: []string{"f1", "f2"},
			},
		},
		{
			name: "dictionary labels",
			cols: []arrowtest.Column{
				{Name: "x", Type: arrow.PrimitiveTypes.Float64, Vals: []string{"1", "2", "3"}},
				{Name: "label", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, Vals: []string{"b", "a", "b"}},
			},
			at: 1, stream: true,
			want: &Table{Features: []float64{1, 2, 3}, N: 3, P: 1, Names: []string{"x"}, Labels: []int{1, 0, 1}, Classes: []string{"a", "b"}, LabelName: "label"},
		},
		{
			name: "float labels and large strings",
			cols: []arrowtest.Column{
				{Name: "x", Type: arrow.BinaryTypes.LargeString, Vals: []string{"u", "v", "w"}},
				{Name: "y", Type: arrow.PrimitiveTypes.Float64, Vals: []string{"1", "2", "3"}},
				{Name: "label", Type: arrow.PrimitiveTypes.Float32, Vals: []string{"1", "0", "1"}},
			},
			at: 2, opt: TableOptions{Features: []string{"y"}},
			want: &Table{Features: []float64{1, 2, 3}, N: 3, P: 1, Names: []string{"y"}, Labels: []int{1, 0, 1}, Classes: []string{"0", "1"}, LabelName: "label"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeArrow(t, tt.stream, tt.cols, tt.at)
			got, err := ReadArrow(path, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			sameTable(t, got, tt.want)
			if got.MappedPath() != "" {
				t.Errorf("MappedPath %q without MapDir", got.MappedPath())
			}

			opt := tt.opt
			opt.MapDir = t.TempDir()
			mapped, err := ReadArrow(path, opt)
			if err != nil {
				t.Fatal(err)
			}
			sameTable(t, mapped, tt.want)
			if want := filepath.Join(opt.MapDir, FeaturesFile); mapped.MappedPath() != want {
				t.Errorf("MappedPath %q, want %q", mapped.MappedPath(), want)
			}
			if err := mapped.Close(); err != nil {
				t.Fatal(err)
			}
			if err := mapped.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			m, err := OpenMatrix(filepath.Join(opt.MapDir, FeaturesFile))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.Rows() != tt.want.N || m.Cols() != tt.want.P || !slices.Equal(m.Data(), tt.want.Features) {
				t.Errorf("features file %d×%d %v, want %d×%d %v", m.Rows(), m.Cols(), m.Data(), tt.want.N, tt.want.P, tt.want.Features)
			}
		})
	}
}

// TestReadArrowMatchesCSV reads the same values from CSV and Arrow, with a
// features file, bit for bit.
func TestReadArrowMatchesCSV(t *testing.T) {
	fromCSV, err := ReadCSV(filepath.Join("testdata", "good.csv"), TableOptions{MapDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer fromCSV.Close()
	sameTable(t, fromCSV, goodTable)
	fromArrow, err := ReadArrow(writeArrow(t, false, goodColumns(), 3), TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameTable(t, fromArrow, fromCSV)
}

func TestReadArrowErrors(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	str := arrow.BinaryTypes.String
	good := goodColumns()
	withCol := func(j int, c arrowtest.Column) []arrowtest.Column {
		cols := slices.Clone(good)
		cols[j] = c
		return cols
	}
	tests := []struct {
		name    string
		cols    []arrowtest.Column
		opt     TableOptions
		wantErr string // substring of the error
		row     int    // row index the error must name, -1 for none
		column  string // column the error must name, "" for none
	}{
		{name: "null feature in the second batch", cols: withCol(1, arrowtest.Column{Name: "f2", Type: f64, Vals: []string{"1", "2", "3", "4", arrowtest.Null, "6"}}), wantErr: "null value", row: 4, column: "f2"},
		{name: "NaN", cols: withCol(0, arrowtest.Column{Name: "f1", Type: f64, Vals: []string{"NaN", "2", "3", "4", "5", "6"}}), wantErr: "NaN is not a finite number", row: 0, column: "f1"},
		{name: "Inf", cols: withCol(2, arrowtest.Column{Name: "f3", Type: arrow.PrimitiveTypes.Float32, Vals: []string{"1", "2", "-Inf", "4", "5", "6"}}), wantErr: "-Inf is not a finite number", row: 2, column: "f3"},
		{name: "null label", cols: withCol(3, arrowtest.Column{Name: "label", Type: str, Vals: []string{"a", "b", "c", "d", "e", arrowtest.Null}}), wantErr: "null label", row: 5, column: "label"},
		{name: "empty label", cols: withCol(3, arrowtest.Column{Name: "label", Type: str, Vals: []string{"a", " ", "c", "d", "e", "f"}}), wantErr: "empty label", row: 1, column: "label"},
		{name: "NA label", cols: withCol(3, arrowtest.Column{Name: "label", Type: str, Vals: []string{"a", "b", "NA", "d", "e", "f"}}), wantErr: `missing label "NA"`, row: 2, column: "label"},
		{name: "NaN text label", cols: withCol(3, arrowtest.Column{Name: "label", Type: str, Vals: []string{"a", "b", "c", "d", "NaN", "f"}}), wantErr: `missing label "NaN"`, row: 4, column: "label"},
		{name: "NaN label", cols: withCol(3, arrowtest.Column{Name: "label", Type: f64, Vals: []string{"1", "2", "3", "NaN", "5", "6"}}), wantErr: "NaN is not a finite label", row: 3, column: "label"},
		{name: "string feature", cols: withCol(1, arrowtest.Column{Name: "f2", Type: str, Vals: []string{"a", "b", "c", "d", "e", "f"}}), wantErr: "type utf8 is not numeric; choose the feature columns with -features", row: -1, column: "f2"},
		{name: "bool feature", cols: withCol(1, arrowtest.Column{Name: "f2", Type: arrow.FixedWidthTypes.Boolean, Vals: []string{"true", "false", "true", "true", "true", "true"}}), wantErr: "type bool is not numeric", row: -1, column: "f2"},
		{name: "bool label", cols: withCol(3, arrowtest.Column{Name: "label", Type: arrow.FixedWidthTypes.Boolean, Vals: []string{"true", "false", "true", "true", "true", "true"}}), wantErr: `label column "label": type bool is not supported`, row: -1},
		{name: "unknown feature", cols: good, opt: TableOptions{Features: []string{"f9"}}, wantErr: `unknown feature column "f9"; available columns: "f1", "f2", "f3", "label"`, row: -1},
		{name: "unknown label", cols: good, opt: TableOptions{Label: "y"}, wantErr: `unknown label column "y"`, row: -1},
		{name: "label as feature", cols: good, opt: TableOptions{Features: []string{"label"}}, wantErr: `column "label" is the label column`, row: -1},
		{name: "duplicate column", cols: withCol(2, arrowtest.Column{Name: "f1", Type: f64, Vals: []string{"1", "2", "3", "4", "5", "6"}}), wantErr: `duplicate column name "f1" (columns 1 and 3)`, row: -1},
		{name: "empty column name", cols: withCol(2, arrowtest.Column{Name: "", Type: f64, Vals: []string{"1", "2", "3", "4", "5", "6"}}), wantErr: "column 3 has an empty name", row: -1},
		{name: "no rows", cols: []arrowtest.Column{{Name: "x", Type: f64, Vals: nil}}, wantErr: "no data rows", row: -1},
		{name: "only a label", cols: good[3:], wantErr: "no feature columns", row: -1},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name + map[bool]string{false: " (file)", true: " (stream)"}[stream]
			t.Run(name, func(t *testing.T) {
				path := writeArrow(t, stream, tt.cols, min(3, len(tt.cols[0].Vals)))
				opt := tt.opt
				opt.MapDir = t.TempDir()
				got, err := ReadArrow(path, opt)
				if err == nil {
					got.Close()
					t.Fatalf("succeeded with %+v, want error containing %q", got, tt.wantErr)
				}
				checkError(t, err, path, tt.wantErr, tt.column)
				if tt.row >= 0 && !strings.Contains(err.Error(), "row index "+strconv.Itoa(tt.row)+":") {
					t.Errorf("error %q does not name row index %d", err, tt.row)
				}
				if names := dirNames(t, opt.MapDir); len(names) != 0 {
					t.Errorf("failed read left %q in the map directory", names)
				}
			})
		}
	}
}

// checkError checks that err is one line that starts with the input name,
// contains want, and names column if it is not empty.
func checkError(t *testing.T, err error, name, want, column string) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, name+":") {
		t.Errorf("error %q does not start with the input name %q", msg, name)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("error %q does not contain %q", msg, want)
	}
	if column != "" && !strings.Contains(msg, "column \""+column+"\"") {
		t.Errorf("error %q does not name column %q", msg, column)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q spans several lines", msg)
	}
}

// TestReadArrowBadFiles checks damaged and foreign files.
func TestReadArrowBadFiles(t *testing.T) {
	rec := arrowtest.Record(t, goodColumns()...)
	defer rec.Release()
	file := arrowBytes(t, false, rec)
	stream := arrowBytes(t, true, rec)
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{name: "empty", data: nil, wantErr: "empty file"},
		{name: "CSV", data: []byte("a,b\n1,2\n"), wantErr: "not a valid Arrow IPC stream"},
		{name: "file truncated in the footer", data: file[:len(file)-10], wantErr: "Arrow IPC file"},
		{name: "file truncated to its magic", data: file[:8], wantErr: "not a valid Arrow IPC file"},
		{name: "stream truncated in a batch", data: stream[:len(stream)-40], wantErr: "data.arrow: "},
		{name: "stream without its schema", data: stream[:4], wantErr: "not a valid Arrow IPC stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := arrowtest.WriteFile(t, "data.arrow", tt.data)
			got, err := ReadArrow(path, TableOptions{})
			if err == nil {
				t.Fatalf("succeeded with %+v, want error containing %q", got, tt.wantErr)
			}
			checkError(t, err, path, tt.wantErr, "")
		})
	}
	if _, err := ReadArrow(filepath.Join(t.TempDir(), "missing.arrow"), TableOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error %v, want fs.ErrNotExist", err)
	}
}

// FuzzReadArrow checks that the IPC file and stream readers never panic,
// that errors are one line naming the input, and that every table they
// return is consistent.
func FuzzReadArrow(f *testing.F) {
	good := goodColumns()
	rec := arrowtest.Record(f, good...)
	defer rec.Release()
	ra := arrowtest.Record(f, arrowtest.Rows(good, 0, 2)...)
	rb := arrowtest.Record(f, arrowtest.Rows(good, 2, len(good[0].Vals))...)
	defer ra.Release()
	defer rb.Release()
	ints := arrowtest.Record(f,
		arrowtest.Column{Name: "x", Type: arrow.PrimitiveTypes.Int32, Vals: []string{"1", arrowtest.Null, "3"}},
		arrowtest.Column{Name: "label", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, Vals: []string{"b", "a", arrowtest.Null}})
	defer ints.Release()
	for _, stream := range []bool{false, true} {
		f.Add(arrowBytes(f, stream, rec))
		f.Add(arrowBytes(f, stream, ra, rb))
		f.Add(arrowBytes(f, stream, ints))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.arrow"
		var tab *Table
		var err error
		if bytes.HasPrefix(data, []byte(arrowFileMagic)) {
			tab, err = readArrowFile(bytes.NewReader(data), name, TableOptions{}, int64(len(data)))
		} else {
			tab, err = readArrowStream(bytes.NewReader(data), name, TableOptions{}, 1<<20)
		}
		checkRead(t, name, tab, err)
	})
}

// BenchmarkReadArrow reads an in-memory IPC file of 16 features in batches
// of 65,536 rows, into a mapped features file.
func BenchmarkReadArrow(b *testing.B) {
	const rows = 1 << 18
	cols := arrowtest.BenchmarkColumns(rows)
	var batches []arrow.RecordBatch
	for lo := 0; lo < rows; lo += 1 << 16 {
		batches = append(batches, arrowtest.Record(b, arrowtest.Rows(cols, lo, lo+1<<16)...))
	}
	data := arrowBytes(b, false, batches...)
	dir := b.TempDir()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		tab, err := ReadArrowFile(bytes.NewReader(data), "bench.arrow", TableOptions{MapDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		tab.Close()
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestReadArrowSequential reads an IPC file and an IPC stream front to
// back, as from a pipe, without seeking: both give the table of
// good.csv. A reader that can only read, iotest.OneByteReader, stands for
// the pipe.
func TestReadArrowSequential(t *testing.T) {
	ra := arrowtest.Record(t, arrowtest.Rows(goodColumns(), 0, 4)...)
	rb := arrowtest.Record(t, arrowtest.Rows(goodColumns(), 4, 6)...)
	defer ra.Release()
	defer rb.Release()
	for _, stream := range []bool{false, true} {
		data := arrowBytes(t, stream, ra, rb)
		got, err := ReadArrowSequential(bufio.NewReader(iotest.OneByteReader(bytes.NewReader(data))), "pipe", TableOptions{})
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		sameTable(t, got, goodTable)
	}
	_, err := ReadArrowSequential(bufio.NewReader(strings.NewReader("ARROW1\x00\x00garbage")), "pipe", TableOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "pipe: ") {
		t.Errorf("a damaged file read as a stream: error %v, want one naming the input", err)
	}
}
