//go:build arm64

package tile

import "math"

// This file holds arm64's family of the dense kernels (dense.go):
// Advanced SIMD (NEON, neonDense), which every arm64 CPU that Go runs on
// has. Its generation runs dot8x8NEON of the screen (screen_arm64.s) for
// the dot products in float32 and gen64x8x4NEON in float64, then the
// vector exp; its consumption consume16 for P·S, row sums and ||P||_F^2,
// and the gemm micro-kernels for P·W. The assembly besides dot8x8NEON is
// written by asmgen/dense_arm64.py (dense_arm64.s).
//
// Its arithmetic differs from amd64's in two places, so NEON and the
// amd64 families give the same values to rounding, not the same bits: the
// exp builds 2^k in the exponent field where AVX-512 scales (VSCALEF) and
// AVX2 by 2^h, then 2^(k-h) (h about half of k), which sends the values
// below e^-87.33 (float32) or e^-708.39 (float64) to 0 instead of through
// the subnormals; and the consumer's sum of squares is added in other
// lanes.
// Everything else (dot products, P·S and P·W sums, the P·W flushes) is the
// same arithmetic in the same order.

// neonDense is NEON's table: 8-row micro-kernels of 8 float32 or 4
// float64 columns (two 128-bit vectors), one width each.
var neonDense = &denseKernels{
	isa: ISANEON, rows: 8, cols32: 8, cols64: 4,
	gen32:  []genKernel[float32]{dot8x8NEON},
	gen64:  []genKernel[float64]{gen64x8x4NEON},
	gemm32: []gemmKernel[float32]{gemm8x8NEON},
	gemm64: []gemmKernel[float64]{gemm64x8x4NEON},
	exp32:  exp32Slice, exp64: exp64Slice, consume: consume16,
}

// denseTables are the families with dense kernels here.
var denseTables = [...]*denseKernels{neonDense}

// The low bounds of the NEON exp: below them the result is 0. They are the
// lowest arguments, rounded in, whose 2^k is a normal number.
const (
	expLoNEON32 = -87.33
	expLoNEON64 = -708.39
)

// expNEON32 holds the constants of exp32Slice: the low bound, log2(e),
// ln 2 split in two (Cephes' expf, as expTab32), the polynomial's
// coefficients on |r| <= ln2/2 from the highest degree, and 1, padded to
// the 16 values the assembly loads. It is read-only.
var expNEON32 = [16]float32{
	expLoNEON32, math.Log2E, -0.693359375, 2.12194440e-4,
	1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
	1,
}

// expNEON64 holds the constants of exp64Slice: the low bound, log2(e), ln 2
// split as in math.Exp, the Taylor coefficients 1/12!, ..., 1/2! of
// (exp(r) - 1 - r)/r² (as expTab64), and 1. It is read-only.
var expNEON64 = [16]float64{
	expLoNEON64, math.Log2E, -6.93147180369123816490e-01, -1.90821492927058770002e-10,
	1.0 / 479001600, 1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040,
	1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2, 1,
}

// exp32Slice (dense_arm64.s) replaces every value v of t (len a multiple
// of 16) by exp(min(v, 0)); values below expLoNEON32, and NaN, give 0.
//
//go:noescape
func exp32Slice(t []float32)

// exp64Slice (dense_arm64.s) replaces every value v of t (len a multiple
// of 8) by exp(min(v, 0)); values below expLoNEON64, and NaN, give 0.
//
//go:noescape
func exp64Slice(t []float64)

// consume16 (dense_arm64.s) is consumeOneHot32 without the checks, for hp
// and wp positive multiples of 4 (16 in the callers), accC unused (may be
// nil) unless cols; it stores the four float64 vectors of squares' sums
// into sq.
//
//go:noescape
func consume16(t *float32, hp, wp int, sr, sc *int32, accR, accC *float64, cols, frob bool, sq *[8]float64)

// addF64s (dense_arm64.s) sets dst[i] += src[i] for i < n, a multiple of 8.
//
//go:noescape
func addF64s(dst, src *float64, n int)

// addFloat64s sets dst[i] += src[i]; src is as long as dst. It adds two
// values per instruction where NEON is usable (the same bits: each sum is
// one rounded addition either way).
func addFloat64s(dst, src []float64) {
	src = src[:len(dst)]
	i := 0
	if n := len(dst) &^ 7; n > 0 && cpuHas(ISANEON) {
		addF64s(&dst[0], &src[0], n)
		i = n
	}
	for ; i < len(dst); i++ {
		dst[i] += src[i]
	}
}

// gen64x8x4NEON (dense_arm64.s) is dot8x8NEON in float64 for an 8×4
// block: t[r*wp+c] = tg·(x_r·x_c) + (gc[c] + gr[r]) (r < 8, c < 4), xr
// holding the 8 rows' features interleaved (xr[q*8+r]), xt the columns'
// transposed (xt[q*wp+c]).
//
//go:noescape
func gen64x8x4NEON(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)

// The P·W micro-kernels of dense_arm64.s. Each adds to the 8×8 (float32)
// or 8×4 (float64) block of float64 y[r*ldy+c] the products, summed over
// s < inner, of a's element (r, s) and b[s*ldb+c], where a's element is
// a[r*lda+s] (Rows: the tile's rows, contiguous) or a[s*lda+r] (Cols: its
// columns); unless add is set, y is set to the sums instead. inner must be
// a multiple of 4 (float32) or 2 (float64). The float32 kernels sum in
// float32 partial sums of at most flushEvery products (fused
// multiply-adds), each then widened and added to y: gemmRef32's
// arithmetic, as gemm8x1's. The float64 kernels round each product and
// add it, in s order from 0: the portable consumer's arithmetic, as
// gemm64x8x1's.

//go:noescape
func gemm8x8RowsNEON(y *float64, ldy int, a *float32, lda int, b *float32, ldb, inner int, add bool)

//go:noescape
func gemm8x8ColsNEON(y *float64, ldy int, a *float32, lda int, b *float32, ldb, inner int, add bool)

//go:noescape
func gemm64x8x4RowsNEON(y *float64, ldy int, a *float64, lda int, b *float64, ldb, inner int, add bool)

//go:noescape
func gemm64x8x4ColsNEON(y *float64, ldy int, a *float64, lda int, b *float64, ldb, inner int, add bool)

// gemmNEONKernel is a P·W micro-kernel of dense_arm64.s.
type gemmNEONKernel[F float32 | float64] func(y *float64, ldy int, a *F, lda int, b *F, ldb, inner int, add bool)

// gemm8x8NEON and gemm64x8x4NEON are the P·W micro-kernels of neonDense
// (gemmKernel, for gemmTile): the Rows kernel where is = 1, else the Cols
// kernel (rs must then be 1), on an 8×8 (float32) or 8×4 (float64) block.

func gemm8x8NEON(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool) {
	gemmNEON(gemm8x8RowsNEON, gemm8x8ColsNEON, 4, y, ldy, a, rs, is, b, ldb, inner, add)
}

func gemm64x8x4NEON(y *float64, ldy int, a *float64, rs, is int, b *float64, ldb, inner int, add bool) {
	gemmNEON(gemm64x8x4RowsNEON, gemm64x8x4ColsNEON, 2, y, ldy, a, rs, is, b, ldb, inner, add)
}

// gemmNEON runs the micro-kernel rows where is = 1, else cols, after
// checking what they rely on beyond gemmTile's checks: rs = 1 for cols,
// and inner a multiple of steps.
func gemmNEON[F float32 | float64](rows, cols gemmNEONKernel[F], steps int, y *float64, ldy int, a *F, rs, is int, b *F, ldb, inner int, add bool) {
	switch {
	case inner%steps != 0:
	case is == 1:
		rows(y, ldy, a, rs, b, ldb, inner, add)
		return
	case rs == 1:
		cols(y, ldy, a, is, b, ldb, inner, add)
		return
	}
	panic("tile: gemmNEON called with inconsistent sizes") // a bug in this package, not bad input
}
