package tile

// The kernels below are written by the scripts in asmgen (see
// generate.go). Every one of them needs the instructions of its family
// (AVX2 and FMA, or AVX-512F) and is called only where cpuHas reports
// them; every pointer must cover the block it addresses (the callers
// check this).

// The Gaussian exponent micro-kernels of gen_amd64.s (AVX-512F). Each writes
// t[r*wp+c] = tg·(x_r·x_c) + (gc[c] + gr[r]) for the 8×(16·nv) block at t
// (r < 8, c < 16·nv), where xr holds the 8 rows' p features interleaved
// (xr[q*8+r]) and xt the columns' features transposed (xt[q*wp+c]); the dot
// product is a chain of float32 fused multiply-adds in feature order.

//go:noescape
func gen8x1(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

//go:noescape
func gen8x2(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

// gen8x1Exp and gen8x2Exp (gen_amd64.s) are gen8x1 and gen8x2 followed by
// exp32Slice on their block, with its bits: each vector's exp is taken in
// registers before it is stored.

//go:noescape
func gen8x1Exp(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

//go:noescape
func gen8x2Exp(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

// The AVX2 exponent micro-kernels of gen_avx2_amd64.s: gen8x1 for 4 rows
// and 8·nv columns, xr pointing at the first of the 4 rows within their
// group of 8, with the same bits; the dense float32 tiles run them, and the
// screen of Pairs gen4x2AVX2.

//go:noescape
func gen4x1AVX2(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

//go:noescape
func gen4x2AVX2(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

//go:noescape
func gen4x3AVX2(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

// The float64 AVX2 exponent micro-kernels of gen_avx2_amd64.s: gen64x8x1
// (dense_amd64.go) for 4 rows and 4·nv columns, xr pointing at the first
// of the 4 rows within their group of 8, with the same bits.

//go:noescape
func gen64x4x1AVX2(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)

//go:noescape
func gen64x4x2AVX2(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)

//go:noescape
func gen64x4x3AVX2(t *float64, wp int, xr, xt *float64, p int, gr, gc, tg *float64)

// screen8AVX512 and screen4AVX2 are screenKernel.screen for 8 and 4 rows
// (screen_amd64.s): gen8x2 and gen4x2AVX2 with the threshold tests in
// place of the stores.
//
//go:noescape
func screen8AVX512(out *uint64, words int, xr, xt *float32, ld, p int, nr, nc, rth, cth, tg *float32)

//go:noescape
func screen4AVX2(out *uint64, words int, xr, xt *float32, ld, p int, nr, nc, rth, cth, tg *float32)

// The P·W micro-kernels of gemm_amd64.s. Each adds to the 8×(16·nv) float64
// block y[r*ldy+c] (r < 8, c < 16·nv) the products, summed over s < inner,
// of a[r*rs+s*is] and b[s*ldb+c], in float32 partial sums of at most
// flushEvery (64) terms that are then widened and added to y; unless add
// is set, the first partial sums are stored into y instead (y need not be
// cleared; inner must then be positive). They are
// written in assembly, 24 accumulators in registers. They need AVX-512F.

//go:noescape
func gemm8x1(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

//go:noescape
func gemm8x2(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

//go:noescape
func gemm8x3(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

// The AVX2 P·W micro-kernels of gemm_avx2_amd64.s: gemm8x1, gemm8x2 and
// gemm8x3 for 4 rows and 8·nv columns, with the same bits; 12
// accumulators in registers. They need AVX2 and FMA.

//go:noescape
func gemm4x1AVX2(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

//go:noescape
func gemm4x2AVX2(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

//go:noescape
func gemm4x3AVX2(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

// The float64 P·W micro-kernels of gemm64_amd64.s. Each sets the
// 8×(8·nv) float64 block y[r*ldy+c] (r < 8, c < 8·nv), or adds to it if
// add is set, the products of a[r*rs+s*is] and b[s*ldb+c], each rounded,
// summed over s < inner in order: the portable consumer's arithmetic. The
// same conditions as for the float32 kernels apply.

//go:noescape
func gemm64x8x1(y *float64, ldy int, a *float64, rs, is int, b *float64, ldb, inner int, add bool)

//go:noescape
func gemm64x8x2(y *float64, ldy int, a *float64, rs, is int, b *float64, ldb, inner int, add bool)

//go:noescape
func gemm64x8x3(y *float64, ldy int, a *float64, rs, is int, b *float64, ldb, inner int, add bool)

// screenKernelOf returns family k's screen, nil for ISAGo.
func screenKernelOf(k ISA) *screenKernel {
	switch k {
	case ISAAVX512:
		return &screenKernel{isa: k, rows: 8, cols: 32, dot: gen8x2, screen: screen8AVX512}
	case ISAAVX2:
		return &screenKernel{isa: k, rows: 4, cols: 16, dot: gen4x2AVX2, screen: screen4AVX2}
	}
	return nil
}

// The float64 AVX2 P·W micro-kernels of gemm_avx2_amd64.s: gemm64x8x1, ...
// for 4 rows and 4·nv columns, with the same bits. They need AVX2.

//go:noescape
func gemm64x4x1AVX2(y *float64, ldy int, a *float64, rs, is int, b *float64, ldb, inner int, add bool)

//go:noescape
func gemm64x4x2AVX2(y *float64, ldy int, a *float64, rs, is int, b *float64, ldb, inner int, add bool)

//go:noescape
func gemm64x4x3AVX2(y *float64, ldy int, a *float64, rs, is int, b *float64, ldb, inner int, add bool)
