package tile

// The kernels below are written by asmgen/screen_arm64.py (see
// generate.go). They need Advanced SIMD, which every arm64 CPU Go runs on
// has, and are called only where cpuHas(ISANEON) reports it; every
// pointer must cover the block it addresses (the callers check this).

// dot8x8NEON is screenKernel.dot for 8 rows and 8 columns: it writes
// t[r*wp+c] = tg·(x_r·x_c) + (gc[c] + gr[r]) (r, c < 8), where xr holds
// the 8 rows' features interleaved (xr[q*8+r]) and xt the columns'
// features transposed (xt[q*wp+c]); the dot product is a chain of float32
// fused multiply-adds in feature order (screen_arm64.s).
//
//go:noescape
func dot8x8NEON(t *float32, wp int, xr, xt *float32, p int, gr, gc, tg *float32)

// maskNEON is screenKernel.mask (screen_arm64.s).
//
//go:noescape
func maskNEON(t, cth *float32, rth float32, words int, out *uint64)

// screenKernelOf returns family k's screen: NEON's for ISANEON, nil for
// the others.
func screenKernelOf(k ISA) *screenKernel {
	if k == ISANEON {
		return &screenKernel{isa: k, rows: 8, cols: 8, dot: dot8x8NEON, mask: maskNEON}
	}
	return nil
}
