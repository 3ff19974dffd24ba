package tile

import (
	"context"
	"math"
	"time"

	"golang.org/x/sync/errgroup"
)

// FMAPeak measures this machine's fused multiply-add throughput in flop/s
// (two flops per FMA) in the given precision, on workers goroutines at once
// for about d, with the widest FMA this build can issue: 512-bit vectors
// where the vectorized kernel is built and usable (see VectorKernel),
// scalar math.FMA otherwise. It returns the rate and a name for the
// instruction ("avx512 float32x16", "scalar float64").
func FMAPeak(ctx context.Context, prec Precision, workers int, d time.Duration) (flops float64, kind string, err error) {
	workers = max(workers, 1)
	const chunk = 1 << 16 // iterations between clock reads
	perCall, kind := fmaBlockFlops(prec)
	rates := make([]float64, workers)
	g, gctx := errgroup.WithContext(ctx)
	for w := range workers {
		g.Go(func() error {
			start := time.Now()
			var calls int
			for time.Since(start) < d {
				if err := gctx.Err(); err != nil {
					return err
				}
				fmaBlock(prec, chunk)
				calls++
			}
			rates[w] = float64(calls) * chunk * perCall / time.Since(start).Seconds()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, kind, err
	}
	for _, r := range rates {
		flops += r
	}
	return flops, kind, nil
}

// scalarFMAFlops is the number of flops of one iteration of scalarFMA.
const scalarFMAFlops = 8 * 2

// scalarFMA runs n iterations of eight independent scalar FMA chains: the
// FMA measurement where no vector kernel is built or usable. math.FMA rounds
// in float64; float32 scalar FMAs issue at the same rate.
func scalarFMA(n int) float64 {
	a0, a1, a2, a3, a4, a5, a6, a7 := 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0
	const m, c = 0.999999, 1e-7
	for range n {
		a0 = math.FMA(a0, m, c)
		a1 = math.FMA(a1, m, c)
		a2 = math.FMA(a2, m, c)
		a3 = math.FMA(a3, m, c)
		a4 = math.FMA(a4, m, c)
		a5 = math.FMA(a5, m, c)
		a6 = math.FMA(a6, m, c)
		a7 = math.FMA(a7, m, c)
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}
