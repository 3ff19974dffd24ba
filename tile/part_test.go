package tile

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPartsSameBits checks the promise of MulPart and MulOneHotPart: the
// rows of the parts, put end to end in order, are the whole pass's bits,
// and so are the row sums and ||P||_F^2 folded from the parts' shares, for
// any number of parts, either precision and either kernel.
func TestPartsSameBits(t *testing.T) {
	const n, p, k = 301, 5, 7
	x := randomFeatures(n, p, 3)
	rng := rand.New(rand.NewPCG(7, 8))
	w := randomSlice(n*k, rng.Float64)
	s := randomSlice(n, func() int32 { return int32(rng.IntN(k)) })
	for _, tc := range []struct {
		name  string
		prec  Precision
		isa   ISA
		block int
	}{
		{name: "float64", prec: Float64, block: 32},
		{name: "float32", prec: Float32, block: 32},
		{name: "float64 generic", prec: Float64, isa: ISAGo, block: 32},
		{name: "float32 generic", prec: Float32, isa: ISAGo, block: 48},
		{name: "one block", prec: Float64, block: 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := NewGaussianPrecision(x, n, p, 0.3, tc.prec)
			if err != nil {
				t.Fatal(err)
			}
			e := &Engine{Source: src, BlockSize: tc.block, Workers: 3, ISA: tc.isa}
			ctx := context.Background()
			pw, ps, rows := make([]float64, n*k), make([]float64, n*k), make([]float64, n)
			frob, err := e.Mul(ctx, pw, w, k, rows)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.MulOneHot(ctx, ps, s, k); err != nil {
				t.Fatal(err)
			}
			for _, parts := range []int{1, 2, 3, 4, 11, 13} {
				gpw, gps, grows := make([]float64, 0, n*k), make([]float64, 0, n*k), make([]float64, 0, n)
				var norms []float64
				next := 0
				for part := range parts {
					r0, r1 := e.PartRows(part, parts)
					if r0 != next || r1 < r0 {
						t.Fatalf("%d parts: part %d has rows %d:%d, want them to start at %d", parts, part, r0, r1, next)
					}
					next = r1
					dpw, dps, drows := make([]float64, (r1-r0)*k), make([]float64, (r1-r0)*k), make([]float64, r1-r0)
					dfrob := make([]float64, e.BlockNorms(part, parts))
					if err := e.MulPart(ctx, part, parts, dpw, w, k, drows, dfrob); err != nil {
						t.Fatal(err)
					}
					if err := e.MulOneHotPart(ctx, part, parts, dps, s, k); err != nil {
						t.Fatal(err)
					}
					gpw, gps, grows = append(gpw, dpw...), append(gps, dps...), append(grows, drows...)
					norms = append(norms, dfrob...)
				}
				if next != n {
					t.Fatalf("%d parts cover rows 0:%d, want 0:%d", parts, next, n)
				}
				for name, pair := range map[string][2][]float64{"P·W": {gpw, pw}, "P·S": {gps, ps}, "row sums": {grows, rows}} {
					for i := range pair[1] {
						if math.Float64bits(pair[0][i]) != math.Float64bits(pair[1][i]) {
							t.Fatalf("%d parts: %s[%d] = %v, the whole pass gave %v", parts, name, i, pair[0][i], pair[1][i])
						}
					}
				}
				if got := FrobSq(norms); got != frob {
					t.Fatalf("%d parts: ||P||_F^2 = %v, the whole pass gave %v", parts, got, frob)
				}
			}
		})
	}
}

func TestPartErrors(t *testing.T) {
	src, _ := NewGaussian(randomFeatures(10, 2, 1), 10, 2, 1)
	e := &Engine{Source: src, BlockSize: 4}
	w := make([]float64, 10*2)
	for _, tc := range []struct {
		name        string
		part, parts int
		dst         []float64
	}{
		{name: "no parts", part: 0, parts: 0, dst: make([]float64, 8)},
		{name: "part past the end", part: 3, parts: 3, dst: make([]float64, 8)},
		{name: "negative part", part: -1, parts: 3, dst: make([]float64, 8)},
		{name: "short output", part: 0, parts: 3, dst: make([]float64, 7)},
	} {
		if err := e.MulPart(context.Background(), tc.part, tc.parts, tc.dst, w, 2, nil, nil); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// BenchmarkMulPart times part 0 of a P·W pass cut into parts, against the
// whole pass: a part's rows cover rows×n entries of P, all computed (the
// whole pass computes each tile off the diagonal once for both of its
// blocks), so its entries/s is about half the whole pass's.
func BenchmarkMulPart(b *testing.B) {
	const n, p, k = 4096, 16, 10
	x := randomFeatures(n, p, 1)
	src, _ := NewGaussian(x, n, p, 1.0/(2*p))
	e := &Engine{Source: src}
	w := make([]float64, n*k)
	for i := range w {
		w[i] = 1.0 / k
	}
	ctx := context.Background()
	b.Run("whole", func(b *testing.B) {
		dst := make([]float64, n*k)
		for b.Loop() {
			if _, err := e.Mul(ctx, dst, w, k, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*n*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
	for _, parts := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("part-of-%d", parts), func(b *testing.B) {
			r0, r1 := e.PartRows(0, parts)
			dst := make([]float64, (r1-r0)*k)
			for b.Loop() {
				if err := e.MulPart(ctx, 0, parts, dst, w, k, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r1-r0)*n*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
