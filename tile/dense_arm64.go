//go:build arm64

package tile

import (
	"math"
	"unsafe"
)

// This file holds the vectorized tile kernel of arm64, with Advanced SIMD
// (NEON), which every arm64 CPU that Go runs on has. It follows the design
// of amd64's (dense_amd64.go), and shares its Go code (dense.go): packing
// (scalar), generation (vector: dot8x8NEON of the screen, screen_arm64.s,
// for the dot products in float32, gen64x8x4NEON in float64, then the
// vector exp), consumption (vector: consume16 for P·S, row sums and
// ||P||_F^2, the gemm micro-kernels for P·W). The assembly is written by
// asmgen/dense_arm64.py (dense_arm64.s).
//
// Its arithmetic differs from amd64's in two places, so the two families
// give the same values to rounding, not the same bits: the exp builds 2^k
// in the exponent field where AVX-512 scales (VSCALEF), which sends the
// values below e^-87.33 (float32) or e^-708.39 (float64) to 0 instead of
// through the subnormals; and the consumer's sum of squares is added in
// other lanes. Everything else (dot products, P·S and P·W sums, the P·W
// flushes) is the same arithmetic in the same order.

const (
	simdName = "neon"
	denseISA = ISANEON
)

// fastFamily reports whether the dense kernel here is of family isa.
func fastFamily(isa ISA) bool { return isa == ISANEON }

// simdUsable reports whether this CPU runs the kernels of this file.
func simdUsable() bool { return cpuHas(ISANEON) }

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
	if n := len(dst) &^ 7; n > 0 && simdUsable() {
		addF64s(&dst[0], &src[0], n)
		i = n
	}
	for ; i < len(dst); i++ {
		dst[i] += src[i]
	}
}

// genTile32 writes the hp×wp tile of exp(-gamma·d²) into t: hp is a
// multiple of 8, wp of 16. Each 8×8 block's exponent is dot8x8NEON's
// (gen8x1's arithmetic); the exp runs on 8 rows at a time, while they are
// in cache.
func genTile32(t []float32, hp, wp int, xr, xt []float32, p int, gr, gc []float32, tg float32) {
	if hp == 0 || wp == 0 {
		return
	}
	if hp%8 != 0 || wp%16 != 0 || len(t) < hp*wp || len(xr) < hp*p || len(xt) < p*wp || len(gr) < hp || len(gc) < wp {
		panic("tile: genTile32 called with inconsistent sizes") // a bug in this package, not bad input
	}
	var xr0 *float32
	if p > 0 {
		xr0 = &xr[0]
	}
	for i0 := 0; i0 < hp; i0 += 8 {
		ti := t[i0*wp : (i0+8)*wp]
		xi := (*float32)(unsafe.Add(unsafe.Pointer(xr0), 4*i0*p))
		for j0 := 0; j0 < wp; j0 += 8 {
			dot8x8NEON(&ti[j0], wp, xi, xtAt(xt, j0), p, &gr[i0], &gc[j0], &tg)
		}
		exp32Slice(ti)
	}
}

// gen64x8x4NEON (dense_arm64.s) is dot8x8NEON in float64 for an 8×4
// block: t[r*wp+c] = tg·(x_r·x_c) + (gc[c] + gr[r]) (r < 8, c < 4), xr
// holding the 8 rows' features interleaved (xr[q*8+r]), xt the columns'
// transposed (xt[q*wp+c]).
//
//go:noescape
func gen64x8x4NEON(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)

// genTile64 writes the hp×wp tile of exp(-gamma·d²) into t, 8 rows at a
// time, each block's exp while its rows are in cache: t[r*wp+c] =
// exp(tg·(x_r·x_c) + (gc[c] + gr[r])) with a chain of fused multiply-adds
// in feature order; xr holds the rows' features in groups of 8 (packRows),
// xt the columns' transposed (p×wp). hp and wp are multiples of 8.
func genTile64(t []float64, hp, wp int, xr, xt []float64, p int, gr, gc []float64, tg float64) {
	if hp == 0 || wp == 0 {
		return
	}
	if hp%8 != 0 || wp%8 != 0 || len(t) < hp*wp || len(xr) < hp*p || len(xt) < p*wp || len(gr) < hp || len(gc) < wp {
		panic("tile: genTile64 called with inconsistent sizes") // a bug in this package, not bad input
	}
	var xr0 *float64
	if p > 0 {
		xr0 = &xr[0]
	}
	for i0 := 0; i0 < hp; i0 += 8 {
		ti := t[i0*wp : (i0+8)*wp]
		xi := (*float64)(unsafe.Add(unsafe.Pointer(xr0), 8*i0*p))
		for j0 := 0; j0 < wp; j0 += 4 {
			var xj *float64 // nil if p = 0: the kernel then reads no features
			if p > 0 {
				xj = &xt[j0]
			}
			gen64x8x4NEON(&ti[j0], wp, xi, xj, p, &gr[i0], &gc[j0], &tg)
		}
		exp64Slice(ti)
	}
}

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

// gemmNEON sets y (m×kp, stride kp) to the product of the m×inner matrix
// a[r*rs+s*is] with the inner×kp matrix b (stride kp), or adds the product
// to y if add is set. It runs the micro-kernel rows where is = 1, else
// cols (rs must then be 1), on 8×width blocks, and checks the bounds they
// rely on: m is a multiple of 8, kp of width, inner of steps.
func gemmNEON[F float32 | float64](rows, cols gemmNEONKernel[F], width, steps int, y []float64, kp int, a []F, rs, is int, b []F, m, inner int, add bool) {
	if m == 0 {
		return
	}
	if inner == 0 {
		if !add {
			clear(y[:m*kp])
		}
		return
	}
	kern, lda := rows, rs
	if is != 1 {
		kern, lda = cols, is
	}
	if m%8 != 0 || kp%width != 0 || inner%steps != 0 || is != 1 && rs != 1 ||
		len(y) < m*kp || len(b) < inner*kp || len(a) <= (m-1)*rs+(inner-1)*is {
		panic("tile: gemmNEON called with inconsistent sizes") // a bug in this package, not bad input
	}
	for r0 := 0; r0 < m; r0 += 8 {
		for c0 := 0; c0 < kp; c0 += width {
			kern(&y[r0*kp+c0], kp, &a[r0*rs], lda, &b[c0], kp, inner, add)
		}
	}
}

// gemmTile32 is gemmNEON with the float32 micro-kernels: kp a multiple of
// 8, inner of 4.
func gemmTile32(y []float64, kp int, a []float32, rs, is int, b []float32, m, inner int, add bool) {
	gemmNEON(gemm8x8RowsNEON, gemm8x8ColsNEON, 8, 4, y, kp, a, rs, is, b, m, inner, add)
}

// gemmTile64 sets y to the product as gemmNEON does, with the float64
// micro-kernels (the portable consumer's arithmetic): kp a multiple of 4,
// inner of 2.
func gemmTile64(y []float64, kp int, a []float64, rs, is int, b []float64, m, inner int) {
	gemmNEON(gemm64x8x4RowsNEON, gemm64x8x4ColsNEON, 4, 2, y, kp, a, rs, is, b, m, inner, false)
}
