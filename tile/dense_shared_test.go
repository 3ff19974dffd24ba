//go:build amd64 || arm64

package tile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// gemmRef32 is the arithmetic the assembly micro-kernels promise, in pure
// Go: y[r*ldy+c] += the float32 fused multiply-adds of a[r*rs+s*is]·b[s*ldb+c]
// in s order, widened and added every flushEvery steps.
func gemmRef32(y []float64, ldy int, a []float32, rs, is int, b []float32, ldb, m, cols, inner int) {
	for r := range m {
		for c := range cols {
			for s0 := 0; s0 < inner; s0 += flushEvery {
				var acc float32
				for s := s0; s < min(inner, s0+flushEvery); s++ {
					acc = fma32(a[r*rs+s*is], b[s*ldb+c], acc)
				}
				y[r*ldy+c] += float64(acc)
			}
		}
	}
}

// gemmCase is a test case of the P·W micro-kernels: an m×inner matrix a
// times an inner×kp matrix b, with a read as the tile's rows (rs = inner,
// is = 1) or, if transposed, as its columns (rs = 1, is = m).
type gemmCase struct {
	name         string
	m, kp, inner int
	transposed   bool
}

// operands returns random a and b of the case's sizes, of the given
// draws, and a's strides.
func operands[F float32 | float64](tc gemmCase, draw func() F) (a, b []F, rs, is int) {
	a = randomSlice(tc.m*tc.inner, draw)
	b = randomSlice(tc.inner*tc.kp, func() F { return draw() - 0.25 })
	if tc.transposed {
		return a, b, 1, tc.m
	}
	return a, b, tc.inner, 1
}

// expInputs returns m values for the exp tests: a grid over [lo, 0], values
// dense near 0, and the edges (zeros, the clamp, subnormal results, values
// above 0, NaN and infinities).
func expInputs[F float32 | float64](m int, lo float64, rng *rand.Rand) []F {
	x := make([]F, m)
	for i := range x {
		switch i % 4 {
		case 0:
			x[i] = F(lo * float64(i) / float64(m))
		case 1:
			x[i] = F(-rng.ExpFloat64())
		case 2:
			x[i] = F(1.3 * lo * rng.Float64())
		default:
			x[i] = F(-rng.Float64() * 1e-6)
		}
	}
	edges := []float64{0, math.Copysign(0, -1), 1, 1e30, -1e30, lo, 2 * lo, -87.5, -103.9, -104, -745, -708.5, -1100, -1e-40, 0.5, math.NaN(), math.Inf(-1), math.Inf(1)}
	for i, e := range edges {
		x[i] = F(e)
	}
	return x
}

// TestAddFloat64s checks the commit's vector add (the fastest add this
// CPU runs) against scalar additions, for lengths around the blocks of
// the families' adds (4, 8, 16 and 32).
func TestAddFloat64s(t *testing.T) {
	testAdd(t, "addFloat64s", addFloat64s)
}

// testAdd checks add(dst, src), which should set dst[i] += src[i], against
// scalar additions, for lengths around blocks of 4, 8, 16 and 32.
func testAdd(t *testing.T, name string, add func(dst, src []float64)) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{0, 1, 4, 7, 8, 9, 15, 16, 31, 32, 33, 40, 71, 100} {
		dst, src := randomSlice(n, rng.NormFloat64), randomSlice(n, rng.NormFloat64)
		want := slices.Clone(dst)
		for i := range want {
			want[i] += src[i]
		}
		add(dst, src)
		if !slices.Equal(dst, want) {
			t.Errorf("%s n=%d: %v, want %v", name, n, dst, want)
		}
	}
}
