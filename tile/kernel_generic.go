//go:build !(goexperiment.simd && amd64)

package tile

import "math"

// Without GOEXPERIMENT=simd on amd64 there is no vectorized kernel: every
// pass runs the portable code.

const simdName = "none"

func simdUsable() bool { return false }

func fastCapable(Source) bool { return false }

func newFastKernel(Source, passInput, int) (fastKernel, bool) { return nil, false }

// addFloat64s sets dst[i] += src[i]; src is as long as dst.
func addFloat64s(dst, src []float64) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] += v
	}
}

// fmaBlockFlops returns the flops of one iteration of fmaBlock and the
// instruction it uses.
func fmaBlockFlops(prec Precision) (float64, string) {
	return 8 * 2, "scalar " + prec.String()
}

// fmaBlock runs n iterations of eight independent scalar FMA chains.
func fmaBlock(prec Precision, n int) float64 {
	a0, a1, a2, a3, a4, a5, a6, a7 := 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0
	const m, c = 0.999999, 1e-7
	for range n {
		a0 = math.FMA(a0, m, c)
		a1 = math.FMA(a1, m, c)
		a2 = math.FMA(a2, m, c)
		a3 = math.FMA(a3, m, c)
		a4 = math.FMA(a4, m, c)
		a5 = math.FMA(a5, m, c)
		a6 = math.FMA(a6, m, c)
		a7 = math.FMA(a7, m, c)
	}
	_ = prec // math.FMA rounds in float64; float32 scalar FMAs issue at the same rate
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}
