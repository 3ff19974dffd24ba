package fw_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/tile"
)

// engineTiles is the streaming engine's passes with the tiles of another
// source (the Gaussian source itself), as a fw.TiledMatrix.
type engineTiles struct {
	*tile.Engine
	tiles fw.TileSource
}

func (e engineTiles) Tile(dst []float64, r0, r1, c0, c1 int) error {
	return e.tiles.Tile(dst, r0, r1, c0, c1)
}

// TestRowCDStreamingMatchesDenseOnSharedData runs row-CD on real data from
// the same start over the streaming engine with the Gaussian source's tiles
// and over the materialized P, and compares the runs.
func TestRowCDStreamingMatchesDenseOnSharedData(t *testing.T) {
	for _, tc := range []struct {
		file   string
		k      int
		block  int
		strip  int64
		sweeps int
	}{
		{file: "blood.csv", k: 10, block: 100, sweeps: 8},                 // 215 duplicated rows
		{file: "blood.csv", k: 10, block: 100, strip: 1, sweeps: 4},       // two-pass fallback
		{file: "yeast.csv", k: 10, block: 256, strip: 1 << 20, sweeps: 2}, // the strip cut to 88 rows
	} {
		t.Run(tc.file, func(t *testing.T) {
			src, dense := sharedProblem(t, tc.file)
			stream := fw.Tiled(engineTiles{&tile.Engine{Source: src, BlockSize: 128, Workers: 2}, src})
			set := fw.Settings{MaxIter: tc.sweeps, GapTol: -1, Refresh: 3}
			method := func() fw.Method { return &fw.RowCD{BlockSize: tc.block, StripMemory: tc.strip} }
			streamingMatchesDense(t, tc.k, set, method, stream, 2, dense, 1)
		})
	}
}

// BenchmarkRowCDSweep measures a sweep on a Gaussian kernel of n random
// points (strip schedule, and the two-pass fallback), in kernel entries of
// the upper triangle per second, next to an FW iteration's P·S pass.
func BenchmarkRowCDSweep(b *testing.B) {
	const n, p, k = 3000, 8, 10
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n*p)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	src, err := tile.NewGaussian(x, n, p, 0.2)
	if err != nil {
		b.Fatal(err)
	}
	eng := fw.Tiled(&tile.Engine{Source: src, Workers: 2})
	w0 := make([]float64, n*k)
	if err := fw.Initialize(w0, k, fw.StartRandom, 0); err != nil {
		b.Fatal(err)
	}
	entries := float64(n) * float64(n+1) / 2
	for _, bc := range []struct {
		name  string
		strip int64
	}{{"strip", 0}, {"two-pass", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			w := slices.Clone(w0)
			set := fw.Settings{GapTol: -1, Refresh: -1, Workers: 2, MaxIter: b.N}
			b.ResetTimer()
			res, err := fw.Minimize(context.Background(), fw.Problem{P: eng, K: k}, w, &set, &fw.RowCD{StripMemory: bc.strip})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(entries*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(float64(res.Passes)/float64(b.N), "passes/sweep")
		})
	}
	b.Run("fw-iteration", func(b *testing.B) {
		w := slices.Clone(w0)
		set := fw.Settings{GapTol: -1, Refresh: -1, Workers: 2, MaxIter: b.N}
		b.ResetTimer()
		if _, err := fw.Minimize(context.Background(), fw.Problem{P: eng, K: k}, w, &set, &fw.FrankWolfe{}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(entries*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}
