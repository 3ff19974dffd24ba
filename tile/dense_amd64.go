//go:build amd64

package tile

import (
	"math"
)

// This file holds amd64's two families of the dense kernels (dense.go):
// AVX-512 (avx512Dense) and AVX2 with FMA (avx2Dense), each run where the
// Engine's ISA resolves to it. Every vector phase is an assembly function
// written by the scripts in asmgen (AVX-512: gen_amd64.s, dense_amd64.s,
// gemm_amd64.s, gemm64_amd64.s; AVX2: gen_avx2_amd64.s, dense_avx2_amd64.s,
// gemm_avx2_amd64.s; see asm_amd64.go), which ends with VZEROUPPER, so
// that the scalar code between them runs with the upper halves of the
// vector registers clear. The AVX-512 assembly replaced archsimd code
// (GOEXPERIMENT=simd) with the same arithmetic, each value going through
// the same operations in the same order (the exp is the compiler's
// instruction sequence; the float64 generation now blocks 8 rows instead
// of 4), so it gives the same bits; the archsimd code is kept as the
// tests' reference for this, dense_archsimd_ref_amd64_test.go. Its
// float32 tiles run gen8x1Exp and gen8x2Exp, which apply exp32Slice's
// instructions to each vector in registers (the same bits as gen8x1 or
// gen8x2 then exp32Slice, the tile written once); the AVX2 family keeps
// the separate exp32AVX2 pass (fused, one exp at a time or two, it
// measured no faster: with 16 registers the exps cannot be interleaved
// as exp32AVX2 interleaves them). The AVX2
// assembly blocks 4 rows and 8 float32 lanes instead of 8 and 16 and
// builds 2^k from integer bits instead of VSCALEF, with the same
// operations on every value in the same order again: both families give
// the same bits, which dense_amd64_test.go checks against pure-Go
// references of the arithmetic; against the portable kernel they differ
// by rounding (kernel_test.go states the bound).

// The dense kernels of the two families.
var (
	avx512Dense = &denseKernels{
		isa: ISAAVX512, rows: 8, cols32: 16, cols64: 8,
		gen32:    []genKernel[float32]{gen8x1, gen8x2},
		gen32exp: []genKernel[float32]{gen8x1Exp, gen8x2Exp},
		gen64:    []genKernel[float64]{gen64x8x1, gen64x8x2},
		gemm32:   []gemmKernel[float32]{gemm8x1, gemm8x2, gemm8x3},
		gemm64:   []gemmKernel[float64]{gemm64x8x1, gemm64x8x2, gemm64x8x3},
		exp32:    exp32Slice, exp64: exp64Slice, consume: consume16,
	}
	avx2Dense = &denseKernels{
		isa: ISAAVX2, rows: 4, cols32: 8, cols64: 4,
		gen32:  []genKernel[float32]{gen4x1AVX2, gen4x2AVX2, gen4x3AVX2},
		gen64:  []genKernel[float64]{gen64x4x1AVX2, gen64x4x2AVX2, gen64x4x3AVX2},
		gemm32: []gemmKernel[float32]{gemm4x1AVX2, gemm4x2AVX2, gemm4x3AVX2},
		gemm64: []gemmKernel[float64]{gemm64x4x1AVX2, gemm64x4x2AVX2, gemm64x4x3AVX2},
		exp32:  exp32AVX2, exp64: exp64AVX2, consume: consume16AVX2,
	}
)

// denseTables are the families with dense kernels here, fastest first.
var denseTables = [...]*denseKernels{avx512Dense, avx2Dense}

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

// exp32AVX2 (dense_avx2_amd64.s) is exp32Slice with AVX2 and FMA, for len
// a multiple of 8, with the same bits.
//
//go:noescape
func exp32AVX2(t []float32)

// expScale32 and expScale64 hold the constants of the AVX2 exps' y·2^k:
// 1/2, to split k into halves, and 1.5·2^m + bias (m the mantissa's
// width), whose addition to a half h leaves the biased exponent of 2^h in
// the low bits. They are read-only.
var (
	expScale32 = [2][16]float32{splat32(0.5), splat32(1.5*(1<<23) + 127)}
	expScale64 = [2][8]float64{splat64(0.5), splat64(1.5*(1<<52) + 1023)}
)

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

// exp64AVX2 (dense_avx2_amd64.s) is exp64Slice with AVX2 and FMA, for len
// a multiple of 4, with the same bits.
//
//go:noescape
func exp64AVX2(t []float64)

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

// consume16AVX2 (dense_avx2_amd64.s) is consume16 with AVX2, with the same
// bits.
//
//go:noescape
func consume16AVX2(t *float32, hp, wp int, sr, sc *int32, accR, accC *float64, cols, frob bool, sq *[8]float64)

// addF64s (dense_amd64.s) sets dst[i] += src[i] for i < n, a multiple of 8.
//
//go:noescape
func addF64s(dst, src *float64, n int)

// addF64sAVX2 (dense_avx2_amd64.s) is addF64s with AVX2, for n a multiple
// of 4.
//
//go:noescape
func addF64sAVX2(dst, src *float64, n int)

// addFloat64s sets dst[i] += src[i]; src is as long as dst. It adds eight
// values per instruction where AVX-512 is usable, four where AVX2 is (the
// same bits: each sum is one rounded addition either way).
func addFloat64s(dst, src []float64) {
	src = src[:len(dst)]
	i := 0
	if n := len(dst) &^ 7; n > 0 {
		switch {
		case cpuHas(ISAAVX512):
			addF64s(&dst[0], &src[0], n)
			i = n
		case cpuHas(ISAAVX2):
			addF64sAVX2(&dst[0], &src[0], n)
			i = n
		}
	}
	for ; i < len(dst); i++ {
		dst[i] += src[i]
	}
}

// The float64 exponent micro-kernels of dense_amd64.s: gen8x1 and gen8x2
// (asm_amd64.go) in float64, for 8×(8·nv) blocks, xr holding the 8 rows'
// features interleaved (xr[q*8+r]).

//go:noescape
func gen64x8x1(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)

//go:noescape
func gen64x8x2(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)
