//go:build goexperiment.simd && amd64

package tile

// The P·W kernels below are written by the scripts in asmgen (see
// asm_amd64.go), in files built only with GOEXPERIMENT=simd.

// The P·W micro-kernels of gemm_amd64.s. Each adds to the 8×(16·nv) float64
// block y[r*ldy+c] (r < 8, c < 16·nv) the products, summed over s < inner,
// of a[r*rs+s*is] and b[s*ldb+c], in float32 partial sums of at most
// flushEvery (64) terms that are then widened and added to y; unless add
// is set, the first partial sums are stored into y instead (y need not be
// cleared; inner must then be positive). They are
// written in assembly because the Go compiler allocates 15 vector
// registers to archsimd code, too few for an 8×3 register block, and
// loads broadcast operands in two instructions where AVX-512 needs none:
// the assembly holds 24 accumulators and issues one FMA with an embedded
// broadcast per 16 products. They need AVX-512F and must be called only
// where simdUsable reports true; every slice must cover the block it
// addresses (the callers check this).

//go:noescape
func gemm8x1(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

//go:noescape
func gemm8x2(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

//go:noescape
func gemm8x3(y *float64, ldy int, a *float32, rs, is int, b *float32, ldb, inner int, add bool)

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
