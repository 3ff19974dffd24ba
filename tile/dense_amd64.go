//go:build amd64

package tile

import (
	"math"
	"unsafe"
)

// This file holds the vectorized tile kernel of amd64, used on CPUs with
// AVX-512. A tile is computed in three phases that never mix scalar
// floating-point code into a vector loop:
// packing (scalar: the tile's rows and columns are copied, centred, into
// panels), generation (vector: distances by the norms identity
// d² = |x_i|² + |x_j|² - 2 x_i·x_j with a blocked dot-product kernel, then a
// vectorized exp), and consumption (vector: the tile, still in cache, is
// added into float64 accumulators, which the Engine's commit then adds to
// the output as they are: class-major for P·S, with stride kp for P·W).
// Every vector phase is an assembly function written by the scripts in
// asmgen (gen_amd64.s, dense_amd64.s, gemm_amd64.s, gemm64_amd64.s; see
// asm_amd64.go), which ends with VZEROUPPER, so that the scalar code
// between them runs with the upper halves of the vector registers clear.
// The assembly replaced archsimd code (GOEXPERIMENT=simd) with the same
// arithmetic, each value going through the same operations in the same
// order (the exp is the compiler's instruction sequence; the float64
// generation now blocks 8 rows instead of 4), so it gives the same bits;
// the archsimd code is kept as the tests' reference for this,
// dense_archsimd_ref_amd64_test.go.

const (
	simdName = "avx512"
	denseISA = ISAAVX512
)

// fastFamily reports whether the dense kernel here is of family isa.
func fastFamily(isa ISA) bool { return isa == ISAAVX512 }

func simdUsable() bool { return cpuHas(ISAAVX512) }

// expTab32 holds the constants of exp32Slice, one vector each; loading
// them from memory keeps the compiler from rebuilding them at each use. The
// polynomial is Cephes' expf on |r| <= ln2/2. It is read-only.
var expTab32 = [12][16]float32{
	splat32(-150), splat32(0), splat32(math.Log2E), splat32(-0.693359375), splat32(2.12194440e-4),
	splat32(1.9875691500e-4), splat32(1.3981999507e-3), splat32(8.3334519073e-3),
	splat32(4.1665795894e-2), splat32(1.6666665459e-1), splat32(5.0000001201e-1), splat32(1),
}

func splat32(v float32) (a [16]float32) {
	for i := range a {
		a[i] = v
	}
	return a
}

// exp32Slice (dense_amd64.s) replaces every value v of t (len a multiple
// of 16) by exp(min(v, 0)); values below -150 give 0.
//
//go:noescape
func exp32Slice(t []float32)

// expTab64 holds the constants of exp64Slice: clamp, ln2 split as in
// math.Exp, the Taylor coefficients 1/12!, ..., 1/2! of
// (exp(r) - 1 - r)/r² on |r| <= ln2/2, and 1. It is read-only.
var expTab64 = [17][8]float64{
	splat64(-1100), splat64(0), splat64(math.Log2E),
	splat64(-6.93147180369123816490e-01), splat64(-1.90821492927058770002e-10),
	splat64(1.0 / 479001600), splat64(1.0 / 39916800), splat64(1.0 / 3628800), splat64(1.0 / 362880),
	splat64(1.0 / 40320), splat64(1.0 / 5040), splat64(1.0 / 720), splat64(1.0 / 120),
	splat64(1.0 / 24), splat64(1.0 / 6), splat64(1.0 / 2), splat64(1),
}

func splat64(v float64) (a [8]float64) {
	for i := range a {
		a[i] = v
	}
	return a
}

// exp64Slice (dense_amd64.s) replaces every value v of t (len a multiple
// of 8) by exp(min(v, 0)); values below -1100 give 0.
//
//go:noescape
func exp64Slice(t []float64)

// transposeIdx holds the index vectors of the four stages of a 16×16
// transpose by two-source permutes: stage s swaps bit 3-s of the row with
// the same bit of the lane. It is read-only.
var transposeIdx = [8][16]uint32{
	{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23},
	{8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31},
	{0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27},
	{4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31},
	{0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29},
	{2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31},
	{0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30},
	{1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31},
}

// consume16 (dense_amd64.s) is consumeOneHot32 without the checks, for hp
// and wp positive multiples of 16, accC unused (may be nil) unless cols;
// it stores the two float64 vectors of squares' sum, added, into sq.
//
//go:noescape
func consume16(t *float32, hp, wp int, sr, sc *int32, accR, accC *float64, cols, frob bool, sq *[8]float64)

// addF64s (dense_amd64.s) sets dst[i] += src[i] for i < n, a multiple of 8.
//
//go:noescape
func addF64s(dst, src *float64, n int)

// addFloat64s sets dst[i] += src[i]; src is as long as dst. It adds eight
// values per instruction where AVX-512 is usable (the same bits: each sum
// is one rounded addition either way).
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
// multiple of 8, wp of 16.
func genTile32(t []float32, hp, wp int, xr, xt []float32, p int, gr, gc []float32, tg float32) {
	dotTile32(t, hp, wp, xr, xt, p, gr, gc, tg, true)
}

// dotTile32 writes t[r*wp+c] = tg·(x_r·x_c) + (gc[c] + gr[r]) for the hp×wp
// tile (the generation micro-kernels' block, repeated), then, with exp,
// replaces each value v by e^v while its 8 rows are in cache: hp is a
// multiple of 8, wp of 16.
func dotTile32(t []float32, hp, wp int, xr, xt []float32, p int, gr, gc []float32, tg float32, exp bool) {
	if hp == 0 || wp == 0 {
		return
	}
	if hp%8 != 0 || wp%16 != 0 || len(t) < hp*wp || len(xr) < hp*p || len(xt) < p*wp || len(gr) < hp || len(gc) < wp {
		panic("tile: dotTile32 called with inconsistent sizes") // a bug in this package, not bad input
	}
	var xr0 *float32
	if p > 0 {
		xr0 = &xr[0]
	}
	for i0 := 0; i0 < hp; i0 += 8 {
		ti := t[i0*wp : (i0+8)*wp]
		xi := (*float32)(unsafe.Add(unsafe.Pointer(xr0), 4*i0*p))
		j0 := 0
		for ; j0+32 <= wp; j0 += 32 {
			gen8x2(&ti[j0], wp, xi, xtAt(xt, j0), p, &gr[i0], &gc[j0], &tg)
		}
		if j0 < wp {
			gen8x1(&ti[j0], wp, xi, xtAt(xt, j0), p, &gr[i0], &gc[j0], &tg)
		}
		if exp {
			exp32Slice(ti)
		}
	}
}

// gemmKernel is an assembly P·W micro-kernel (see gemm8x1 and gemm64x8x1).
type gemmKernel[F float32 | float64] func(y *float64, ldy int, a *F, rs, is int, b *F, ldb, inner int, add bool)

// The micro-kernels of gemmTile32 and gemmTile64, by the number of vectors
// of columns they cover. They are read-only.
var (
	gemm32Kernels = [3]gemmKernel[float32]{gemm8x1, gemm8x2, gemm8x3}
	gemm64Kernels = [3]gemmKernel[float64]{gemm64x8x1, gemm64x8x2, gemm64x8x3}
)

// gemmTile sets y (m×kp, stride kp) to the product of the m×inner matrix
// a[r*rs+s*is] with the inner×kp matrix b (stride kp), or adds the product
// to y if add is set; m is a multiple of 8, kp of lanes, the number of
// values of b in a vector. It runs the micro-kernels kernels[nv-1], which
// cover nv vectors of columns, on 8-row blocks, three vectors at a time,
// and checks the bounds they rely on.
func gemmTile[F float32 | float64](kernels *[3]gemmKernel[F], lanes int, y []float64, kp int, a []F, rs, is int, b []F, m, inner int, add bool) {
	if m == 0 {
		return
	}
	if inner == 0 {
		if !add {
			clear(y[:m*kp])
		}
		return
	}
	if m%8 != 0 || kp%lanes != 0 || len(y) < m*kp || len(b) < inner*kp ||
		len(a) <= (m-1)*rs+(inner-1)*is {
		panic("tile: gemmTile called with inconsistent sizes") // a bug in this file, not bad input
	}
	nv := kp / lanes
	for r0 := 0; r0 < m; r0 += 8 {
		yr, ar := &y[r0*kp], &a[r0*rs]
		for v := 0; v < nv; v += 3 {
			kernels[min(nv-v, 3)-1]((*float64)(unsafe.Add(unsafe.Pointer(yr), 8*lanes*v)), kp, ar, rs, is, &b[lanes*v], kp, inner, add)
		}
	}
}

// gemmTile32 is gemmTile with the float32 micro-kernels (48 columns at a
// time; kp a multiple of 16).
func gemmTile32(y []float64, kp int, a []float32, rs, is int, b []float32, m, inner int, add bool) {
	gemmTile(&gemm32Kernels, 16, y, kp, a, rs, is, b, m, inner, add)
}

// The float64 exponent micro-kernels of dense_amd64.s: gen8x1 and gen8x2
// (asm_amd64.go) in float64, for 8×(8·nv) blocks, xr holding the 8 rows'
// features interleaved (xr[q*8+r]).

//go:noescape
func gen64x8x1(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)

//go:noescape
func gen64x8x2(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)

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
	xtAt := func(j int) *float64 { // nil if p = 0: the kernels then read no features
		if p == 0 {
			return nil
		}
		return &xt[j]
	}
	for i0 := 0; i0 < hp; i0 += 8 {
		ti := t[i0*wp : (i0+8)*wp]
		xi := (*float64)(unsafe.Add(unsafe.Pointer(xr0), 8*i0*p))
		j0 := 0
		for ; j0+16 <= wp; j0 += 16 {
			gen64x8x2(&ti[j0], wp, xi, xtAt(j0), p, &gr[i0], &gc[j0], &tg)
		}
		if j0 < wp {
			gen64x8x1(&ti[j0], wp, xi, xtAt(j0), p, &gr[i0], &gc[j0], &tg)
		}
		exp64Slice(ti)
	}
}

// gemmTile64 sets y to the product as gemmTile does, in float64 with the
// portable consumer's arithmetic (see gemm64x8x1), 24 columns at a time;
// kp is a multiple of 8.
func gemmTile64(y []float64, kp int, a []float64, rs, is int, b []float64, m, inner int) {
	gemmTile(&gemm64Kernels, 8, y, kp, a, rs, is, b, m, inner, false)
}
