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

// dot4x16AVX2 is gen8x1 with AVX2 and FMA for 4 rows and 16 columns: xr
// points at the first of the 4 rows within their group of 8 (screen_amd64.s).
//
//go:noescape
func dot4x16AVX2(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

// maskAVX2 and maskAVX512 are screenKernel.mask (screen_amd64.s).
//
//go:noescape
func maskAVX2(t, cth *float32, rth float32) uint64

//go:noescape
func maskAVX512(t, cth *float32, rth float32) uint64

// screenKernelOf returns family k's screen, nil for ISAGo.
func screenKernelOf(k ISA) *screenKernel {
	switch k {
	case ISAAVX512:
		return &screenKernel{isa: k, rows: 8, cols: 32, dot: gen8x2, mask: maskAVX512}
	case ISAAVX2:
		return &screenKernel{isa: k, rows: 4, cols: 16, dot: dot4x16AVX2, mask: maskAVX2}
	}
	return nil
}
