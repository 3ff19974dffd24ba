package tile_test

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
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

// TestKernelFamiliesSameClusters solves a small problem of three separated
// Gaussian clusters (n = 151, p = 3, k = 3) with every kernel family this
// CPU runs, in both precisions, from the same start, and checks that the
// vectorized families find the clusters of the portable kernel: the same
// largest membership in every row, and the objective to 1e-6 relative
// (their tiles differ from the portable kernel's by rounding only, see
// vectorTileBound in kernel_test.go).
func TestKernelFamiliesSameClusters(t *testing.T) {
	const n, p, k = 151, 3, 3
	rng := rand.New(rand.NewPCG(31, 32))
	x := make([]float64, n*p)
	for i := range n {
		for q := range p {
			x[i*p+q] = 6*float64(i%k) + rng.NormFloat64()
		}
	}
	w0 := make([]float64, n*k)
	if err := fw.Initialize(w0, k, fw.StartRandom, 3); err != nil {
		t.Fatal(err)
	}
	for _, prec := range []tile.Precision{tile.Float32, tile.Float64} {
		src, err := tile.NewGaussianPrecision(x, n, p, 0.1, prec)
		if err != nil {
			t.Fatal(err)
		}
		solve := func(isa tile.ISA) ([]int, float64) {
			w := slices.Clone(w0)
			set := fw.Settings{MaxIter: 60, GapTol: -1, Refresh: 10, Workers: 2}
			e := &tile.Engine{Source: src, Workers: 2, BlockSize: 40, ISA: isa}
			res, err := fw.Minimize(context.Background(), fw.Problem{P: fw.Tiled(e), K: k}, w, &set, &fw.FrankWolfe{})
			if err != nil {
				t.Fatalf("%s: %v", e.Kernel(), err)
			}
			labels := make([]int, n)
			for i := range labels {
				row := w[i*k : (i+1)*k]
				labels[i] = slices.Index(row, slices.Max(row))
			}
			return labels, res.Objective
		}
		want, obj := solve(tile.ISAGo)
		if c := slices.Compact(slices.Sorted(slices.Values(want))); len(c) != k {
			t.Fatalf("%s: the portable kernel finds the clusters %v, want %d", prec, c, k)
		}
		for _, isa := range tile.SupportedISAs() {
			if isa == tile.ISAGo || !tile.DenseVectorKernel(isa) {
				continue
			}
			got, o := solve(isa)
			if !slices.Equal(got, want) {
				t.Errorf("%s/%s: clusters %v, portable kernel %v", isa, prec, got, want)
			}
			if d := math.Abs(o-obj) / obj; d > 1e-6 {
				t.Errorf("%s/%s: objective %v, portable kernel %v (relative difference %.2g)", isa, prec, o, obj, d)
			}
		}
	}
}
