package tile_test

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

// TestFloat32RunsMatchFloat64 solves the four plain-CSV shared data sets
// with float32 and with float64 kernel values from the same start (raw
// features, median-heuristic bandwidth, the solver's default kernel for
// this build) and checks that the objective and the Frank-Wolfe gap agree
// to 1e-6 relative (the gap on blood to 2e-6). The two larger sets are cut to their first rows and a
// few iterations to keep the test fast.
func TestFloat32RunsMatchFloat64(t *testing.T) {
	for _, tc := range []struct {
		file        string
		rows, iters int
		gapTol      float64
	}{
		// Blood's raw features differ in scale by 250 and the vectorized
		// kernel's float32 norms identity loses more there: its gap agrees
		// to 1.4e-6 (the portable float32 kernel, which rounds float64
		// values, to 1e-6).
		{file: "blood.csv", iters: 40, gapTol: 2e-6},
		{file: "yeast.csv", iters: 20, gapTol: 1e-6},
		{file: "satimage.csv", rows: 1200, iters: 10, gapTol: 1e-6},
		{file: "pendigits.csv", rows: 1200, iters: 10, gapTol: 1e-6},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tab, err := store.ReadCSV(filepath.Join(sharedData, tc.file), store.CSVOptions{})
			if errors.Is(err, fs.ErrNotExist) {
				t.Skipf("%s is not here (the shared data sets sit beside the project's checkout): %v", tc.file, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			n, p, k := tab.N, tab.P, 10
			if tc.rows > 0 && tc.rows < n {
				n = tc.rows
			}
			x := tab.Features[:n*p]
			gamma, err := tile.MedianGamma(x, n, p, tile.DefaultGammaPairs, 0)
			if err != nil {
				t.Fatal(err)
			}
			solve := func(prec tile.Precision) *fw.Result {
				src, err := tile.NewGaussianPrecision(x, n, p, gamma, prec)
				if err != nil {
					t.Fatal(err)
				}
				w := make([]float64, n*k)
				if err := fw.Initialize(w, k, fw.StartRandom, 0); err != nil {
					t.Fatal(err)
				}
				set := fw.Settings{MaxIter: tc.iters, GapTol: -1, Refresh: 10, Workers: 2}
				e := &tile.Engine{Source: src, Workers: 2}
				res, err := fw.Minimize(context.Background(), fw.Problem{P: fw.Tiled(e), K: k}, w, &set, &fw.FrankWolfe{})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: objective %.10g gap %.10g", e.Kernel(), res.Objective, res.Gap)
				return res
			}
			r64, r32 := solve(tile.Float64), solve(tile.Float32)
			if d := math.Abs(r32.Objective-r64.Objective) / r64.Objective; d > 1e-6 {
				t.Errorf("objective: float32 %v, float64 %v (relative difference %.2g)", r32.Objective, r64.Objective, d)
			}
			if d := math.Abs(r32.Gap-r64.Gap) / r64.Gap; d > tc.gapTol {
				t.Errorf("gap: float32 %v, float64 %v (relative difference %.2g)", r32.Gap, r64.Gap, d)
			}
		})
	}
}
