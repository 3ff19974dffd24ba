//go:build amd64 || arm64

package tile

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
