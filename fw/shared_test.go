package fw_test

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// sharedData is where the project's shared data sets sit beside a checkout.
const sharedData = "../../shared/data"

// sharedProblem returns the Gaussian kernel (gamma = 1) of the standardized
// features of the shared data set file, as a tile source and materialized,
// or skips the test if the shared data sets are not beside the checkout.
func sharedProblem(t *testing.T, file string) (*tile.Gaussian, *fw.Dense) {
	t.Helper()
	tab, err := store.ReadCSV(filepath.Join(sharedData, file), store.CSVOptions{})
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is not here (the shared data sets sit beside the project's checkout): %v", file, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	n := tab.N
	tile.Standardize(tab.Features, n, tab.P)
	src, err := tile.NewGaussian(tab.Features, n, tab.P, 1)
	if err != nil {
		t.Fatal(err)
	}
	P := make([]float64, n*n)
	if err := src.Tile(P, 0, n, 0, n); err != nil {
		t.Fatal(err)
	}
	dense, err := fw.NewDense(n, P)
	if err != nil {
		t.Fatal(err)
	}
	return src, dense
}

// streamingMatchesDense solves the problem of k clusters from the same
// random start over stream and over dense, with set but for the workers
// given and a fresh method each, and checks that the runs agree: the
// objective, the gap, W, the passes and the iterations. It returns the
// results of the streaming and the dense run.
func streamingMatchesDense(t *testing.T, k int, set fw.Settings, method func() fw.Method,
	stream fw.Affinity, streamWorkers int, dense fw.Affinity, denseWorkers int) (rs, rd *fw.Result) {
	t.Helper()
	solve := func(a fw.Affinity, workers int) ([]float64, *fw.Result) {
		w := make([]float64, a.N()*k)
		if err := fw.Initialize(w, k, fw.StartRandom, 0); err != nil {
			t.Fatal(err)
		}
		s := set
		s.Workers = workers
		res, err := fw.Minimize(context.Background(), fw.Problem{P: a, K: k}, w, &s, method())
		if err != nil {
			t.Fatal(err)
		}
		return w, res
	}
	ws, rs := solve(stream, streamWorkers)
	wd, rd := solve(dense, denseWorkers)
	if d := math.Abs(rs.Objective-rd.Objective) / rd.Objective; d > 1e-10 {
		t.Errorf("objective: streaming %v, dense %v (relative difference %g)", rs.Objective, rd.Objective, d)
	}
	if d := math.Abs(rs.Gap-rd.Gap) / rd.Gap; d > 1e-6 {
		t.Errorf("gap: streaming %v, dense %v", rs.Gap, rd.Gap)
	}
	var diff float64
	for i := range ws {
		diff = math.Max(diff, math.Abs(ws[i]-wd[i]))
	}
	if diff > 1e-8 {
		t.Errorf("W: streaming and dense runs differ by up to %g", diff)
	}
	if rs.Passes != rd.Passes || rs.Iterations != rd.Iterations {
		t.Errorf("passes/iterations: streaming %d/%d, dense %d/%d", rs.Passes, rs.Iterations, rd.Passes, rd.Iterations)
	}
	return rs, rd
}

// TestStreamingMatchesDenseOnSharedData runs the solver on real data twice
// from the same start, once over the streaming tile engine and once over the
// materialized P, and compares the runs.
func TestStreamingMatchesDenseOnSharedData(t *testing.T) {
	for _, tc := range []struct {
		file  string
		k     int
		block int
	}{
		{file: "blood.csv", k: 10, block: 100}, // 215 duplicated rows
		{file: "yeast.csv", k: 10, block: 256}, // tiles do not divide n = 1484
	} {
		t.Run(tc.file, func(t *testing.T) {
			src, dense := sharedProblem(t, tc.file)
			stream := fw.Tiled(&tile.Engine{Source: src, BlockSize: tc.block, Workers: 2})
			set := fw.Settings{MaxIter: 60, GapTol: -1, Refresh: 25}
			rs, rd := streamingMatchesDense(t, tc.k, set, func() fw.Method { return &fw.FrankWolfe{} }, stream, 2, dense, 2)
			if d := math.Abs(rs.FrobSq-rd.FrobSq) / rd.FrobSq; d > 1e-11 { // 2.2e6 terms summed in another order
				t.Errorf("||P||_F^2: streaming %v, dense %v", rs.FrobSq, rd.FrobSq)
			}
		})
	}
}
