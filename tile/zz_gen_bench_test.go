//go:build amd64

package tile

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkGenTmp(b *testing.B) {
	const m, p = 256, 16
	rng := rand.New(rand.NewPCG(7, 8))
	t := randomSlice(m*m, rng.Float32)
	xr, xt := randomSlice(m*p, rng.Float32), randomSlice(m*p, rng.Float32)
	g := make([]float32, m)
	for _, fam := range denseKernelsHere(b) {
		b.Run(fam.isa.String()+"/dot", func(b *testing.B) {
			for b.Loop() {
				genTiles(fam.gen32, fam.rows, fam.lanes32, func([]float32) {}, t, m, m, xr, xt, p, g, g, 0.1)
			}
			b.ReportMetric(float64(m*m)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
		b.Run(fam.isa.String()+"/exp", func(b *testing.B) {
			for b.Loop() {
				fam.exp32(t)
			}
			b.ReportMetric(float64(m*m)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
