package negexp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestOf checks Of against math.Exp within 2 ulp over the whole range of
// normal results, at the edges and on the special values.
func TestOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(x float64) {
		got, want := Of(x), math.Exp(-x)
		if want >= 0x1p-1022 && !math.IsInf(want, 0) {
			if ulp := math.Abs(got-want) / (math.Nextafter(want, math.Inf(1)) - want); ulp > 2 {
				t.Fatalf("Of(%v) = %v, math.Exp(-x) = %v: %.1f ulp apart", x, got, want, ulp)
			}
			return
		}
		// Subnormal, 0 or +Inf: the results may differ by the last
		// subnormal bits only.
		if math.IsInf(want, 1) != math.IsInf(got, 1) || math.Abs(got-want) > 0x1p-1070 {
			t.Fatalf("Of(%v) = %v, math.Exp(-x) = %v", x, got, want)
		}
	}
	for range 1_000_000 {
		check(rng.Float64()*1450 - 705) // results from e^705 down to 0
	}
	for range 100_000 {
		check(rng.NormFloat64() * 1e-3) // near 1
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 0.5 * math.Ln2, -0.5 * math.Ln2,
		708, 709, 744, 745, 746, 1000, -700, -705, math.MaxFloat64} {
		check(x)
	}
	// Near overflow math.Exp's assembly gives +Inf early (e^709.55 is
	// 1.42e308); e^709.78 is just below the largest float64,
	// e^(ln MaxFloat64) = MaxFloat64.
	if got, want := Of(-709.78), math.MaxFloat64*math.Exp(709.78-709.782712893384); math.Abs(got-want) > 1e-13*want { // the constant is ln MaxFloat64 to 3e-14
		t.Errorf("Of(-709.78) = %v, want %v", got, want)
	}
	for _, tc := range []struct{ x, want float64 }{
		{math.Inf(1), 0}, {math.Inf(-1), math.Inf(1)}, {0, 1}, {-709.79, math.Inf(1)}, {-math.MaxFloat64, math.Inf(1)},
	} {
		if got := Of(tc.x); got != tc.want {
			t.Errorf("Of(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if got := Of(math.NaN()); !math.IsNaN(got) {
		t.Errorf("Of(NaN) = %v", got)
	}
}

func BenchmarkOf(b *testing.B)      { benchExp(b, Of) }
func BenchmarkMathExp(b *testing.B) { benchExp(b, func(x float64) float64 { return math.Exp(-x) }) }

// benchExp measures e^-x by exp over the range of the kernel's arguments,
// in exponentials a second.
func benchExp(b *testing.B, exp func(float64) float64) {
	x := make([]float64, 1024)
	for i := range x {
		x[i] = float64(i) * 0.01
	}
	var s float64
	for b.Loop() {
		for _, v := range x {
			s += exp(v)
		}
	}
	b.ReportMetric(float64(b.N*len(x))/b.Elapsed().Seconds(), "exps/s")
	_ = s
}
