package store

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// goodTable is the content of testdata/good.csv.
var goodTable = &Table{
	Features: []float64{
		5.1, 3.5, 1.4,
		4.9, 3.0, 1.4,
		7.0, 3.2, 4.7,
		6.4, 3.2, 4.5,
		6.3, 3.3, 6.0,
		5.8, 2.7, 5.1,
	},
	N: 6, P: 3,
	Names:     []string{"f1", "f2", "f3"},
	Labels:    []int{0, 0, 1, 1, 2, 2},
	Classes:   []string{"setosa", "versicolor", "virginica"},
	LabelName: "label",
}

// readTable reads a test input: the file testdata/file if file is set,
// otherwise content under the name "input.csv". It returns the name used.
func readTable(file, content string, opt CSVOptions) (*Table, string, error) {
	if file != "" {
		path := filepath.Join("testdata", file)
		t, err := ReadCSV(path, opt)
		return t, path, err
	}
	t, err := ParseCSV(strings.NewReader(content), "input.csv", opt)
	return t, "input.csv", err
}

func TestParseCSV(t *testing.T) {
	tests := []struct {
		name    string
		file    string // under testdata; if empty, content is parsed
		content string
		opt     CSVOptions
		want    *Table
	}{
		{name: "good", file: "good.csv", want: goodTable},
		{name: "gzip", file: "good.csv.gz", want: goodTable},
		{
			name: "select and reorder features",
			file: "good.csv",
			opt:  CSVOptions{Features: []string{"f3", "f1"}},
			want: &Table{
				Features:  []float64{1.4, 5.1, 1.4, 4.9, 4.7, 7.0, 4.5, 6.4, 6.0, 6.3, 5.1, 5.8},
				N:         6,
				P:         2,
				Names:     []string{"f3", "f1"},
				Labels:    goodTable.Labels,
				Classes:   goodTable.Classes,
				LabelName: "label",
			},
		},
		{
			// A model's new rows: the label column is never read, so a
			// blank, NA or any other text there is no error (issue 34,
			// item 11), and it is still no feature.
			name:    "ignored label",
			content: "a,label,b\n1,,2\n3,NA,4\n5,x,6\n",
			opt:     CSVOptions{IgnoreLabel: true},
			want:    &Table{Features: []float64{1, 2, 3, 4, 5, 6}, N: 3, P: 2, Names: []string{"a", "b"}},
		},
		{
			name: "other label column",
			file: "good.csv",
			opt:  CSVOptions{Features: []string{"f1"}, Label: "f2"},
			want: &Table{
				Features:  []float64{5.1, 4.9, 7.0, 6.4, 6.3, 5.8},
				N:         6,
				P:         1,
				Names:     []string{"f1"},
				Labels:    []int{4, 1, 2, 2, 3, 0},
				Classes:   []string{"2.7", "3.0", "3.2", "3.3", "3.5"},
				LabelName: "f2",
			},
		},
		{
			name: "byte order mark, spaces and CRLF",
			file: "bom.csv",
			want: &Table{
				Features:  []float64{1, 2, 3, 4},
				N:         2,
				P:         2,
				Names:     []string{"a", "b"},
				Labels:    []int{0, 1},
				Classes:   []string{"x", "y"},
				LabelName: "label",
			},
		},
		{
			name: "numeric labels",
			file: "numeric_labels.csv",
			want: &Table{
				Features:  []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
				N:         5,
				P:         2,
				Names:     []string{"f1", "f2"},
				Labels:    []int{3, 1, 0, 1, 2},
				Classes:   []string{"-1", "2", "010", "10"},
				LabelName: "label",
			},
		},
		{
			name:    "mixed labels sort as text",
			content: "x,label\n1,10\n2,9\n3,b\n",
			want: &Table{
				Features:  []float64{1, 2, 3},
				N:         3,
				P:         1,
				Names:     []string{"x"},
				Labels:    []int{0, 1, 2},
				Classes:   []string{"10", "9", "b"},
				LabelName: "label",
			},
		},
		{
			name:    "no label column",
			content: "x,y\n 1 , -2.5e3 \n.25,+10.\n",
			want:    &Table{Features: []float64{1, -2500, 0.25, 10}, N: 2, P: 2, Names: []string{"x", "y"}},
		},
		{
			name:    "CR line ends",
			content: "a,b\r1,2\r3,4\r",
			want:    &Table{Features: []float64{1, 2, 3, 4}, N: 2, P: 2, Names: []string{"a", "b"}},
		},
		{
			name:    "CR line ends, no final line end",
			content: "a,label\r1,x\r3,y",
			want:    &Table{Features: []float64{1, 3}, N: 2, P: 1, Names: []string{"a"}, Labels: []int{0, 1}, Classes: []string{"x", "y"}, LabelName: "label"},
		},
		{
			name:    "column numbers as names",
			content: "0,1\n5,6\n",
			want:    &Table{Features: []float64{5, 6}, N: 1, P: 2, Names: []string{"0", "1"}},
		},
		{
			name:    "column numbers from 1, and a label",
			content: "1,2,label\n5,6,a\n",
			want:    &Table{Features: []float64{5, 6}, N: 1, P: 2, Names: []string{"1", "2"}, Labels: []int{0}, Classes: []string{"a"}, LabelName: "label"},
		},
		{
			name:    "quoted fields and no final newline",
			content: "\"x\",\"y, z\",label\n\"1\",2,\"a b\"",
			want: &Table{
				Features:  []float64{1, 2},
				N:         1,
				P:         2,
				Names:     []string{"x", "y, z"},
				Labels:    []int{0},
				Classes:   []string{"a b"},
				LabelName: "label",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := readTable(tt.file, tt.content, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseCSVErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string // under testdata; if empty, content is parsed
		content string
		opt     CSVOptions
		wantErr string // substring of the error
		line    int    // line the error must name, 0 for none
		column  string // column the error must name, "" for none
		is      error  // sentinel the error must match, nil for none
	}{
		{name: "missing file", file: "missing.csv", wantErr: "missing.csv", is: fs.ErrNotExist},
		{name: "empty file", file: "empty.csv", wantErr: "empty file, expected a header row"},
		{name: "header only", file: "header_only.csv", wantErr: "no data rows after the header"},
		{name: "duplicate column", file: "dup_header.csv", wantErr: `duplicate column name "a" (columns 1 and 3)`, line: 1},
		{name: "empty column name", file: "empty_name.csv", wantErr: "column 2 has an empty name", line: 1},
		{name: "blank column name", content: "a, \t,c\n1,2,3\n", wantErr: "column 2 has an empty name", line: 1},
		{name: "ragged row", file: "ragged.csv", wantErr: "wrong number of fields: got 2, want 3", line: 4, is: csv.ErrFieldCount},
		{name: "ragged after blank line", file: "blank_line.csv", wantErr: "wrong number of fields: got 1, want 2", line: 4},
		{name: "not a number", file: "nonnumeric.csv", wantErr: `"abc" is not a number`, line: 17, column: "f3"},
		{name: "empty feature", content: "a,b\n1,\n", wantErr: `"" is not a number`, line: 2, column: "b"},
		{name: "NaN", file: "nan.csv", wantErr: `"NaN" is not a finite number`, line: 3, column: "b"},
		{name: "Inf", file: "inf.csv", wantErr: `"-Inf" is not a finite number`, line: 3, column: "a"},
		{name: "CR line ends: the line of a bad cell", content: "a,b\r1,2\r3,x\r", wantErr: `"x" is not a number`, line: 3, column: "b"},
		{name: "CR line ends, header only", content: "a,b\r", wantErr: "no data rows after the header"},
		{name: "Go digit separator", content: "a,b\n1,2\n3,1_000\n", wantErr: `"1_000" is not a decimal number (digits with an optional sign, point and exponent`, line: 3, column: "b"},
		{name: "Go hexadecimal float", content: "a,b\n0x1p3,2\n", wantErr: `"0x1p3" is not a decimal number`, line: 2, column: "a"},
		{name: "hexadecimal integer", content: "a,b\n1,0x10\n", wantErr: `"0x10" is not a decimal number`, line: 2, column: "b"},
		{name: "exponent without digits", content: "a,b\n1,2e\n", wantErr: `"2e" is not a number`, line: 2, column: "b"},
		{name: "lone point", content: "a,b\n1,.\n", wantErr: `"." is not a number`, line: 2, column: "b"},
		{name: "Infinity", content: "a,b\n1,+Infinity\n", wantErr: `"+Infinity" is not a finite number`, line: 2, column: "b"},
		{name: "no header", content: "3.5,-1,2\n4,5,6\n", wantErr: `input.csv:1: the first line holds numbers, not column names ("3.5", "-1", "2"): the file seems to have no header; add a first line of column names`, line: 1},
		{name: "no header, integers", content: "3,1,2\n4,5,6\n", wantErr: "the file seems to have no header", line: 1},
		{name: "out of range", file: "range.csv", wantErr: `"1e400" is out of range`, line: 2, column: "b"},
		{name: "line after multi-line record", file: "quoted.csv", opt: CSVOptions{Features: []string{"f1"}}, wantErr: `"abc" is not a number`, line: 4, column: "f1"},
		{name: "empty label", file: "empty_label.csv", wantErr: "empty label", line: 3, column: "label"},
		{name: "NA label", content: "a,label\n1,x\n2,NA\n", wantErr: `missing label "NA" (a row with a missing label is refused: empty, NA, N/A, NaN, null or None;`, line: 3, column: "label"},
		{name: "NaN label", content: "a,label\n1,x\n2, nan \n", wantErr: `missing label "nan"`, line: 3, column: "label"},
		{name: "N/A label", content: "a,label\n1,N/A\n2,y\n", wantErr: `missing label "N/A"`, line: 2, column: "label"},
		{name: "bad quote", file: "bad_quote.csv", wantErr: `bare " in non-quoted-field`, line: 3, is: csv.ErrBareQuote},
		{name: "unterminated quote", content: "a,b\n1,\"2\n3,4\n", wantErr: `extraneous or missing " in quoted-field (in the record starting on line 2)`, line: 3, is: csv.ErrQuote},
		{name: "unknown feature", file: "good.csv", opt: CSVOptions{Features: []string{"f1", "f9"}}, wantErr: `unknown feature column "f9"; available columns: "f1", "f2", "f3", "label"`},
		{name: "unknown label", file: "good.csv", opt: CSVOptions{Label: "class"}, wantErr: `unknown label column "class"; available columns: "f1", "f2", "f3", "label"`},
		{name: "feature listed twice", file: "good.csv", opt: CSVOptions{Features: []string{"f1", "f2", "f1"}}, wantErr: `feature column "f1" is listed twice`},
		{name: "label as feature", file: "good.csv", opt: CSVOptions{Features: []string{"f1", "label"}}, wantErr: `column "label" is the label column`},
		{name: "chosen label as feature", file: "good.csv", opt: CSVOptions{Features: []string{"f1", "f2"}, Label: "f2"}, wantErr: `column "f2" is the label column`},
		{name: "no features listed", file: "good.csv", opt: CSVOptions{Features: []string{}}, wantErr: "no feature columns"},
		{name: "only a label column", file: "only_label.csv", wantErr: "no feature columns"},
		{name: "truncated gzip", file: "broken.csv.gz", wantErr: "corrupt gzip stream: unexpected EOF", is: io.ErrUnexpectedEOF},
		{name: "gzip checksum", file: "badcrc.csv.gz", wantErr: "corrupt gzip stream: gzip: invalid checksum", is: gzip.ErrChecksum},
		{name: "gzip bad header", content: "\x1f\x8b\x00garbage", wantErr: "corrupt gzip stream"},
		{name: "UTF-16 LE", content: "\xff\xfex\x001\x00\n\x001\x00", wantErr: "the text is UTF-16 (byte order mark FF FE): save it as UTF-8"},
		{name: "UTF-16 without a mark", content: "x\x001\x00\n\x001\x00", wantErr: "NUL bytes in the first 8 bytes: the text is UTF-16 or binary, not UTF-8 CSV: save it as UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, name, err := readTable(tt.file, tt.content, tt.opt)
			if err == nil {
				t.Fatalf("succeeded with %+v, want error containing %q", got, tt.wantErr)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantErr) {
				t.Errorf("error %q does not contain %q", msg, tt.wantErr)
			}
			if !strings.Contains(msg, name) {
				t.Errorf("error %q does not name the input %q", msg, name)
			}
			if tt.line > 0 && !strings.HasPrefix(msg, fmt.Sprintf("%s:%d:", name, tt.line)) {
				t.Errorf("error %q does not start with %q", msg, fmt.Sprintf("%s:%d:", name, tt.line))
			}
			if tt.column != "" && !strings.Contains(msg, fmt.Sprintf("column %q", tt.column)) {
				t.Errorf("error %q does not name column %q", msg, tt.column)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q spans several lines", msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not match %v", msg, tt.is)
			}
		})
	}
}

// TestParseCSVErrorExample checks the exact form of a cell error.
func TestParseCSVErrorExample(t *testing.T) {
	content := "f1,f2,f3\n" + strings.Repeat("1,2,3\n", 15) + "1,2,abc\n"
	_, err := ParseCSV(strings.NewReader(content), "yeast.csv", CSVOptions{})
	const want = `yeast.csv:17: column "f3": "abc" is not a number`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// fuzzSeeds returns the CSV fixtures in testdata.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, pattern := range []string{"*.csv", "*.csv.gz"} {
		names, err := filepath.Glob(filepath.Join("testdata", pattern))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	if len(seeds) == 0 {
		f.Fatal("no seed files in testdata")
	}
	return seeds
}

// FuzzParseCSV checks that ParseCSV never panics and that every table it
// returns is consistent. The features argument, if not empty, is a
// comma-separated list for CSVOptions.Features.
func FuzzParseCSV(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b, "", "")
	}
	good, err := os.ReadFile(filepath.Join("testdata", "good.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, "f3,f1", "")
	f.Add(good, "f1", "f2")
	f.Add(good, "f1,label", "")
	f.Add(good, "", "nope")

	f.Fuzz(func(t *testing.T, data []byte, features, label string) {
		var opt CSVOptions
		if features != "" {
			opt.Features = strings.Split(features, ",")
		}
		opt.Label = label
		tab, err := ParseCSV(strings.NewReader(string(data)), "fuzz.csv", opt)
		checkRead(t, "fuzz.csv", tab, err)
	})
}

// benchmarkCSV returns a CSV text of rows records of 40 features and a label.
func benchmarkCSV(rows int) []byte {
	var b []byte
	for j := range 40 {
		b = fmt.Appendf(b, "f%d,", j)
	}
	b = append(b, "label\n"...)
	for i := range rows {
		for j := range 40 {
			b = strconv.AppendFloat(b, float64(i*40+j)/7, 'g', -1, 64)
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(i%10), 10)
		b = append(b, '\n')
	}
	return b
}

func BenchmarkParseCSV(b *testing.B) {
	data := benchmarkCSV(10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseCSV(bytes.NewReader(data), "bench.csv", CSVOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
