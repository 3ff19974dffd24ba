//go:build goexperiment.simd && amd64

package tile

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestVectorExpError measures the vectorized exp's largest relative error
// against math.Exp over the range the kernel uses, where the result is a
// normal number: [-87, 0] in float32, [-708, 0] in float64 (below, results
// fade through the subnormals to 0, as math.Exp's do).
func TestVectorExpError(t *testing.T) {
	if !simdUsable() {
		t.Skip("this CPU has no AVX-512")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const m = 1 << 18
	t.Run("float32", func(t *testing.T) {
		x := make([]float32, m)
		for i := range x {
			if i%2 == 0 {
				x[i] = -87 * float32(i) / m // a grid
			} else {
				x[i] = -float32(rng.ExpFloat64()) // dense near 0, where P lives
			}
		}
		x[0], x[1] = 0, -1e-30
		y := append([]float32(nil), x...)
		exp32Slice(y)
		var worst float64
		for i, v := range x {
			want := math.Exp(float64(v))
			worst = max(worst, math.Abs(float64(y[i])-want)/want)
		}
		t.Logf("float32 exp: max relative error %.3g on [-87, 0] (float32 rounding alone: 6e-8)", worst)
		if worst > 2e-7 {
			t.Errorf("max relative error %g, want <= 2e-7", worst)
		}
	})
	t.Run("float64", func(t *testing.T) {
		x := make([]float64, m)
		for i := range x {
			if i%2 == 0 {
				x[i] = -708 * float64(i) / m
			} else {
				x[i] = -rng.ExpFloat64()
			}
		}
		y := append([]float64(nil), x...)
		exp64Slice(y)
		var worst float64
		for i, v := range x {
			want := math.Exp(v)
			worst = max(worst, math.Abs(y[i]-want)/want)
		}
		t.Logf("float64 exp: max relative error %.3g on [-708, 0]", worst)
		if worst > 2e-15 {
			t.Errorf("max relative error %g, want <= 2e-15", worst)
		}
	})
	t.Run("clamp", func(t *testing.T) {
		y32 := []float32{-200, -1e30, 1, 0, -150, -104, -1e-3, 5, 1e30, -1, -2, -3, -4, -5, -6, -7}
		exp32Slice(y32)
		for i, want := range []float32{0, 0, 1, 1, 0} {
			if y32[i] != want {
				t.Errorf("exp32 at case %d = %v, want %v", i, y32[i], want)
			}
		}
		y64 := []float64{-2000, -1e300, 1, 0, -1100, -745.2, -1e-3, 5}
		exp64Slice(y64)
		for i, want := range []float64{0, 0, 1, 1, 0, 0} {
			if y64[i] != want {
				t.Errorf("exp64 at case %d = %v, want %v", i, y64[i], want)
			}
		}
	})
}
