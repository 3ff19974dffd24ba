package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata and the package doc, doc.go")

// ssnmf runs the command line in-process and returns the exit code and
// what it printed.
func ssnmf(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// usageCase is a command line, or a subcommand's arguments, that must be
// refused with a usage error whose message contains want.
type usageCase struct {
	name string
	args []string
	want string
}

// testUsage runs ssnmf with prefix and each case's arguments and checks
// that it exits with a usage error printed as one line containing the
// case's want.
func testUsage(t *testing.T, prefix []string, cases []usageCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := ssnmf(t, slices.Concat(prefix, tc.args)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// testCmdUsage calls the subcommand cmd with each case's arguments and
// checks that it returns a usageError containing the case's want, and of one
// line if oneLine.
func testCmdUsage(t *testing.T, cmd func(ctx context.Context, args []string, stdout, stderr io.Writer) error, cases []usageCase, oneLine bool) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := cmd(context.Background(), tc.args, &stdout, &stderr)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || oneLine && strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want a usage error (of one line: %v) containing %q", err, oneLine, tc.want)
			}
		})
	}
}

func TestSolveBadInput(t *testing.T) {
	dir := t.TempDir()
	isDir := filepath.Join(dir, "isdir.csv")
	if err := os.Mkdir(isDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the one-line error
	}{
		{name: "missing file", args: []string{"testdata/nope.csv"}, want: []string{"testdata/nope.csv", "no such file"}},
		{name: "empty file", args: []string{"testdata/empty.csv", "-k", "2"}, want: []string{"testdata/empty.csv", "empty"}},
		{name: "header only", args: []string{"testdata/header_only.csv", "-k", "2"}, want: []string{"testdata/header_only.csv", "no data rows"}},
		{name: "ragged row", args: []string{"testdata/ragged.csv", "-k", "2"}, want: []string{"testdata/ragged.csv:3"}},
		{name: "non-numeric cell", args: []string{"testdata/nonnumeric.csv", "-k", "2"}, want: []string{"testdata/nonnumeric.csv:3", `"y"`, "abc"}},
		{name: "NaN", args: []string{"testdata/nan.csv", "-k", "2"}, want: []string{"testdata/nan.csv:3", `"y"`, "NaN"}},
		{name: "Inf", args: []string{"testdata/inf.csv", "-k", "2"}, want: []string{"testdata/inf.csv:3", `"x"`, "Inf"}},
		{name: "k=0", args: []string{"testdata/small.csv", "-k", "0"}, want: []string{"-k must be >= 1"}},
		{name: "k<0", args: []string{"testdata/small.csv", "-k", "-3"}, want: []string{"-k must be >= 1"}},
		{name: "k>n", args: []string{"testdata/small.csv", "-k", "13"}, want: []string{"-k 13", "testdata/small.csv", "12"}},
		{name: "unknown feature column", args: []string{"testdata/small.csv", "-features", "x,zz"}, want: []string{"testdata/small.csv", `"zz"`}},
		{name: "unknown label column", args: []string{"testdata/small.csv", "-label", "klass"}, want: []string{"testdata/small.csv", `"klass"`}},
		{name: "zero gamma", args: []string{"testdata/small.csv", "-gamma", "0"}, want: []string{"-gamma", "positive"}},
		{name: "negative gamma", args: []string{"testdata/small.csv", "-gamma", "-1"}, want: []string{"-gamma", "positive"}},
		{name: "unknown gamma rule", args: []string{"testdata/small.csv", "-gamma", "median"}, want: []string{"-gamma", "mass"}},
		{name: "mass rule without k", args: []string{"testdata/nolabel.csv", "-affinity", "gaussian", "-gamma", "mass"}, want: []string{"-gamma mass", "k >= 2"}},
		{name: "zero scale", args: []string{"testdata/small.csv", "-affinity", "knn", "-scale", "0"}, want: []string{"-scale", "positive"}},
		{name: "negative rtol", args: []string{"-rtol", "-1"}, want: []string{"-rtol"}},
		{name: "NaN frtol", args: []string{"-frtol", "NaN"}, want: []string{"-frtol"}},
		{name: "negative max-time", args: []string{"-max-time", "-1s"}, want: []string{"-max-time"}},
		{name: "no k and no labels", args: []string{"testdata/nolabel.csv"}, want: []string{"-k is required", "testdata/nolabel.csv"}},
		{name: "unknown step", args: []string{"-step", "big"}, want: []string{"-step", "big"}},
		{name: "unknown init", args: []string{"-init", "best"}, want: []string{"-init", "best"}},
		{name: "two inputs", args: []string{"a.csv", "b.csv"}, want: []string{"at most one INPUT"}},
		{name: "zero tile", args: []string{"-tile", "0"}, want: []string{"-tile"}},
		{name: "zero workers", args: []string{"-workers", "0"}, want: []string{"-workers"}},
		{name: "unknown flag", args: []string{"-frobnicate"}, want: []string{"frobnicate"}},
		{name: "missing output directory", args: []string{"-summary", "/nonexistent/dir/s.json"}, want: []string{"-summary", "/nonexistent/dir"}},
		{name: "out is a directory", args: []string{"-out", isDir}, want: []string{"-out", isDir, "is a directory"}},
		{name: "features out of range", args: []string{"testdata/huge.csv", "-k", "2", "-affinity", "gaussian", "-standardize=false"}, want: []string{"testdata/huge.csv", "-standardize=false", "keep -standardize"}},
		{name: "bad seed", args: []string{"-seed", "-1"}, want: []string{"-seed", "solve -h"}},
		{name: "unknown out extension", args: []string{"-out", "w.json"}, want: []string{"-out w.json", ".parquet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
			args := append([]string{"solve", "-q", "-max-iter", "2", "-out", out}, tc.args...)
			code, _, stderr := ssnmf(t, args...)
			if code != exitUsage {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if strings.Contains(stderr, "panic:") {
				t.Fatalf("stderr shows a panic:\n%s", stderr)
			}
			msg := stderr
			if lines := strings.Count(strings.TrimRight(stderr, "\n"), "\n"); lines != 0 {
				t.Errorf("error has %d lines, want one:\n%s", lines+1, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", strings.TrimSpace(msg), w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output file %s exists after a failed run", out)
			}
		})
	}
}

// TestTileLargerThanN checks that a tile edge above n is cut to n rather
// than allocated.
func TestTileLargerThanN(t *testing.T) {
	sum := filepath.Join(t.TempDir(), "s.json")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-max-iter", "3", "-tile", "1000000000", "-summary", sum, "testdata/small.csv"); code != exitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(sum)
	if !strings.Contains(string(b), `"tile": 12,`) {
		t.Errorf("summary does not report tile 12 (n):\n%s", b)
	}
}

func TestBadRunKeepsEarlierOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "w.csv")
	if err := os.WriteFile(out, []byte("earlier good result\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := ssnmf(t, "solve", "-q", "-out", out, "testdata/nonnumeric.csv", "-k", "2"); code != exitUsage {
		t.Fatalf("exit code %d, want %d", code, exitUsage)
	}
	if b, _ := os.ReadFile(out); string(b) != "earlier good result\n" {
		t.Fatalf("a failed run changed the earlier output to %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Fatalf("directory holds %d files after a failed run, want 1", len(entries))
	}
}

// readCSV returns the header and rows of a CSV file.
// startRows counts the rows of a trace (rows as readCSV returns them) that
// belong to start s: its column 7, start.
func startRows(rows [][]string, s int) int {
	n := 0
	for _, r := range rows {
		if r[6] == strconv.Itoa(s) {
			n++
		}
	}
	return n
}

func readCSV(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[0], recs[1:]
}

func TestSolveOutputs(t *testing.T) {
	dir := t.TempDir()
	out, sum, trace := filepath.Join(dir, "w.csv"), filepath.Join(dir, "s.json"), filepath.Join(dir, "t.csv")
	work := filepath.Join(dir, "work")
	// -scale auto, the sizes rule: the default, twice it, merges two of the
	// three groups of these 12 rows, whose self-tuning bandwidths (the
	// distance to the 7th neighbour) reach into the other groups
	// (docs/quality.md, "Twice the mass"). -mem 4kB keeps W in a file of
	// the work directory (W.mat, dumped below).
	t.Setenv("GOMEMLIMIT", "off") // -mem must not hold the test's heap
	code, stdout, stderr := ssnmf(t, "solve", "-k", "3", "-max-iter", "40", "-tile", "5", "-scale", "auto", "-mem", "4kB",
		"-workdir", work, "-out", out, "-summary", sum, "-trace", trace, "testdata/small.csv")
	if code != exitOK {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"objective", "fw gap", "ARI 1.0000", "cluster sizes"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("result table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "iter      0") || !strings.Contains(stderr, "entries/s") {
		t.Errorf("no progress lines on stderr:\n%s", stderr)
	}

	header, rows := readCSV(t, out)
	if strings.Join(header, ",") != "id,w1,w2,w3,cluster,confidence" || len(rows) != 12 {
		t.Fatalf("-out: header %v and %d rows, want id,w1,w2,w3,cluster,confidence and 12", header, len(rows))
	}
	for i, r := range rows {
		if r[0] != strconv.Itoa(i) {
			t.Fatalf("row %d: id %s", i, r[0])
		}
		r = r[1:]
		var s float64
		best, arg := -1.0, -1
		for j := range 3 {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil || v < 0 {
				t.Fatalf("row %d: w%d = %q", i, j+1, r[j])
			}
			s += v
			if v > best {
				best, arg = v, j
			}
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("row %d sums to %v", i, s)
		}
		if r[3] != strconv.Itoa(arg) {
			t.Errorf("row %d: cluster %s, argmax %d", i, r[3], arg)
		}
	}

	b, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"n", "p", "k", "iterations", "objective", "gap", "seconds", "converged",
		"stop_reason", "method", "step", "gamma", "standardize", "seed", "workers", "p_frobenius_sq",
		"passes", "ari", "nmi", "accuracy", "kernel", "p_max_row_sum"} {
		if _, ok := m[key]; !ok {
			t.Errorf("summary lacks %q", key)
		}
	}
	if g, _ := m["gamma"].(float64); m["n"] != 12.0 || m["k"] != 3.0 || !(g > 0) || m["ari"] != 1.0 {
		t.Errorf("summary: n=%v k=%v gamma=%v ari=%v", m["n"], m["k"], m["gamma"], m["ari"])
	}
	iters := int(m["iterations"].(float64))

	header, rows = readCSV(t, trace)
	if strings.Join(header, ",") != "iter,seconds,objective,gap,step_size,passes,start,moved,model" {
		t.Errorf("trace header %v", header)
	}
	if got := startRows(rows, int(m["best_start"].(float64))); got != iters+1 {
		t.Errorf("trace has %d rows of the chosen start for %d iterations, want one per iterate", got, iters)
	}
	if _, err := os.Stat(filepath.Join(work, "W.mat")); err != nil {
		t.Errorf("-workdir does not hold W.mat: %v", err)
	}
	code, stdout, _ = ssnmf(t, "dump", "-rows", "2", filepath.Join(work, "W.mat"))
	if code != exitOK || !strings.Contains(stdout, "SSNMFMAT") {
		t.Errorf("dump: exit %d, output:\n%s", code, stdout)
	}
}

// TestDeterministic checks that a run's output is the same bits for the
// same seed, whatever the number of workers, and differs for another seed.
func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	runOut := func(name string, extra ...string) string {
		out := filepath.Join(dir, name)
		args := append([]string{"solve", "-q", "-max-iter", "30", "-tile", "100", "-refresh", "7", "-out", out}, extra...)
		if code, _, stderr := ssnmf(t, args...); code != exitOK {
			t.Fatalf("exit code %d: %s", code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a := runOut("a.csv", "-workers", "1", "-seed", "3")
	b := runOut("b.csv", "-workers", "1", "-seed", "3")
	c := runOut("c.csv", "-workers", "3", "-seed", "3")
	d := runOut("d.csv", "-workers", "1", "-seed", "4")
	if a != b {
		t.Error("two runs with the same seed and workers differ")
	}
	if a != c {
		t.Error("1 and 3 workers give different outputs")
	}
	if a == d {
		t.Error("seeds 3 and 4 give the same output")
	}
}

// TestGolden compares the memberships of fixed small runs, one per solver,
// with testdata/small.golden.csv (fw) and testdata/small.rowcd.golden.csv
// (to 1e-9: the last bits of exp may differ across platforms). Run with
// -update to rewrite them.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		method, golden string
	}{
		{method: "fw", golden: "small.golden.csv"},
		{method: "rowcd", golden: "small.rowcd.golden.csv"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "w.csv")
			if code, _, stderr := ssnmf(t, "solve", "-q", "-affinity", "gaussian", "-frtol", "0", "-rtol", "1e-5", "-mtol", "0", "-method", tc.method, "-k", "3", "-seed", "1", "-max-iter", "25",
				"-standardize", "-out", out, "testdata/small.csv"); code != exitOK {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				b, _ := os.ReadFile(out)
				if err := os.WriteFile(golden, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			gh, grows := readCSV(t, golden)
			h, rows := readCSV(t, out)
			if strings.Join(h, ",") != strings.Join(gh, ",") || len(rows) != len(grows) {
				t.Fatalf("output shape %v×%d, golden %v×%d", h, len(rows), gh, len(grows))
			}
			for i := range rows {
				for j := range rows[i] {
					got, _ := strconv.ParseFloat(rows[i][j], 64)
					want, _ := strconv.ParseFloat(grows[i][j], 64)
					if math.Abs(got-want) > 1e-9 {
						t.Errorf("row %d column %s: %v, golden %v", i, h[j], got, want)
					}
				}
			}
		})
	}
}

func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{name: "no command", args: nil, code: exitUsage},
		{name: "unknown command", args: []string{"frob"}, code: exitUsage},
		{name: "help", args: []string{"help"}, code: exitOK},
		{name: "solve -h", args: []string{"solve", "-h"}, code: exitOK},
		{name: "dump without file", args: []string{"dump"}, code: exitUsage},
		{name: "dump of a CSV", args: []string{"dump", "testdata/small.csv"}, code: exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, stderr := ssnmf(t, tc.args...); code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
		})
	}
}

// TestArrowOutput checks that -out FILE.arrow writes the same memberships as
// -out FILE.csv, readable by Arrow's IPC file reader.
func TestArrowOutput(t *testing.T) {
	dir := t.TempDir()
	csvOut, arrowOut := filepath.Join(dir, "w.csv"), filepath.Join(dir, "w.arrow")
	for _, out := range []string{csvOut, arrowOut} {
		if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-max-iter", "10", "-out", out, "testdata/small.csv"); code != exitOK {
			t.Fatalf("exit code %d: %s", code, stderr)
		}
	}
	_, rows := readCSV(t, csvOut)
	f, err := os.Open(arrowOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	if r.NumRecords() != 1 || int(rec.NumRows()) != len(rows) || rec.NumCols() != 6 {
		t.Fatalf("arrow file: %d batches, %d rows, %d columns; want 1, %d, 6", r.NumRecords(), rec.NumRows(), rec.NumCols(), len(rows))
	}
	cols := rec.Columns()[1:] // after id
	for i, row := range rows {
		if got := rec.Column(0).(*array.Int64).Value(i); strconv.FormatInt(got, 10) != row[0] {
			t.Fatalf("row %d id: arrow %d, csv %s", i, got, row[0])
		}
		row := row[1:]
		for j := range 3 {
			want, _ := strconv.ParseFloat(row[j], 64)
			if got := cols[j].(*array.Float64).Value(i); got != want {
				t.Fatalf("row %d w%d: arrow %v, csv %v", i, j+1, got, want)
			}
		}
		if got := cols[3].(*array.Int32).Value(i); strconv.Itoa(int(got)) != row[3] {
			t.Fatalf("row %d cluster: arrow %d, csv %s", i, got, row[3])
		}
	}
}
