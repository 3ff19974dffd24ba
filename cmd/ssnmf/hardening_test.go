package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

// twoGroups writes n rows of a column x that separates two groups (label
// 0 and 1) perfectly, times scale, and a noise column y.
func twoGroups(t *testing.T, dir string, scale float64, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("x,y,label\n")
	for i := range n {
		g := i % 2
		fmt.Fprintf(&b, "%v,%v,%d\n", (float64(2*g)+float64(i%10)/20)*scale, float64(i%7)/7, g)
	}
	path := filepath.Join(dir, fmt.Sprintf("g%v.csv", scale))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExtremeScales: a column that separates two groups perfectly gives
// ARI 1 at any scale, and 500 distinct rows at 1e300 make two clusters.
// Before standardization scaled by the column's largest value, the column
// came out as 0 at 1e160 and beyond, or 1e-300, and the ARI as 0.
func TestExtremeScales(t *testing.T) {
	dir := t.TempDir()
	for _, scale := range []float64{1, 1e160, 1e300, 1e-300} {
		t.Run(fmt.Sprint(scale), func(t *testing.T) {
			sum := filepath.Join(dir, fmt.Sprintf("s%v.json", scale))
			code, _, stderr := ssnmf(t, "solve", "-q", "-k", "2", "-summary", sum, twoGroups(t, dir, scale, 200))
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var s solver.Summary
			raw, _ := os.ReadFile(sum)
			if err := json.Unmarshal(raw, &s); err != nil || s.ARI == nil || *s.ARI != 1 {
				t.Fatalf("summary %s (%v): want ARI 1", raw, err)
			}
		})
	}
	var b strings.Builder
	b.WriteString("x\n")
	for i := range 500 {
		fmt.Fprintf(&b, "%v\n", float64(i+1)*2e297)
	}
	in, out := filepath.Join(dir, "d500.csv"), filepath.Join(dir, "d500.w.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "2", "-out", out, in); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	head, recs := readCSV(t, out)
	col := slices.Index(head, "cluster")
	sizes := map[string]int{}
	for _, r := range recs {
		sizes[r[col]]++
	}
	if len(sizes) != 2 || sizes["0"] < 100 || sizes["1"] < 100 {
		t.Fatalf("cluster sizes %v of 500 distinct rows at 1e300, want two clusters", sizes)
	}
}

// writeEdgesArrow writes an Arrow IPC edge list with float64 src, dst and
// weight columns.
func writeEdgesArrow(t *testing.T, path string, src, dst, w []float64) {
	t.Helper()
	s := arrow.NewSchema([]arrow.Field{{Name: "src", Type: arrow.PrimitiveTypes.Float64}, {Name: "dst", Type: arrow.PrimitiveTypes.Float64}, {Name: "weight", Type: arrow.PrimitiveTypes.Float64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i, col := range [][]float64{src, dst, w} {
		b.Field(i).(*array.Float64Builder).AppendValues(col, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := ipc.NewFileWriter(f, ipc.WithSchema(s))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeRecordParquet writes rec as the Parquet file path.
func writeRecordParquet(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := parquetio.NewWriter(f, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeStringSrcParquet writes a Parquet edge list whose src is a string
// column.
func writeStringSrcParquet(t *testing.T, path string) {
	t.Helper()
	s := arrow.NewSchema([]arrow.Field{{Name: "src", Type: arrow.BinaryTypes.String}, {Name: "dst", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"0", "1"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	writeRecordParquet(t, path, rec)
}

// ring writes an edge list of a ring of n rows, each joined to the next
// two, all with weight w.
func ring(t *testing.T, path string, n int, w string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,%d,%s\n%d,%d,%s\n", i, (i+1)%n, w, i, (i+2)%n, w)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHostileInputs are the cases of issue 24 whose old behaviour was a
// silently wrong result or an error naming the wrong thing: each is now
// one line naming the user's file, flag or rule.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	zero := ring(t, filepath.Join(dir, "zero.csv"), 50, "0")
	big := ring(t, filepath.Join(dir, "big.csv"), 50, "1e308")
	sub := ring(t, filepath.Join(dir, "sub.csv"), 50, "5e-324")
	ok := ring(t, filepath.Join(dir, "ok.csv"), 50, "1")
	far := write("far.csv", "src,dst,weight\n0,1,1\n1,2000000000,1\n")
	nanID := filepath.Join(dir, "nanid.arrow")
	writeEdgesArrow(t, nanID, []float64{0, 1, math.NaN()}, []float64{1, 2, 2}, []float64{1, 1, 1})
	strSrc := filepath.Join(dir, "strsrc.parquet")
	writeStringSrcParquet(t, strSrc)
	raw300 := twoGroups(t, dir, 1e300, 20)
	na := write("na.csv", "x,label\n1,a\n2,b\n3,NA\n4,a\n")
	utf16 := write("u16.csv", "\xff\xfex\x00,\x00y\x00\n\x001\x00,\x002\x00\n\x00")
	unknown := write("unknown.bin", "hello")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"weights all 0", []string{"solve", "-k", "2", "-affinity", zero}, zero + ": every weight is 0 (ΣP = 0): P has nothing to cluster"},
		{"weights 1e308", []string{"solve", "-k", "2", "-affinity", big}, big + ": the weights sum to more than 1.8e+308 (ΣP overflows a float64): divide them by a common factor"},
		{"subnormal weights", []string{"solve", "-k", "2", "-affinity", sub}, sub + ": the weights sum to 9.9e-322, so the mass rule's scale n²/(k·ΣP) is out of a float64's range: multiply them by a common factor, or give -scale"},
		{"-scale 1e300", []string{"solve", "-k", "2", "-affinity", ok, "-scale", "1e300"}, ok + ": -scale 1e+300 times the largest weight 1 puts ||S·P||² out of a float64's range: want a scale at most"},
		{"largest id far above the edges", []string{"solve", "-k", "2", "-affinity", far}, "-affinity: " + far + ": the largest id 2000000000 makes 2000000001 rows, but 2 edges name at most 4 distinct rows: give the number of rows (-rows 2000000001"},
		{"Arrow edge list with a NaN id", []string{"solve", "-k", "2", "-affinity", nanID}, "-affinity: " + nanID + ": row index 2: column \"src\": NaN is not a finite number"},
		{"string src in Parquet", []string{"solve", "-k", "2", "-affinity", strSrc}, "-affinity: " + strSrc + ": column \"src\": type utf8 is not numeric; an edge list's src and dst are row ids"},
		{"-standardize=false with a 1e300 column", []string{"solve", "-k", "2", "-standardize=false", raw300}, raw300 + ": row 2, column \"x\": 2.05e+300 with -standardize=false: squared distances of 2 features overflow"},
		{"label NA", []string{"solve", "-k", "2", na}, na + `:4: column "label": missing label "NA" (a row with a missing label is refused`},
		{"-max-time 9999999h", []string{"solve", "-max-time", "9999999h"}, `invalid value "9999999h" for flag -max-time: want a duration such as 90s, 30m or 12h, up to 2562047h`},
		{"UTF-16 CSV", []string{"solve", "-k", "2", utf16}, utf16 + ": the text is UTF-16 (byte order mark FF FE): save it as UTF-8"},
		{"dump of an unknown file", []string{"dump", unknown}, "dump: " + unknown + ` begins with "hello", not a file dump reads: a work-directory matrix (SSNMFMAT), checkpoint (SSNMFCKP), tile file (ARROW1), graph (SSNMFCSR) or block file (SSNMFBLK)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := ssnmf(t, tc.args...)
			if code != exitUsage || !strings.HasPrefix(stderr, "ssnmf: "+tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit %d and one line starting %q", code, stderr, exitUsage, "ssnmf: "+tc.want)
			}
		})
	}
}

// TestEdgeListRows: -rows gives the rows of an edge list without INPUT,
// rows without an edge included.
func TestEdgeListRows(t *testing.T) {
	dir := t.TempDir()
	edges := ring(t, filepath.Join(dir, "e.csv"), 40, "1")
	sum := filepath.Join(dir, "s.json")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "2", "-rows", "45", "-affinity", edges, "-summary", sum); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s solver.Summary
	raw, _ := os.ReadFile(sum)
	if err := json.Unmarshal(raw, &s); err != nil || s.N != 45 {
		t.Fatalf("summary %s (%v): want n = 45", raw, err)
	}
	testUsage(t, []string{"solve", "-k", "2", "-affinity", edges}, []usageCase{
		{name: "id not below -rows", args: []string{"-rows", "30"}, want: "edge 58: column dst: 30, want a row id in [0, 30)"},
		{name: "negative", args: []string{"-rows", "-1"}, want: "-rows must be >= 0, have -1"},
	})
}

// TestNeighborsClamped: -neighbors above n is reported as clamped, on
// stderr and in the summary.
func TestNeighborsClamped(t *testing.T) {
	sum := filepath.Join(t.TempDir(), "s.json")
	code, _, stderr := ssnmf(t, "solve", "-k", "3", "-neighbors", "100000", "-max-iter", "3", "-summary", sum, "testdata/small.csv")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"ssnmf: -neighbors 100000 is more than the 12 rows: clamped to 12", "12 neighbours, clamped from 100000 to the number of rows"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	var s solver.Summary
	raw, _ := os.ReadFile(sum)
	if err := json.Unmarshal(raw, &s); err != nil || s.Neighbors != 12 {
		t.Fatalf("summary %s (%v): want neighbors 12", raw, err)
	}
}
