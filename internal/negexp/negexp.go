// Package negexp computes e^-x in pure Go, for the kernels and weights
// that take the exponential of a distance.
//
// It exists because math.Exp is an assembly routine on amd64 whose cost
// depends on how the binary is built: measured on this project's AVX-512
// machine, a million calls took 26 ms in a plain build and 2.3 s, 90 times
// longer, in a GOEXPERIMENT=simd build (math.Log and compiled Go code are
// not affected). Of is compiled like the rest of the program, so it costs
// the same in both builds, and both builds, and every architecture, give
// the same bits.
package negexp

import "math"

// Constants of the reduction e^y = 2^k e^r, y = k ln 2 + r, |r| <= ln 2 / 2.
// ln2Hi has its low 32 bits zero, so k·ln2Hi is exact for |k| < 2^20.
const (
	log2e = 1.44269504088896338700e+00
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
)

// coef are 1/i!, i = 0..13: the Taylor polynomial of e^r, whose remainder
// for |r| <= ln 2 / 2 is below 5e-18.
var coef = [...]float64{
	1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
	1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800,
	1.0 / 479001600, 1.0 / 6227020800,
}

// Of returns e^-x. It is within 2 ulp of the exact value for results in
// the normal range; below it the result is rounded to a subnormal or 0.
// Of(+Inf) = 0, Of(-Inf) = +Inf and Of(NaN) = NaN; results above the
// largest float64 are +Inf.
func Of(x float64) float64 {
	y := -x
	switch {
	case y != y:
		return y
	case y > 709.782712893384:
		return math.Inf(1)
	case y < -745.2:
		return 0
	}
	k := math.Round(y * log2e)
	// Every product is rounded before it is added (float64(...)), so that
	// no architecture fuses them: arm64 gets amd64's bits.
	r := (y - float64(k*ln2Hi)) - float64(k*ln2Lo)
	p := coef[len(coef)-1]
	for i := len(coef) - 2; i >= 0; i-- {
		p = float64(p*r) + coef[i]
	}
	if k >= -1021 && k <= 1023 {
		return p * math.Float64frombits(uint64(int64(k)+1023)<<52) // p·2^k, exactly
	}
	return math.Ldexp(p, int(k)) // near the ends of the range
}
