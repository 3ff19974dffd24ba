package fw

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bisectProjection is the reference projection: max(v - τ, 0) with τ found
// by bisection on the decreasing function τ -> sum max(v - τ, 0) - 1.
func bisectProjection(v []float64) []float64 {
	lo, hi := slices.Min(v)-1, slices.Max(v)
	for range 200 {
		mid := lo + (hi-lo)/2
		var s float64
		for _, x := range v {
			s += max(x-mid, 0)
		}
		if s > 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	out := make([]float64, len(v))
	for j, x := range v {
		out[j] = max(x-lo, 0)
	}
	return out
}

func TestProjectSimplex(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    []float64
		want []float64
	}{
		{name: "on the simplex", v: []float64{0.2, 0.3, 0.5}, want: []float64{0.2, 0.3, 0.5}},
		{name: "a vertex", v: []float64{0, 1, 0}, want: []float64{0, 1, 0}},
		{name: "shifted up", v: []float64{1.2, 1.3, 1.5}, want: []float64{0.2, 0.3, 0.5}},
		{name: "one dominant", v: []float64{5, 0, -1}, want: []float64{1, 0, 0}},
		{name: "all negative", v: []float64{-3, -1, -2}, want: []float64{0, 1, 0}},
		{name: "ties", v: []float64{2, 2, 0}, want: []float64{0.5, 0.5, 0}},
		{name: "zeros", v: []float64{0, 0, 0, 0}, want: []float64{0.25, 0.25, 0.25, 0.25}},
		{name: "one entry", v: []float64{-7}, want: []float64{1}},
		{name: "two clipped", v: []float64{0.9, 0.6, -0.5, 0.1}, want: []float64{0.65, 0.35, 0, 0}},
		{name: "empty", v: []float64{}, want: []float64{}},
		{name: "NaN left as it is", v: []float64{1, math.NaN()}, want: []float64{1, math.NaN()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Clone(tc.v)
			ProjectSimplex(got)
			for j := range got {
				if math.IsNaN(tc.want[j]) != math.IsNaN(got[j]) || math.Abs(got[j]-tc.want[j]) > 1e-15 {
					t.Fatalf("Proj(%v) = %v, want %v", tc.v, got, tc.want)
				}
			}
		})
	}
}

// TestProjectSimplexAgainstReference compares the sort-based projection with
// bisection and checks that it is the nearest point of the simplex among
// random feasible points.
func TestProjectSimplexAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		k := 1 + rng.IntN(12)
		v := make([]float64, k)
		scale := math.Pow(10, float64(rng.IntN(5)-2))
		for j := range v {
			v[j] = scale * rng.NormFloat64()
			if rng.IntN(4) == 0 && j > 0 {
				v[j] = v[j-1] // ties
			}
		}
		got := slices.Clone(v)
		ProjectSimplex(got)
		want := bisectProjection(v)
		var sum float64
		for j := range got {
			if got[j] < 0 || math.Abs(got[j]-want[j]) > 1e-12*max(1, scale) {
				t.Fatalf("trial %d: Proj(%v) = %v, reference %v", trial, v, got, want)
			}
			sum += got[j]
		}
		big := max(1, slices.Max(v), -slices.Min(v))
		if math.Abs(sum-1) > 4e-16*float64(k)*big {
			t.Fatalf("trial %d: Proj(%v) sums to %v", trial, v, sum)
		}
		d := sqDist(got, v)
		for range 20 {
			y := make([]float64, k)
			simplexPoint(y, rng.ExpFloat64) // uniform on the simplex
			if sqDist(y, v) < d-1e-12 {
				t.Fatalf("trial %d: %v is nearer to %v than the projection %v", trial, y, v, got)
			}
		}
	}
}

func sqDist(x, y []float64) float64 {
	var d float64
	for j := range x {
		d += (x[j] - y[j]) * (x[j] - y[j])
	}
	return d
}

func TestProjectRows(t *testing.T) {
	w := []float64{2, 0, 0, 0, -1, 3}
	if err := ProjectRows(w, 3); err != nil {
		t.Fatal(err)
	}
	if want := []float64{1, 0, 0, 0, 0, 1}; !slices.Equal(w, want) {
		t.Fatalf("rows %v, want %v", w, want)
	}
	for _, tc := range []struct {
		name string
		w    []float64
		k    int
	}{
		{name: "ragged", w: make([]float64, 5), k: 3},
		{name: "k = 0", w: make([]float64, 3), k: 0},
		{name: "infinity", w: []float64{1, math.Inf(1)}, k: 2},
		{name: "NaN", w: []float64{1, math.NaN()}, k: 2},
	} {
		if err := ProjectRows(tc.w, tc.k); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// FuzzProjectSimplex checks that the projection lands on the simplex and
// satisfies the optimality condition: with x = Proj(v), v_j - x_j is the
// same τ on the support and v_j <= τ off it.
func FuzzProjectSimplex(f *testing.F) {
	f.Add(0.1, 0.2, 0.3, 0.4)
	f.Add(5.0, -1.0, 5.0, 0.0)
	f.Add(-1e300, 1e300, 0.0, 1.0)
	f.Fuzz(func(t *testing.T, a, b, c, d float64) {
		v := []float64{a, b, c, d}
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e100 {
				return
			}
		}
		x := slices.Clone(v)
		ProjectSimplex(x)
		scale := max(1, slices.Max(v)-slices.Min(v))
		var sum float64
		tau := math.NaN()
		for j := range x {
			if x[j] < 0 {
				t.Fatalf("Proj(%v) = %v has a negative entry", v, x)
			}
			sum += x[j]
			if x[j] > 0 {
				tau = v[j] - x[j]
			}
		}
		if math.Abs(sum-1) > 1e-12*scale {
			t.Fatalf("Proj(%v) = %v sums to %v", v, x, sum)
		}
		for j := range x {
			if x[j] > 0 && math.Abs(v[j]-x[j]-tau) > 1e-12*scale {
				t.Fatalf("Proj(%v) = %v: shift %v on the support, want %v", v, x, v[j]-x[j], tau)
			}
			if x[j] == 0 && v[j] > tau+1e-12*scale {
				t.Fatalf("Proj(%v) = %v: clipped entry %v above τ = %v", v, x, v[j], tau)
			}
		}
	})
}
