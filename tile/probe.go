package tile

import (
	"context"
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
