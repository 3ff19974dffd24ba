package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/model"
)

// readMemberships reads a membership CSV: the rows of w and the clusters.
func readMemberships(t *testing.T, path string) ([][]float64, []int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var w [][]float64
	var c []int
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		row := make([]float64, len(f)-3)
		for j := range row {
			if row[j], err = strconv.ParseFloat(f[j+1], 64); err != nil {
				t.Fatal(err)
			}
		}
		cl, err := strconv.Atoi(f[len(f)-2])
		if err != nil {
			t.Fatal(err)
		}
		w, c = append(w, row), append(c, cl)
	}
	return w, c
}

// TestPredictTrainingRows saves the model of a solve and predicts its own
// input: every affinity and search gives back the solve's W, to the
// solve's tolerance, in input order.
func TestPredictTrainingRows(t *testing.T) {
	yeast := filepath.Join("data", "yeast.csv")
	for _, tc := range []struct {
		name  string
		solve []string
		pred  []string
		tol   float64 // the largest mean L1 difference
	}{
		{"knn exact", nil, []string{"-knn", "exact"}, 1e-3},
		{"knn approx graph, approx predict", []string{"-knn", "approx"}, []string{"-knn", "approx", "-knn-probes", "3"}, 2e-2},
		{"knn connectivity", []string{"-weights", "connectivity"}, nil, 1e-3},
		{"gaussian", []string{"-affinity", "gaussian"}, nil, 1e-3},
		{"raw features", []string{"-standardize=false"}, nil, 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mdir, wout, pout := filepath.Join(dir, "m"), filepath.Join(dir, "w.csv"), filepath.Join(dir, "p.csv")
			args := append([]string{"solve", "-q", "-mtol", "1e-9", "-max-iter", "3000", "-model", mdir, "-out", wout}, tc.solve...)
			if code, _, stderr := ssnmf(t, append(args, yeast)...); code != 0 {
				t.Fatalf("solve: exit %d: %s", code, stderr)
			}
			args = append([]string{"predict", "-q", "-model", mdir, "-out", pout}, tc.pred...)
			if code, _, stderr := ssnmf(t, append(args, yeast)...); code != 0 {
				t.Fatalf("predict: exit %d: %s", code, stderr)
			}
			w, _ := readMemberships(t, wout)
			p, _ := readMemberships(t, pout)
			if len(w) != len(p) || len(w) != 1484 {
				t.Fatalf("%d rows predicted for %d solved", len(p), len(w))
			}
			var l1 float64
			for i := range w {
				for j := range w[i] {
					l1 += math.Abs(w[i][j] - p[i][j])
				}
			}
			l1 /= float64(len(w))
			t.Logf("mean L1 difference %.3g", l1)
			if l1 > tc.tol {
				t.Fatalf("mean L1 difference %.3g between predicted and solved training rows, want <= %g", l1, tc.tol)
			}
		})
	}
}

// TestPredictBadInput checks that bad input is refused with one line
// naming the file, and that no output is left behind.
func TestPredictBadInput(t *testing.T) {
	dir := t.TempDir()
	mdir := filepath.Join(dir, "m")
	small := filepath.Join("testdata", "small.csv")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-model", mdir, small); code != 0 {
		t.Fatalf("solve: %s", stderr)
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wrongCols := write("cols.csv", "x,z\n1,2\n")
	nan := write("nan.csv", "x,y\n1,2\n1,NaN\n")
	swapped := write("swapped.csv", "y,x\n0.1,0.0\n")
	old := filepath.Join(dir, "old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(mdir, model.FileName))
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[8:], model.Version+1)
	if err := os.WriteFile(filepath.Join(old, model.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	testUsage(t, []string{"predict", "-out", out}, []usageCase{
		{"no model", []string{small}, "-model DIR is required"},
		{"missing model", []string{"-model", filepath.Join(dir, "none"), small}, "no model there"},
		{"other version", []string{"-model", old, small}, "format version 2, this build reads version 1"},
		{"wrong columns", []string{"-model", mdir, wrongCols}, `cols.csv: unknown feature column "y"; available columns: "x", "z"; the model's features are x,y`},
		{"NaN", []string{"-model", mdir, nan}, "nan.csv"},
		{"bad probes", []string{"-model", mdir, "-knn-probes", "0", small}, "-knn-probes must be >= 1"},
		{"bad recall", []string{"-model", mdir, "-knn-recall", "1.5", small}, "-knn-recall must be in (0, 1], have 1.5"},
		{"recall without a sample", []string{"-model", mdir, "-knn-recall", "0.9", "-knn-sample", "0", small}, "-knn-recall needs the recall measured: -knn-sample 0 measures none"},
	})
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused predict left %s behind (%v)", out, err)
	}
	// The -knn flags apply to a kNN model, and -knn-probes, -knn-sample
	// and -seed to its approximate search.
	gdir := filepath.Join(dir, "g")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-affinity", "gaussian", "-model", gdir, small); code != 0 {
		t.Fatalf("solve: %s", stderr)
	}
	testUsage(t, []string{"predict", "-out", out}, []usageCase{
		{"-knn, gaussian model", []string{"-model", gdir, "-knn", "exact", small}, "-knn applies to a kNN model (the model's affinity is gaussian); drop it"},
		{"-knn-probes, gaussian model", []string{"-model", gdir, "-knn-probes", "4", small}, "-knn-probes applies to a kNN model searched with -knn approx or auto (the model's affinity is gaussian); drop it"},
		{"-seed, exact search", []string{"-model", mdir, "-knn", "exact", "-seed", "3", small}, "-seed applies to a kNN model searched with -knn approx or auto (the search is -knn exact); drop it"},
		{"-knn-recall, gaussian model", []string{"-model", gdir, "-knn-recall", "0.9", small}, "-knn-recall applies to a kNN model searched with -knn approx or auto (the model's affinity is gaussian); drop it"},
	})
	// The same columns in another order are the model's.
	if code, _, stderr := ssnmf(t, "predict", "-q", "-model", mdir, "-out", out, swapped); code != 0 {
		t.Fatalf("columns in another order: %s", stderr)
	}
	testUsage(t, []string{"solve", "-model", filepath.Join(dir, "m2")}, []usageCase{
		{"model from a file of P", []string{"-affinity", filepath.Join(dir, "edges.csv"), small}, "-model"},
	})
	// A -model directory that holds other files is refused before the solve.
	testUsage(t, []string{"solve"}, []usageCase{
		{"model over other files", []string{"-model", dir, small}, "which is no part of a model"},
	})
}

// TestDumpModel prints a model directory.
func TestDumpModel(t *testing.T) {
	mdir := filepath.Join(t.TempDir(), "m")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-model", mdir, filepath.Join("testdata", "small.csv")); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := ssnmf(t, "dump", mdir)
	if code != 0 || !strings.Contains(stdout, "section W") || !strings.Contains(stdout, "crc ok") || strings.Contains(stdout, "BAD") {
		t.Fatalf("exit %d, %s%s", code, stdout, stderr)
	}
}
