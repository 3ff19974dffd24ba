package spectral

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkBlock measures the block work of a sweep on 10⁵ rows of a block
// of 15 columns: a combination by a 15×15 coefficient matrix (combine) and
// a Gram matrix (gram), in rows a second.
func BenchmarkBlock(b *testing.B) {
	const n, w = 100_000, 15
	rng := rand.New(rand.NewPCG(1, 2))
	x, y, c := make([]float64, n*w), make([]float64, n*w), make([]float64, w*w)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range c {
		c[i] = rng.NormFloat64()
	}
	ctx := context.Background()
	b.Run("combine", func(b *testing.B) {
		for b.Loop() {
			if err := combine(ctx, 1, n, y, w, term{m: x, w: w, c: c}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("gram", func(b *testing.B) {
		for b.Loop() {
			if _, err := gram(ctx, 1, n, x, w, x, w); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
