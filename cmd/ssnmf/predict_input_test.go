package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeFeatureParquet writes a Parquet file of float64 columns (by
// column) and a string column "label", nil entries of label being nulls.
func writeFeatureParquet(t *testing.T, path string, names []string, cols [][]float64, label []*string) {
	t.Helper()
	fields := make([]arrow.Field, 0, len(names)+1)
	for _, n := range names {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64})
	}
	fields = append(fields, arrow.Field{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true})
	s := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for q, c := range cols {
		b.Field(q).(*array.Float64Builder).AppendValues(c, nil)
	}
	lb := b.Field(len(cols)).(*array.StringBuilder)
	for _, l := range label {
		if l == nil {
			lb.AppendNull()
		} else {
			lb.Append(*l)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	writeRecordParquet(t, path, rec)
}

// writeText writes text to dir/name and returns its path.
func writeText(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// trainingCSV writes 200 rows of two groups in x1 (0 and 3 apart), noise
// in x2 and x3, and a label column, and returns its path.
func trainingCSV(t *testing.T, dir string) string {
	var b strings.Builder
	b.WriteString("x1,x2,x3,label\n")
	for i := range 200 {
		g := i % 2
		fmt.Fprintf(&b, "%g,%g,%g,%d\n", float64(3*g)+float64(i%7)/10, float64(i%5)/5, float64(i%11)/3, g)
	}
	return writeText(t, dir, "train.csv", b.String())
}

// TestPredictFarValues: a value far out of the training range (issue 34,
// item 4) was predicted as NaN memberships with exit 0, for CSV and
// Parquet, both searches, the Gaussian kernel and raw features; it is
// refused naming the file, row and column, and a value just inside the
// bound gets finite memberships.
func TestPredictFarValues(t *testing.T) {
	dir := t.TempDir()
	train := trainingCSV(t, dir)
	models := map[string][]string{
		"knn":      nil,
		"raw":      {"-standardize=false"},
		"gaussian": {"-affinity", "gaussian"},
	}
	for name, args := range models {
		if code, _, stderr := ssnmf(t, append([]string{"solve", "-q", "-k", "2", "-model", filepath.Join(dir, name)}, append(args, train)...)...); code != 0 {
			t.Fatalf("solve %s: %s", name, stderr)
		}
	}
	csv := func(v float64) string {
		return writeText(t, dir, fmt.Sprintf("far%g.csv", v), fmt.Sprintf("x1,x2,x3\n0.1,0.2,1\n%v,0.5,1\n3.2,0.1,2\n", v))
	}
	pq := filepath.Join(dir, "far.parquet")
	writeFeatureParquet(t, pq, []string{"x1", "x2", "x3"}, [][]float64{{0.1, 0.2, 3.2}, {0.2, 0.5, 0.1}, {1, 1e155, 2}}, []*string{nil, nil, nil})
	for _, tc := range []struct {
		name, model, input string
		args               []string
		want               string // "" for finite memberships
	}{
		{"csv exact", "knn", csv(1e155), []string{"-knn", "exact"}, `far1e+155.csv: row 1 (0-based, the id of -out): column "x1": 1e+155 is`},
		{"csv approx", "knn", csv(1e155), []string{"-knn", "approx"}, `row 1 (0-based, the id of -out): column "x1": 1e+155 is`},
		{"csv -1e300", "knn", csv(-1e300), nil, `column "x1": -1e+300 is`},
		{"csv largest float", "knn", csv(math.MaxFloat64), nil, `column "x1": 1.7976931348623157e+308 is`},
		{"parquet", "knn", pq, nil, `far.parquet: row 1 (0-based, the id of -out): column "x3": 1e+155 is`},
		{"raw features", "raw", csv(1e155), nil, `column "x1": 1e+155 with the model's -standardize=false: squared distances overflow above |x| = 1.94e+153`},
		{"gaussian", "gaussian", csv(1e155), nil, `column "x1": 1e+155 is`},
		{"inside the bound", "knn", csv(1e152), nil, ""},
		{"inside the bound, raw", "raw", csv(1e152), nil, ""},
		{"inside the bound, gaussian", "gaussian", csv(1e152), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.csv")
			code, _, stderr := ssnmf(t, append(append([]string{"predict", "-q", "-model", filepath.Join(dir, tc.model), "-out", out}, tc.args...), tc.input)...)
			if tc.want != "" {
				if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
					t.Fatalf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, exitUsage, tc.want)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Fatalf("a refused predict left %s behind (%v)", out, err)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			w, _ := readMemberships(t, out)
			for i, row := range w {
				var sum float64
				for _, v := range row {
					if math.IsNaN(v) || v < 0 {
						t.Fatalf("row %d: memberships %v", i, row)
					}
					sum += v
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Fatalf("row %d: memberships %v sum to %v", i, row, sum)
				}
			}
		})
	}
}

// TestPredictColumns: predict ignores the label column whatever it holds
// (issue 34, item 11: a blank or NA label was refused), reads the model's
// features by name from a file with other columns (item 12: a model of
// -features x1,x2 could not predict its own training file), and maps
// differently named columns with -features.
func TestPredictColumns(t *testing.T) {
	dir := t.TempDir()
	train := trainingCSV(t, dir)
	mdir, wout := filepath.Join(dir, "m"), filepath.Join(dir, "w.csv")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "2", "-features", "x1,x2", "-model", mdir, "-out", wout, train); code != 0 {
		t.Fatalf("solve: %s", stderr)
	}
	want, _ := readMemberships(t, wout)
	// The training file's rows with other names, a blank or NA label and
	// a column of text; the same rows in Parquet with null labels.
	b, err := os.ReadFile(train)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var renamed, blank strings.Builder
	renamed.WriteString("a,b,c,label\n")
	blank.WriteString("note,x2,x1,x3,label\n")
	var cols [][]float64 = make([][]float64, 3)
	var labels []*string
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		lab := []string{"", "NA", "n/a", " ", "null"}[i%5]
		fmt.Fprintf(&renamed, "%s,%s,%s,%s\n", f[0], f[1], f[2], lab)
		fmt.Fprintf(&blank, "text %d,%s,%s,%s,%s\n", i, f[1], f[0], f[2], lab)
		for q := range 3 {
			var v float64
			fmt.Sscan(f[q], &v)
			cols[q] = append(cols[q], v)
		}
		labels = append(labels, nil)
	}
	renamedCSV := writeText(t, dir, "renamed.csv", renamed.String())
	blankCSV := writeText(t, dir, "blank.csv", blank.String())
	pq := filepath.Join(dir, "null.parquet")
	writeFeatureParquet(t, pq, []string{"x1", "x2", "x3"}, cols, labels)
	for _, tc := range []struct {
		name  string
		args  []string
		input string
	}{
		{"training file", nil, train},
		{"blank and NA labels, columns reordered, a text column", nil, blankCSV},
		{"null labels in Parquet", nil, pq},
		{"-features maps other names", []string{"-features", "a,b"}, renamedCSV},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.csv")
			if code, _, stderr := ssnmf(t, append(append([]string{"predict", "-q", "-knn", "exact", "-model", mdir, "-out", out}, tc.args...), tc.input)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, _ := readMemberships(t, out)
			if len(got) != len(want) {
				t.Fatalf("%d rows predicted, %d solved", len(got), len(want))
			}
			for i := range got {
				for c := range got[i] {
					if math.Abs(got[i][c]-want[i][c]) > 1e-3 {
						t.Fatalf("row %d: %v, the solve's %v", i, got[i], want[i])
					}
				}
			}
		})
	}
	testUsage(t, []string{"predict", "-model", mdir, "-out", filepath.Join(dir, "o.csv")}, []usageCase{
		{"model's names absent", []string{renamedCSV}, `renamed.csv: unknown feature column "x1"; available columns: "a", "b", "c", "label"; the model's features are x1,x2: name INPUT's columns for them, in that order, with -features`},
		{"-features too few", []string{"-features", "a", renamedCSV}, "-features a: 1 columns for the model's 2 features (x1,x2)"},
		{"-features unknown", []string{"-features", "a,z", renamedCSV}, `renamed.csv: unknown feature column "z"`},
		{"-features the label", []string{"-features", "a,label", renamedCSV}, `column "label" is the label column and cannot also be a feature`},
	})
}
