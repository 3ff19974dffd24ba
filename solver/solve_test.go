package solver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/workdir"
	"github.com/ssnmf/ssnmf/tile"
)

// yeast is the command's built-in data set.
const yeast = "../cmd/ssnmf/data/yeast.csv"

// TestSolveMatchesCommand checks that the zero Options are the command's
// defaults: on yeast, Solve gives the bits of "ssnmf solve" (its summary's
// figures and two entries of its -out, as printed on amd64 by the binary
// built from ea0ba7f). Elsewhere, where the compiler may fuse a multiply
// and an add that amd64 rounds twice, they agree to 1e-9.
func TestSolveMatchesCommand(t *testing.T) {
	if _, err := os.Stat(yeast); err != nil {
		t.Skipf("no %s: %v", yeast, err)
	}
	res, err := Solve(context.Background(), Input{Path: yeast}, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"objective", res.Objective, 2773572.832947953},
		{"gap", res.Gap, 21.953220675175544},
		{"iterations", float64(res.Iterations), 28},
		{"scale", res.Scale, 48.41250186900798},
		{"starts", float64(len(res.Starts)), 2},
		{"start 1's objective", res.Starts[1].Objective, 2776580.0653217686},
		{"W[1][0]", res.Row(1)[0], 0.10304470900956034},
		{"W[1][9]", res.Row(1)[9], 0.8969552909904397},
	} {
		if c.got != c.want && (runtime.GOARCH == "amd64" || math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v (the command's)", c.name, c.got, c.want)
		}
	}
	if res.Status.String() != "model-gap" || res.Best != 0 || res.Passes < 30 {
		t.Errorf("status %v, best start %d, passes %d: want model-gap, 0 and at least 30", res.Status, res.Best, res.Passes)
	}
	if sum := res.Summary; sum == nil || sum.Objective != res.Objective || len(sum.Starts) != 2 || sum.StopReason != "model-gap" ||
		sum.ARI == nil || math.Abs(*sum.ARI-0.1637) > 5e-5 || sum.Neighbors != 30 || sum.Weights != "self-tuning" {
		t.Errorf("summary %+v: want the result's objective, 2 starts, model-gap, ARI 0.1637 (the command's) and a 30-neighbour self-tuning graph", sum)
	}
	if n := len(res.Trace); n != 28+1+24+1 {
		t.Errorf("%d trace records, want 54 (28 and 24 iterations and each start's final record)", n)
	}
}

// TestSolveRefuses checks the one-line errors of bad input and options,
// each naming what is wrong.
func TestSolveRefuses(t *testing.T) {
	good := [][]float64{{0, 0}, {0, 1}, {5, 5}, {5, 6}}
	for _, tc := range []struct {
		name string
		in   Input
		opt  Options
		want string
	}{
		{"no input", Input{}, Options{K: 2}, "give one of Rows, Record, Path and CSV, or Options.File"},
		{"two inputs", Input{Rows: good, Path: "x.csv"}, Options{K: 2}, "exactly one of Rows, Record, Path and CSV, have 2"},
		{"csv and rows", Input{Rows: good, CSV: strings.NewReader("x\n1\n")}, Options{K: 2}, "exactly one of Rows, Record, Path and CSV, have 2"},
		{"format", Input{Path: "x.csv", Format: "nope"}, Options{K: 2}, "nope"},
		{"ragged rows", Input{Rows: [][]float64{{0, 0}, {1}}}, Options{K: 1}, "rows: row 1 has 1 values, row 0 has 2"},
		{"NaN", Input{Rows: [][]float64{{0, 0}, {1, math.NaN()}, {2, 2}}}, Options{K: 2}, "rows: row 1, column 1: NaN is not a finite number"},
		{"no rows", Input{Rows: [][]float64{}}, Options{K: 2}, "rows: no rows or no columns"},
		{"k >= n", Input{Rows: good}, Options{K: 4}, "Options.K = 4 is not below the 4 rows"},
		{"no k, no labels", Input{Rows: good}, Options{}, "Options.K is required"},
		{"method", Input{Rows: good}, Options{K: 2, Method: "nope"}, "Options.Method"},
		{"spectral, Gaussian", Input{Rows: good}, Options{K: 2, Method: "spectral", Gaussian: true}, "needs a sparse P"},
		{"init spectral, Gaussian", Input{Rows: good}, Options{K: 2, Init: InitSpectral, Gaussian: true}, "needs a sparse P"},
		{"init", Input{Rows: good}, Options{K: 2, Init: "nope"}, "Options.Init"},
		{"sweep order", Input{Rows: good}, Options{K: 2, SweepOrder: "nope"}, "Options.SweepOrder"},
		{"scale rule", Input{Rows: good}, Options{K: 2, Scale: Scale{Rule: "nope"}}, "Options.Scale.Rule"},
		{"resume, no workdir", Input{Rows: good}, Options{K: 2, Resume: true}, "give the Workdir"},
		{"neighbors", Input{Rows: good}, Options{K: 2, Neighbors: 1}, "Options.Neighbors must be >= 2"},
		{"negative", Input{Rows: good}, Options{K: 2, Starts: -1}, "must be >= 0"},
		{"tol", Input{Rows: good}, Options{K: 2, Tol: math.NaN()}, "Options.Tol must be a number"},
		{"missing file", Input{Path: "/nonexistent/x.csv"}, Options{K: 2}, "/nonexistent/x.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Solve(context.Background(), tc.in, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line containing %q", err, tc.want)
			}
		})
	}
}

// TestSolveLeavesRowsAndWorkdir checks that Solve changes none of the
// caller's rows (the features are standardized in a copy) and removes its
// temporary work directory, and that the same options give the same bits
// for any workers.
func TestSolveLeavesRowsAndWorkdir(t *testing.T) {
	rows := [][]float64{{0, 0}, {0, 1}, {1, 0}, {9, 9}, {9, 10}, {10, 9}, {20, 0}, {20, 1}, {21, 0}}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var first []float64
	for _, workers := range []int{1, 3} {
		res, err := Solve(context.Background(), Input{Rows: rows}, Options{K: 3, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res.W
		} else if !equalBits(first, res.W) {
			t.Errorf("workers %d: W differs from workers 1's", workers)
		}
	}
	if rows[3][0] != 9 || rows[8][1] != 0 {
		t.Errorf("the caller's rows changed: %v", rows)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left %d entries in the temporary directory, want none", len(left))
	}
	// A Workdir of the caller's keeps the run's files, but no best W once
	// the solve has ended: nothing will resume from them.
	dir := t.TempDir()
	if _, err := Solve(context.Background(), Input{Rows: rows}, Options{K: 3, Workdir: dir, Starts: 2}); err != nil {
		t.Fatal(err)
	}
	if best, _ := filepath.Glob(filepath.Join(dir, "best-*.mat")); len(best) != 0 {
		t.Errorf("the Workdir holds %v after the solve, want no best W", best)
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestSolveInputs checks that the same rows give the same bits as Rows,
// as a CSV stream and as a file whose Format is given (its name tells
// none), and that an Input of none clusters P read from Options.File: an
// edge list of three groups, each group a cluster, of which no model is
// made (a model needs the features).
func TestSolveInputs(t *testing.T) {
	rows := [][]float64{{0, 0}, {0, 1}, {1, 0}, {9, 9}, {9, 10}, {10, 9}, {20, 0}, {20, 1}, {21, 0}}
	var csv strings.Builder
	csv.WriteString("a,b\n")
	for _, r := range rows {
		fmt.Fprintf(&csv, "%v,%v\n", r[0], r[1])
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.dat")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, opt := context.Background(), Options{K: 3, Workers: 2}
	ref, err := Solve(ctx, Input{Rows: rows}, opt)
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]Input{"CSV": {CSV: strings.NewReader(csv.String())}, "Path": {Path: path, Format: "csv"}} {
		res, err := Solve(ctx, in, opt)
		if err != nil || !equalBits(res.W, ref.W) {
			t.Errorf("%s: the W of Rows: %v, %v", name, err == nil && equalBits(res.W, ref.W), err)
		}
	}
	var edges strings.Builder
	edges.WriteString("src,dst,weight\n")
	for g := range 3 {
		for i := range 4 {
			for j := i; j < 4; j++ {
				fmt.Fprintf(&edges, "%d,%d,1\n", 4*g+i, 4*g+j)
			}
		}
	}
	file := filepath.Join(dir, "edges.csv")
	if err := os.WriteFile(file, []byte(edges.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Solve(ctx, Input{}, Options{K: 3, File: file})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.N {
		if res.Cluster(i) != res.Cluster(i/4*4) {
			t.Errorf("row %d is not in the cluster of its group (%d rows)", i, res.N)
		}
	}
	if res.N != 12 || res.Summary.Input != file {
		t.Errorf("%d rows of input %q, want 12 of %s", res.N, res.Summary.Input, file)
	}
	if _, err := Solve(ctx, Input{}, Options{K: 3, File: file, Model: filepath.Join(dir, "model")}); err == nil || !strings.Contains(err.Error(), "Options.Model") {
		t.Errorf("a model of P without the features: err = %v, want it refused naming Options.Model", err)
	}
}

// TestOpen checks Options.Open: a file that cannot be read is an
// InputError, whose text is the reader's; the problem read owns its table,
// which its Close releases, and InputRead sees the table before P is
// built.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	var ie *InputError
	missing := filepath.Join(dir, "none.csv")
	if _, err := (Options{K: 2}).Open(context.Background(), Input{Path: missing}, Setup{Dir: dir}); !errors.As(err, &ie) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: err = %v, want an InputError naming it", err)
	}
	path := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(path, []byte("a,b\n0,0\n0,1\n5,5\n5,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen int
	s := Setup{Dir: dir, Name: path, InputRead: func(tab *store.Table) error { seen = tab.N; return nil }}
	pr, err := (Options{K: 2}).Open(context.Background(), Input{Path: path}, s)
	if err != nil {
		t.Fatal(err)
	}
	if pr.N() != 4 || seen != 4 || pr.Table.MappedPath() == "" {
		t.Errorf("n = %d, InputRead saw %d rows, features mapped at %q: want 4, 4 and a file", pr.N(), seen, pr.Table.MappedPath())
	}
	if err := pr.Close(); err != nil || pr.Table.MappedPath() != "" {
		t.Errorf("Close: %v; the table's features still mapped at %q", err, pr.Table.MappedPath())
	}
}

// TestSpec checks the affinity.Spec of Options, their zero fields their
// defaults: the kNN graph with the graph's defaults, the Gaussian kernel,
// or a file of P.
func TestSpec(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		opt   Options
		check func(s affinity.Spec) bool
	}{
		{"knn", Options{K: 3}, func(s affinity.Spec) bool {
			g := s.Graph
			return g != nil && g.Neighbors == graph.DefaultNeighbors && g.Weights == graph.SelfTuning && g.Recall == graph.DefaultRecall &&
				g.LeafRounds == graph.DefaultLeafRounds && g.ScratchMemory == 7 && s.GraphFile == filepath.Join(dir, GraphFile) && s.Standardize
		}},
		{"connectivity, no descent", Options{K: 3, Connectivity: true, KNNDescent: -1}, func(s affinity.Spec) bool {
			return s.Graph.Weights == graph.Connectivity && s.Graph.LeafRounds == -1
		}},
		{"gaussian", Options{K: 3, Gaussian: true, Gamma: 0.5, Raw: true}, func(s affinity.Spec) bool {
			return s.Graph == nil && s.GraphFile == "" && s.Gamma == 0.5 && !s.Standardize && s.BlockSize == tile.DefaultBlockSize
		}},
		{"file", Options{K: 3, File: "edges.csv", Rows: 9}, func(s affinity.Spec) bool {
			return s.Graph == nil && s.File == "edges.csv" && s.Rows == 9 && s.MapDir == filepath.Join(dir, "edges")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.opt.Spec(dir, "x", 7)
			if err != nil || !tc.check(s) {
				t.Errorf("Spec = %+v, %v", s, err)
			}
		})
	}
}

// TestSolveLocksWorkdir checks that Solve keeps another run out of its
// Workdir, and that the lock ends with the solve.
func TestSolveLocksWorkdir(t *testing.T) {
	dir := t.TempDir()
	l, err := LockWorkdir(dir)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no locks here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]float64{{0, 0}, {0, 1}, {5, 5}, {5, 6}, {9, 0}, {9, 1}}
	var busy *workdir.BusyError
	if _, err := Solve(context.Background(), Input{Rows: rows}, Options{K: 2, Workdir: dir}); !errors.As(err, &busy) {
		t.Errorf("Solve in a locked Workdir: err = %v, want a workdir.BusyError", err)
	}
	l.Close()
	if _, err := Solve(context.Background(), Input{Rows: rows}, Options{K: 2, Workdir: dir}); err != nil {
		t.Errorf("Solve once the lock is released: %v", err)
	}
	if _, err := Solve(context.Background(), Input{Rows: rows}, Options{K: 2, Workdir: dir}); err != nil {
		t.Errorf("Solve after a Solve: %v", err)
	}
}

// TestSolveResume checks that a Solve that stops on its MaxTime leaves a
// checkpoint in its Workdir from which a Solve with Resume ends with the
// bits of a Solve never stopped, and that Resume refuses another input.
func TestSolveResume(t *testing.T) {
	if _, err := os.Stat(yeast); err != nil {
		t.Skipf("no %s: %v", yeast, err)
	}
	ctx, in := context.Background(), Input{Path: yeast}
	ref, err := Solve(ctx, in, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, err := Solve(ctx, in, Options{Workers: 2, Workdir: dir, CheckpointEvery: 5, MaxTime: time.Nanosecond})
	if err != nil || first.Status != fw.TimeLimit {
		t.Fatalf("a Solve of 1ns: status %v, %v; want the time limit", first.Status, err)
	}
	res, err := Solve(ctx, in, Options{Workers: 2, Workdir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(res.Objective) != math.Float64bits(ref.Objective) || len(res.Starts) != 2 || !slices.Equal(res.W, ref.W) {
		t.Errorf("resumed: objective %v, %d starts; want %v, 2 and the W of a Solve never stopped", res.Objective, len(res.Starts), ref.Objective)
	}
	rows := [][]float64{{0, 0}, {0, 1}, {5, 5}, {5, 6}, {9, 0}, {9, 1}}
	var ce *CheckpointError
	if _, err := Solve(ctx, Input{Rows: rows}, Options{K: 2, Workdir: t.TempDir(), Resume: true}); !errors.As(err, &ce) {
		t.Errorf("Resume without a checkpoint: err = %v, want a CheckpointError", err)
	}
	if _, err := Solve(ctx, Input{Rows: rows}, Options{Workers: 2, Workdir: dir, Resume: true}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "the input changed") {
		t.Errorf("Resume on another input: err = %v, want a CheckpointError saying the input changed", err)
	}
}

// TestInitAuto checks the default initial point: the spectral start on
// groups apart (three components: eigengap +Inf) and on the rings of
// TestSpectralRuns (eigengap 1.77), which it separates and k-means does
// not; the k-means start where the eigengap is below AutoEigengap (yeast),
// on the Gaussian kernel, which has no graph, and where the embedding
// would not fit the memory budget.
func TestInitAuto(t *testing.T) {
	const rings = "../cmd/ssnmf/testdata/rings1000.csv"
	rng := rand.New(rand.NewPCG(1, 2))
	var groups [][]float64
	for _, c := range [][2]float64{{0, 0}, {100, 0}, {0, 100}} {
		for range 200 {
			groups = append(groups, []float64{c[0] + rng.NormFloat64(), c[1] + rng.NormFloat64()})
		}
	}
	for _, tc := range []struct {
		name string
		in   Input
		opt  Options
		init string
		rule string // a part of InitRule
	}{
		{"groups apart", Input{Rows: groups}, Options{K: 3}, InitSpectral, "eigengap +Inf >= 1.75"},
		{"rings", Input{Path: rings}, Options{}, InitSpectral, "eigengap 1.77 >= 1.75"},
		{"yeast", Input{Path: yeast}, Options{}, InitKMeans, "< 1.75"},
		{"gaussian", Input{Path: rings}, Options{Gaussian: true}, InitKMeans, ""},
		{"memory", Input{Path: rings}, Options{Memory: 1 << 20}, InitKMeans, "would not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.in.Path); tc.in.Path != "" && err != nil {
				t.Skipf("no %s: %v", tc.in.Path, err)
			}
			tc.opt.Workers = 2
			res, err := Solve(context.Background(), tc.in, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			sum := res.Summary
			if sum.Init != tc.init || !strings.Contains(sum.InitRule, tc.rule) || (tc.rule == "") != (sum.InitRule == "") {
				t.Errorf("init %q (%q), want %q with %q; %+v", sum.Init, sum.InitRule, tc.init, tc.rule, sum.Spectral)
			}
			if sp := sum.Spectral; tc.init == InitSpectral && (sp == nil || sp.Sweeps != 1) {
				t.Errorf("spectral report %+v", sp)
			}
			if tc.init == InitSpectral && tc.in.Rows != nil {
				if sp := sum.Spectral; sp.Components != 3 {
					t.Errorf("%d components, want 3", sp.Components)
				}
				for i := range res.N {
					if res.Cluster(i) != res.Cluster(i/200*200) {
						t.Fatalf("row %d not in the cluster of its group", i)
					}
				}
			}
			if tc.init == InitSpectral && tc.in.Path == rings {
				switch {
				case sum.ARI == nil:
					t.Error("rings: no ARI against the labels")
				case *sum.ARI < 0.99:
					t.Errorf("rings: ARI %.4f, want at least 0.99", *sum.ARI)
				}
			}
			t.Logf("init %s (%s) %+v", sum.Init, sum.InitRule, sum.Spectral)
		})
	}
}

// TestEigengapJSON checks that an eigengap goes through JSON and back:
// +Inf and NaN as strings, the others as numbers.
func TestEigengapJSON(t *testing.T) {
	for _, g := range []Eigengap{2.5, 0, Eigengap(math.Inf(1)), Eigengap(math.NaN())} {
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		var back Eigengap
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back != g && !(math.IsNaN(float64(g)) && math.IsNaN(float64(back))) {
			t.Errorf("%v: JSON %s, read back %v", g, b, back)
		}
	}
	var g Eigengap
	if err := json.Unmarshal([]byte(`"big"`), &g); err == nil {
		t.Error(`"big": no error`)
	}
}
